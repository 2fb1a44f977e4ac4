"""Constituency parsing as translation (section 6.3): Penn Treebank trees ↔ token sequences.

The target side follows Vinyals et al. (2015), "Grammar as a Foreign Language", which the paper
follows: a depth-first walk writes ``(LABEL`` on entering a constituent and ``)LABEL`` on leaving
it, and each word becomes a placeholder ``XX`` (or its part-of-speech tag, or the word itself)::

    (TOP (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .)))
    → (S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S

The root TOP is not written; function tags and co-indices are dropped (``NP-SBJ-1`` → ``NP``)
and traces (``-NONE-``) removed, since EVALB ignores all of them. :func:`delinearize` turns a
model's output back into a well-formed tree over the input words, repairing unbalanced
brackets, mismatched labels and a wrong number of leaves, and says what it repaired.
Bracket scoring lives in :mod:`anuvad.parsing.evalb`.
"""

from __future__ import annotations

import glob
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from anuvad.errors import DataError

TOP = "TOP"
PLACEHOLDER = "XX"
TRACE = "-NONE-"
LEAF_MODES = ("xx", "pos", "word")

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass
class Tree:
    """A constituent, or a preterminal (a tag over one word) when ``word`` is set.

    Attributes:
        label: the constituent label or part-of-speech tag (``TOP`` for the root).
        children: sub-trees, left to right (empty for a preterminal).
        word: the word of a preterminal, else None.
    """

    label: str
    children: list[Tree] = field(default_factory=list)
    word: str | None = None

    @property
    def is_preterminal(self) -> bool:
        """Whether this node is a tag over one word."""
        return self.word is not None

    def preterminals(self) -> Iterator[Tree]:
        """The preterminals, left to right."""
        if self.is_preterminal:
            yield self
            return
        for child in self.children:
            yield from child.preterminals()

    def words(self) -> list[str]:
        """The sentence, left to right."""
        return [str(p.word) for p in self.preterminals()]

    def to_string(self) -> str:
        """One line of Penn Treebank brackets, e.g. ``(TOP (S (NP (NNP John)) ...))``."""
        if self.is_preterminal:
            return f"({self.label} {self.word})"
        return f"({self.label} {' '.join(child.to_string() for child in self.children)})"


def strip_function_tags(label: str) -> str:
    """``NP-SBJ-1`` → ``NP``, ``PP=2`` → ``PP``; labels starting with ``-`` (``-NONE-``,
    ``-LRB-``) are kept whole."""
    if label.startswith("-"):
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


# --- reading -------------------------------------------------------------------------------------


def _syntax_error(source: str, text: str, pos: int, problem: str) -> DataError:
    line = text.count("\n", 0, pos) + 1
    return DataError(
        f"{source}: line {line}: {problem}. Penn Treebank trees look like "
        f"'( (S (NP (NNP John)) (VP (VBZ sleeps))) )'; fix or remove the tree."
    )


def read_trees(text: str, source: str = "<text>") -> list[Tree]:
    """Read every bracketed tree in ``text`` (``.mrg`` files, or one tree per line).

    A root without a label (``( (S ...) )``, as in the ``.mrg`` files) is labelled ``TOP``; a tree
    whose root has another label is put under a new ``TOP``.

    Args:
        text: the trees.
        source: a name for error messages (e.g. the file).

    Returns:
        The trees, in order, each rooted in ``TOP``.

    Raises:
        DataError: unbalanced brackets, a bracket without a label, or a word outside a tag,
            naming the source and line.
    """
    trees: list[Tree] = []
    stack: list[Tree] = []
    matches = list(_TOKEN.finditer(text))
    i = 0
    while i < len(matches):
        token, pos = matches[i].group(), matches[i].start()
        if token == "(":
            nxt = matches[i + 1].group() if i + 1 < len(matches) else ""
            label = nxt if nxt not in ("(", ")", "") else ""
            if not label and stack:
                raise _syntax_error(source, text, pos, "a bracket without a label")
            after = matches[i + 2].group() if i + 2 < len(matches) else ""
            closing = matches[i + 3].group() if i + 3 < len(matches) else ""
            if label and after not in ("(", ")", "") and closing == ")":
                leaf = Tree(label, word=after)
                if stack:
                    stack[-1].children.append(leaf)
                else:
                    trees.append(Tree(TOP, [leaf]))
                i += 4
                continue
            if label and after not in ("(", ")", ""):
                raise _syntax_error(source, text, pos, f"({label} holds a word and more")
            node = Tree(label or TOP)
            if stack:
                stack[-1].children.append(node)
            stack.append(node)
            i += 2 if label else 1
        elif token == ")":
            if not stack:
                raise _syntax_error(source, text, pos, "a ')' closes nothing")
            node = stack.pop()
            if not stack:
                trees.append(node if node.label == TOP else Tree(TOP, [node]))
            i += 1
        else:
            raise _syntax_error(source, text, pos, f"word {token!r} outside a (TAG word) pair")
    if stack:
        raise _syntax_error(source, text, len(text), "the last tree is not closed")
    return trees


