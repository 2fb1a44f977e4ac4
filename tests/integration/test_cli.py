"""The CLI end to end on a small real pipeline: prepare → train → translate → info, and errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from anuvad.cli.main import EXAMPLES, main
from anuvad.data.synthetic import reversal_pairs, write_reversal_corpus
from conftest import cli_train

REPO = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path) -> Path:
    """The tiny preset pointed at a small reversal corpus written under ``tmp_path``."""
    train, valid = write_reversal_corpus(tmp_path / "corpus", train_size=400, valid_size=10)
    data = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))
    data["data"]["train"] = [{"name": "t", "src": train.src, "tgt": train.tgt}]
    data["data"]["valid"] = [{"name": "v", "src": valid.src, "tgt": valid.tgt}]
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return config


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A model trained by ``anuvad prepare`` + ``anuvad train`` (a few steps)."""
    tmp = tmp_path_factory.mktemp("cli")
    config = write_config(tmp)
    assert main(["prepare", "--config", str(config), "--out", str(tmp / "prepared")]) == 0
    assert (tmp / "prepared" / "report.json").is_file()
    return tmp, cli_train(tmp, config, 20, "train.log_every=5")


def test_train_writes_a_model_a_config_and_metrics(trained: tuple[Path, Path]) -> None:
    tmp, model = trained
    assert model.is_file()
    assert (tmp / "run" / "config.yaml").is_file()
    records = [
        json.loads(line) for line in (tmp / "run" / "metrics.jsonl").read_text().splitlines()
    ]
    steps = [r for r in records if "loss" in r]
    assert [r["step"] for r in steps] == [5, 10, 15, 20]
    final = records[-1]
    assert final["final"] is True and "valid_nll" in final
    # The loss falls from its first logged value.
    assert steps[-1]["loss"] < steps[0]["loss"]


