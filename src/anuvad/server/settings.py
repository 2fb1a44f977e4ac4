"""What a request asks of the model, within the server's budget: its search settings (one
value the micro-batcher groups requests by)."""

from __future__ import annotations

from anuvad.decode_config import DecodeConfig
from anuvad.errors import ConfigError
from anuvad.inference.engine import TranslationEngine
from anuvad.server.errors import ModelFailedError
from anuvad.server.limits import MAX_OUTPUT_TOKENS, MAX_ROW_STEPS
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
    """The request's search settings over the model's own (a setting the request leaves null
    keeps the model's, as on the command line), within the server's work budget, as one value
    (the micro-batcher groups requests by it): output tokens capped at ``max_output_tokens``,
    n-best at most the beam, and batches of at most :data:`MAX_ROW_STEPS` hypothesis rows x
    output steps per model call.

    Raises:
        ModelFailedError: 422 for an invalid combination, or when the engine cannot search that
            way (e.g. ``early_stopping`` "bound" without the capability), naming why.
    """
    model_cap = translator.decode.max_output_tokens
    cap = min(model_cap, max_output_tokens) if model_cap else max_output_tokens
    try:
        chosen = translator.settings(**body.search_changes())
        nbest = body.nbest if isinstance(body, TranslateRequest) else 1
        settings = chosen.with_overrides(
            max_output_tokens=cap,
            nbest=min(nbest, chosen.beam_size),
            # Sentences per call from the rows x steps budget; token batching would let many
            # short sentences (each allowed `cap` output steps) past it.
            batch_size=min(chosen.batch_size, max(1, MAX_ROW_STEPS // (chosen.beam_size * cap))),
            max_tokens=0,
        )
        if settings.early_stopping != "finished" and not translator.capabilities.bound_stopping:
            raise ConfigError(
                f"early_stopping {settings.early_stopping!r} needs an engine that can stop on "
                f"the bound (the torch engine); this model is served by {translator.engine}"
            )
    except ConfigError as exc:
        raise ModelFailedError(str(exc), 422) from exc
    return settings
