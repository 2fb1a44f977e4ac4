"""Continued training: a run that starts from a model file's weights and tokenizers.

``train.init_from`` names a model file (``anuvad average`` / ``export`` output). Its tokenizers
encode the run's data (so its vocabularies, and the rows of its embeddings, keep their meaning)
and its weights replace the random initialisation; the optimizer, the learning-rate schedule and
the step count start afresh (fairseq's ``--reset-optimizer``, Marian's ``--pretrained-model``).
This is how a model trained in one session is carried on in the next on a fresh machine, and how
a caption model is adapted to general text without losing what it knows.

``train.init_encoder_layers`` / ``init_decoder_layers`` start a run of another depth from the same
file: each of the run's layers copies the file's layer named at its position (a deeper encoder by
stacking the file's layers again, a shallower decoder by keeping some of them).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import torch

from anuvad.checkpoint import load_model
from anuvad.config import ModelConfig
from anuvad.data.tokenizer import Tokenizer
from anuvad.errors import CheckpointError, TrainingError

# Regularisation, not architecture: a continued run may change these.
FREE_FIELDS = frozenset({"dropout", "attention_dropout", "activation_dropout"})
_LAYER_KEY = re.compile(r"^(encoder|decoder)_layers\.(\d+)\.(.+)$")


def architecture_differences(
    ours: ModelConfig, theirs: ModelConfig, free: Collection[str] = FREE_FIELDS
) -> list[str]:
    """The model settings (field names) that differ between two models, ``free`` ones aside."""
    mine, other = dataclasses.asdict(ours), dataclasses.asdict(theirs)
    return [name for name in mine if name not in free and mine[name] != other.get(name)]


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
    encoder_layers: Sequence[int] = (),
    decoder_layers: Sequence[int] = (),
) -> dict[str, torch.Tensor]:
    """The float32 weights of model file ``path``, checked against the run that will use them.

    Args:
        path: the model file (``train.init_from``).
        model_config: the run's model settings (vocabulary sizes filled in).
        src_tokenizer: the run's source tokenizer (must be the model file's, byte for byte).
        tgt_tokenizer: the run's target tokenizer (likewise).
        encoder_layers: for each of the run's encoder layers, the file's layer it copies
            (``train.init_encoder_layers``); empty = the same layer, the same depth.
        decoder_layers: likewise for the decoder (``train.init_decoder_layers``).

    Raises:
        TrainingError: unreadable file, another architecture, other tokenizers, or a layer map
            naming a layer the file does not have.
    """
    try:
        loaded = load_model(path)
    except CheckpointError as exc:
        raise TrainingError(f"train.init_from: {exc}") from exc
    theirs = dataclasses.asdict(loaded.config.model)
    ours = dataclasses.asdict(model_config)
    free = set(FREE_FIELDS)
    maps = {"encoder": list(encoder_layers), "decoder": list(decoder_layers)}
    for side, layer_map in maps.items():
        if not layer_map:
            continue
        free.add(f"num_{side}_layers")
        depth = theirs[f"num_{side}_layers"]
        if any(not 0 <= i < depth for i in layer_map):
            raise TrainingError(
                f"train.init_{side}_layers={layer_map} names a layer {Path(path).name} does not "
                f"have: its {side} has layers 0-{depth - 1}"
            )
    differ = [
        f"model.{name}: run {ours[name]!r}, {Path(path).name} {theirs[name]!r}"
        for name in architecture_differences(model_config, loaded.config.model, free)
    ]
    if differ:
        raise TrainingError(
            f"train.init_from={path} has another architecture ({'; '.join(differ)}); set the "
            "run's model section to the model file's (only dropout may differ, and the depth "
            "with train.init_encoder_layers / init_decoder_layers)"
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
    stored_weights = loaded.model.state_dict()
    return {
        name: stored_weights[source].detach().clone()
        for name, source in _weight_sources(stored_weights, maps).items()
    }


def _weight_sources(stored: dict[str, torch.Tensor], maps: dict[str, list[int]]) -> dict[str, str]:
    """For each weight of the run, the name of the stored weight it copies."""
    sources: dict[str, str] = {}
    for name in stored:
        match = _LAYER_KEY.match(name)
        if match is None or not maps[match.group(1)]:
            sources[name] = name
            continue
        side, layer, rest = match.group(1), int(match.group(2)), match.group(3)
        for position, source in enumerate(maps[side]):
            if source == layer:
                sources[f"{side}_layers.{position}.{rest}"] = name
    return sources
