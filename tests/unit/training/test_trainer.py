"""The trainer's invariants: accumulation = one big batch, averaging, failures, early stopping."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
import yaml

from anuvad.checkpoint import load_model
from anuvad.config import load_config
from anuvad.data.prepare import PreparedData, prepare_data
from anuvad.errors import TrainingError
from anuvad.evaluation.metrics import corpus_scores
from anuvad.training.epochs import EpochData
from anuvad.training.optim import noam_learning_rate
from anuvad.training.precision import resolve_precision
from anuvad.training.state import list_checkpoints, load_training_state
from anuvad.training.trainer import Trainer
from conftest import tiny_config

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PreparedData]:
    tmp = tmp_path_factory.mktemp("prepared")
    return tmp, prepare_data(tiny_config(tmp), tmp / "data")


def gradients_of_one_step(
    trainer: Trainer, groups: list[list[int]], tokens: int
) -> dict[str, torch.Tensor]:
    """Run one train_step, capturing the gradients the optimizer receives."""
    captured: dict[str, torch.Tensor] = {}

    def capture(*args: object, **kwargs: object) -> None:
        for name, param in trainer.model.named_parameters():
            assert param.grad is not None
            captured[name] = param.grad.detach().clone()

    trainer.optimizer.step = capture  # type: ignore[method-assign]
    trainer.train_step(groups, tokens)
    return captured


def test_accumulated_batches_give_the_same_gradient_as_one_batch(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    # Gradients, not updated weights, are compared: the key projection's bias has a gradient
    # that is zero up to rounding (softmax ignores a constant per query), and Adam's
    # normalisation turns that rounding noise into full-size steps of either sign.
    # No clipping: it rescales the gradient to a fixed norm and would hide a wrong scale.
    tmp, data = prepared
    config = tiny_config(tmp, "train.clip_norm=0")
    first, second = list(range(0, 40)), list(range(40, 100))
    tokens = sum(len(data.train.tgt[i]) + 1 for i in first + second)
    accumulated = gradients_of_one_step(
        Trainer(config, data, tmp_path / "a"), [first, second], tokens
    )
    single = gradients_of_one_step(Trainer(config, data, tmp_path / "b"), [first + second], tokens)
    assert accumulated.keys() == single.keys()
    for name, grad in accumulated.items():
        assert torch.allclose(grad, single[name], rtol=1e-4, atol=1e-7), name


def test_run_writes_checkpoints_averages_them_and_logs(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    config = tiny_config(
        tmp,
        "train.save_every=2",
        "train.keep_last=3",
        "train.average_last=2",
        "train.valid_every=3",
        "train.log_every=2",
    )
    run = tmp_path / "run"
    result = Trainer(config, data, run).train(show_progress=False)
    assert result.steps == 6
    checkpoints = list_checkpoints(run)
    assert [c.name for c in checkpoints] == [f"step_{s:08d}.pt" for s in (2, 4, 6)]
    # The final model is the element-wise mean of the last two checkpoints.
    last_two = [load_training_state(c).model for c in checkpoints[-2:]]
    final = load_model(run / "model.pt").model.state_dict()
    for name, value in final.items():
        expected = (last_two[0][name].double() + last_two[1][name].double()) / 2
        assert torch.allclose(value.double(), expected, atol=1e-6), name
    assert (run / "model_best.pt").is_file()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "loss" in r] == [2, 4, 6]
    assert any("valid_bleu" in r for r in records)
    # Every validation's dev translations are kept, and re-scoring them gives the logged BLEU.
    for record in (r for r in records if "valid_bleu" in r):
        suffix = ".averaged.hyp" if record.get("final") else ".hyp"  # the averaged model's
        hyp = run / "valid" / f"step_{record['step']:08d}{suffix}"
        hypotheses = hyp.read_text(encoding="utf-8").splitlines()
        references = data.valid_tgt_text[:20]
        assert len(hypotheses) == len(references) == 20
        rescored = corpus_scores(hypotheses, references, config.train.bleu_tokenize)
        assert rescored.bleu == pytest.approx(record["valid_bleu"])
    assert records[-1]["final"] is True and "last_valid_nll" in records[-1]
    assert any((run / "tensorboard").iterdir())
    assert "resumed_at_step" in json.loads((run / "run.json").read_text())[0]
    assert "training tiny_reverse" in (run / "train.log").read_text()


def test_a_fresh_run_refuses_the_folder_of_an_earlier_run_and_changes_nothing(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    # Without the refusal the new run's pruning keeps the old run's later checkpoints and
    # averages them into the new model.pt (found on the parsing curve, 2026-11-23).
    tmp, data = prepared
    config = tiny_config(tmp, "train.max_steps=4", "train.save_every=2", "train.valid_every=0")
    run = tmp_path / "run"
    Trainer(config, data, run).train(show_progress=False)
    before = {p: p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}
    with pytest.raises(TrainingError, match=r"already holds a run \(2 checkpoint") as error:
        Trainer(config, data, run).train(show_progress=False)
    assert "--resume" in str(error.value) and "model.pt" in str(error.value)
    assert {p: p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()} == before
    # Resuming the same folder is what the message offers, and it works.
    longer = tiny_config(tmp, "train.max_steps=6", "train.save_every=2", "train.valid_every=0")
    assert Trainer(longer, data, run, resume=True).train(show_progress=False).steps == 6


def test_non_finite_loss_stops_with_the_step_and_keeps_the_last_checkpoint(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    config = tiny_config(tmp, "train.save_every=2", "train.max_steps=5")
    trainer = Trainer(config, data, tmp_path / "run")
    original = trainer.train_step
    calls = {"n": 0}

    def poisoned(local_groups: Sequence[list[int]], global_tokens: int) -> float:
        calls["n"] += 1
        if calls["n"] == 3:  # make step 3 diverge
            with torch.no_grad():
                trainer.model.tgt_embed.weight[5] = float("nan")
        return original(local_groups, global_tokens)

    trainer.train_step = poisoned  # type: ignore[method-assign]
    with pytest.raises(TrainingError, match="at step 3"):
        trainer.train(show_progress=False)
    checkpoints = list_checkpoints(tmp_path / "run")
    assert [c.name for c in checkpoints] == ["step_00000002.pt"]
    weights = load_training_state(checkpoints[0]).model
    assert all(torch.isfinite(w).all() for w in weights.values())


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only folders")
def test_unwritable_run_dir_fails_before_training(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    with pytest.raises(TrainingError, match="not writable"):
        Trainer(tiny_config(tmp), data, locked / "run").train(show_progress=False)


def test_run_dir_that_is_a_file_fails_before_training(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    (tmp_path / "file").write_text("x")
    trainer = Trainer(tiny_config(tmp), data, tmp_path / "file" / "run")
    with pytest.raises(TrainingError, match="not writable"):
        trainer.train(show_progress=False)
    assert trainer.progress.step == 0


def test_full_disk_is_reported_before_training(
    prepared: tuple[Path, PreparedData], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    tmp, data = prepared
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        "anuvad.training.state.shutil.disk_usage",
        lambda _: usage._replace(free=1024),
    )
    trainer = Trainer(tiny_config(tmp), data, tmp_path / "run")
    with pytest.raises(TrainingError, match="MiB free"):
        trainer.train(show_progress=False)
    assert trainer.progress.step == 0


def test_early_stopping_stops_after_patience(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    # lr 0 after warmup-free start: the model cannot improve, so loss never gets better.
    config = tiny_config(
        tmp,
        "train.max_steps=50",
        "train.valid_every=1",
        "train.early_stop_patience=2",
        "train.early_stop_metric=loss",
        "train.lr_scale=1e-12",
    )
    trainer = Trainer(config, data, tmp_path / "run")
    result = trainer.train(show_progress=False)
    # Validation 1 sets the best; 2 and 3 do not improve on it: patience 2 stops at step 3.
    assert result.steps == 3
    assert trainer.progress.best_step == 1 and trainer.progress.bad_validations == 2


def test_keep_last_must_cover_average_last(prepared: tuple[Path, PreparedData]) -> None:
    tmp, data = prepared
    config = tiny_config(tmp, "train.keep_last=2", "train.average_last=5")
    with pytest.raises(TrainingError, match="keep_last"):
        Trainer(config, data, tmp / "run")


@pytest.mark.parametrize(("native", "want"), [(True, "bf16"), (False, "fp32")])
def test_auto_precision_is_bf16_only_on_cpus_that_have_it_and_the_run_records_it(
    prepared: tuple[Path, PreparedData], monkeypatch: pytest.MonkeyPatch, native: bool, want: str
) -> None:
    tmp, data = prepared
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: native, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
    trainer = Trainer(
        tiny_config(tmp, "train.precision=auto", "train.max_steps=1", "train.device=cpu"),
        data,
        tmp / want,
    )
    assert trainer.config.train.precision == want
    trainer.train(show_progress=False)
    saved = yaml.safe_load((tmp / want / "config.yaml").read_text(encoding="utf-8"))
    assert saved["train"]["precision"] == "auto"  # a resumed run decides again
    history = json.loads((tmp / want / "run.json").read_text(encoding="utf-8"))
    assert history[-1]["precision"] == want  # what was used is recorded
    assert resolve_precision("fp32", torch.device("cpu")) == "fp32"  # explicit values stay


def test_a_run_resumed_on_a_cpu_without_bf16_continues_in_fp32_and_says_so(
    prepared: tuple[Path, PreparedData],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Sessions land on different machines: a bf16 run resumed where bf16 is not native goes
    on in fp32 (not 40-100x slower in emulated bf16), with a warning."""
    tmp, data = prepared
    native = {"bf16": True}
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: native["bf16"])
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
    run = tmp / "moved"
    quick = (
        "train.precision=auto",
        "train.device=cpu",
        "train.save_every=1",
        "train.valid_bleu_max_sentences=1",
    )
    config = tiny_config(tmp, *quick, "train.max_steps=1")
    Trainer(config, data, run).train(show_progress=False)
    native["bf16"] = False
    longer = tiny_config(tmp, *quick, "train.max_steps=2")
    with caplog.at_level(logging.WARNING):
        resumed = Trainer(longer, data, run, resume=True)
        assert resumed.config.train.precision == "fp32"
        resumed.train(show_progress=False)
    assert "computed in bf16 before and continues in fp32" in caplog.text
    history = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert [entry["precision"] for entry in history] == ["bf16", "fp32"]


