"""Text-level cleaning: every rule of anuvad.data.cleaning, the per-corpus counts, weights and
tags."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from anuvad.config import CleaningConfig, CorpusConfig, DataConfig, ExperimentConfig
from anuvad.config import TokenizerConfig as Tok
from anuvad.data.cleaning import (
    CLEAN_DROP_REASONS,
    CLEAN_FIXES,
    DevIndex,
    TextNormalizer,
    clean_corpus,
    normalizer_for,
    script_ratio,
    unwrap_csv_quotes,
)
from anuvad.data.corpora import ParallelText, read_corpus
from anuvad.data.prepare import prepare_data, weighted_sample
from anuvad.data.text_files import read_text_lines
from anuvad.errors import ConfigError, DataError

ALL_ON = CleaningConfig(normalize=True, unwrap_csv_quotes=True, min_script_ratio=0.5)


def _text(pairs: list[tuple[str, str]], name: str = "c") -> ParallelText:
    return ParallelText(name, Path("a"), Path("b"), [s for s, _ in pairs], [t for _, t in pairs])


# -- normalisation ---------------------------------------------------------------------------


def test_hindi_normalizer_unifies_nukta_danda_and_joiners() -> None:
    hi = normalizer_for("hi")
    # क़ as one code point (U+0958) and as क + nukta: one spelling after normalisation.
    assert hi("\u0958िला") == hi("\u0915\u093cिला")
    assert hi("यह घर है|") == "यह घर है।"  # a pipe used as a danda
    assert hi("सीता बाज़ार गई ॥") == "सीता बाज़ार गई ।"  # a double danda ("City III" before)
    assert hi("कीमत 100|200 है|") == "कीमत 100|200 है।"  # a pipe between digits stays
    assert hi("पद ॥१॥") == "पद ।१।"
    assert hi("वह गया||") == hi("वह गया।।") == hi(hi("वह गया||")) == "वह गया।"
    assert "\u200d" not in hi("ज़्\u200dयादा") and "\u200c" not in hi("क\u200cष")
    assert hi("  दो   शब्द  ") == "दो शब्द"


def test_english_normalizer_is_moses_punctuation() -> None:
    en = normalizer_for("en")
    assert en("“Quoted” text — here") == '"Quoted" text - here'
    assert en("tab\u0007bell") == "tabbell"  # control characters removed


@pytest.mark.parametrize("lang", ["en", "hi"])
def test_normalizer_is_idempotent(lang: str, en_hi_pairs: list[tuple[str, str]]) -> None:
    norm = TextNormalizer(lang)
    for en, hi in en_hi_pairs:
        once = norm(en if lang == "en" else hi)
        assert norm(once) == once


# -- single rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"Display brightness, suspend"', "Display brightness, suspend"),
        ('"He said ""no"" twice."', 'He said "no" twice.'),
        ('"(glad). """', '(glad). "'),
        ('"Stop," she said.', '"Stop," she said.'),  # not wrapped: kept
        ('"', '"'),
        ("plain", "plain"),
    ],
)
def test_unwrap_csv_quotes(raw: str, expected: str) -> None:
    assert unwrap_csv_quotes(raw) == expected


def test_script_ratio() -> None:
    assert script_ratio("A man rides a horse.", "en") == 1.0
    assert script_ratio("एक आदमी", "en") == 0.0
    assert script_ratio("एक आदमी", "hi") == 1.0
    assert script_ratio("ek aadmi", "hi") == 0.0
    assert script_ratio("42 !", "hi") == 1.0  # no letters: nothing to judge
    assert script_ratio("anything", "xx") == 1.0  # unknown language: not checked
    assert 0.4 < script_ratio("Settings सेटिंग", "hi") < 0.6


def test_dev_index_matches_sentences_of_paragraphs_ignoring_case_and_edges() -> None:
    dev = DevIndex()
    dev.add(["The river rose. Roads were closed!"], ["नदी चढ़ी। सड़कें बंद थीं।"])
    assert dev.overlaps("the river rose", "कुछ और")
    assert dev.overlaps("  ROADS were   closed ", "x")
    assert dev.overlaps("x", "सड़कें बंद थीं")
    assert dev.overlaps("The river rose. Roads were closed!", "x")
    assert not dev.overlaps("The river rose again.", "नदी फिर चढ़ी।")
    short = DevIndex()
    short.add(["Yes."], ["हाँ।"])
    assert not short.overlaps("Yes.", "हाँ।")  # below min_chars: not a leak


# -- a whole corpus ---------------------------------------------------------------------------


