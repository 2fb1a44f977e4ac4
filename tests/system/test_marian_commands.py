"""Issue 35 as whole commands (system tier: a few seconds each): `anuvad translate` on an imported
model prints what `generate` gives, the shipped model exported to Hugging Face decodes alike, and
two imported models give each other confidence through `anuvad calibrate`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from anuvad.inference.translator import Translator
from anuvad.interop.exporter import export_huggingface
from anuvad.interop.importer import import_marian
from marian_folders import TEXTS, Shape, load_marian, write_marian_folder

pytest.importorskip("transformers")
LIMIT = 24


def test_translate_on_the_command_line_gives_generates_text(tmp_path: Path) -> None:
    folder = write_marian_folder(tmp_path / "opus-mt-en-de", Shape())
    marian, tokenizer = load_marian(folder)
    marian.generation_config.forced_eos_token_id = None  # anuvad stops at the limit unforced
    path = import_marian(str(folder), tmp_path / "model.pt").path
    batch = tokenizer(TEXTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = marian.generate(**batch, max_new_tokens=LIMIT)  # the model's own settings
    expected = [tokenizer.decode(row, skip_special_tokens=True) for row in out]
    run = subprocess.run(
        [sys.executable, "-m", "anuvad", "translate", "--model", str(path), "--max-len-a", "0",
         "--max-len-b", str(LIMIT)],
        input="\n".join(TEXTS) + "\n", capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert run.stdout.splitlines() == expected


def test_the_shipped_model_exports_and_decodes_alike(tmp_path: Path) -> None:
    from transformers import MarianMTModel, MarianTokenizer

    repo = Path(__file__).resolve().parents[2]
    path = sorted((repo / "data" / "trained_models").glob("enhi_*.pt"))[-1]
    folder = export_huggingface(path, tmp_path / "enhi")
    marian = MarianMTModel.from_pretrained(str(folder)).eval()
    tokenizer = MarianTokenizer.from_pretrained(str(folder))
    texts = ["The weather is nice today.", "Two dogs are running on the road."]
    with torch.no_grad():
        out = marian.generate(**tokenizer(texts, return_tensors="pt", padding=True), num_beams=1)
    translator = Translator.from_file(path, device="cpu")
    mine = translator.translate(texts, translator.settings(beam_size=1, no_repeat_ngram_size=0))
    assert [r.text for r in mine] == [tokenizer.decode(r, skip_special_tokens=True) for r in out]


def test_two_imported_models_give_each_other_confidence(tmp_path: Path) -> None:
    """An imported model's confidence with an imported reverse model (the OPUS-MT pair served
    together): `anuvad calibrate` reads the reverse model's log-probability of every source,
    and the served confidence is computed from the very same features."""
    import json

    import marian_folders
    from anuvad.data.download import sha256_of
    from anuvad.evaluation.confidence_model import fit_confidence
    from anuvad.inference.confidence import calibration_path

    forward = write_marian_folder(tmp_path / "fwd", Shape(), tune_eos=False)
    source_spm, target_spm = marian_folders.spm_models()
    marian_folders._SPM_CACHE["pair"] = (target_spm, source_spm)  # the other direction
    try:
        reverse = write_marian_folder(tmp_path / "rev", Shape(seed=7), tune_eos=False)
    finally:
        marian_folders._SPM_CACHE["pair"] = (source_spm, target_spm)
    models = tmp_path / "models"
    enhi = import_marian(str(forward), models / "enhi.pt", src_lang="en", tgt_lang="hi").path
    hien = import_marian(str(reverse), models / "hien.pt", src_lang="hi", tgt_lang="en").path
    from conftest import EN_HI_PAIRS

    (tmp_path / "dev.en").write_text("".join(f"{en}\n" for en, _ in EN_HI_PAIRS))
    (tmp_path / "dev.hi").write_text("".join(f"{hi}\n" for _, hi in EN_HI_PAIRS))
    rows_file = tmp_path / "rows.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "anuvad", "calibrate", "--model", str(enhi), "--reverse-model",
         str(hien), "--dev", f"dev={tmp_path / 'dev.en'},{tmp_path / 'dev.hi'}", "--no-progress",
         "--save-rows", str(rows_file), "--beam-size", "1", "--max-len-b", "8"],
        capture_output=True, text=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert len(rows) == len(EN_HI_PAIRS), run.stderr
    scored = [r["features"]["reverse_mean_log_prob"] for r in rows]
    assert all(value < 0.0 for value in scored)
    # Random models translate badly everywhere, so fit on labels of our own choosing: the fit
    # is not what is tested here, the features the served confidence reads are.
    middle = sorted(scored)[len(scored) // 2]
    features = ["mean_entropy", "mean_log_prob", "reverse_mean_log_prob"]
    calibration = fit_confidence(
        [r["features"] for r in rows], [v >= middle for v in scored], features
    )
    calibration.model_sha256 = sha256_of(enhi)
    calibration.reverse_model, calibration.reverse_sha256 = hien.name, sha256_of(hien)
    calibration.save(calibration_path(enhi))
    translator = Translator.from_file(enhi, device="cpu")
    first = EN_HI_PAIRS[0][0]
    (result,) = translator.translate(
        [first], translator.settings(beam_size=1, max_len_b=8), quality=True
    )
    assert result.quality is not None and result.quality.confidence is not None
    assert result.quality.features["reverse_mean_log_prob"] == pytest.approx(scored[0], abs=1e-4)
