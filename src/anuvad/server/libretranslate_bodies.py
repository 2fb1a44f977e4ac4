"""The bodies of the LibreTranslate-compatible API (:mod:`anuvad.server.libretranslate`): what its
requests and answers hold (their published schemas), and how a request's JSON, form or query
string is read into them, refused in LibreTranslate's words (``{"error": ...}``, 400)."""

from __future__ import annotations

import json
import urllib.parse
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from annotated_types import Interval
from fastapi import Request
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
)
from starlette.datastructures import FormData

from anuvad.server.limits import MAX_REQUEST_CHARS, MAX_TEXT_CHARS
from anuvad.server.schemas import check_text, check_texts, text_schema, texts_schema


class LibreTranslateError(Exception):
    """A request answered ``{"error": message}`` with ``status``, as LibreTranslate does."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------------------ bodies (docs)


class LtBody(BaseModel):
    """A LibreTranslate request body: fields it does not know are ignored (as LibreTranslate
    does), those it knows must have their types (a JSON body's as they are, a form's strings
    converted)."""

    model_config = ConfigDict(extra="ignore")
    # LibreTranslate's own words for a field of the wrong type or value (clients show them).
    wrong: ClassVar[dict[str, str]] = {}

    api_key: str | None = Field(None, description="an API key, when the server asks for one")


def _count(value: Any) -> Any:
    """LibreTranslate reads ``alternatives`` through ``int()``: "3" is 3."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


LtCount = Annotated[
    int,
    BeforeValidator(_count),
    Interval(ge=0),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": "^\\s*[0-9]+\\s*$"},
            ],
            "default": 0,
        }
    ),
]


class LtTranslateBody(LtBody):
    """``POST /libretranslate/translate`` (JSON, or the same fields as a form)."""

    wrong = {
        "format": "{value} format is not supported",
        "alternatives": "Invalid request: alternatives must be a whole number >= 0",
        "q": "Invalid request: q must be a string or a list of strings",
    }
    q: str | list[str] = Field(
        description=f"the text, or a list of texts (each at most {MAX_TEXT_CHARS} characters, "
        f"{MAX_REQUEST_CHARS} in all; an empty or blank text in a list comes back as it was)",
        examples=["Hello!"],
        json_schema_extra=texts_schema(blank_items=True),
    )
    source: str = Field(description="source language code, or 'auto'", examples=["en"])
    target: str = Field(
        description="target language code (the source's: the text comes back as it was)",
        examples=["hi"],
    )
    format: Literal["text", "html", ""] = Field(
        "text", description="'text' (also when empty) or 'html'"
    )
    alternatives: LtCount = Field(
        0, description="other translations to return per text (a number, or its digits)"
    )

    @field_validator("q")
    @classmethod
    def _check_q(cls, value: str | list[str]) -> str | list[str]:
        return check_texts(value, blank_items=True)

    @field_validator("format")
    @classmethod
    def _plain_by_default(cls, value: str) -> str:
        return value or "text"


class LtDetectBody(LtBody):
    """``POST /libretranslate/detect`` (JSON or form)."""

    wrong = {"q": "Invalid request: q must be a string"}
    q: str = Field(
        description=f"the text (1-{MAX_TEXT_CHARS} characters)",
        examples=["नमस्ते"],
        json_schema_extra=text_schema(MAX_TEXT_CHARS),
    )

    @field_validator("q")
    @classmethod
    def _check_q(cls, value: str) -> str:
        return check_text(value)


class LtDetected(BaseModel):
    """A language and how sure (0-100: the share of the text's letters in its script)."""

    confidence: float
    language: str


class LtTranslation(BaseModel):
    """The answer of ``POST /libretranslate/translate`` (lists for a list ``q``)."""

    translatedText: str | list[str]  # noqa: N815 (LibreTranslate's names)
    detectedLanguage: LtDetected | list[LtDetected] | None = Field(  # noqa: N815
        None, description="with source 'auto' only"
    )
    alternatives: list[str] | list[list[str]] | None = Field(
        None, description="with alternatives > 0 only"
    )


class LtFileTranslation(BaseModel):
    """The answer of ``POST /libretranslate/translate_file``: where to fetch the translation."""

    translatedFileUrl: str = Field(  # noqa: N815 (LibreTranslate's name)
        description="GET it (no key needed: the URL holds 128 random bits) within 30 minutes "
        "(less when many newer translations wait)"
    )


