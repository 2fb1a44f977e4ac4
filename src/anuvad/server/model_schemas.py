"""What ``GET /models``, ``GET /health`` and ``POST /detect`` say: the served models, the
server's state, and which served language a text is written in."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from anuvad.server.limits import MAX_TEXT_CHARS, Limits
from anuvad.server.schemas import StrictRequest, check_text, text_schema


class ConfidenceInfo(BaseModel):
    """A served model's confidence calibration and how well it ranked held-out dev sentences."""

    good_chrf: float = Field(description="sentence chrF++ that counted as a good translation")
    threshold: float = Field(description="confidence below this flags a sentence likely wrong")
    features: list[str]
    reverse_model: str = Field(description="the reverse model it uses ('' = none)")
    held_out_auroc: dict[str, float | None] = Field(
        description="per domain, per dev set where a domain has several, and pooled: AUROC for "
        "finding bad held-out sentences"
    )


class WebExportInfo(BaseModel):
    """A served model's web export (``anuvad serve --web DIR``): the page can translate with it
    in the browser."""

    url: str = Field(description="the export's folder, e.g. '/web/enhi_d256_L3/' (its files)")
    download_bytes: int = Field(description="what a browser downloads to translate with it")
    version: str = Field(
        description="changes whenever the export does (a hash of its model.json): the browser's "
        "cache key"
    )


class ModelInfo(BaseModel):
    """What ``GET /models`` says about a served model."""

    id: str = Field(description="what a request's `model` field names")
    title: str = Field(
        description="the model in words, for people: its direction and what it is for, e.g. "
        "'English → Hindi, general text' (the model file's own title when it has one; "
        "anuvad.server.model_names says how it is made otherwise)",
        examples=["English → Hindi, general text"],
    )
    summary: str = Field(
        description="its training data in plain words, e.g. 'trained on 39,000 sentence pairs "
        "of image captions, everyday phrases, software strings and TED talks'",
    )
    name: str = Field(description="the config name the model was trained under (for scripts)")
    src_lang: str
    tgt_lang: str
    file: str | None = Field(description="the model file's name (not its folder)")
    engine: str = Field(description="torch (anuvad's own search) or ctranslate2")
    capabilities: list[str] = Field(
        default_factory=list,
        description="what the engine can do beyond plain translation, by name (the fields of "
        "anuvad.inference.translation.Capabilities), e.g. glossary, bound_stopping "
        "(early_stopping 'bound'), quality (word probabilities and confidence), full_attention "
        "(every layer and head, cosines)",
    )
    num_parameters: int
    d_model: int
    num_heads: int
    num_encoder_layers: int
    num_decoder_layers: int
    src_vocab_size: int
    tgt_vocab_size: int
    default_beam_size: int
    default_length_penalty: float
    defaults: dict[str, int | float | str] = Field(
        default_factory=dict,
        description="the model's own value of every search setting a request may set (what "
        "a request's null means)",
    )
    trained_on: str = Field(
        description="one line naming the training corpora and their weights (the model card in "
        "data/trained_models/README.md has the details)"
    )
    licence: str | None = Field(
        None,
        description="its terms of use in a few words, e.g. 'non-commercial research use only' "
        "(from its model card, or from its training data's licences); null: not known",
    )
    licence_note: str = Field("", description="where `licence` comes from")
    metadata: dict[str, Any]
    confidence: ConfidenceInfo | None = Field(
        None, description="how sentence confidence was calibrated; null: no confidence"
    )
    web: WebExportInfo | None = Field(
        default=None, description="its export for translating in the browser; null: none served"
    )


class ModelsResponse(BaseModel):
    """``GET /models``: the served model(s) and the request limits."""

    models: list[ModelInfo]
    limits: Limits


class HealthResponse(BaseModel):
    """``GET /health``."""

    status: Literal["ok"]
    model: str = Field(description="the default model's id")
    models: list[str] = Field(description="every served model's id, the default first")
    uptime_s: float
    batching: bool
    requests: int = Field(description="translation and attention requests answered")
    model_calls: int = Field(description="calls into the model (batching merges requests)")


class DetectRequest(StrictRequest):
    """``POST /detect``: which of the served source languages a text is written in."""

    text: str = Field(
        description=f"the text (1-{MAX_TEXT_CHARS} characters)",
        examples=["कप्तान ने 85 रन बनाए।"],
        json_schema_extra=text_schema(MAX_TEXT_CHARS),
    )

    @field_validator("text")
    @classmethod
    def _check_one_text(cls, value: str) -> str:
        return check_text(value)


class LanguageScore(BaseModel):
    """A candidate language and the share of the text's letters in its script (0-1)."""

    language: str = Field(description="ISO 639-1 code, e.g. 'hi'")
    confidence: float


class DetectResponse(BaseModel):
    """The text's language among the served models' source languages (told by its script)."""

    language: str | None = Field(
        description="the best candidate; null when the text has no letters"
    )
    confidence: float = Field(description="the share of the text's letters in its script (0-1)")
    candidates: list[LanguageScore] = Field(
        description="every served source language, best first (languages that share a script, "
        "such as English and German, cannot be told apart: they get the same share)"
    )
    model: str | None = Field(
        description="the id of the first served model that translates from `language` (what "
        "POST /translate chooses for a request that names no model); null: none does"
    )
