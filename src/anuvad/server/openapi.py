"""The published schema (``/openapi.json``) made to say exactly what the server answers: the
served model ids as the values of every request's ``model`` field and the served languages as
the LibreTranslate routes' ``source`` and ``target``, the streamed answer's lines as their own
schema (FastAPI types a streamed body as a string besides), every error as the JSON it is (FastAPI
gives a route's errors its success media type: NDJSON for ``/translate/stream``), and request
examples with the default model's own search settings, which ``/docs``' "Try it out" fills in
(without them Swagger UI made up values at the limits: length_penalty 5, no_repeat_ngram_size 8;
issue 40)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI

from anuvad.server.libretranslate import AUTO
from anuvad.server.model_schemas import ModelInfo

# The request bodies with a `model` field (POST /translate/stream takes TranslateRequest too).
MODEL_FIELDS = ("TranslateRequest", "AttentionRequest")
# One sentence in each language a served model may read, for the request examples.
EXAMPLE_SENTENCES = {
    "en": "The weather is nice today.",
    "hi": "आज मौसम अच्छा है।",
}
LIBRETRANSLATE = ("/libretranslate/translate", "/libretranslate/detect")


def publish_schema(app: FastAPI, served: Sequence[ModelInfo]) -> None:
    """Make ``app``'s ``/openapi.json`` say what its routes answer for the ``served`` models
    (the first is the default): see the module docstring."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = build()
            name_models(spec, [m.id for m in served])
            name_languages(spec, served)
            for operations in spec["paths"].values():
                for operation in operations.values():
                    for status, answer in operation.get("responses", {}).items():
                        settle_media_type(status, answer)
            give_examples(spec, served[0])
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def name_models(spec: dict[str, Any], model_ids: list[str]) -> None:
    """The served model ids as the only values of every request's ``model`` (or null)."""
    for name in MODEL_FIELDS:
        field = spec["components"]["schemas"][name]["properties"]["model"]
        field["anyOf"] = [{"type": "string", "enum": model_ids}, {"type": "null"}]


def name_languages(spec: dict[str, Any], served: Sequence[ModelInfo]) -> None:
    """The LibreTranslate routes' ``source`` and ``target``: the served languages (and "auto")."""
    sources = list(dict.fromkeys(m.src_lang for m in served))
    targets = list(dict.fromkeys(m.tgt_lang for m in served))
    for path in LIBRETRANSLATE:
        body = spec["paths"][path]["post"]["requestBody"]["content"]
        for content in body.values():
            properties = content["schema"]["properties"]
            if "source" in properties:
                properties["source"]["enum"] = [*sources, AUTO]
            if "target" in properties:
                properties["target"]["enum"] = targets


def settle_media_type(status: str, answer: dict[str, Any]) -> None:
    """An error answer (4xx, 5xx) as ``application/json``, the media type every error has; a
    success whose schema is a ``$ref`` beside ``{"type": "string"}`` as the ``$ref``."""
    content = answer.get("content", {})
    if status.isdigit() and int(status) >= 400 and content:
        answer["content"] = {"application/json": next(iter(content.values()))}
        return
    for media in content.values():
        schema = media.get("schema", {})
        if "$ref" in schema:
            media["schema"] = {"$ref": schema["$ref"]}


def give_examples(spec: dict[str, Any], default: ModelInfo) -> None:
    """Request examples for ``/translate``, ``/translate/stream`` and ``/attention`` with the
    default model's own search settings, in its source language."""
    sentence = EXAMPLE_SENTENCES.get(default.src_lang)
    search: dict[str, Any] = {"model": default.id, "decoding": "beam", **default.defaults}
    translate: dict[str, Any] = {"split_sentences": True, "format": "text", "nbest": 1,
                                 "scores": True}  # fmt: skip
    examples = {
        "/translate": {**search, **translate},
        "/translate/stream": {**search, **translate},
        "/attention": dict(search),
    }
    for path, example in examples.items():
        if sentence is not None:
            example = {"text": sentence, **example}
        spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["example"] = (
            example
        )