def treebank_files(path: str | Path, first: str = "", last: str = "") -> list[Path]:
    """The ``.mrg`` files of a folder, a glob pattern or one file, sorted by name.

    Args:
        path: a folder (its ``*.mrg`` files), a pattern such as ``ptb/wsj_019*.mrg``, or a file.
        first: keep files whose name (without extension) is >= this (``""`` = no bound).
        last: keep files whose name is <= this (``""`` = no bound).

    Raises:
        DataError: no file matches.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        files = sorted(path.glob("*.mrg"))
    elif path.is_file():
        files = [path]
    else:
        files = sorted(Path(p) for p in glob.glob(str(path)))
    files = [f for f in files if (not first or f.stem >= first) and (not last or f.stem <= last)]
    if not files:
        raise DataError(
            f"no treebank files at {path} (first={first!r}, last={last!r}). Fix: give a folder "
            f"of .mrg files, a glob such as ptb/wsj_019*.mrg, or one file of trees."
        )
    return files


def read_treebank(path: str | Path, first: str = "", last: str = "") -> list[Tree]:
    """Read the trees of :func:`treebank_files` (same arguments), in file order.

    Raises:
        DataError: no file matches, or a file is not valid UTF-8 or has a malformed tree.
    """
    trees: list[Tree] = []
    for file in treebank_files(path, first, last):
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"{file} is not valid UTF-8 ({exc})") from exc
        trees.extend(read_trees(text, str(file)))
    return trees


# --- normalising and linearising -----------------------------------------------------------------


def remove_traces(tree: Tree) -> Tree | None:
    """A copy without ``-NONE-`` elements and the constituents they leave empty.

    Returns:
        The pruned tree, or None when nothing but traces was in it.
    """
    if tree.is_preterminal:
        return None if tree.label == TRACE else Tree(tree.label, word=tree.word)
    children = [c for c in (remove_traces(child) for child in tree.children) if c is not None]
    return Tree(tree.label, children) if children else None


def linearize(tree: Tree, leaves: str = "xx") -> str:
    """The target sequence of a tree, without its ``TOP`` and with function tags stripped.

    Args:
        tree: a tree (traces should be removed first, see :func:`remove_traces`).
        leaves: what stands for a word: ``"xx"`` (the placeholder XX, as Vinyals et al.'s
            normalised tags), ``"pos"`` (its tag) or ``"word"`` (the word itself).

    Returns:
        Space-separated tokens, e.g. ``(S (NP XX )NP (VP XX )VP XX )S``.

    Raises:
        ValueError: ``leaves`` is not one of ``LEAF_MODES``.
    """
    if leaves not in LEAF_MODES:
        raise ValueError(f"leaves must be one of {LEAF_MODES}, got {leaves!r}")
    tokens: list[str] = []

    def walk(node: Tree) -> None:
        if node.is_preterminal:
            leaf = {"xx": PLACEHOLDER, "pos": node.label, "word": str(node.word)}[leaves]
            tokens.append(leaf)
            return
        label = strip_function_tags(node.label)
        tokens.append(f"({label}")
        for child in node.children:
            walk(child)
        tokens.append(f"){label}")

    for child in tree.children if tree.label == TOP else [tree]:
        walk(child)
    return " ".join(tokens)


def treebank_pairs(trees: Sequence[Tree], leaves: str = "xx") -> list[tuple[str, str]]:
    """(sentence, linearised tree) training pairs; traces removed, trace-only trees skipped."""
    pairs = []
    for tree in trees:
        pruned = remove_traces(tree)
        if pruned is not None:
            pairs.append((" ".join(pruned.words()), linearize(pruned, leaves)))
    return pairs


# --- de-linearising, with repair -----------------------------------------------------------------


@dataclass
class ParsedSentence:
    """A model output turned into a tree.

    Attributes:
        tree: a well-formed tree rooted in ``TOP`` whose words are the input words.
        output: the model's raw output sequence.
        repairs: what had to be fixed, by kind (empty when the output was well-formed):
            ``unclosed`` (brackets left open), ``unmatched_close`` (a close with nothing open),
            ``label_mismatch`` (``)B`` closing ``(A``), ``missing_leaves`` / ``extra_leaves``
            (fewer / more leaves than words), ``empty_constituent`` (a bracket over no word),
            ``multiple_roots`` (not one constituent at the top), ``bad_token`` (a bare bracket).
    """

    tree: Tree
    output: str
    repairs: dict[str, int]

    @property
    def repaired(self) -> bool:
        """Whether the output needed any repair."""
        return bool(self.repairs)


def _drop_empty(node: Tree, repairs: Counter[str]) -> bool:
    """Remove constituents without words below ``node``; True when ``node`` itself is empty."""
    if node.is_preterminal:
        return False
    kept = []
    for child in node.children:
        if _drop_empty(child, repairs):
            repairs["empty_constituent"] += 1
        else:
            kept.append(child)
    node.children = kept
    return not kept


def delinearize(output: str, words: Sequence[str], leaves: str = "xx") -> ParsedSentence:
    """Turn an output sequence into a well-formed tree over ``words``, repairing it if needed.

    Repairs (each counted in ``repairs``): a closing bracket closes the innermost open one
    whatever its label; a close with nothing open is dropped; brackets left open are closed at
    the end; missing leaves are added at the end of the last top-level constituent, extra leaves
    dropped from the end; constituents over no word are removed.

    Args:
        output: the model output, e.g. ``(S (NP XX )NP (VP XX )VP )S``.
        words: the input sentence, one word per leaf.
        leaves: what the output's leaf tokens are (see :func:`linearize`): with ``"pos"`` a leaf
            token becomes the tag, otherwise the tag is the placeholder ``XX``.

    Returns:
        The tree, the raw output and the repairs.
    """
    repairs: Counter[str] = Counter()
    root = Tree(TOP)
    stack = [root]
    leaf_nodes: list[Tree] = []
    for token in output.split():
        if token.startswith("(") and len(token) > 1:
            node = Tree(token[1:])
            stack[-1].children.append(node)
            stack.append(node)
        elif token.startswith(")") and len(token) > 1:
            if len(stack) == 1:
                repairs["unmatched_close"] += 1
                continue
            if token[1:] != stack[-1].label:
                repairs["label_mismatch"] += 1
            stack.pop()
        elif token in ("(", ")"):
            repairs["bad_token"] += 1
        else:
            tag = token if leaves == "pos" else PLACEHOLDER
            leaf = Tree(tag, word="")
            stack[-1].children.append(leaf)
            leaf_nodes.append(leaf)
    if len(stack) > 1:
        repairs["unclosed"] += len(stack) - 1

    if len(leaf_nodes) > len(words):
        repairs["extra_leaves"] += len(leaf_nodes) - len(words)
        extra = {id(leaf) for leaf in leaf_nodes[len(words) :]}
        _remove_nodes(root, extra)
        leaf_nodes = leaf_nodes[: len(words)]
    elif len(leaf_nodes) < len(words):
        repairs["missing_leaves"] += len(words) - len(leaf_nodes)
        host = _last_constituent(root)
        for _ in range(len(words) - len(leaf_nodes)):
            leaf = Tree(PLACEHOLDER, word="")
            host.children.append(leaf)
            leaf_nodes.append(leaf)
    # Words go to the leaves in the tree's left-to-right order, which differs from the order
    # the leaves were made in when a missing leaf went into a constituent before a bare leaf.
    for leaf, word in zip(root.preterminals(), words, strict=True):
        leaf.word = word
    _drop_empty(root, repairs)
    if len(root.children) != 1 or root.children[0].is_preterminal:
        repairs["multiple_roots"] += 1
    return ParsedSentence(root, output, dict(repairs))


def _remove_nodes(node: Tree, doomed: set[int]) -> None:
    node.children = [c for c in node.children if id(c) not in doomed]
    for child in node.children:
        _remove_nodes(child, doomed)


def _last_constituent(root: Tree) -> Tree:
    """The last top-level constituent (sentence-final words attach there), else the root."""
    for child in reversed(root.children):
        if not child.is_preterminal:
            return child
    return root


def parse_sentences(
    translate: Callable[[Sequence[str]], list[str]],
    sentences: Sequence[str],
    leaves: str = "xx",
) -> list[ParsedSentence]:
    """Parse sentences with a sequence-to-sequence model.

    Args:
        translate: sentences in, linearised trees out (e.g. ``Translator.translate_text``).
        sentences: space-separated words, one sentence per item.
        leaves: what the model writes for a word (see :func:`linearize`).

    Returns:
        One tree per sentence, in order, repaired where needed.
    """
    word_lists = [sentence.split() for sentence in sentences]
    outputs = translate([" ".join(words) for words in word_lists])
    return [
        delinearize(output, words, leaves)
        for output, words in zip(outputs, word_lists, strict=True)
    ]