def test_several_dev_sets_get_their_own_scores(tmp_path: Path) -> None:
    """With two dev sets, BLEU/chrF++ are reported for each (its first N sentences) and for all."""
    config = tiny_config(tmp_path, "train.valid_bleu_max_sentences=7")
    first = config.data.valid[0]
    second = dataclasses.replace(first, name="second", max_lines=9)
    data = dataclasses.replace(config.data, valid=[first, second])
    config = dataclasses.replace(config, data=data)
    prepared = prepare_data(config, tmp_path / "data")
    trainer = Trainer(config, prepared, tmp_path / "run")
    metrics = trainer.validator.validate(tmp_path / "dev.hyp")
    hypotheses = (tmp_path / "dev.hyp").read_text(encoding="utf-8").splitlines()
    assert len(hypotheses) == 14  # the first 7 of each dev set
    first_count = prepared.report["valid"]["corpora"][0]["pairs"]
    refs = prepared.valid_tgt_text
    for name, hyps, part_refs in (
        (first.name, hypotheses[:7], refs[:7]),
        ("second", hypotheses[7:], refs[first_count : first_count + 7]),
    ):
        scores = corpus_scores(hyps, part_refs, config.train.bleu_tokenize)
        assert metrics[f"valid_bleu_{name}"] == pytest.approx(scores.bleu)
        assert metrics[f"valid_chrf_{name}"] == pytest.approx(scores.chrf)
    overall_refs = refs[:7] + refs[first_count : first_count + 7]
    overall = corpus_scores(hypotheses, overall_refs, config.train.bleu_tokenize)
    assert metrics["valid_bleu"] == pytest.approx(overall.bleu)


