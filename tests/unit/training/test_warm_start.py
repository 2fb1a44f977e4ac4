"""Continued training (train.init_from): the model file's weights and tokenizers start the run."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model
from anuvad.data.prepare import prepare_data, prepare_or_load
from anuvad.errors import ConfigError, TrainingError
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


def test_another_depth_copies_the_named_layers_of_the_file(parent: Path, tmp_path: Path) -> None:
    # tiny.yaml has 2 + 2 layers: a 4 + 1 run stacks the encoder twice and keeps decoder layer 1.
    config = tiny_config(
        tmp_path,
        f"train.init_from={parent}",
        "model.num_encoder_layers=4",
        "model.num_decoder_layers=1",
        "train.init_encoder_layers=[0, 1, 0, 1]",
        "train.init_decoder_layers=[1]",
    )
    stored = load_model(parent).model.state_dict()
    prepared = prepare_data(config, tmp_path / "data", init_tokenizers(parent))
    start = Trainer(config, prepared, tmp_path / "run").model.state_dict()
    assert set(start) == {
        *(name for name in stored if not name.startswith(("encoder_layers.", "decoder_layers."))),
        *(name.replace("encoder_layers.0.", f"encoder_layers.{i}.") for i in range(4)
          for name in stored if name.startswith("encoder_layers.0.")),
        *(name.replace("decoder_layers.1.", "decoder_layers.0.")
          for name in stored if name.startswith("decoder_layers.1.")),
    }  # fmt: skip
    for name, value in start.items():
        source = name
        if name.startswith("encoder_layers."):
            layer = int(name.split(".")[1])
            source = name.replace(f"encoder_layers.{layer}.", f"encoder_layers.{layer % 2}.", 1)
        elif name.startswith("decoder_layers."):
            source = name.replace("decoder_layers.0.", "decoder_layers.1.", 1)
        assert torch.equal(value.cpu(), stored[source]), name


def test_the_identity_layer_map_is_the_plain_warm_start(parent: Path, tmp_path: Path) -> None:
    plain = tiny_config(tmp_path, f"train.init_from={parent}")
    mapped = tiny_config(
        tmp_path, f"train.init_from={parent}", "train.init_encoder_layers=[0, 1]",
        "train.init_decoder_layers=[0, 1]",
    )  # fmt: skip
    prepared = prepare_data(plain, tmp_path / "data", init_tokenizers(parent))
    first = Trainer(plain, prepared, tmp_path / "a").model.state_dict()
    second = Trainer(mapped, prepared, tmp_path / "b").model.state_dict()
    assert first.keys() == second.keys()
    assert all(torch.equal(first[name], second[name]) for name in first)


def test_bad_layer_maps_are_refused_naming_the_field(parent: Path, tmp_path: Path) -> None:
    config = tiny_config(
        tmp_path, f"train.init_from={parent}", "model.num_decoder_layers=1",
        "train.init_decoder_layers=[2]",
    )  # fmt: skip
    prepared = prepare_data(config, tmp_path / "data", init_tokenizers(parent))
    with pytest.raises(TrainingError, match=r"init_decoder_layers=\[2\].*layers 0-1"):
        Trainer(config, prepared, tmp_path / "run")
    with pytest.raises(ConfigError, match=r"model\.num_encoder_layers is 2, got \[0\]"):
        tiny_config(tmp_path, f"train.init_from={parent}", "train.init_encoder_layers=[0]")
    with pytest.raises(ConfigError, match=r"needs train\.init_from"):
        tiny_config(tmp_path, "train.init_encoder_layers=[0, 1]")
    # another depth without a map is still another architecture
    deeper = tiny_config(tmp_path, f"train.init_from={parent}", "model.num_encoder_layers=3")
    with pytest.raises(TrainingError, match=r"model\.num_encoder_layers: run 3"):
        Trainer(deeper, prepared, tmp_path / "run")
