"""Labelled bracket precision, recall and F1 as EVALB (Sekine & Collins, 1997) computes them.

The default :data:`COLLINS_PARAMS` mirror EVALB's ``COLLINS.prm``, the standard setting for
Penn Treebank parsing results:

- ``DELETE_LABEL`` ``TOP -NONE- , : `` '' .``: those words (by their tag in each tree) are
  removed before spans are computed, and brackets with those labels are not counted;
- brackets over no remaining word are not counted;
- a bracket label is cut at its first ``-`` or ``=`` (``NP-SBJ-1`` → ``NP``);
- ``EQ_LABEL ADVP PRT``: the two labels count as equal;
- ``DELETE_LABEL_FOR_LENGTH -NONE-``: traces do not count towards the sentence length used for
  the ``len <= CUTOFF_LEN`` (40) figures.

Preterminals are never brackets. Brackets match as a multiset of (label, start, end). As in
EVALB, a sentence whose two trees differ in length or words is an error sentence and left out
of the totals, and a test tree without words is skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from anuvad.parsing.trees import PLACEHOLDER, Tree

Bracket = tuple[str, int, int]  # (label, first word, one past the last word)


@dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter file (see the module docstring)."""

    delete_labels: frozenset[str] = frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."})
    delete_labels_for_length: frozenset[str] = frozenset({"-NONE-"})
    equal_labels: tuple[tuple[str, str], ...] = (("ADVP", "PRT"),)
    cutoff_len: int = 40
    labeled: bool = True


COLLINS_PARAMS = EvalbParams()


@dataclass
class BracketCounts:
    """Totals over sentences; precision, recall and F1 in percent as EVALB prints them."""

    sentences: int = 0
    error_sentences: int = 0
    skipped_sentences: int = 0
    matched: int = 0
    gold: int = 0
    test: int = 0
    complete_match: int = 0

    @property
    def recall(self) -> float:
        """Matched / gold brackets, in percent."""
        return 100.0 * self.matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        """Matched / test brackets, in percent."""
        return 100.0 * self.matched / self.test if self.test else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall, in percent."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, sentence: SentenceScore) -> None:
        """Count one sentence in."""
        self.sentences += 1
        if sentence.status == "error":
            self.error_sentences += 1
        elif sentence.status == "skip":
            self.skipped_sentences += 1
        else:
            self.matched += sentence.matched
            self.gold += sentence.gold
            self.test += sentence.test
            self.complete_match += sentence.matched == sentence.gold == sentence.test

    def to_dict(self) -> dict[str, float | int]:
        """Plain data for JSON output."""
        valid = self.sentences - self.error_sentences - self.skipped_sentences
        return {
            "f1": round(self.f1, 2),
            "precision": round(self.precision, 2),
            "recall": round(self.recall, 2),
            "matched": self.matched,
            "gold_brackets": self.gold,
            "test_brackets": self.test,
            "sentences": self.sentences,
            "error_sentences": self.error_sentences,
            "skipped_sentences": self.skipped_sentences,
            "complete_match": round(100.0 * self.complete_match / valid, 2) if valid else 0.0,
        }


@dataclass
class SentenceScore:
    """One sentence: ``status`` is ``ok``, ``error`` (length or words differ) or ``skip``."""

    status: str
    length: int
    matched: int = 0
    gold: int = 0
    test: int = 0
    message: str = ""


@dataclass
class EvalbResult:
    """Corpus totals for all sentences and for those of at most ``cutoff_len`` words."""

    all: BracketCounts = field(default_factory=BracketCounts)
    short: BracketCounts = field(default_factory=BracketCounts)
    cutoff_len: int = 40
    sentences: list[SentenceScore] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """Plain data for JSON output."""
        return {"all": self.all.to_dict(), f"len<={self.cutoff_len}": self.short.to_dict()}


def _modify_label(label: str) -> str:
    """EVALB's ``modify_label``: cut at the first ``-`` or ``=``, wherever it is."""
    for i, char in enumerate(label):
        if char in "-=":
            return label[:i]
    return label


def evalb_view(
    tree: Tree, params: EvalbParams = COLLINS_PARAMS
) -> tuple[list[str], list[Bracket], int]:
    """What EVALB sees of a tree.

    Args:
        tree: the tree.
        params: the parameter file's settings.

    Returns:
        The words left after deleting ``delete_labels`` tags, the counted brackets (labels
        modified and equivalent labels mapped to one), and the sentence length for the cut-off.
    """
    canonical = {b: a for a, b in params.equal_labels}
    words: list[str] = []
    brackets: list[Bracket] = []
    length = 0

    def walk(node: Tree) -> None:
        nonlocal length
        if node.is_preterminal:
            if node.label not in params.delete_labels_for_length:
                length += 1
            if node.label not in params.delete_labels:
                words.append(str(node.word))
            return
        start = len(words)
        for child in node.children:
            walk(child)
        label = _modify_label(node.label)
        if len(words) > start and label not in params.delete_labels:
            brackets.append((canonical.get(label, label), start, len(words)))

    walk(tree)
    return words, brackets, length


