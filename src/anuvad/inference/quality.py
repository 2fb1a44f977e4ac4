"""A translation's quality: the confidence model a translator loads beside its file, the reverse
model that model needs, and the quality of each best candidate (the signals of its tokens, the
reverse model's view of the source, the agreement of the other candidates) that the confidence
turns into a probability (:mod:`anuvad.inference.confidence`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from anuvad.checkpoint import load_model
from anuvad.data.cleaning import source_normalizer
from anuvad.data.download import sha256_of
from anuvad.errors import ConfigError
from anuvad.inference.confidence import (
    ATTENTION_FEATURES,
    OutputSignals,
    assess,
    load_calibration,
    output_signals,
)
from anuvad.inference.cpu import accelerate
from anuvad.inference.translation import Candidate, Quality

if TYPE_CHECKING:
    from anuvad.inference.translator import Translator


def load_confidence(translator: Translator) -> None:
    """Load the confidence model beside ``translator.model_path`` (a multilingual file's: its
    pair's, ``<stem>.en-hi.confidence.json``) and the reverse model it needs, if any.

    Raises:
        ConfigError: it is malformed or belongs to another model file, or its reverse model
            is missing or another.
        CheckpointError: the reverse model cannot be loaded.
    """
    if translator.model_path is None:
        return
    translator.calibration = load_calibration(translator.model_path, translator.pair_name)
    if translator.calibration is not None and translator.calibration.reverse_model:
        reverse = translator.model_path.parent / translator.calibration.reverse_model
        translator.use_reverse(reverse, translator.calibration.reverse_sha256)


def use_reverse(translator: Translator, path: str | Path, sha256: str = "") -> None:
    """Load the reverse (target→source) model at ``path`` for the confidence features.

    Raises:
        CheckpointError: it cannot be loaded.
        ConfigError: it is missing, its SHA-256 is not ``sha256`` (when given), or its
            languages are not this model's reversed.
    """
    if not Path(path).is_file():
        raise ConfigError(
            f"the confidence model of {translator.model_path} needs the reverse model {path}, "
            "which is missing; put it back, or calibrate again without --reverse-model"
        )
    if sha256 and sha256_of(Path(path)) != sha256:
        raise ConfigError(
            f"{path} is not the reverse model the confidence was fitted with (SHA-256 "
            "differs); run `anuvad calibrate` again"
        )
    from anuvad.inference.translator import Translator  # the module that imports this one

    mine = translator.model_file.config.data
    if (
        translator.pair is not None
        and translator.model_path is not None
        and (Path(path).resolve() == translator.model_path.resolve())
    ):  # a multilingual file's reverse pair: the same network, no second copy
        reverse = Translator(
            translator.model_file, translator.decode, (mine.tgt_lang, mine.src_lang)
        )
        reverse.lock = translator.lock
    else:
        reverse = Translator(load_model(path, device=translator.device))
        accelerate(reverse.model)
    theirs = reverse.model_file.config.data
    if (theirs.src_lang, theirs.tgt_lang) != (mine.tgt_lang, mine.src_lang):
        raise ConfigError(
            f"{path} translates {theirs.src_lang}->{theirs.tgt_lang}; a reverse model for "
            f"this {mine.src_lang}->{mine.tgt_lang} model must translate "
            f"{mine.tgt_lang}->{mine.src_lang}"
        )
    reverse.model_path = Path(path)
    translator.reverse = reverse


def assess_best(
    translator: Translator,
    texts: list[str],
    sources: list[list[int]],
    candidates: list[list[Candidate]],
) -> None:
    """Set the :class:`Quality` of each source's best candidate: what the search saw of its
    tokens (a forced pass instead when a feature needs the attention, or the search did not
    record them), one forced pass of ``translator.reverse`` over the source given the output
    when there is one, and how much the other candidates agree with the best."""
    best = [c[0] for c in candidates]
    used = translator.calibration.features if translator.calibration is not None else ()
    # The slower attention path only when a feature needs it: serving an uncalibrated model
    # (word probabilities only) or one calibrated on the default features skips it.
    attention = translator.all_features or any(f in ATTENTION_FEATURES for f in used)
    recorded = [c.signals for c in best]
    signals: list[OutputSignals]
    if not attention and all(r is not None for r in recorded):
        signals = [OutputSignals(lps, ents, None) for lps, ents in filter(None, recorded)]
    else:
        outputs = [(c.token_ids, c.finished) for c in best]
        signals = output_signals(
            translator.model, sources, outputs, attention, tgt_prefix=translator.tgt_prefix
        )
    backward: list[OutputSignals | None] = [None] * len(best)
    if translator.reverse is not None:
        reverse = translator.reverse
        written = reverse.encode([c.text for c in best])
        top = reverse.model_file.config.model.max_positions - 1  # room for EOS
        normalize = source_normalizer(reverse.model_file.config.data)
        originals = [(reverse.tgt_tokenizer.encode(normalize(t))[:top], True) for t in texts]
        backward = list(
            output_signals(
                reverse.model,
                written,
                originals,
                attention=False,
                entropy=False,
                tgt_prefix=reverse.tgt_prefix,
            )
        )
    calibrated = translator.calibration is not None
    for src, found, seen, back in zip(sources, candidates, signals, backward, strict=True):
        if found[0].as_written:  # "***", "12:30", a link alone: copied, nothing to doubt
            sure = (1.0, False) if calibrated else (None, None)
            found[0].quality = Quality([], [], {}, *sure)
            continue
        found[0].quality = assess(
            seen, found[0].finished, found[0].text, src, found[0].token_ids,
            translator.src_tokenizer, translator.tgt_tokenizer, translator.calibration, back,
            [c.text for c in found[1:]],
        )  # fmt: skip


__all__ = ["assess_best", "load_confidence", "use_reverse"]