def test_clean_corpus_counts_every_change_and_drop_by_reason() -> None:
    pairs = [
        ("A man rides a horse.", "एक आदमी घोड़े की सवारी करता है।"),  # kept as is
        ('"Open the ""file"" menu"', "फ़ाइल मेनू खोलें"),  # unquoted, kept
        ("“Curly” quotes.", "घुंघराले उद्धरण|"),  # normalised, kept
        ("", "खाली"),  # empty
        ("एक आदमी", "एक आदमी"),  # Hindi on the English side: script
        ("Settings", "Settings"),  # English on the Hindi side: script
        ("The river rose.", "नदी चढ़ी।"),  # a dev sentence
        ("A man rides a horse.", "एक आदमी घोड़े की सवारी करता है।"),  # duplicate
    ]
    dev = DevIndex()
    dev.add(["The river rose. Roads closed."], ["नदी चढ़ी। सड़कें बंद।"])
    seen: set[tuple[str, str]] = set()
    cleaned, report = clean_corpus(_text(pairs), ALL_ON, "en", "hi", dev, seen)
    assert report.dropped == {"empty": 1, "script": 2, "dev_overlap": 1, "duplicate": 1}
    assert report.fixed == {"csv_unquoted": 1, "normalized": 1}
    assert report.total - report.kept == sum(report.dropped.values())
    assert cleaned.src == ["A man rides a horse.", 'Open the "file" menu', '"Curly" quotes.']
    assert cleaned.tgt[2] == "घुंघराले उद्धरण।"
    assert set(report.to_dict()["dropped"]) == set(CLEAN_DROP_REASONS)
    assert set(report.to_dict()["fixed"]) == set(CLEAN_FIXES)
    # The seen set carries over: the same pair in a later corpus is a duplicate there.
    _, later = clean_corpus(_text(pairs[:1]), ALL_ON, "en", "hi", None, seen)
    assert later.dropped["duplicate"] == 1 and later.kept == 0


def test_clean_corpus_with_everything_off_changes_nothing() -> None:
    pairs = [('"quoted"', "|"), ("एक", "Latin"), ("x", "y"), ("x", "y")]
    cleaned, report = clean_corpus(_text(pairs), CleaningConfig(), "en", "hi", None, None)
    assert list(zip(cleaned.src, cleaned.tgt, strict=True)) == pairs
    assert report.kept == 4 and not any(report.fixed.values())


# -- weights ------------------------------------------------------------------------------------


@pytest.mark.parametrize("weight", [0.25, 0.5, 1.0, 1.5, 2.0, 3.7])
def test_weighted_sample_repeats_and_subsamples(weight: float) -> None:
    indices = list(range(0, 200, 2))
    chosen = weighted_sample(indices, weight, "1:corpus")
    assert len(chosen) == round(weight * len(indices))
    counts = Counter(chosen)
    assert set(counts) <= set(indices)
    assert set(counts.values()) <= {int(weight), int(weight) + 1} - {0}
    assert chosen == weighted_sample(indices, weight, "1:corpus")  # seeded
    if weight % 1:
        assert chosen != weighted_sample(indices, weight, "2:corpus")


# -- through prepare ----------------------------------------------------------------------------


def _write(folder: Path, stem: str, pairs: list[tuple[str, str]]) -> CorpusConfig:
    (folder / f"{stem}.en").write_text("".join(f"{e}\n" for e, _ in pairs), encoding="utf-8")
    (folder / f"{stem}.hi").write_text("".join(f"{h}\n" for _, h in pairs), encoding="utf-8")
    return CorpusConfig(name=stem, src=f"{stem}.en", tgt=f"{stem}.hi")


