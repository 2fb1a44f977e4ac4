"""``anuvad export --format web``: the ONNX graphs compute the torch model, and a model or folder
the export cannot take is refused in one line with nothing written (issue 42)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model, save_model
from anuvad.cli.main import main
from anuvad.data.batching import collate_source
from anuvad.data.download import sha256_of
from anuvad.decoding.greedy import greedy_search
from anuvad.inference import casing
from anuvad.web import settings
from anuvad.web.settings import RECASE, web_problems

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')")

from anuvad.web.onnx_check import OnnxGraphs, compare_step_log_probs
from anuvad.web.onnx_export import export_graphs

pytestmark = pytest.mark.usefixtures("one_thread")

SENTENCES = ["I am going home.", "Where is the station?", "Please sit down now, Ravi."]


def test_graphs_give_the_torch_models_log_probabilities(
    tiny_enhi_model: Path, tmp_path: Path
) -> None:
    loaded = load_model(tiny_enhi_model)
    export_graphs(loaded.model, tmp_path)
    sources = loaded.src_tokenizer.encode_batch(SENTENCES)  # lengths differ: padding is used
    src_ids, src_pad_mask = collate_source(sources)
    settings = loaded.config.decode.with_overrides(beam_size=1, no_repeat_ngram_size=0)
    targets = [h.token_ids for h in greedy_search(loaded.model, src_ids, src_pad_mask, settings)]
    found = compare_step_log_probs(loaded.model, OnnxGraphs(tmp_path), sources, targets)
    assert found.steps == sum(len(t) + 1 for t in targets)
    assert found.max_abs_diff < 1e-4
    assert found.argmax_agree == found.steps


def test_recasing_thresholds_are_the_torch_engines() -> None:
    assert RECASE == {
        "shouted_share": casing.SHOUTED_SHARE,
        "title_share": casing.TITLE_SHARE,
        "min_words": casing.MIN_WORDS,
        "unknown_cost": casing.UNKNOWN_COST,
    }


def test_every_unsupported_option_is_named(tiny_enhi_model: Path) -> None:
    loaded = load_model(tiny_enhi_model)
    assert web_problems(loaded) == []
    data = dataclasses.replace(loaded.config.data, src_lang="ta")  # no Tamil rules in the web
    data.clean.normalize = True
    tamil = dataclasses.replace(loaded, config=dataclasses.replace(loaded.config, data=data))
    multilingual = dataclasses.replace(tamil, metadata={"language_tokens": {}})
    problems = web_problems(multilingual)
    assert len(problems) == 2
    assert "language_tokens" in problems[0] and "normalize" in problems[1]


def test_a_model_too_large_for_a_browser_is_refused_before_anything_is_written(
    tiny_enhi_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    loaded = load_model(tiny_enhi_model)
    weight_bytes = 4 * sum(p.numel() for p in loaded.model.parameters())
    monkeypatch.setattr(settings, "MAX_WEIGHT_BYTES", weight_bytes - 1)  # one byte too many
    (problem,) = web_problems(loaded)
    assert "a model this large" in problem and "export a smaller model" in problem
    out = tmp_path / "web"
    assert _export(str(tiny_enhi_model), "--out", str(out)) == 2
    assert "a model this large" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    monkeypatch.setattr(settings, "MAX_WEIGHT_BYTES", weight_bytes)  # exactly at the limit: fine
    assert web_problems(loaded) == []


def _export(*args: str) -> int:
    return main(["export", *args, "--format", "web"])


def test_an_unsupported_model_is_refused_in_one_line_and_nothing_written(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded = load_model(tiny_enhi_model)
    path = save_model(
        tmp_path / "multi.pt", loaded.model, loaded.config, loaded.src_tokenizer,
        loaded.tgt_tokenizer, {"language_tokens": {"tokens": {}, "pairs": []}},
    )  # fmt: skip
    out = tmp_path / "web"
    assert _export(str(path), "--out", str(out)) == 2
    message = capsys.readouterr().err.strip()
    assert "language_tokens" in message and len(message.splitlines()) == 1
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["multi.pt"]  # no half-built folder either


def test_an_existing_folder_is_kept_without_force(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "web"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert _export(str(tiny_enhi_model), "--out", str(out)) == 2
    assert "--force" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_missing_npm_packages_name_the_command_that_fetches_them(
    tiny_enhi_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("ANUVAD_WEB_NODE_MODULES", str(tmp_path / "nothing"))
    out = tmp_path / "web"
    assert _export(str(tiny_enhi_model), "--out", str(out)) == 2
    assert "make web-runtime" in capsys.readouterr().err
    assert not out.exists()


def test_int8_is_for_the_web_format_only(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "model.pt"
    assert main(["export", str(tiny_enhi_model), "--out", str(out), "--dtype", "int8"]) == 2
    assert "web" in capsys.readouterr().err
    assert not out.exists()


def test_graph_inputs_are_torch_tensors_of_the_documented_kinds(tiny_enhi_model: Path) -> None:
    from anuvad.web.onnx_export import DecoderStepGraph, EncoderGraph, graph_shapes

    loaded = load_model(tiny_enhi_model)
    g = graph_shapes(loaded.model)
    src_ids = torch.tensor([[5, 6, 3]])  # (B, S)
    mask = torch.zeros(1, 3, dtype=torch.bool)
    cross_kv = EncoderGraph(loaded.model)(src_ids, mask)
    assert cross_kv.shape == (1, 2 * g.layers, g.heads, 3, g.head_size)
    empty = torch.zeros(1, 2 * g.layers, g.heads, 0, g.head_size)
    log_probs, self_kv = DecoderStepGraph(loaded.model)(torch.tensor([[2]]), empty, cross_kv, mask)
    assert log_probs.shape == (1, g.vocab_size) and self_kv.shape[3] == 1
    assert torch.isinf(log_probs[0, [0, 2]]).all()  # PAD and BOS are never generated


def test_the_export_has_usual_permissions_and_force_loses_nothing(
    tiny_enhi_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built in a 0700 temporary folder, the export ends with the permissions of any folder
    the user makes (a static server running as another user reads it); --force moves the old
    folder aside and puts it back when the swap fails."""
    import os
    import stat

    from anuvad.web import export as web_export
    from anuvad.web.vendor import node_modules

    try:
        node_modules()
    except Exception as exc:
        pytest.skip(str(exc))
    old_umask = os.umask(0o022)
    try:
        out, _ = web_export.export_web(tiny_enhi_model, tmp_path / "web")
    finally:
        os.umask(old_umask)
    modes = {stat.S_IMODE(p.stat().st_mode) for p in [out, *out.rglob("*")] if p.is_dir()}
    assert modes == {0o755}
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_file()} == {0o644}
    settings = json.loads((out / "model.json").read_text())
    assert settings["source_sha256"] == sha256_of(tiny_enhi_model)

    (out / "keep.txt").write_text("old")
    real_rename = Path.rename

    def failing_rename(self: Path, target: str | Path) -> Path:
        if Path(target) == out and self.name.startswith(".web.") and ".old." not in self.name:
            raise OSError("disk trouble")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", failing_rename)
    with pytest.raises(OSError, match="disk trouble"):
        web_export.export_web(tiny_enhi_model, out, force=True)
    assert (out / "keep.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["web"]  # nothing half-built left
    monkeypatch.setattr(Path, "rename", real_rename)
    web_export.export_web(tiny_enhi_model, out, force=True)
    assert not (out / "keep.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["web"]