class LtLanguage(BaseModel):
    """One language of ``GET /libretranslate/languages``."""

    code: str
    name: str
    targets: list[str]


class LtError(BaseModel):
    """Every error: LibreTranslate's shape."""

    error: str


# ------------------------------------------------------------------------------ reading bodies


Body = TypeVar("Body", bound=LtBody)


async def read_body(request: Request, kind: type[Body]) -> Body:
    """The request's fields as ``kind``: its JSON object, or its form (urlencoded or
    multipart), over the query string's (LibreTranslate reads either).

    Raises:
        LibreTranslateError: 400 for a JSON body that is not an object, a form or query string
            that is not UTF-8, a field missing (in LibreTranslate's words) or of the wrong type
            or value.
    """
    fields: dict[str, Any] = _urlencoded(request.scope.get("query_string", b""), "query")
    declared = request.headers.get("content-type", "").split(";")[0].strip().lower()
    strict = declared == "application/json"  # JSON has types; a form's strings are converted
    if strict:
        try:
            body = json.loads(await request.body() or b"{}")
        except (ValueError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict):
            raise LibreTranslateError(400, "Invalid JSON format")
        fields.update(body)
    elif declared == "application/x-www-form-urlencoded":
        fields.update(_urlencoded(await request.body(), "form"))
    elif declared == "multipart/form-data":
        form: FormData = await request.form()
        for name in form:
            values = [v for v in form.getlist(name) if isinstance(v, str)]
            if values:  # a repeated q ("q=A&q=B") is a list: only B was translated
                fields[name] = values if name == "q" and len(values) > 1 else values[-1]
    return body_of(kind, fields, strict)


def _urlencoded(raw: bytes, what: str) -> dict[str, Any]:
    """The fields of a query string or urlencoded form, read as UTF-8 as LibreTranslate (Flask)
    reads them: raw UTF-8 ("q=कप्तान", as ``curl -d`` sends it) as well as percent-escapes
    (Starlette's own parser reads raw bytes as Latin-1: "à¤à¤ª…"). A repeated ``q`` is a list.

    Raises:
        LibreTranslateError: 400 when the bytes are not UTF-8.
    """
    try:  # raw bytes and percent-escapes ("%E0%A4" alone is not UTF-8) alike
        pairs = urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError as exc:
        raise LibreTranslateError(
            400, f"Invalid request: the {what} is not UTF-8 ({exc.reason}); send UTF-8 text"
        ) from exc
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name == "q" and name in fields:  # "q=A&q=B": both are translated
            previous = fields[name]
            fields[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            fields[name] = value
    return fields


def body_of(kind: type[Body], fields: dict[str, Any], strict: bool = False) -> Body:
    """``fields`` as ``kind`` (``strict``: JSON's types, else a form's strings converted).

    Raises:
        LibreTranslateError: 400 for a field missing (in LibreTranslate's words) or of the
            wrong type or value.
    """
    for name, field in kind.model_fields.items():
        if field.is_required() and fields.get(name) in (None, "", []):
            raise LibreTranslateError(400, f"Invalid request: missing {name} parameter")
    try:
        return kind.model_validate(fields, strict=strict)
    except ValidationError as exc:
        raise LibreTranslateError(400, refusal(kind, exc, fields)) from None


def refusal(kind: type[LtBody], exc: ValidationError, fields: dict[str, Any]) -> str:
    """The message for the first problem pydantic found in ``fields``: LibreTranslate's words
    where it has them, else ``Invalid request: field: what is wrong``."""
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else ""
    if name in fields and fields[name] is None:  # was "None format is not supported"
        return f"Invalid request: {name} is null; leave it out or give a value"
    if first["type"] != "value_error" and name in kind.wrong:
        return kind.wrong[name].format(value=fields.get(name))
    return f"Invalid request: {name}: {first['msg'].removeprefix('Value error, ')}"


__all__ = [
    "LibreTranslateError",
    "LtBody",
    "LtDetectBody",
    "LtDetected",
    "LtError",
    "LtFileTranslation",
    "LtLanguage",
    "LtTranslateBody",
    "LtTranslation",
    "body_of",
    "read_body",
    "refusal",
]