def test_subword_sampling_resamples_each_epoch_reproducibly(
    tmp_path: Path, en_hi_pairs: list[tuple[str, str]]
) -> None:
    """BPE-dropout: other pieces every epoch, the same text, the same pieces for the same epoch
    in another trainer (another rank, or a resumed run)."""
    (tmp_path / "c.en").write_text("".join(f"{e}\n" for e, _ in en_hi_pairs), encoding="utf-8")
    (tmp_path / "c.hi").write_text("".join(f"{h}\n" for _, h in en_hi_pairs), encoding="utf-8")
    config = load_config(
        REPO / "configs" / "tiny.yaml",
        [
            "train.max_minutes=0",
            "train.max_steps=4",
            "train.subword_sampling=0.3",
            "data.tokenizer.model_type=bpe",
            "data.tokenizer.vocab_size=300",
            "data.max_len=120",
            f"data.data_root={tmp_path}",
            "data.train=[{name: c, src: c.en, tgt: c.hi}]",
            "data.valid=[]",
        ],
    )
    prepared = prepare_data(config, tmp_path / "data")
    first, second = EpochData(config, prepared), EpochData(config, prepared)
    first.updates(0, world_size=1)
    epoch0 = first.ids
    second.updates(0, world_size=1)
    assert second.ids.src == epoch0.src and second.ids.tgt == epoch0.tgt
    assert epoch0.src != prepared.train.src  # sampled, not the fixed encoding
    first.updates(1, world_size=1)
    assert first.ids.src != epoch0.src
    for ids, fixed, text in zip(
        first.ids.tgt, prepared.train.tgt, prepared.train_tgt_text, strict=True
    ):
        assert prepared.tgt_tokenizer.decode(ids) == prepared.tgt_tokenizer.decode(fixed)
        assert prepared.tgt_tokenizer.decode(ids) == text
    # Batches are planned on this epoch's lengths: every batch's pairs fit the token budget.
    for update in first.updates(1, world_size=1):
        for batch in update:
            longest = max(max(len(first.ids.src[i]), len(first.ids.tgt[i])) + 1 for i in batch)
            assert len(batch) * longest <= config.data.max_tokens or len(batch) == 1
    result = Trainer(config, prepared, tmp_path / "run3").train(show_progress=False)
    assert result.steps == 4


