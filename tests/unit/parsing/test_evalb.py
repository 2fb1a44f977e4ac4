"""EVALB bracket scoring (COLLINS.prm) on hand-computed cases, and against PYEVALB."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from anuvad.parsing.evalb import (
    COLLINS_PARAMS,
    EvalbParams,
    evalb_view,
    fill_placeholder_tags,
    score_corpus,
    score_sentence,
    take_gold_tags,
)
from anuvad.parsing.trees import Tree, delinearize, read_treebank, read_trees, remove_traces
from conftest import SHARED_DATA

PTB = SHARED_DATA / "parsing" / "ptb-sample"

# S[0,4] NP[0,2] VP[2,4] NP[3,4]: four brackets; the final period is not counted.
GOLD = "(TOP (S (NP (DT The) (NN dog)) (VP (VBZ chased) (NP (NNS cats))) (. .)))"


def tree(text: str) -> Tree:
    (only,) = read_trees(text)
    return only


def score(gold: str, test: str) -> tuple[float, float, float]:
    result = score_corpus([tree(gold)], [tree(test)])
    return result.all.precision, result.all.recall, result.all.f1


def test_perfect_match_is_100() -> None:
    assert score(GOLD, GOLD) == (100.0, 100.0, 100.0)


def test_a_missing_bracket_costs_recall_only() -> None:
    # No NP over "The dog": 3 of 4 gold brackets found, all 3 test brackets right.
    test = "(TOP (S (DT The) (NN dog) (VP (VBZ chased) (NP (NNS cats))) (. .)))"
    p, r, f = score(GOLD, test)
    assert (p, r) == (100.0, 75.0)
    assert f == pytest.approx(2 * 100 * 75 / 175)


def test_a_wrong_label_costs_precision_and_recall() -> None:
    test = "(TOP (S (NP (DT The) (NN dog)) (ADJP (VBZ chased) (NP (NNS cats))) (. .)))"
    assert score(GOLD, test) == (75.0, 75.0, 75.0)


def test_punctuation_is_ignored_wherever_it_is_attached() -> None:
    # The period moved out of S, and a bracket over only a comma: neither changes a span.
    test = (
        "(TOP (S (NP (DT The) (NN dog)) (VP (VBZ chased) (NP (NNS cats)))) (X (. .)) (ADVP (, ,)))"
    )
    gold = "(TOP (S (NP (DT The) (NN dog)) (VP (VBZ chased) (NP (NNS cats))) (. .) (, ,)))"
    assert score(gold, test) == (100.0, 100.0, 100.0)
    words, brackets, length = evalb_view(tree(gold))
    assert words == ["The", "dog", "chased", "cats"]
    assert length == 6  # punctuation counts for the length cut-off, traces do not
    assert ("S", 0, 4) in brackets


def test_advp_and_prt_are_equal_and_function_tags_are_stripped() -> None:
    gold = "(TOP (S (NP-SBJ-1 (PRP He)) (VP (VBD gave) (PRT (RP up)))))"
    test = "(TOP (S (NP (PRP He)) (VP (VBD gave) (ADVP (RB up)))))"
    assert score(gold, test) == (100.0, 100.0, 100.0)
    # Any other pair of different labels does not match.
    assert score(gold, test.replace("ADVP", "PP"))[2] < 100.0


def test_traces_and_the_root_are_not_brackets() -> None:
    gold = "( (S (NP-SBJ (-NONE- *-1)) (VP (VBZ sleeps) (SBAR (-NONE- 0))) (. .)) )"
    test = "(TOP (S (VP (VBZ sleeps))))"
    result = score_corpus([tree(gold)], [tree(test)])
    assert (result.all.matched, result.all.gold, result.all.test) == (2, 2, 2)


def test_unary_chains_count_as_a_multiset() -> None:
    gold = "(TOP (S (NP (NP (NNP John))) (VP (VBZ sleeps))))"
    test = "(TOP (S (NP (NNP John)) (VP (VBZ sleeps))))"
    result = score_sentence(tree(gold), tree(test))
    assert (result.matched, result.gold, result.test) == (3, 4, 3)


def test_unlabelled_scoring_ignores_labels() -> None:
    test = "(TOP (S (NP (DT The) (NN dog)) (ADJP (VBZ chased) (NP (NNS cats))) (. .)))"
    unlabelled = EvalbParams(labeled=False)
    result = score_corpus([tree(GOLD)], [tree(test)], unlabelled)
    assert result.all.f1 == 100.0


def test_length_or_word_mismatch_is_an_error_sentence_left_out() -> None:
    short = "(TOP (S (NP (DT The) (NN dog)) (VP (VBZ chased))))"
    other = GOLD.replace("cats", "mice")
    result = score_corpus([tree(GOLD)] * 3, [tree(short), tree(other), tree(GOLD)])
    assert result.all.sentences == 3
    assert result.all.error_sentences == 2
    assert result.all.f1 == 100.0  # only the third sentence is scored, as EVALB does
    assert [s.status for s in result.sentences] == ["error", "error", "ok"]
    assert "length" in result.sentences[0].message and "words" in result.sentences[1].message


def test_sentences_over_the_cutoff_are_left_out_of_the_short_totals() -> None:
    long_words = " ".join(f"(NN w{i})" for i in range(41))
    long_tree = f"(TOP (S (NP {long_words})))"
    result = score_corpus([tree(GOLD), tree(long_tree)], [tree(GOLD), tree(long_tree)])
    assert result.all.sentences == 2
    assert result.short.sentences == 1
    assert result.short.gold == 4


def test_an_unbalanced_prediction_is_repaired_and_scored() -> None:
    words = ["The", "dog", "chased", "cats", "."]
    # Never closes VP or S, and closes NP with the wrong label.
    output = "(S (NP XX XX )VP (VP XX (NP XX )NP XX"
    parsed = delinearize(output, words)
    assert parsed.repaired
    assert parsed.repairs == {"label_mismatch": 1, "unclosed": 2}
    test = fill_placeholder_tags(parsed.tree, tree(GOLD))
    assert [p.label for p in test.preterminals()] == ["DT", "NN", "VBZ", "NNS", "."]
    # The period sits inside VP here; EVALB drops it, so every bracket matches.
    assert score_corpus([tree(GOLD)], [test]).all.f1 == 100.0


def test_placeholder_tags_without_gold_tags_make_punctuation_count() -> None:
    # XX over "." is not deleted, so lengths differ: why evaluation fills in gold tags.
    parsed = delinearize("(S (NP XX XX )NP (VP XX (NP XX )NP )VP XX )S", GOLD_WORDS)
    assert score_sentence(tree(GOLD), parsed.tree).status == "error"
    fill_placeholder_tags(parsed.tree, tree(GOLD))
    assert score_sentence(tree(GOLD), parsed.tree).matched == 4


GOLD_WORDS = ["The", "dog", "chased", "cats", "."]


def test_a_mistagged_period_is_a_length_error_unless_scored_with_gold_tags() -> None:
    # The model's own tags (tag leaves): the period tagged NN, "cats" tagged "." instead.
    output = "(S (NP DT NN )NP (VP VBZ (NP . )NP )VP NN )S"
    parsed = delinearize(output, GOLD_WORDS, leaves="pos")
    assert not parsed.repaired
    own = score_sentence(tree(GOLD), parsed.tree)
    assert own.status == "error" and "unmatch" in own.message  # words: cats | .
    assert take_gold_tags(parsed.tree, tree(GOLD)) == (3, 5)  # DT NN VBZ right, 2 wrong
    assert [p.label for p in parsed.tree.preterminals()] == ["DT", "NN", "VBZ", "NNS", "."]
    scored = score_sentence(tree(GOLD), parsed.tree)
    assert (scored.status, scored.matched, scored.gold, scored.test) == ("ok", 4, 4, 4)
    # Different lengths: nothing to compare, nothing changed.
    short = delinearize("(S (NP DT NN )NP )S", GOLD_WORDS[:2], leaves="pos").tree
    assert take_gold_tags(short, tree(GOLD)) == (0, 0)
    assert [p.label for p in short.preterminals()] == ["DT", "NN"]


# --- against PYEVALB (pip install PYEVALB), on the treebank sample --------------------------------


def _normalised(node: Tree, params: EvalbParams) -> list[str]:
    """Brackets of what EVALB sees (punctuation deleted, labels cut and mapped, no TOP, no empty
    brackets), for a scorer that has no parameter file."""
    if node.is_preterminal:
        return [] if node.label in params.delete_labels else [f"({node.label} {node.word})"]
    inner = [part for child in node.children for part in _normalised(child, params)]
    label = node.label.split("-")[0].split("=")[0]
    label = {b: a for a, b in params.equal_labels}.get(label, label)
    if not inner or label in params.delete_labels:
        return inner
    return [f"({label} {' '.join(inner)})"]


def _perturb(node: Tree, rng: random.Random) -> Tree:
    """Flatten some constituents and relabel others, so test trees differ from gold."""
    if node.is_preterminal:
        return Tree(node.label, word=node.word)
    children: list[Tree] = []
    for child in node.children:
        new = _perturb(child, rng)
        if not new.is_preterminal and rng.random() < 0.15:
            children.extend(new.children)
        else:
            children.append(new)
    label = node.label
    if label != "TOP" and rng.random() < 0.1:
        label = rng.choice(["NP", "VP", "PP", "ADJP", "S"])
    return Tree(label, children)


def test_matches_pyevalb_on_the_treebank_sample() -> None:
    pytest.importorskip("PYEVALB")
    from PYEVALB import parser as pyevalb_parser
    from PYEVALB import scorer as pyevalb_scorer

    if not PTB.is_dir():
        pytest.skip(f"no treebank sample at {PTB}")
    rng = random.Random(7)
    golds = read_treebank(PTB, "wsj_0180", "wsj_0189")
    compared = 0
    ours_matched = theirs_matched = 0
    for gold in golds:
        pruned = remove_traces(gold)
        assert pruned is not None
        test = _perturb(pruned, rng)
        gold_parts = _normalised(gold, COLLINS_PARAMS)
        test_parts = _normalised(test, COLLINS_PARAMS)
        if len(gold_parts) != 1 or len(test_parts) != 1:
            continue  # PYEVALB needs one root
        ours = score_sentence(gold, test)
        _, gold_brackets, _ = evalb_view(gold)
        _, test_brackets, _ = evalb_view(test)
        if any(n > 1 for n in (Counter(gold_brackets) | Counter(test_brackets)).values()):
            continue  # PYEVALB matches brackets as a set, EVALB as a multiset
        theirs = pyevalb_scorer.Scorer().score_trees(
            pyevalb_parser.create_from_bracket_string(gold_parts[0]),
            pyevalb_parser.create_from_bracket_string(test_parts[0]),
        )
        assert (ours.matched, ours.gold, ours.test) == (
            theirs.matched_brackets,
            theirs.gold_brackets,
            theirs.test_brackets,
        ), gold.to_string()
        compared += 1
        ours_matched += ours.matched
        theirs_matched += theirs.matched_brackets
    assert compared >= len(golds) // 2
    assert ours_matched == theirs_matched > 0
