"""``anuvad translate`` as a newcomer first calls it (issue 40, item 8): no --model, several
sentences on a line, no --scores, a busy machine."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch

from anuvad.cli.main import main
from anuvad.cli.model_choice import choose_model, shipped_pairs
from anuvad.cli.serve import shipped_model
from anuvad.errors import CheckpointError
from anuvad.inference import cpu
from anuvad.inference.documents import split_document
from anuvad.inference.translator import Translator

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "trained_models"
DEVANAGARI = re.compile(r"[\u0900-\u097F]")
LATE_TRAIN = (
    "The train to Delhi was late by two hours. Passengers waited on the platform in the heat. "
    "The railway apologised for the delay."
)


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the repository root, where ``data/trained_models/`` is (as ``make demo`` does)."""
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The direction ("en->hi") of every Translator built, in order."""
    directions: list[str] = []
    original = Translator.__init__

    def spy(self: Translator, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        data = self.model_file.config.data
        directions.append(f"{data.src_lang}->{data.tgt_lang}")

    monkeypatch.setattr(Translator, "__init__", spy)
    return directions


def fake_release(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")
    return folder


def test_the_default_model_is_the_shipped_one_that_reads_the_text(tmp_path: Path) -> None:
    folder = fake_release(
        tmp_path / "models",
        "hien_d256_L3_V8000_20261127-141029.pt",
        "enhi_d256_L3_V8000_20261120-000000.pt",
        "enhi_d256_L3_V8000_20261126-051053.pt",
        "notes_about_models.pt",  # not a pair name
    )
    assert shipped_pairs(folder) == ["enhi", "hien"]
    english = choose_model(None, ["The train is late."], folder)
    assert Path(english.model).name == "enhi_d256_L3_V8000_20261126-051053.pt"
    assert english.chosen_for == "en"
    hindi = choose_model(None, ["आज मौसम अच्छा है।", "OK"], folder)  # most letters Devanagari
    assert Path(hindi.model).name.startswith("hien_") and hindi.chosen_for == "hi"
    assert choose_model(None, ["42", ""], folder).chosen_for == "en"  # no letters: English->Hindi
    # --model: a pair's newest, or a path as given (even one named like a pair that exists).
    assert Path(choose_model("hien", ["hello"], folder).model).name.startswith("hien_")
    assert choose_model("my/model.pt", ["hello"], folder) == choose_model("my/model.pt", [], folder)
    assert choose_model("my/model.pt", [], folder).chosen_for is None
    with pytest.raises(CheckpointError, match=r"no ende model file"):
        choose_model("ende", [], folder)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=r"no enhi model file .*--model PATH"):
        choose_model(None, ["hello"], tmp_path / "empty")
    # run outside the repository: the folder is named, not a pair (Hindi input said "enhi")
    with pytest.raises(CheckpointError, match=r"there is no folder .*missing/ .*--model PATH"):
        choose_model(None, ["आज मौसम अच्छा है।"], tmp_path / "missing")


def test_the_shipped_models_are_found_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newcomer review: ``anuvad translate`` from /tmp said "there is no folder
    data/trained_models/": the repository's own folder is used when the current one has none,
    and ANUVAD_MODELS names another."""
    from anuvad.cli.serve import shipped_folder

    repo_models = Path(__file__).resolve().parents[2] / "data" / "trained_models"
    monkeypatch.delenv("ANUVAD_MODELS", raising=False)
    monkeypatch.chdir(tmp_path)
    assert shipped_folder().resolve() == repo_models.resolve()
    (tmp_path / "data" / "trained_models").mkdir(parents=True)
    assert shipped_folder() == Path("data/trained_models")  # the current folder's first
    monkeypatch.setenv("ANUVAD_MODELS", str(tmp_path / "mine"))
    assert shipped_folder() == tmp_path / "mine"


