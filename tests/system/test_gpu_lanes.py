"""bench/gpu_lanes.py (issue 39 items 2, 3 and 6) run on the CPU on tiny recipes: a lane that
back-translates and a lane whose synthetic text was carried run side by side, each trains,
exports and scores, and what comes back joins into loadable models."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from anuvad.checkpoint import load_model
from conftest import EN_HI_PAIRS, REPO

pytestmark = pytest.mark.slow
SCRIPT = REPO / "bench" / "gpu_lanes.py"


def _recipe(path: Path, src: str, tgt: str, synthetic: list[str], root: Path) -> None:
    """configs/tiny.yaml translating ``src`` into ``tgt``: the pairs, then the named
    back-translated corpora (``./data/synthetic/<name>.*``, tagged) as the real recipes have."""
    config = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))
    # named as the real recipes' first corpus (the captions), which some lanes reweight
    pairs = {"name": "hvg", "src": str(root / f"pairs.{src}"), "tgt": str(root / f"pairs.{tgt}")}
    bt = [
        {"name": name, "src": f"./data/synthetic/{name}.{src}",
         "tgt": f"./data/synthetic/{name}.{tgt}", "tag": "<bt>"}
        for name in synthetic
    ]  # fmt: skip
    config["name"] = path.stem
    config["data"].update({"src_lang": src, "tgt_lang": tgt, "train": [pairs, *bt]})
    config["data"].update({"valid": [pairs], "max_len": 120})
    config["train"].update({"num_threads": 1})
    path.write_text(yaml.safe_dump(config), encoding="utf-8")


def _write(path: Path, lines: list[str], packed: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    if packed:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")


def test_two_lanes_back_translate_or_take_what_was_carried_and_return_scored_models(
    tmp_path: Path, tiny_enhi_model: Path
) -> None:
    root = tmp_path / "data-root"
    english = [en for en, _ in EN_HI_PAIRS]
    hindi = [hi for _, hi in EN_HI_PAIRS]
    for lang, lines in (("en", english), ("hi", hindi)):
        _write(root / f"pairs.{lang}", lines)
        _write(root / "en-hi" / "dev-general" / f"ntrex128.{lang}", lines[:6])
    _write(root / "en-hi/mono-en/wmt-newstest-en.en.gz", english[:5], packed=True)
    _write(root / "en-hi/mono-en/bbc-news-2005.en.gz", english[5:9], packed=True)
    # the English->Hindi lane's synthetic text, made elsewhere and carried
    _write(tmp_path / "data/synthetic/bt-hi-r7.en", english[:7])
    _write(tmp_path / "data/synthetic/bt-hi-r7.hi", hindi[:7])
    shipped = tmp_path / "data" / "trained_models"
    shipped.mkdir(parents=True)
    (shipped / "enhi_tiny.pt").write_bytes(tiny_enhi_model.read_bytes())
    configs = tmp_path / "configs"
    configs.mkdir()
    _recipe(configs / "enhi_bt_d256_L3.yaml", "en", "hi", ["bt-hi"], root)
    _recipe(configs / "hien_bt_d256_L3.yaml", "hi", "en", ["bt-wmt", "bt-bbc", "bt-reuters"], root)
    command = [
        sys.executable, str(SCRIPT), "--device", "cpu", "--minutes", "8", "--reserve", "60",
        "--lanes", "hien-r4", "enhi-r9c2", "--configs", "configs", "--data", str(root),
        "--out", "out", "--work", "runs/lanes",
        "--set", "train.max_steps=6", "train.save_every=2", "train.keep_last=4",
        "train.average_last=2",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "lanes.json").read_text(encoding="utf-8"))
    assert list(report) == ["hien-r4", "enhi-r9c2"]
    # every English news line has its Hindi back-translation, in order
    synthetic = tmp_path / "data" / "synthetic"
    assert (synthetic / "bt-en-r4.en").read_text(encoding="utf-8").splitlines() == english[:9]
    assert len((synthetic / "bt-en-r4.hi").read_text(encoding="utf-8").splitlines()) == 9
    assert report["enhi-r9c2"]["backtranslate_s"] == "carried"
    assert isinstance(report["hien-r4"]["backtranslate_s"], float)
    for lane, pair in (("hien-r4", ("hi", "en")), ("enhi-r9c2", ("en", "hi"))):
        assert "ntrex128" in report[lane], report[lane]
        scores = report[lane]["ntrex128"]
        assert scores["sentences"] == 6 and 0 <= scores["chrf"] <= 100
        parts = sorted((tmp_path / "out" / lane).iterdir())
        assert parts and parts[0].name == report[lane]["model"]
        model = load_model(parts[0])
        assert (model.config.data.src_lang, model.config.data.tgt_lang) == pair
    # each lane read its synthetic text where its recipe's corpus of that name was, the other
    # back-translated corpora left out; the English->Hindi lane continued the shipped model with
    # its own setting (the real pairs counted twice), which the other lane did not get
    runs = tmp_path / "runs/lanes"
    hien = yaml.safe_load((runs / "hien-r4/run/config.yaml").read_text(encoding="utf-8"))
    corpora = {corpus["name"]: corpus for corpus in hien["data"]["train"]}
    assert corpora["bt-wmt"]["src"].endswith("data/synthetic/bt-en-r4.hi")
    assert corpora["bt-bbc"]["weight"] == corpora["bt-reuters"]["weight"] == 0
    enhi = yaml.safe_load((runs / "enhi-r9c2/run/config.yaml").read_text(encoding="utf-8"))
    (bt_hi,) = [c for c in enhi["data"]["train"] if c["name"] == "bt-hi"]
    assert bt_hi["tgt"].endswith("data/synthetic/bt-hi-r7.hi")
    assert enhi["data"]["train"][0]["weight"] == 2 and hien["data"]["train"][0]["weight"] == 1
    assert enhi["train"]["init_from"].endswith("enhi_tiny.pt")
    assert not hien["train"].get("init_from")  # no shipped Hindi->English model: from scratch
    with tarfile.open(tmp_path / "out" / "logs.tgz") as logs:
        names = set(logs.getnames())
    assert {"lanes.json", "hien-r4/lane.log", "enhi-r9c2/ntrex128.hyp"} <= names


def test_a_recipe_without_the_corpus_a_lane_reads_is_named(tmp_path: Path) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import gpu_lanes
    finally:
        sys.path.pop(0)
    recipe = tmp_path / "hien_bt_d256_L3.yaml"
    _recipe(recipe, "hi", "en", ["bt-wmt"], tmp_path)
    with pytest.raises(SystemExit, match="no corpus named bt-bbc, bt-reuters"):
        gpu_lanes.synthetic_settings(recipe, gpu_lanes.lanes()["hien-r4"])
    _recipe(recipe, "hi", "en", ["bt-wmt", "bt-bbc", "bt-reuters"], tmp_path)
    assert gpu_lanes.synthetic_settings(recipe, gpu_lanes.lanes()["hien-r4"]) == [
        "data.train.1.src=./data/synthetic/bt-en-r4.hi",
        "data.train.1.tgt=./data/synthetic/bt-en-r4.en",
        "data.train.2.weight=0",
        "data.train.3.weight=0",
    ]
    # a lane's reweighting finds its corpus by name, as its synthetic text does
    enhi = tmp_path / "enhi_bt_d256_L3.yaml"
    _recipe(enhi, "en", "hi", ["bt-hi"], tmp_path)
    assert gpu_lanes.synthetic_settings(enhi, gpu_lanes.lanes()["enhi-r9c2"]) == [
        "data.train.1.src=./data/synthetic/bt-hi-r7.en",
        "data.train.1.tgt=./data/synthetic/bt-hi-r7.hi",
        "data.train.0.weight=2",
    ]
    config = yaml.safe_load(enhi.read_text(encoding="utf-8"))
    config["data"]["train"][0]["name"] = "captions"
    enhi.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(SystemExit, match="no corpus named hvg"):
        gpu_lanes.synthetic_settings(enhi, gpu_lanes.lanes()["enhi-r9c2"])
