"""Training checkpoints: listing, pruning, averaging, random-number state, and `anuvad average`."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model
from anuvad.cli.main import main
from anuvad.config import ExperimentConfig, config_to_dict
from anuvad.data.tokenizer import train_tokenizer
from anuvad.errors import CheckpointError, TrainingError
from anuvad.model.transformer import build_model
from anuvad.training.run_log import ThroughputWindow, peak_memory_mib
from anuvad.training.state import (
    Progress,
    TrainingState,
    average_weights,
    capture_rng_state,
    checkpoint_path,
    latest_training_state,
    list_checkpoints,
    load_training_state,
    prune_checkpoints,
    restore_rng_state,
    save_training_state,
)
from conftest import small_model_config

SENTENCES = [f"{a} {b}" for a in ("one", "two", "three", "four") for b in ("red", "blue", "green")]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, torch.Tensor]]]:
    """A run folder with checkpoints at steps 10, 20, 30 of three different random models."""
    run_dir = tmp_path_factory.mktemp("run")
    tokenizer = train_tokenizer(SENTENCES, ExperimentConfig().data.tokenizer, 40)
    config = ExperimentConfig()
    config.model = small_model_config(
        16, 1, src_vocab_size=tokenizer.vocab_size, tgt_vocab_size=tokenizer.vocab_size,
        share_source_embedding=True, dropout=0.1,
    )  # fmt: skip
    weights = []
    for seed, step in ((1, 10), (2, 20), (3, 30)):
        torch.manual_seed(seed)
        model = build_model(config.model)
        weights.append({k: v.clone() for k, v in model.state_dict().items()})
        state = TrainingState(
            config=config_to_dict(config),
            model=model.state_dict(),
            optimizer={},
            scaler={},
            progress=Progress(step=step),
            rng=capture_rng_state(),
            tokenizers={"src": tokenizer.model_proto, "tgt": tokenizer.model_proto},
        )
        save_training_state(checkpoint_path(run_dir, step), state)
    return run_dir, weights


def test_checkpoints_are_listed_oldest_first_and_temporary_files_ignored(
    run: tuple[Path, list[dict[str, torch.Tensor]]],
) -> None:
    run_dir, _ = run
    (run_dir / "checkpoints" / ".step_00000040.pt.abc.tmp").write_bytes(b"half a file")
    names = [p.name for p in list_checkpoints(run_dir)]
    assert names == ["step_00000010.pt", "step_00000020.pt", "step_00000030.pt"]
    assert load_training_state(list_checkpoints(run_dir)[-1]).progress.step == 30


def test_average_is_the_elementwise_mean(
    run: tuple[Path, list[dict[str, torch.Tensor]]],
) -> None:
    run_dir, weights = run
    averaged = average_weights(list_checkpoints(run_dir)[-2:])
    for name, value in averaged.items():
        expected = (weights[1][name].double() + weights[2][name].double()) / 2
        assert torch.allclose(value.double(), expected, atol=1e-7), name
    with pytest.raises(CheckpointError, match="no checkpoints"):
        average_weights([])


def test_anuvad_average_writes_a_model_file(
    run: tuple[Path, list[dict[str, torch.Tensor]]], tmp_path: Path
) -> None:
    run_dir, weights = run
    out = tmp_path / "avg.pt"
    assert main(["average", "--run-dir", str(run_dir), "--last", "3", "--out", str(out)]) == 0
    model = load_model(out).model.state_dict()
    for name, value in model.items():
        expected = sum(w[name].double() for w in weights) / 3
        assert isinstance(expected, torch.Tensor)
        assert torch.allclose(value.double(), expected, atol=1e-6), name


def test_average_refuses_last_0_and_checkpoints_of_another_run(
    run: tuple[Path, list[dict[str, torch.Tensor]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir, _ = run
    out = tmp_path / "avg.pt"
    assert main(["average", "--run-dir", str(run_dir), "--last", "0", "--out", str(out)]) == 2
    assert "--last must be at least 1, got 0" in capsys.readouterr().err and not out.exists()
    # The same architecture, other tokenizers: another run's checkpoint.
    ours = list_checkpoints(run_dir)[-1]
    state = load_training_state(ours)
    other_tokenizer = train_tokenizer(
        [*SENTENCES[::-1], "zebra quokka"], ExperimentConfig().data.tokenizer, 40
    )
    state.tokenizers = {"src": other_tokenizer.model_proto, "tgt": other_tokenizer.model_proto}
    foreign = tmp_path / "step_00000040.pt"
    save_training_state(foreign, state)
    with pytest.raises(CheckpointError, match="come from different runs \\(other tokenizers\\)"):
        average_weights([ours, foreign])
    code = main(["average", str(ours), str(foreign), "--out", str(out)])
    assert code == 2 and "average checkpoints of one run only" in capsys.readouterr().err


def test_resuming_needs_checkpoints_of_the_same_architecture(
    run: tuple[Path, list[dict[str, torch.Tensor]]], tmp_path: Path
) -> None:
    run_dir, _ = run
    stored = load_training_state(list_checkpoints(run_dir)[-1]).config["model"]
    path, state = latest_training_state(run_dir, stored)
    assert path.name == "step_00000030.pt" and state.progress.step == 30
    with pytest.raises(TrainingError, match="another model config"):
        latest_training_state(run_dir, {**stored, "d_model": 32})
    with pytest.raises(TrainingError, match="no checkpoints"):
        latest_training_state(tmp_path, stored)


def test_prune_keeps_the_newest(tmp_path: Path) -> None:
    for step in (5, 10, 15, 20):
        path = checkpoint_path(tmp_path, step)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    deleted = prune_checkpoints(tmp_path, keep_last=2)
    assert [p.name for p in deleted] == ["step_00000005.pt", "step_00000010.pt"]
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step_00000015.pt", "step_00000020.pt"]


def test_random_state_round_trip_reproduces_dropout() -> None:
    torch.manual_seed(11)
    random.seed(11)
    state = capture_rng_state()
    first = (torch.nn.functional.dropout(torch.ones(64), 0.5), random.random())
    restore_rng_state(state)
    second = (torch.nn.functional.dropout(torch.ones(64), 0.5), random.random())
    assert torch.equal(first[0], second[0]) and first[1] == second[1]


def test_a_damaged_checkpoint_is_a_checkpoint_error(tmp_path: Path) -> None:
    path = tmp_path / "step_00000001.pt"
    path.write_bytes(b"\x00" * 10)
    with pytest.raises(CheckpointError, match="truncated or not a PyTorch training checkpoint"):
        load_training_state(path)
    torch.save({"format": "something-else"}, path)
    with pytest.raises(CheckpointError, match="not an anuvad training checkpoint"):
        load_training_state(path)


def test_throughput_window_averages_over_tokens() -> None:
    window = ThroughputWindow()
    window.add(2.0, 100)
    window.add(1.0, 300)
    record = window.summary()
    assert record["loss"] == pytest.approx((2.0 * 100 + 1.0 * 300) / 400)
    assert record["tgt_tokens_per_s"] > 0 and record["step_seconds"] > 0
    assert window.tokens == 0 and window.steps == 0  # a new window starts


def test_peak_memory_is_reported_in_mib() -> None:
    held = torch.ones(16 * 2**20 // 4)  # 16 MiB that stay alive during the reading
    peak = peak_memory_mib(torch.device("cpu"))
    assert peak["peak_rss_mib"] >= 16 and held.numel() > 0