def score_sentence(gold: Tree, test: Tree, params: EvalbParams = COLLINS_PARAMS) -> SentenceScore:
    """Score one test tree against its gold tree (see the module docstring for the rules)."""
    gold_words, gold_brackets, length = evalb_view(gold, params)
    test_words, test_brackets, _ = evalb_view(test, params)
    if not test_words:
        return SentenceScore("skip", length, message="the test tree has no words")
    if len(gold_words) != len(test_words):
        return SentenceScore(
            "error", length, message=f"length unmatch ({len(gold_words)}|{len(test_words)})"
        )
    for g, t in zip(gold_words, test_words, strict=True):
        if g != t:
            return SentenceScore("error", length, message=f"words unmatch ({g}|{t})")
    if not params.labeled:
        gold_brackets = [("", s, e) for _, s, e in gold_brackets]
        test_brackets = [("", s, e) for _, s, e in test_brackets]
    matched = sum((Counter(gold_brackets) & Counter(test_brackets)).values())
    return SentenceScore("ok", length, matched, len(gold_brackets), len(test_brackets))


def score_corpus(
    golds: Sequence[Tree], tests: Sequence[Tree | None], params: EvalbParams = COLLINS_PARAMS
) -> EvalbResult:
    """Score test trees against gold trees, sentence by sentence.

    Args:
        golds: the gold trees.
        tests: the test trees, aligned with ``golds``; None (an unreadable line) is an error
            sentence.
        params: the parameter file's settings (default: COLLINS.prm).

    Returns:
        Totals for all sentences and for those of at most ``params.cutoff_len`` words.

    Raises:
        ValueError: the two lists differ in length.
    """
    if len(golds) != len(tests):
        raise ValueError(f"{len(golds)} gold trees but {len(tests)} test trees")
    result = EvalbResult(cutoff_len=params.cutoff_len)
    for gold, test in zip(golds, tests, strict=True):
        if test is None:
            _, _, length = evalb_view(gold, params)
            sentence = SentenceScore("error", length, message="unreadable test tree")
        else:
            sentence = score_sentence(gold, test, params)
        result.sentences.append(sentence)
        result.all.add(sentence)
        if sentence.length <= params.cutoff_len:
            result.short.add(sentence)
    return result


def fill_placeholder_tags(test: Tree, gold: Tree, placeholder: str = PLACEHOLDER) -> Tree:
    """Give the test tree's placeholder tags the gold tags, word by word, in place.

    A model that writes ``XX`` for every word predicts no tags, but EVALB decides which words are
    punctuation by each tree's own tags; parsers without a tagger are scored with the gold tags
    (Vinyals et al., 2015). Traces in the gold tree are skipped. Nothing changes when the
    sentences differ in length (the sentence is then an error sentence anyway).

    Returns:
        ``test``.
    """
    for t, g in _aligned_preterminals(test, gold):
        if t.label == placeholder:
            t.label = g.label
    return test


def take_gold_tags(test: Tree, gold: Tree) -> tuple[int, int]:
    """Give every test preterminal the gold tag of its word, in place; count the tags it had right.

    Labelled bracket F1 does not score tags, but EVALB deletes punctuation by each tree's own
    tags, so one comma tagged ``NN`` (or a word tagged ``,``) turns a whole sentence into a
    "length unmatch" error that is left out of the totals. With the gold tags the brackets alone
    are scored. Traces in the gold tree are skipped; nothing changes when the sentences differ
    in length.

    Returns:
        (tags that were already the gold ones, words compared), (0, 0) when the lengths differ.
    """
    pairs = _aligned_preterminals(test, gold)
    correct = 0
    for t, g in pairs:
        correct += t.label == g.label
        t.label = g.label
    return correct, len(pairs)


def _aligned_preterminals(test: Tree, gold: Tree) -> list[tuple[Tree, Tree]]:
    """(test, gold) preterminals word by word, gold traces skipped; empty if lengths differ."""
    gold_tags = [p for p in gold.preterminals() if p.label != "-NONE-"]
    test_tags = list(test.preterminals())
    return list(zip(test_tags, gold_tags, strict=True)) if len(gold_tags) == len(test_tags) else []
