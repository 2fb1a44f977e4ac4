"""What a request asks of the model, within the server's budget: its search settings (one
value the micro-batcher groups requests by), and the served model ids in the published
schema."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from anuvad.config import DecodeConfig
from anuvad.errors import ConfigError
from anuvad.inference.engine import TranslationEngine
from anuvad.server.errors import ModelFailedError
from anuvad.server.limits import (
    DEFAULT_NO_REPEAT_NGRAM_SIZE,
    MAX_OUTPUT_TOKENS,
    MAX_ROW_STEPS,
)
from anuvad.server.schemas import (
    DecodeSettings,
    TranslateRequest,
)


def search_settings(
    translator: TranslationEngine,
    body: DecodeSettings,
    *,
    max_output_tokens: int = MAX_OUTPUT_TOKENS,
) -> DecodeConfig:
    """The request's search options over the model's own settings, within the server's work
    budget, as one value (the micro-batcher groups requests by it): output tokens capped at
    ``max_output_tokens``, repetition blocking at the server's default unless the request says,
    and batches of at most :data:`MAX_ROW_STEPS` hypothesis rows x output steps per model call.

    Raises:
        ModelFailedError: 422 when the engine cannot search that way (e.g. ``early_stopping``
            "bound" on CTranslate2), naming why.
    """
    model_cap = translator.decode.max_output_tokens
    cap = min(model_cap, max_output_tokens) if model_cap else max_output_tokens
    beam_size = body.effective_beam_size()
    no_repeat = body.no_repeat_ngram_size
    try:
        settings = translator.settings(
            max_output_tokens=cap,
            beam_size=beam_size,
            nbest=body.effective_nbest() if isinstance(body, TranslateRequest) else 1,
            length_penalty=body.length_penalty,
            early_stopping=body.early_stopping,
            no_repeat_ngram_size=DEFAULT_NO_REPEAT_NGRAM_SIZE if no_repeat is None else no_repeat,
            # Sentences per call from the rows x steps budget; token batching would let many
            # short sentences (each allowed `cap` output steps) past it.
            batch_size=min(
                translator.decode.batch_size, max(1, MAX_ROW_STEPS // (beam_size * cap))
            ),
            max_tokens=0,
        )
        if settings.early_stopping != "finished" and translator.engine != "torch":
            raise ConfigError(
                f"early_stopping {settings.early_stopping!r} needs the torch engine; this "
                f"model is served by {translator.engine}"
            )
    except ConfigError as exc:
        raise ModelFailedError(str(exc), 422) from exc
    return settings


def publish_model_ids(app: FastAPI, ids: list[str]) -> None:
    """Make ``/openapi.json`` list the served model ids as the values of every request's
    ``model`` field, so that the schema allows exactly what the server answers."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = build()
            for name in ("TranslateRequest", "AttentionRequest"):
                field = spec["components"]["schemas"][name]["properties"]["model"]
                field["anyOf"] = [{"type": "string", "enum": ids}, {"type": "null"}]
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