def test_prepare_weights_tags_and_reports_each_corpus(
    tmp_path: Path, en_hi_pairs: list[tuple[str, str]]
) -> None:
    general = _write(tmp_path, "general", en_hi_pairs[:20])
    general.weight = 2.0
    captions = _write(tmp_path, "captions", en_hi_pairs[20:35])
    captions.weight = 0.4
    synthetic = _write(tmp_path, "bt", en_hi_pairs[35:38])
    synthetic.tag = "<bt>"
    dev = _write(tmp_path, "dev", en_hi_pairs[38:])
    held = _write(tmp_path, "held", en_hi_pairs[:1])  # a "test set" that leaked into general
    clean = CleaningConfig(normalize=True, drop_dev_overlap=True, exclude=[held])
    data = DataConfig(
        src_lang="en",
        tgt_lang="hi",
        data_root=str(tmp_path),
        # weight 0 leaves a corpus out: its (missing) files are not even read
        train=[general, captions, synthetic, CorpusConfig(src="no.en", tgt="no.hi", weight=0)],
        valid=[dev],
        clean=clean,
        tokenizer=Tok(model_type="char", vocab_size=200),
    )
    prepared = prepare_data(ExperimentConfig(data=data), tmp_path / "prepared")
    corpora = {c["name"]: c for c in prepared.report["train"]["corpora"]}
    assert corpora["general"]["cleaning"]["dropped"]["dev_overlap"] == 1
    assert corpora["general"]["kept"] == 19
    assert corpora["general"]["pairs_in_training"] == 38
    assert corpora["captions"]["pairs_in_training"] == 6  # round(0.4 * 15)
    assert corpora["bt"]["tag"] == "<bt>"
    assert len(prepared.train) == 38 + 6 + 3
    # The tag is one piece of the source vocabulary, first in every synthetic source.
    src_tok = prepared.src_tokenizer
    tag_id = src_tok.id_to_piece(range(src_tok.vocab_size)).index("<bt>")
    tagged = [ids for ids in prepared.train.src if tag_id in ids]
    assert len(tagged) == 3
    assert all(tag_id in ids[:2] for ids in tagged)
    report = json.loads((tmp_path / "prepared" / "report.json").read_text(encoding="utf-8"))
    assert report["data_config"]["clean"]["drop_dev_overlap"] is True


def test_config_rejects_bad_weights_tags_and_ratios() -> None:
    config = ExperimentConfig(train=ExperimentConfig().train)
    config.data.train = [
        CorpusConfig(src="a", tgt="b", weight=-1),
        CorpusConfig(src="a", tgt="b", tag="<b t>"),
    ]
    config.data.clean.min_script_ratio = 1.5
    config.data.clean.exclude = [CorpusConfig(format="tsv")]
    with pytest.raises(ConfigError) as info:
        config.validate()
    message = str(info.value)
    assert "data.train[0].weight must be >= 0" in message
    assert "data.train[1].tag must be one token" in message
    assert "data.clean.min_script_ratio must be in [0, 1]" in message
    assert "data.clean.exclude[0]: tsv needs path" in message


# -- gzip ---------------------------------------------------------------------------------------


def test_gzip_corpora_are_read_and_bad_ones_named(tmp_path: Path) -> None:
    with gzip.open(tmp_path / "mono.hi.gz", "wt", encoding="utf-8") as handle:
        handle.write("पहला वाक्य।\n  दूसरा  \n")
    assert read_text_lines(tmp_path / "mono.hi.gz") == ["पहला वाक्य।", "दूसरा"]
    assert read_text_lines(tmp_path / "mono.hi.gz", limit=1) == ["पहला वाक्य।"]
    (tmp_path / "a.en.gz").write_bytes(gzip.compress(b"one\ntwo\n"))
    (tmp_path / "a.hi.gz").write_bytes(gzip.compress("एक\nदो\n".encode()))
    text = read_corpus(CorpusConfig(src="a.en.gz", tgt="a.hi.gz"), tmp_path)
    assert text.src == ["one", "two"] and text.tgt == ["एक", "दो"]
    (tmp_path / "cut.gz").write_bytes(gzip.compress(b"one\ntwo\n" * 100)[:-12])
    with pytest.raises(DataError, match=r"cut.gz: cannot be read after line \d+"):
        read_text_lines(tmp_path / "cut.gz")
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"ok\n\xff\xfe\n"))
    with pytest.raises(DataError, match="line 2 is not valid UTF-8"):
        read_text_lines(tmp_path / "bad.gz")


def test_corpus_paths_resolve_against_root_or_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, work = tmp_path / "root", tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (work / "data").mkdir(parents=True)
    (root / "sub" / "a.en").write_text("root\n", encoding="utf-8")
    (root / "sub" / "a.hi").write_text("मूल\n", encoding="utf-8")
    (work / "data" / "a.en").write_text("work\n", encoding="utf-8")
    (work / "data" / "a.hi").write_text("काम\n", encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.setenv("CORPUS_HOME", str(root))
    assert read_corpus(CorpusConfig(src="sub/a.en", tgt="sub/a.hi"), root).src == ["root"]
    assert read_corpus(CorpusConfig(src="./data/a.en", tgt="./data/a.hi"), root).src == ["work"]
    env = CorpusConfig(src="$CORPUS_HOME/sub/a.en", tgt="${CORPUS_HOME}/sub/a.hi")
    assert read_corpus(env, Path("/nonexistent")).tgt == ["मूल"]
