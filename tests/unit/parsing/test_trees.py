"""Treebank reading, linearisation (Vinyals et al. 2015) and de-linearisation with repair."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.config import CorpusConfig, ExperimentConfig
from anuvad.data.corpora import read_corpus
from anuvad.errors import ConfigError, DataError
from anuvad.parsing.evalb import score_sentence
from anuvad.parsing.trees import (
    TOP,
    Tree,
    delinearize,
    linearize,
    parse_sentences,
    read_treebank,
    read_trees,
    remove_traces,
    strip_function_tags,
    treebank_files,
    treebank_pairs,
)
from conftest import SHARED_DATA

PTB = SHARED_DATA / "parsing" / "ptb-sample"

MRG = """( (S
    (NP-SBJ-1 (NNP John) )
    (VP (VBZ wants)
      (S
        (NP-SBJ (-NONE- *-1) )
        (VP (TO to)
          (VP (VB sleep) ))))
    (. .) ))
( (FRAG (NP (DT No) (NN comment) ) (. .) ))
"""


def test_reads_mrg_trees_with_an_unlabelled_root() -> None:
    first, second = read_trees(MRG)
    assert first.label == TOP and first.children[0].label == "S"
    assert first.words() == ["John", "wants", "*-1", "to", "sleep", "."]
    assert second.words() == ["No", "comment", "."]
    # Written back on one line, and read again to the same tree.
    assert read_trees(first.to_string()) == [first]


def test_a_labelled_root_is_put_under_top() -> None:
    (tree,) = read_trees("(S (NP (PRP It)) (VP (VBZ works)))")
    assert tree.label == TOP and tree.children[0].label == "S"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("( (S (NP (NN a)) )", "not closed"),
        ("(S (NN a)))", "closes nothing"),
        ("(S (NN a) stray)", "outside"),
        ("(S (NN a b))", "holds a word and more"),
    ],
)
def test_malformed_trees_name_the_line(text: str, problem: str) -> None:
    with pytest.raises(DataError, match=problem) as info:
        read_trees("\n" + text, "gold.mrg")
    assert "gold.mrg: line 2" in str(info.value)


def test_traces_and_the_constituents_they_empty_are_removed() -> None:
    pruned = remove_traces(read_trees(MRG)[0])
    assert pruned is not None
    assert pruned.words() == ["John", "wants", "to", "sleep", "."]
    inner_s = pruned.children[0].children[1].children[1]
    assert inner_s.label == "S" and [c.label for c in inner_s.children] == ["VP"]
    assert remove_traces(read_trees("(S (NP (-NONE- *)))")[0]) is None


def test_linearize_writes_labelled_brackets_and_placeholders() -> None:
    pruned = remove_traces(read_trees(MRG)[0])
    assert pruned is not None
    assert linearize(pruned) == "(S (NP XX )NP (VP XX (S (VP XX (VP XX )VP )VP )S )VP XX )S"
    assert linearize(pruned, "pos").split()[2] == "NNP"
    assert linearize(pruned, "word").split()[-2] == "."
    with pytest.raises(ValueError, match="leaves"):
        linearize(pruned, "tags")


def test_strip_function_tags() -> None:
    assert strip_function_tags("NP-SBJ-1") == "NP"
    assert strip_function_tags("PP=2") == "PP"
    assert strip_function_tags("-NONE-") == "-NONE-"
    assert strip_function_tags("PRP$") == "PRP$"


def test_delinearize_inverts_linearize_without_repair() -> None:
    for tree in read_trees(MRG):
        pruned = remove_traces(tree)
        assert pruned is not None
        parsed = delinearize(linearize(pruned, "pos"), pruned.words(), "pos")
        assert not parsed.repaired
        assert parsed.tree.to_string() == _no_function_tags(pruned).to_string()


def _no_function_tags(tree: Tree) -> Tree:
    if tree.is_preterminal:
        return Tree(tree.label, word=tree.word)
    return Tree(strip_function_tags(tree.label), [_no_function_tags(c) for c in tree.children])


@pytest.mark.parametrize(
    ("output", "repairs", "expected"),
    [
        ("(S (NP XX )NP (VP XX XX )VP )S", {}, "(TOP (S (NP (XX a)) (VP (XX b) (XX c))))"),
        ("(S (NP XX )NP (VP XX XX", {"unclosed": 2}, "(TOP (S (NP (XX a)) (VP (XX b) (XX c))))"),
        (
            "(S (NP XX )NP )S )S (VP XX XX )VP",
            {"unmatched_close": 1, "multiple_roots": 1},
            "(TOP (S (NP (XX a))) (VP (XX b) (XX c)))",
        ),
        ("(S (NP XX )VP XX XX )S", {"label_mismatch": 1}, "(TOP (S (NP (XX a)) (XX b) (XX c)))"),
        ("(S (NP XX )NP )S", {"missing_leaves": 2}, "(TOP (S (NP (XX a)) (XX b) (XX c)))"),
        (
            "(S XX XX XX (NP XX )NP )S",
            {"extra_leaves": 1, "empty_constituent": 1},
            "(TOP (S (XX a) (XX b) (XX c)))",
        ),
        ("", {"missing_leaves": 3, "multiple_roots": 1}, "(TOP (XX a) (XX b) (XX c))"),
        (  # the missing leaf goes into S, before the bare leaf: words in tree order
            "(S (NP XX )NP )S XX",
            {"missing_leaves": 1, "multiple_roots": 1},
            "(TOP (S (NP (XX a)) (XX b)) (XX c))",
        ),
        ("( (S XX XX XX )S )", {"bad_token": 2}, "(TOP (S (XX a) (XX b) (XX c)))"),
    ],
)
def test_delinearize_repairs_ill_formed_output(
    output: str, repairs: dict[str, int], expected: str
) -> None:
    parsed = delinearize(output, ["a", "b", "c"])
    assert parsed.repairs == repairs
    assert parsed.repaired == bool(repairs)
    assert parsed.tree.to_string() == expected
    assert parsed.tree.words() == ["a", "b", "c"]
    # Always well-formed: it reads back as exactly one tree.
    assert read_trees(parsed.tree.to_string()) == [parsed.tree]


def test_parse_sentences_feeds_words_and_repairs_outputs() -> None:
    seen: list[str] = []

    def fake_model(texts: list[str]) -> list[str]:
        seen.extend(texts)
        return ["(S (NP XX )NP (VP XX )VP )S", "(S XX"]

    parsed = parse_sentences(fake_model, ["John  sleeps", "Go ."])  # type: ignore[arg-type]
    assert seen == ["John sleeps", "Go ."]
    assert [p.repaired for p in parsed] == [False, True]
    assert parsed[1].tree.words() == ["Go", "."]


# --- files and the ptb corpus format ------------------------------------------------------------


def _treebank(tmp_path: Path) -> Path:
    folder = tmp_path / "ptb"
    folder.mkdir()
    for i in range(1, 4):
        (folder / f"wsj_000{i}.mrg").write_text(
            f"( (S (NP (NNP Word{i})) (VP (VBZ runs)) (. .)) )\n"
            f"( (S (NP (-NONE- *)) (VP (VB Stop)) (. !)) )\n",
            encoding="utf-8",
        )
    (folder / "README").write_text("not a tree", encoding="utf-8")
    return folder


def test_treebank_files_by_folder_glob_and_range(tmp_path: Path) -> None:
    folder = _treebank(tmp_path)
    assert [f.name for f in treebank_files(folder)] == [f"wsj_000{i}.mrg" for i in (1, 2, 3)]
    assert [f.name for f in treebank_files(folder, "wsj_0002")] == ["wsj_0002.mrg", "wsj_0003.mrg"]
    assert [f.name for f in treebank_files(folder, last="wsj_0001")] == ["wsj_0001.mrg"]
    assert len(treebank_files(str(folder / "wsj_000[12].mrg"))) == 2
    with pytest.raises(DataError, match="no treebank files"):
        treebank_files(folder, "wsj_0009")


def test_ptb_corpus_gives_sentence_and_tree_pairs(tmp_path: Path) -> None:
    _treebank(tmp_path)
    corpus = CorpusConfig(name="wsj", format="ptb", path="ptb", first="wsj_0002", last="wsj_0003")
    text = read_corpus(corpus, tmp_path)
    assert text.src == ["Word2 runs .", "Stop !", "Word3 runs .", "Stop !"]
    assert text.tgt[0] == "(S (NP XX )NP (VP XX )VP XX )S"
    assert text.tgt[1] == "(S (VP XX )VP XX )S"  # the trace and its NP are gone
    assert text.src_path == tmp_path / "ptb"


def test_ptb_config_is_validated() -> None:
    config = ExperimentConfig()
    config.data.train = [CorpusConfig(format="ptb", tree_leaves="tags")]
    with pytest.raises(ConfigError) as info:
        config.validate()
    assert "ptb needs path" in str(info.value) and "tree_leaves" in str(info.value)


@pytest.mark.slow  # several seconds: left out of make test-fast
@pytest.mark.skipif(not PTB.is_dir(), reason="no treebank sample")
def test_every_sample_tree_survives_the_round_trip() -> None:
    trees = read_treebank(PTB)
    pairs = treebank_pairs(trees)
    assert len(pairs) == len(trees) == 3914
    for tree, (sentence, target) in zip(trees, pairs, strict=True):
        parsed = delinearize(target, sentence.split())
        assert not parsed.repaired
        # The gold tags for the placeholders, then EVALB must see the same brackets.
        for test_leaf, gold_leaf in zip(
            parsed.tree.preterminals(),
            (p for p in tree.preterminals() if p.label != "-NONE-"),
            strict=True,
        ):
            test_leaf.label = gold_leaf.label
        result = score_sentence(tree, parsed.tree)
        assert result.status == "ok" and result.matched == result.gold == result.test