def test_translate_files_keeps_order_and_line_count(
    trained: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp, model = trained
    sources = [src for src, _ in reversal_pairs(7, seed=5)]
    (tmp / "in.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    code = main(
        [
            "translate",
            "--model",
            str(model),
            "--input",
            str(tmp / "in.txt"),
            "--output",
            str(tmp / "out.txt"),
            "--device",
            "cpu",
            "--batch-size",
            "3",
        ]
    )
    assert code == 0
    lines = (tmp / "out.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(sources)
    # Batching by length must not reorder: translating one by one gives the same lines.
    for source, line in zip(sources, lines, strict=True):
        (tmp / "one.txt").write_text(source + "\n", encoding="utf-8")
        capsys.readouterr()
        main(["translate", "--model", str(model), "--input", str(tmp / "one.txt")])
        assert capsys.readouterr().out == line + "\n"


def test_translate_reads_stdin(
    trained: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, model = trained
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("123\n4567\n"))
    assert main(["translate", "--model", str(model), "--device", "cpu"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_info_text_and_json(trained: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, model = trained
    assert main(["info", str(model)]) == 0
    text = capsys.readouterr().out
    assert "parameters:" in text and "d_model 64" in text
    assert main(["info", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    payload = torch.load(model, weights_only=True)
    expected = sum(
        t.numel()
        for name, t in payload["state_dict"].items()
        if name != "src_embed.weight"  # tied to tgt_embed.weight: counted once
    )
    assert info["num_parameters"] == expected
    assert info["metadata"]["steps"] == 20


def test_errors_exit_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(tmp_path / "missing.pt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "junk.pt").write_bytes(b"not a model")
    assert main(["info", str(tmp_path / "junk.pt")]) == 2
    err = capsys.readouterr().err
    assert "not a PyTorch model file" in err and "refused by the safe loader" in err
    assert "weights_only" not in err  # torch's advice to load unsafely is not passed on
    (tmp_path / "folder").mkdir()
    folder = str(tmp_path / "folder")
    assert main(["translate", "--model", str(tmp_path / "junk.pt"), "--input", folder]) == 2
    assert "folder is a folder" in capsys.readouterr().err
    assert main(["train", "--config", str(REPO / "configs/tiny.yaml"), "model.bogus=1"]) == 2
    assert "unknown key(s) bogus" in capsys.readouterr().err
    config = write_config(tmp_path)
    broken = tmp_path / "corpus" / "train.tgt"
    broken.write_text("1\n2\n", encoding="utf-8")  # fewer lines than train.src
    assert main(["prepare", "--config", str(config), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "train.tgt" in err and "line" in err
    # Paths that were tracebacks, some only after the work: each named before it starts.
    junk, pack = str(tmp_path / "junk.pt"), str(tmp_path / "missing.pack")
    assert main(["prepare", "--config", str(config), "--out", junk]) == 2
    assert f"{junk} is a file; give a folder" in capsys.readouterr().err
    assert main(["data", "unpack", pack, "--to", str(tmp_path / "u"), "--sha256", "ab"]) == 2
    assert f"{pack}: no such pack file" in capsys.readouterr().err
    assert main(["data", "pack", "--config", str(config), "--out", folder]) == 2
    assert f"--out {folder}: is a folder; give a file name" in capsys.readouterr().err
    refs = str(tmp_path / "corpus" / "train.tgt")
    out = str(tmp_path / "no" / "h.txt")
    args = ["evaluate", "--hypotheses", refs, "--references", refs, "--write-hypotheses", out]
    assert main(args) == 2
    assert f"--write-hypotheses {out}: the folder" in capsys.readouterr().err


def test_translate_refuses_bad_chunks_and_stdin_under_torchrun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = str(tmp_path / "never-loaded.pt")
    assert main(["translate", "--model", model, "--chunk-lines", "0"]) == 2
    assert "--chunk-lines must be at least 1" in capsys.readouterr().err
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun sets it: the workers cannot share stdin
    assert main(["translate", "--model", model]) == 2
    assert "give it as --input FILE" in capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_every_command_has_help_with_an_example(command: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "anuvad.cli.main", command, "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert "example:" in result.stdout
    assert EXAMPLES[command] in result.stdout


def test_demo_runs_again_in_the_same_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fresh training run refuses an earlier run's folder; the demo's folder is its own scratch,
    # so a second `anuvad demo` replaces the first run instead of failing.
    args = [
        "demo",
        "--steps",
        "3",
        "--work-dir",
        str(tmp_path),
        "--config",
        str(REPO / "configs/tiny.yaml"),
    ]
    assert main(args) == 0
    first = (tmp_path / "run" / "model.pt").stat().st_mtime_ns
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"replacing the previous demo run in {tmp_path / 'run'}" in out
    assert "trained 3 steps" in out
    assert (tmp_path / "run" / "model.pt").stat().st_mtime_ns != first


def test_split_sentences_translates_each_sentence_and_keeps_the_lines(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line of several sentences = its sentences translated one by one, joined as they stood;
    one output line per input line, blank lines kept."""
    sentences = ["I am going home.", "The sky is blue.", "What is your name?"]
    (tmp_path / "one.txt").write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--beam-size", "2"]
    assert main([*base, "--input", str(tmp_path / "one.txt")]) == 0
    alone = capsys.readouterr().out.splitlines()
    document = f"{sentences[0]} {sentences[1]}\n\n  {sentences[2]}\n"
    (tmp_path / "doc.txt").write_text(document, encoding="utf-8")
    for split in ([], ["--split-sentences"]):  # the default (issue 40), or said
        assert main([*base, "--input", str(tmp_path / "doc.txt"), *split]) == 0
        lines = capsys.readouterr().out.split("\n")
        assert lines == [f"{alone[0]} {alone[1]}", "", f"  {alone[2]}", ""]
    # --nbest and --attention translate a line whole: a line of two sentences is refused.
    assert main([*base, "--input", str(tmp_path / "doc.txt"), "--nbest=2"]) == 2
    assert "line 1 holds 2 sentences, but with --nbest" in capsys.readouterr().err
    code = main([*base, "--input", str(tmp_path / "doc.txt"), "--split-sentences", "--nbest=2"])
    assert code == 2
    assert "--split-sentences gives one translation per line" in capsys.readouterr().err
    # A line translated whole keeps its list marker, as a split one does ("- Buy rice." lost
    # its "- " with --nbest): the model gets the item, every output the marker back.
    (tmp_path / "list.txt").write_text("- I am going home.\n## The sky is blue.\n", "utf-8")
    assert main([*base, "--input", str(tmp_path / "list.txt"), "--no-split-sentences"]) == 0
    assert capsys.readouterr().out.split("\n") == [f"- {alone[0]}", f"## {alone[1]}", ""]
    assert main([*base, "--input", str(tmp_path / "list.txt"), "--nbest=2"]) == 0
    nbest = capsys.readouterr().out.splitlines()
    assert [line.split(" ||| ")[1][:2] for line in nbest] == ["- ", "- ", "##", "##"]


def test_translate_names_a_bad_line_and_a_bad_beam_size(
    trained: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import io

    _, model = trained
    (tmp_path / "bad.txt").write_bytes(b"123\n45\xff6\n")
    assert main(["translate", "--model", str(model), "--input", str(tmp_path / "bad.txt")]) == 2
    assert "bad.txt: line 2 is not valid UTF-8" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xc3(\n"), encoding="utf-8"))
    assert main(["translate", "--model", str(model)]) == 2
    assert "<stdin>: line 1 is not valid UTF-8" in capsys.readouterr().err
    (tmp_path / "ok.txt").write_bytes(b"123\r\n\xe2\x80\xa8 4\n")  # CRLF; U+2028 is no newline
    assert main(["translate", "--model", str(model), "--input", str(tmp_path / "ok.txt")]) == 0
    assert capsys.readouterr().out.count("\n") == 2  # the U+2028 is kept, as layout
    code = main(["translate", "--model", str(model), "--beam-size", "0"])
    assert code == 2 and "--beam-size must be at least 1" in capsys.readouterr().err


def test_a_crlf_file_is_translated_into_a_crlf_file(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file saved on Windows keeps its line ending: each line's translation ends with CRLF,
    as the same file with LF gives LF, and the texts are the same."""
    sentences = ["The sky is blue.", "I am going home.", "Thank you very much."]
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    outputs = {}
    for name, ending in (("lf", b"\n"), ("crlf", b"\r\n")):
        source = tmp_path / f"{name}.txt"
        source.write_bytes(b"".join(s.encode() + ending for s in sentences))
        out = tmp_path / f"{name}.out"
        assert main([*base, "--input", str(source), "--output", str(out)]) == 0
        written = out.read_bytes()
        assert written.count(ending) == len(sentences) and written.endswith(ending)
        outputs[name] = written.decode("utf-8").splitlines()
        assert main([*base, "--input", str(source)]) == 0  # stdout ends its lines the same way
        printed = capsys.readouterr().out
        assert printed.count(ending.decode()) == len(sentences)
    assert outputs["crlf"] == outputs["lf"] and all(outputs["lf"])
    assert (tmp_path / "lf.out").read_bytes().count(b"\r") == 0


def test_no_repeat_ngram_size_reaches_the_search(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.inference.translator import Translator

    (tmp_path / "in.txt").write_text("The sky is blue.\nI am going home.\n", encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu"]
    args = [*base, "--input", str(tmp_path / "in.txt"), "--no-repeat-ngram-size", "1"]
    assert main(args) == 0
    outputs = capsys.readouterr().out.splitlines()
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    settings = translator.settings(no_repeat_ngram_size=1)
    expected = translator.translate(["The sky is blue.", "I am going home."], settings)
    assert outputs == [t.text for t in expected]  # the option reached the search
    for result in expected:  # size 1: no target piece twice
        assert len(result.token_ids) == len(set(result.token_ids)), result.token_ids
    assert main([*base, "--input", str(tmp_path / "in.txt"), "--no-repeat-ngram-size", "-1"]) == 2
    assert "--no-repeat-ngram-size must be between 0 and 8, got -1" in capsys.readouterr().err


def test_search_options_are_checked_together_and_early_stopping_reaches_the_search(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in.txt").write_text("The sky is blue.\nI am going home.\n", encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu"]
    base += ["--input", str(tmp_path / "in.txt"), "--no-progress", "--beam-size", "3"]
    assert main([*base, "--nbest", "4"]) == 2
    assert "--nbest must be between 1 and --beam-size (3), got 4" in capsys.readouterr().err
    assert main([*base, "--batch-size", "0"]) == 2
    assert "--batch-size must be at least 1, got 0" in capsys.readouterr().err


def test_every_search_option_reaches_the_search(
    tiny_enhi_model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each option made from a DecodeConfig field arrives in the settings the translator is
    called with, and a value unlike the model's own changes what the search is given."""
    from anuvad.decode_config import settings_spec
    from anuvad.errors import ConfigError
    from anuvad.inference.translator import Translator

    seen: list[object] = []
    original = Translator.translate

    def spy(self: Translator, texts: object, settings: object = None, **kwargs: object) -> object:
        seen.append(settings)
        return original(self, texts, settings, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Translator, "translate", spy)
    (tmp_path / "in.txt").write_text("The sky is blue.\n", encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    base += ["--input", str(tmp_path / "in.txt")]
    model_own = Translator.from_file(tiny_enhi_model, device="cpu").decode
    runs = 0
    for f, setting in settings_spec():
        if not setting.flag:
            continue
        own = getattr(model_own, f.name)
        if setting.choices:
            value = next(c for c in setting.choices if c != own)
        else:  # one step from the model's own value, inside the setting's range
            up = own + 1
            value = up if setting.maximum is None or up <= setting.maximum else own - 1
        args = [*base, "--" + f.name.replace("_", "-"), str(value)]
        try:
            model_own.with_overrides(**{f.name: value})
        except ConfigError:  # needs another setting with it (sampling: beam size 1)
            args += ["--beam-size", "1"]
        assert main(args) == 0, f.name
        assert getattr(seen[-1], f.name) == value != own, f.name
        runs += 1
    assert len(capsys.readouterr().out.splitlines()) == runs


def test_a_line_is_split_by_default_and_refused_whole_when_it_cannot_be_one_sentence(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 and 40: a line given whole to the model loses every sentence after its first,
    and a line beyond the model's positions loses its end. By default a line is split, so the
    200 sentences of one line are all translated; with --no-split-sentences such a line, or one
    overlong sentence, is refused (exit 2, the line and the fix named, nothing written)."""
    long_line = " ".join(["The sky is blue."] * 200)
    (tmp_path / "in.txt").write_text(f"I am going home.\n{long_line}\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    base += ["--input", str(tmp_path / "in.txt"), "--output", str(out), "--beam-size", "1"]
    assert main([*base, "--no-split-sentences"]) == 2
    err = capsys.readouterr().err
    assert "in.txt, line 2 holds 200 sentences" in err and "drop --no-split-sentences" in err
    assert not out.exists()
    (tmp_path / "clause.txt").write_text(" ".join(["the sky is blue and"] * 200) + "\n", "utf-8")
    whole = [*base, "--no-split-sentences", "--input", str(tmp_path / "clause.txt")]
    assert main(whole) == 2
    assert "clause.txt, line 1: 3,999 characters" in capsys.readouterr().err
    assert not out.exists()
    assert main(base) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    from anuvad.inference.translator import Translator

    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    (alone,) = translator.translate(["The sky is blue."], translator.settings(beam_size=1))
    assert lines[1] == " ".join([alone.text] * 200)  # every sentence of the line, none cut


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    """``anuvad data list | head -1``: no BrokenPipeError traceback, exit status 141."""
    import os
    import subprocess

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        result = subprocess.run(
            [sys.executable, "-m", "anuvad.cli.main", "data", "list"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr
    assert "Traceback" not in result.stderr


def test_translate_with_a_glossary_uses_its_terms_and_names_a_bad_line(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.inference.translator import Translator

    tok = Translator.from_file(tiny_enhi_model, device="cpu").tgt_tokenizer
    pieces = [i for i in range(4, tok.vocab_size) if tok.id_to_piece([i])[0] != "▁"]
    phrase = tok.decode(pieces[:2])  # spellable by the tiny vocabulary
    (tmp_path / "in.txt").write_text("The sky is blue.\nI am going home.\n", encoding="utf-8")
    (tmp_path / "terms.tsv").write_text(f"# terms\nSky\t{phrase}\n", encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    base += ["--input", str(tmp_path / "in.txt"), "--beam-size", "2"]
    assert main([*base, "--glossary", str(tmp_path / "terms.tsv")]) == 0
    first, _ = capsys.readouterr().out.splitlines()
    assert phrase in first
    (tmp_path / "bad.tsv").write_text("sky\n", encoding="utf-8")
    assert main([*base, "--glossary", str(tmp_path / "bad.tsv")]) != 0
    assert "bad.tsv:1: expected 'term<TAB>translation'" in capsys.readouterr().err


def test_calibrate_then_translate_with_scores(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anuvad calibrate`` fits on dev halves and writes the file beside the model, which
    ``translate --scores`` then uses: one JSON object per line, with confidence and words."""
    import json
    import shutil

    from anuvad.inference.translator import Translator
    from conftest import EN_HI_PAIRS

    model = tmp_path / "model.pt"
    shutil.copy(tiny_enhi_model, model)
    sources = [en for en, _ in EN_HI_PAIRS]
    translator = Translator.from_file(model, device="cpu")
    outputs = [t.text for t in translator.translate(sources, translator.settings(beam_size=2))]
    # Odd lines get the model's own output as reference (good), even lines an unrelated one.
    references = [out if i % 2 else "क ख ग घ" for i, out in enumerate(outputs)]
    (tmp_path / "dev.en").write_text("".join(s + "\n" for s in sources), encoding="utf-8")
    (tmp_path / "dev.hi").write_text("".join(r + "\n" for r in references), encoding="utf-8")
    dev = f"captions={tmp_path / 'dev.en'},{tmp_path / 'dev.hi'}"
    base = ["calibrate", "--model", str(model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--dev", dev, "--beam-size", "2", "--save-rows", str(tmp_path / "r")]) == 0
    report = capsys.readouterr().out
    assert "| captions | 20 |" in report and "model.confidence.json" in report
    assert (tmp_path / "model.confidence.json").is_file()
    kept = [json.loads(line) for line in (tmp_path / "r").read_text("utf-8").splitlines()]
    assert [row["source"] for row in kept] == sources  # each row keeps its texts
    again = Translator.from_file(model, device="cpu")
    assert [row["output"] for row in kept] == [
        t.text for t in again.translate(sources, again.settings(beam_size=2))
    ]
    assert main([*base, "--rows", str(tmp_path / "r"), "--json"]) == 0  # refit, no translating
    assert {"held_out", "cross_validated"} <= set(json.loads(capsys.readouterr().out))

    (tmp_path / "in.txt").write_text("I am going home.\n\nThe bus is full. Yes.\n", "utf-8")
    command = ["translate", "--model", str(model), "--device", "cpu", "--no-progress"]
    command += ["--input", str(tmp_path / "in.txt"), "--beam-size", "2", "--scores"]
    assert main([*command, "--split-sentences"]) == 0
    first, empty, two = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert empty["sentences"] == [] and empty["confidence"] is None
    assert len(two["sentences"]) == 2
    for sentence in (*first["sentences"], *two["sentences"]):
        assert 0.0 <= sentence["confidence"] <= 1.0
        assert sentence["likely_wrong"] == (sentence["confidence"] < 0.5)
        assert sentence["tokens"] and all(0 < t["prob"] <= 1 for t in sentence["tokens"])
    weighted = [(s["confidence"], s["end"] - s["start"]) for s in two["sentences"]]
    mean = sum(c * n for c, n in weighted) / sum(n for _, n in weighted)
    assert two["confidence"] == pytest.approx(mean, abs=1e-4)
    assert main(command) == 0  # a line is one sentence: the same JSON shape
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_calibrate_names_a_bad_dev_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.en").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "a.hi").write_text("एक\n", encoding="utf-8")
    (tmp_path / "t.tsv").write_text("x\ty\nonly-one-column\n", encoding="utf-8")
    base = ["calibrate", "--model", str(tmp_path / "m.pt")]
    assert main([*base, "--dev", f"captions={tmp_path / 'a.en'},{tmp_path / 'a.hi'}"]) != 0
    assert "a.en has 2 lines but" in capsys.readouterr().err
    assert main([*base, "--dev", f"captions={tmp_path / 't.tsv'}@0,1"]) != 0
    assert "t.tsv, line 2: 1 tab-separated columns" in capsys.readouterr().err
    assert main([*base, "--dev", "captions"]) != 0
    assert "expected DOMAIN=SOURCE,REFERENCE" in capsys.readouterr().err


def test_no_cache_reaches_the_search_of_every_translating_command(
    tiny_enhi_model: Path, tmp_path: Path, use_cache_calls: list[bool]
) -> None:
    """``--no-cache`` (a benchmark switch) was accepted and ignored by some commands: each one
    must hand it to the search."""
    seen = use_cache_calls
    (tmp_path / "in.en").write_text("I am going home.\nOpen the window.\n", encoding="utf-8")
    (tmp_path / "in.hi").write_text("मैं घर जा रहा हूँ।\nखिड़की खोलो।\n", encoding="utf-8")
    model = ["--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress", "--no-cache"]
    dev = f"captions={tmp_path / 'in.en'},{tmp_path / 'in.hi'}"
    commands = {
        "translate": ["translate", *model, "--input", str(tmp_path / "in.en")],
        "calibrate": ["calibrate", *model, "--dev", dev, "--save-rows", str(tmp_path / "rows")],
        "backtranslate": [
            "backtranslate", *model, "--input", str(tmp_path / "in.en"),
            "--out-prefix", str(tmp_path / "bt"),
        ],
    }  # fmt: skip
    for name, command in commands.items():
        seen.clear()
        code = main(command)
        assert seen and not any(seen), name
        # Two sentences are too few to fit a confidence: a named error, not a traceback.
        assert code == (2 if name == "calibrate" else 0), name


def test_a_translation_much_shorter_than_its_line_is_flagged_on_stderr(
    trained: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A model trained on digits writes little for words: a long line's translation is far
    shorter than the pair's length ratio allows, and the command says so (issue 40 item 1b)
    without losing a line."""
    _, model = trained
    line = "the farmers planted rice in the fields near the river while the children played"
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{line}\nHi.\n"))
    assert main(["translate", "--model", str(model), "--device", "cpu"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2
    assert "warning: line 1: the translation of 'the farmers planted" in captured.err
    assert "line 2" not in captured.err


def test_output_paths_are_checked_before_translating_and_a_long_word_names_its_line(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["The sky is blue.", "I am going home.", "see " + "skyblue" * 100 + " now"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = [
        "translate",
        "--model",
        str(tmp_path / "missing.pt"),
        "--input",
        str(tmp_path / "in.txt"),
    ]
    for option, path, problem in [
        ("--output", tmp_path / "no" / "out.txt", f"the folder {tmp_path / 'no'} does not exist"),
        ("--output", tmp_path, "is a folder; give a file name"),
        ("--attention", tmp_path / "no" / "a.json", f"the folder {tmp_path / 'no'} does not"),
        ("--output", tmp_path / "." / "in.txt", "is the --input file (the source would be lost)"),
    ]:
        # The model is missing too: the path is named first, before any model is loaded.
        assert main([*base, option, str(path)]) == 2
        assert f"error: {option} {path}: {problem}" in capsys.readouterr().err
    args = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    args += ["--input", str(tmp_path / "in.txt"), "--chunk-lines", "1"]
    assert main(args) == 2
    found = capsys.readouterr()
    assert f"{tmp_path / 'in.txt'}, line 3: 'skyblue" in found.err
    assert "longer than the model" in found.err
    assert found.out == ""  # refused before the lines before it were translated and written
    # plain text into a file named .docx made a file no office program opens
    assert main([*base, "--output", str(tmp_path / "x.docx")]) == 2
    assert "a .docx file is written only from a .docx input" in capsys.readouterr().err
    # "--output -" is stdout, as "--input -" is stdin (it wrote a file named "-")
    short = tmp_path / "short.txt"
    short.write_text("The sky is blue.\n", encoding="utf-8")
    args = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*args, "--input", str(short), "--output", "-"]) == 0
    assert capsys.readouterr().out.count("\n") == 1 and not (Path.cwd() / "-").exists()


def test_an_html_file_is_translated_as_the_server_translates_it_its_markup_kept(
    tiny_enhi_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page given to ``anuvad translate`` was translated line by line, its tags fed to the
    model; now (``.html``, or ``--format html``) the text between the tags is translated, the
    markup kept byte for byte, as ``POST /translate`` with format html does."""
    import io

    from fastapi.testclient import TestClient

    from anuvad.inference.markup import split_html
    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    page = (
        '\ufeff<!doctype html>\r\n<html><head><title>News</title></head>\r\n<body class="a">\r\n'
        "<p>The sky is blue. I am going home.</p>\r\n<pre>kept as written</pre>\r\n"
        '<p title="x">Thank you very\r\nmuch.</p>\r\n</body></html>\r\n'
    )
    source = tmp_path / "page.HTML"
    source.write_bytes(page.encode("utf-8"))
    out = tmp_path / "page.hi.html"
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--input", str(source), "--output", str(out)]) == 0
    assert "as HTML" in capsys.readouterr().err  # --format auto says what it chose
    written = out.read_bytes().decode("utf-8")

    def markup(html: str) -> list[str]:
        return [p.raw for p in split_html(html) if p.raw.startswith("<")]

    assert written.startswith("\ufeff<!doctype html>\r\n")  # the BOM and CRLF as they were
    assert markup(written) == markup(page) and "<pre>kept as written</pre>\r\n" in written
    assert "sky" not in written and "Thank" not in written  # every run translated
    with TestClient(create_app(Translator.from_file(tiny_enhi_model, device="cpu"))) as client:
        body = {"text": page.removeprefix("\ufeff"), "format": "html"}
        served = client.post("/translate", json=body).json()["translations"][0]["text"]
    assert written == "\ufeff" + served
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(page.encode("utf-8"))))
    assert main([*base, "--format", "html"]) == 0  # stdin, asked for
    printed = capsys.readouterr().out
    assert printed == written  # the bytes as written, on any platform
    assert main([*base, "--input", str(source), "--scores"]) == 2
    error = capsys.readouterr().err
    assert "--scores needs plain text" in error and "--nbest" not in error
    (empty := tmp_path / "empty.html").write_bytes(b"<p> </p>\r\n")
    assert main([*base, "--input", str(empty)]) == 0
    assert capsys.readouterr().out == "<p> </p>\r\n"  # nothing to translate: as it was
    latin = b'<meta charset="iso-8859-1"><p>The sky is blue.</p>'
    (old := tmp_path / "old.html").write_bytes(latin)
    assert main([*base, "--input", str(old), "--output", str(out)]) == 0
    assert out.read_bytes().startswith("\ufeff".encode())  # overrides the page's latin-1


def test_html_tags_in_a_plain_text_input_get_a_hint(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Newcomer review: "<p>Visit <b>Delhi</b> today.</p>" piped in came back as junk with no
    word about --format html; the hint names the line and the option (and the input is still
    translated as text, one line out per line in)."""
    (tmp_path / "page.txt").write_text(
        "Plain line.\n<p>Visit <b>Delhi</b>.</p>\n", encoding="utf-8"
    )
    args = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*args, "--input", str(tmp_path / "page.txt")]) == 0
    found = capsys.readouterr()
    assert "line 2 holds an HTML tag (<p>)" in found.err and "--format html" in found.err
    assert len(found.out.splitlines()) == 2
    assert main([*args, "--input", str(tmp_path / "page.txt"), "--format", "text"]) == 0
    assert "HTML tag" not in capsys.readouterr().err  # asked for text: no hint


def test_the_output_keeps_the_inputs_byte_order_mark_and_unended_last_line(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CLI review: a UTF-8 byte order mark was dropped in text mode (kept for HTML and SRT),
    and a last line without a newline got one."""
    args = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    for raw, starts, ends in (
        (b"\xef\xbb\xbfThe sky is blue.\r\nI am going home.", "\ufeff", False),
        (b"The sky is blue.\nI am going home.\n", "", True),
    ):
        (tmp_path / "in.txt").write_bytes(raw)
        assert (
            main([*args, "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o")]) == 0
        )
        out = (tmp_path / "o").read_bytes().decode("utf-8")
        assert out.startswith(starts) and not out[len(starts) :].startswith("\ufeff")
        assert out.endswith("\n") is ends and out.count("\n") == (2 if ends else 1)
        assert main([*args, "--input", str(tmp_path / "in.txt")]) == 0  # stdout alike
        assert capsys.readouterr().out.replace("\r\n", "\n") == out.replace("\r\n", "\n")
