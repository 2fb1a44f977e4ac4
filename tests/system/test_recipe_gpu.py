"""bench/recipe_gpu.py (``make train-gpu``, issue 39 item 6) run on the CPU on tiny configs: every
stage runs in order, the models and their dev scores land in the output folder, and a second call
finds everything done and changes nothing."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from conftest import EN_HI_PAIRS, REPO

pytestmark = pytest.mark.slow
SCRIPT = REPO / "bench" / "recipe_gpu.py"


def _config(path: Path, src: str, tgt: str, synthetic: list[str], root: Path) -> str:
    """configs/tiny.yaml translating ``src`` into ``tgt`` on the pairs plus ``synthetic``
    (``./data/synthetic/<prefix>.*``, tagged as the real recipes tag them)."""
    data = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))
    pairs = {"name": "pairs", "src": str(root / f"pairs.{src}"), "tgt": str(root / f"pairs.{tgt}")}
    bt = [
        {"name": p, "src": f"./data/synthetic/{p}.{src}", "tgt": f"./data/synthetic/{p}.{tgt}",
         "tag": "<bt>"}
        for p in synthetic
    ]  # fmt: skip
    data["name"] = path.stem
    data["data"].update({"src_lang": src, "tgt_lang": tgt, "train": [pairs, *bt], "valid": [pairs]})
    data["data"]["max_len"] = 120
    data["train"].update({"num_threads": 1, "save_every": 5, "keep_last": 2, "average_last": 2})
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def test_the_recipe_runs_every_stage_once(tmp_path: Path, tiny_enhi_model: Path) -> None:
    root = tmp_path / "data-root"
    english = [en for en, _ in EN_HI_PAIRS]
    hindi = [hi for _, hi in EN_HI_PAIRS]
    for lang, lines in (("en", english), ("hi", hindi)):
        (root / f"pairs.{lang}").parent.mkdir(parents=True, exist_ok=True)
        (root / f"pairs.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        dev = root / "en-hi" / "dev-general" / f"ntrex128.{lang}"
        dev.parent.mkdir(parents=True, exist_ok=True)
        dev.write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
    recipe_gpu = _recipe_module()
    for folder, names, lines, lang in (
        ("mono-en", recipe_gpu.MONO_EN, english, "en"),
        ("mono-hi", recipe_gpu.MONO_HI, hindi, "hi"),
    ):
        for i, name in enumerate(names):
            path = root / "en-hi" / folder / f"{name}.{lang}.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(path, "wt", encoding="utf-8") as handle:
                handle.write("\n".join(lines[i : i + 3]) + "\n")
    shipped = tmp_path / "data" / "trained_models"
    shipped.mkdir(parents=True)
    shutil.copy(tiny_enhi_model, shipped / "enhi_tiny.pt")
    hien = _config(tmp_path / "hien.yaml", "hi", "en", ["bt-wmt", "bt-bbc"], root)
    enhi = _config(tmp_path / "enhi.yaml", "en", "hi", ["bt-hi"], root)
    command = [
        sys.executable, str(SCRIPT), "--device", "cpu", "--minutes", "8", "--out", "out",
        "--data", str(root), "--hien-config", hien, "--enhi-config", enhi,
        "--hien-minutes", "0.05", "--enhi-minutes", "0.05", "--hien-extra",
    ]  # fmt: skip
    first = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "recipe.json").read_text(encoding="utf-8"))
    stages = ["bt-en-wmt", "bt-en-bbc", "hien", "hien-eval", "bt-hi", "enhi", "enhi-eval"]
    assert list(report) == stages
    assert all(isinstance(seconds, float) for seconds in report.values()), report
    synthetic = tmp_path / "data" / "synthetic"
    for prefix in ("bt-wmt", "bt-bbc", "bt-hi"):
        sides = [
            (synthetic / f"{prefix}.{lang}").read_text(encoding="utf-8") for lang in ("en", "hi")
        ]
        assert len(sides[0].splitlines()) == len(sides[1].splitlines()) > 0
    for name in ("hien", "enhi"):
        (model,) = (tmp_path / "out" / name).glob("*.pt")
        hypotheses = (tmp_path / "out" / name / "ntrex128.hyp").read_text(encoding="utf-8")
        assert len(hypotheses.splitlines()) == 6
        assert model.stat().st_size > 0
    assert '"chrf"' in first.stdout or "chrF" in first.stdout
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").rglob("*") if p.is_file()}
    second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    again = json.loads((tmp_path / "out" / "recipe.json").read_text(encoding="utf-8"))
    assert set(again.values()) == {"done earlier"}
    assert {
        p: p.stat().st_mtime_ns for p in (tmp_path / "runs").rglob("*") if p.is_file()
    } == before


def _recipe_module() -> ModuleType:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import recipe_gpu
    finally:
        sys.path.pop(0)
    return recipe_gpu


def test_a_model_larger_than_a_part_comes_back_in_parts_that_join(tmp_path: Path) -> None:
    model = tmp_path / "model.pt"
    model.write_bytes(bytes(range(256)) * 5000)  # 1.22 MiB
    out = tmp_path / "out"
    out.mkdir()
    _recipe_module().deliver(model, out, part_mib=0.5)
    parts = sorted(out.iterdir())
    assert [p.name for p in parts] == ["model.pt.part0", "model.pt.part1", "model.pt.part2"]
    assert all(p.stat().st_size <= 2**19 for p in parts)
    assert b"".join(p.read_bytes() for p in parts) == model.read_bytes()
    whole = tmp_path / "whole"
    whole.mkdir()
    _recipe_module().deliver(model, whole, part_mib=2)
    assert (whole / "model.pt").read_bytes() == model.read_bytes()


def test_only_names_a_stage_that_exists(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "enhi", "nonsense", "--out", "out"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--only: no stage nonsense" in done.stderr and "enhi-eval" in done.stderr
