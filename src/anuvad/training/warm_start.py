"""Continued training: a run that starts from a model file's weights and tokenizers.

``train.init_from`` names a model file (``anuvad average`` / ``export`` output). Its tokenizers
encode the run's data (so its vocabularies, and the rows of its embeddings, keep their meaning)
and its weights replace the random initialisation; the optimizer, the learning-rate schedule and
the step count start afresh (fairseq's ``--reset-optimizer``, Marian's ``--pretrained-model``).
This is how a model trained in one session is carried on in the next on a fresh machine, and how
a caption model is adapted to general text without losing what it knows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from anuvad.checkpoint import load_model
from anuvad.config import ModelConfig
from anuvad.data.tokenizer import Tokenizer
from anuvad.errors import CheckpointError, TrainingError

# Regularisation, not architecture: a continued run may change these.
FREE_FIELDS = frozenset({"dropout", "attention_dropout", "activation_dropout"})


def init_tokenizers(path: str | Path) -> tuple[Tokenizer, Tokenizer]:
    """The (source, target) tokenizers stored in the model file ``path``.

    Raises:
        TrainingError: the file cannot be read as an anuvad model file.
    """
    try:
        loaded = load_model(path)
    except CheckpointError as exc:
        raise TrainingError(f"train.init_from: {exc}") from exc
    return loaded.src_tokenizer, loaded.tgt_tokenizer


def init_weights(
    path: str | Path,
    model_config: ModelConfig,
    src_tokenizer: Tokenizer,
    tgt_tokenizer: Tokenizer,
) -> dict[str, torch.Tensor]:
    """The float32 weights of model file ``path``, checked against the run that will use them.

    Args:
        path: the model file (``train.init_from``).
        model_config: the run's model settings (vocabulary sizes filled in).
        src_tokenizer: the run's source tokenizer (must be the model file's, byte for byte).
        tgt_tokenizer: the run's target tokenizer (likewise).

    Raises:
        TrainingError: unreadable file, another architecture, or other tokenizers.
    """
    try:
        loaded = load_model(path)
    except CheckpointError as exc:
        raise TrainingError(f"train.init_from: {exc}") from exc
    theirs = dataclasses.asdict(loaded.config.model)
    ours = dataclasses.asdict(model_config)
    differ = [
        f"model.{name}: run {ours[name]!r}, {Path(path).name} {theirs[name]!r}"
        for name in ours
        if name not in FREE_FIELDS and ours[name] != theirs.get(name)
    ]
    if differ:
        raise TrainingError(
            f"train.init_from={path} has another architecture ({'; '.join(differ)}); set the "
            "run's model section to the model file's (only dropout may differ)"
        )
    for side, mine, stored in (
        ("source", src_tokenizer, loaded.src_tokenizer),
        ("target", tgt_tokenizer, loaded.tgt_tokenizer),
    ):
        if mine.state() != stored.state():
            raise TrainingError(
                f"the prepared data's {side} tokenizer is not the one in train.init_from={path} "
                "(data prepared before init_from was set?); delete the prepared-data folder so "
                "that it is prepared again with the model file's tokenizers"
            )
    return {name: tensor.detach().clone() for name, tensor in loaded.model.state_dict().items()}
