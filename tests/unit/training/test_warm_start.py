"""Continued training (train.init_from): the model file's weights and tokenizers start the run."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model
from anuvad.data.prepare import prepare_data, prepare_or_load
from anuvad.errors import TrainingError
from anuvad.training.launch import run_training
from anuvad.training.trainer import Trainer
from anuvad.training.warm_start import init_tokenizers
from conftest import tiny_config


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny trained model file (its own tokenizers, 4 updates)."""
    tmp = tmp_path_factory.mktemp("parent")
    config = tiny_config(tmp, "train.max_steps=4", "train.average_last=1", "train.valid_every=0")
    Trainer(config, prepare_data(config, tmp / "data"), tmp / "run").train(show_progress=False)
    return tmp / "run" / "model.pt"


def test_a_continued_run_starts_from_the_model_files_weights_and_tokenizers(
    parent: Path, tmp_path: Path
) -> None:
    # Another vocabulary size in data.tokenizer: ignored, the model file's tokenizers are used.
    config = tiny_config(tmp_path, f"train.init_from={parent}", "data.tokenizer.joint=false")
    stored = load_model(parent)
    prepared = prepare_data(config, tmp_path / "data", init_tokenizers(parent))
    assert prepared.src_tokenizer.model_proto == stored.src_tokenizer.model_proto
    assert prepared.tgt_tokenizer.model_proto == stored.tgt_tokenizer.model_proto
    trainer = Trainer(config, prepared, tmp_path / "run")
    start = trainer.model.state_dict()
    for name, value in stored.model.state_dict().items():
        assert torch.equal(start[name].cpu(), value), name
    assert trainer.progress.step == 0  # a fresh schedule and optimizer
    assert not trainer.optimizer.state


def test_continued_training_end_to_end_and_prepared_data_follows_the_tokenizers(
    parent: Path, tmp_path: Path
) -> None:
    config = tiny_config(
        tmp_path, f"train.init_from={parent}", "train.max_steps=2", "train.valid_every=0"
    )
    result = run_training(config, tmp_path / "data", tmp_path / "run", show_progress=False)
    assert result.steps == 2
    trained = load_model(tmp_path / "run" / "model.pt")
    assert trained.src_tokenizer.model_proto == load_model(parent).src_tokenizer.model_proto
    # The same folder without init_from (tokenizers to train, here not joint): prepared again.
    fresh = prepare_or_load(tiny_config(tmp_path, "data.tokenizer.joint=false"), tmp_path / "data")
    assert fresh.src_tokenizer.model_proto != trained.src_tokenizer.model_proto


def test_another_architecture_is_refused_naming_the_fields(parent: Path, tmp_path: Path) -> None:
    config = tiny_config(tmp_path, f"train.init_from={parent}", "model.d_ff=48")
    prepared = prepare_data(config, tmp_path / "data", init_tokenizers(parent))
    with pytest.raises(TrainingError, match=r"model\.d_ff: run 48"):
        Trainer(config, prepared, tmp_path / "run")


def test_data_prepared_with_other_tokenizers_is_refused(parent: Path, tmp_path: Path) -> None:
    config = tiny_config(tmp_path, f"train.init_from={parent}", "data.tokenizer.joint=false")
    other = prepare_data(config, tmp_path / "data")  # tokenizers trained, not the model file's
    with pytest.raises(TrainingError, match="delete the prepared-data folder"):
        Trainer(config, other, tmp_path / "run")


def test_a_missing_or_foreign_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match=r"train\.init_from"):
        init_tokenizers(tmp_path / "nope.pt")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a model")
    with pytest.raises(TrainingError, match=r"junk\.pt"):
        init_tokenizers(junk)