def test_a_line_of_three_sentences_comes_back_as_three(
    in_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The newcomer's line: without --split-sentences it came back as one Hindi sentence, two
    lost (exit 0). Now the default splits it: three translated sentences on one line, each as
    the model translates it alone."""
    sentences = [s.text for s in split_document(LATE_TRAIN, "en")]
    assert len(sentences) == 3
    (tmp_path / "in.txt").write_text(LATE_TRAIN + "\n", encoding="utf-8")
    (tmp_path / "alone.txt").write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    base = ["translate", "--device", "cpu", "--no-progress", "--beam-size", "2"]
    assert main([*base, "--input", str(tmp_path / "alone.txt")]) == 0
    alone = capsys.readouterr().out.splitlines()
    assert main([*base, "--input", str(tmp_path / "in.txt")]) == 0
    out = capsys.readouterr().out
    assert out == " ".join(alone) + "\n"
    assert len(split_document(out, "hi")) == 3 and all(DEVANAGARI.search(a) for a in alone)


def test_the_input_language_picks_the_model_and_the_reverse_model_waits_for_scores(
    in_repo: Path,
    tmp_path: Path,
    built: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No --model: English goes to the shipped English->Hindi model, Hindi to Hindi->English
    (stderr says which). The shipped confidence names the other direction as its reverse model:
    loaded (0.9 s) only when --scores asks for confidence."""
    base = ["translate", "--device", "cpu", "--no-progress", "--beam-size", "1"]
    monkeypatch.setattr("sys.stdin", _stdin("The weather is nice today.\n"))
    assert main(base) == 0
    out, err = capsys.readouterr()
    assert DEVANAGARI.search(out) and shipped_model(SHIPPED, "enhi").name in err
    assert built == ["en->hi"]
    monkeypatch.setattr("sys.stdin", _stdin("आज मौसम अच्छा है।\n"))
    assert main(base) == 0
    out, err = capsys.readouterr()
    assert re.search("[A-Za-z]", out) and not DEVANAGARI.search(out)
    assert shipped_model(SHIPPED, "hien").name in err
    assert built == ["en->hi", "hi->en"]
    built.clear()
    monkeypatch.setattr("sys.stdin", _stdin("The weather is nice today.\n"))
    assert main([*base, "--model", "enhi", "--scores"]) == 0
    assert 0 <= float(re.findall(r'"confidence": ([0-9.]+)', capsys.readouterr().out)[0]) <= 1
    assert built == ["en->hi", "hi->en"]  # the reverse model, for the confidence
    monkeypatch.setattr("sys.stdin", _stdin("The weather is nice today.\n"))
    assert main([*base, "--model", "hien"]) == 2  # English to the Hindi->English model
    out, err = capsys.readouterr()
    assert not out and "the input is mostly not in the script of 'hi'" in err
    # Hindi in Latin letters: refused saying how to write it; one such line among others warned
    monkeypatch.setattr("sys.stdin", _stdin("mera naam Ravi hai\naap kaise ho\n"))
    assert main(base) == 2
    out, err = capsys.readouterr()
    assert not out and "the input looks like Hindi written in Latin letters" in err
    monkeypatch.setattr("sys.stdin", _stdin("kya haal hai\nThe train is late.\nIt is cold.\n"))
    assert main([*base, "--model", "enhi"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 3 and "warning: line 1: 'kya haal hai' looks like Hindi" in err
    # judged by lines: short English lines and one Hindi line are English, that line kept
    monkeypatch.setattr("sys.stdin", _stdin("Hi.\nOK.\nयह हिंदी बहुत लंबी पंक्ति है।\n"))
    assert main([*base, "--model", "enhi"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[2] == "यह हिंदी बहुत लंबी पंक्ति है।" and "line 3" in err
    monkeypatch.setattr("sys.stdin", _stdin("यह हिंदी है।\nवह आया।\nOK.\n"))
    assert main([*base, "--model", "enhi"]) == 2  # most lines and letters Hindi: the wrong model
    capsys.readouterr()
    heading = "Chapter 1\nIntroduction\n" + "यह एक लंबा हिंदी अनुच्छेद है जिसमें बहुत सारे शब्द हैं। " * 3
    monkeypatch.setattr("sys.stdin", _stdin(heading + "\n"))
    assert main([*base, "--model", "hien"]) == 0  # English headings over a Hindi paragraph


def test_threads_follow_the_free_cores_and_are_put_back(
    tiny_enhi_model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A 5-line file took 21-26 s on 2 busy cores with PyTorch's 2 threads, 7.8 s with 1: the
    command decodes with the cores the load leaves (here a load far above the cores: 1), unless
    OMP_NUM_THREADS or --threads says; PyTorch's count is put back afterwards."""
    seen: list[int] = []
    original = Translator.translate

    def spy(self: Translator, *args: Any, **kwargs: Any) -> Any:
        seen.append(torch.get_num_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Translator, "translate", spy)
    monkeypatch.setattr(cpu, "running_load", lambda: 1000.0)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    (tmp_path / "in.txt").write_text("I am going home.\n", encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    base += ["--input", str(tmp_path / "in.txt")]
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert main(base) == 0
        assert torch.get_num_threads() == 2
        assert main([*base, "--threads", "2"]) == 0
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        assert main(base) == 0
    finally:
        torch.set_num_threads(before)
    assert seen == [1, 2, 2]
    assert main([*base, "--threads", "-1"]) == 2
    assert "threads must be 0 (choose) or more, got -1" in capsys.readouterr().err


def test_a_long_sentence_is_cut_at_its_clauses_as_the_server_cuts_it(
    tiny_enhi_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sentence past what the model translates well is cut at its clauses before it reaches
    the model, by the rule the server's planning uses (issue 40, item 1b), not given whole."""
    from anuvad.inference.engine import source_fits

    seen: list[str] = []
    original = Translator.translate

    def spy(self: Translator, texts: Any, *args: Any, **kwargs: Any) -> Any:
        seen.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Translator, "translate", spy)
    sentence = ", ".join(["the sky is blue"] * 12) + "."
    (tmp_path / "in.txt").write_text(sentence + "\n", encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--input", str(tmp_path / "in.txt"), "--beam-size", "1"]) == 0
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    fits, must_fit = source_fits(translator, well=True), source_fits(translator)
    planned = [s.text for s in split_document(sentence, "en", fits=fits, must_fit=must_fit)]
    assert len(planned) > 1 and seen == planned


def _stdin(text: str) -> Any:
    import io

    return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8")