def test_subword_sampling_needs_the_training_text(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, "train.subword_sampling=0.1")
    prepared = prepare_data(config, tmp_path / "data")
    older = dataclasses.replace(prepared, train_src_text=[], train_tgt_text=[])
    with pytest.raises(TrainingError, match="run `anuvad prepare` again"):
        Trainer(config, older, tmp_path / "run")


class SkippingScaler:
    """torch.amp.GradScaler's interface, skipping the updates listed (as fp16 overflow does)."""

    def __init__(self, skip: set[int]) -> None:
        self.skip, self.calls, self.scale_value = skip, 0, 2.0**16

    def is_enabled(self) -> bool:
        return True

    def get_scale(self) -> float:
        return self.scale_value

    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        return loss

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        pass

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        self.calls += 1
        if self.calls not in self.skip:
            optimizer.step()

    def update(self) -> None:
        if self.calls in self.skip:
            self.scale_value /= 2

    def state_dict(self) -> dict[str, float]:
        return {"scale": self.scale_value}


def test_updates_the_fp16_scaler_skips_advance_neither_step_nor_schedule(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    config = tiny_config(tmp, "train.save_every=2", "train.log_every=1", "train.valid_every=0")
    trainer = Trainer(config, data, tmp_path / "run")
    scaler = SkippingScaler(skip={1, 2, 5})
    trainer.scaler = scaler  # type: ignore[assignment]
    rates: list[float] = []
    real_step = trainer.optimizer.step

    def record(*args: object, **kwargs: object) -> None:
        rates.append(trainer.optimizer.param_groups[0]["lr"])
        real_step()

    trainer.optimizer.step = record  # type: ignore[method-assign]
    assert trainer.train(show_progress=False).steps == 6
    assert scaler.calls == 9  # 6 real updates + 3 skipped batches
    adam_steps = {int(s["step"]) for s in trainer.optimizer.state.values()}
    assert adam_steps == {6}  # the optimizer stepped exactly as often as the step count says
    # The schedule saw steps 1..6 in order: no rate was spent on a skipped update.
    expected = [
        noam_learning_rate(
            s, config.model.d_model, config.train.warmup_steps, config.train.lr_scale
        )
        for s in range(1, 7)
    ]
    assert rates == pytest.approx(expected)
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    logged = [r["step"] for r in records if "loss" in r]
    assert logged == sorted(set(logged)) == [1, 2, 3, 4, 5, 6]  # no step logged twice
    assert [c.name for c in list_checkpoints(tmp_path / "run")][-1] == "step_00000006.pt"


def test_a_resumed_run_logs_each_step_once(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    """Killed after step 6 was logged but with its last checkpoint at step 4: the resumed run
    replays steps 5-6, and metrics.jsonl still holds each step once (a cut line is dropped)."""
    tmp, data = prepared
    quick = ("train.log_every=1", "train.valid_every=0", "train.save_every=4", "train.keep_last=5")
    run = tmp_path / "run"
    Trainer(tiny_config(tmp, *quick), data, run).train(show_progress=False)
    for checkpoint in list_checkpoints(run):
        if checkpoint.name != "step_00000004.pt":
            checkpoint.unlink()  # as if the kill came before step 6's checkpoint
    with (run / "metrics.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"step": 6, "lo')  # a line the kill cut short
    resumed = Trainer(tiny_config(tmp, *quick), data, run, resume=True)
    assert resumed.progress.step == 4
    resumed.train(show_progress=False)
    lines = (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["step"] for r in records if "loss" in r] == [1, 2, 3, 4, 5, 6]
    assert sum(1 for r in records if r.get("final")) == 1


def test_a_new_start_removes_the_temp_files_of_killed_saves_only(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    import subprocess
    import sys

    tmp, data = prepared
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    dead_pid, live_pid = int(gone.stdout), os.getpid()  # that process has exited
    stale = run / "checkpoints" / f".step_00000002.pt.{dead_pid}.0a1b2c3d.tmp"
    busy = run / "checkpoints" / f".step_00000004.pt.{live_pid}.0a1b2c3d.tmp"
    stale_log = run / f".run.json.{dead_pid}.deadbeef.tmp"
    for path in (stale, busy, stale_log):
        path.write_bytes(b"half a file")
    config = tiny_config(tmp, "train.max_steps=2", "train.valid_every=0")
    Trainer(config, data, run).train(show_progress=False)  # nothing but debris: a new run
    assert not stale.exists() and not stale_log.exists()
    assert busy.exists()  # a live process may still be writing it


def test_resume_refuses_prepared_data_with_other_tokenizers(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    run = tmp_path / "run"
    config = tiny_config(tmp, "train.max_steps=2", "train.valid_every=0", "train.save_every=2")
    Trainer(config, data, run).train(show_progress=False)
    other = prepare_data(tiny_config(tmp_path, "data.tokenizer.joint=false"), tmp_path / "other")
    assert other.src_tokenizer.model_proto != data.src_tokenizer.model_proto
    with pytest.raises(TrainingError, match=r"other source (and target )?tokenizers"):
        Trainer(config, other, run, resume=True)


def test_a_dev_pair_longer_than_the_positions_is_left_out_of_the_loss_not_fatal(
    prepared: tuple[Path, PreparedData], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import dataclasses

    from anuvad.data.encoded import EncodedCorpus

    tmp, data = prepared
    config = tiny_config(tmp, "train.max_steps=2", "train.valid_every=1")
    positions = config.model.max_positions
    long_src = data.valid.src[0] * (positions // max(1, len(data.valid.src[0])) + 2)
    assert len(long_src) > positions
    valid = EncodedCorpus(src=[long_src, *data.valid.src[1:]], tgt=list(data.valid.tgt))
    with_long = dataclasses.replace(data, valid=valid)
    result = Trainer(config, with_long, tmp_path / "run").train(show_progress=False)
    assert result.steps == 2
    assert math.isfinite(result.valid["valid_nll"])
    assert "1 dev pair(s) have more than" in caplog.text and "left out of valid_nll" in caplog.text


def test_training_refuses_a_max_len_the_positions_cannot_hold(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    tmp, data = prepared
    config = tiny_config(tmp, "train.max_steps=1", "data.max_len=500")
    with pytest.raises(
        TrainingError, match=r"data.max_len \(500\) must be below model.max_positions"
    ):
        Trainer(config, data, tmp_path / "run")


def test_resume_refuses_other_prepared_data_and_says_what_differs(
    prepared: tuple[Path, PreparedData], tmp_path: Path
) -> None:
    """Same tokenizers, other pairs (e.g. a corpus file edited, then prepared again): resuming
    would not continue the same run, so it is refused, naming the counts and digests."""
    import dataclasses

    from anuvad.data.encoded import EncodedCorpus

    tmp, data = prepared
    run = tmp_path / "run"
    config = tiny_config(tmp, "train.max_steps=2", "train.valid_every=0", "train.save_every=2")
    Trainer(config, data, run).train(show_progress=False)
    fewer = EncodedCorpus(src=data.train.src[:-1], tgt=data.train.tgt[:-1])
    other = dataclasses.replace(data, train=fewer)
    n = len(data.train)
    with pytest.raises(TrainingError, match=rf"training pairs: {n} then .*, {n - 1} now"):
        Trainer(config, other, run, resume=True)
    Trainer(config, data, run, resume=True)  # the run's own data resumes


def test_a_run_folder_in_use_is_refused_and_free_after_a_crash(tmp_path: Path) -> None:
    import subprocess
    import sys

    from anuvad.training.run_lock import hold_run_folder

    run = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from anuvad.training.run_lock import hold_run_folder\n"
         "with hold_run_folder(Path(sys.argv[1])):\n print('held', flush=True); time.sleep(60)",
         str(run)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(
                TrainingError, match=rf"in use by another training process \(pid {holder.pid}\)"
            ),
            hold_run_folder(run),
        ):
            pass
    finally:
        holder.kill()  # SIGKILL: no clean-up in the holder
        holder.wait()
    with hold_run_folder(run) as lock:  # the kernel released the dead holder's lock
        assert lock.read_text().strip() == str(os.getpid())


def test_a_run_whose_fp16_updates_all_overflow_stops_with_a_clear_error(
    prepared: tuple[Path, PreparedData], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anuvad.training import trainer as trainer_module

    monkeypatch.setattr(trainer_module, "MAX_SKIPPED_UPDATES", 5)
    tmp, data = prepared
    trainer = Trainer(tiny_config(tmp, "train.valid_every=0"), data, tmp_path / "run")
    scaler = SkippingScaler(skip=set(range(1, 1000)))  # the loss scale never recovers
    trainer.scaler = scaler  # type: ignore[assignment]
    with pytest.raises(TrainingError, match="5 fp16 updates in a row overflowed at step 1"):
        trainer.train(show_progress=False)
    assert scaler.calls == 5 and trainer.progress.step == 0
