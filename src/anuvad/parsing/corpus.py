"""The treebank corpus format ("ptb"): Penn Treebank trees as (sentence, linearised tree) pairs.

Registered with the generic corpus readers through the ``anuvad.corpus_formats`` entry point
(pyproject.toml), so :mod:`anuvad.data` reads treebanks without importing parsing.
"""

from __future__ import annotations

from pathlib import Path

from anuvad.config import CorpusConfig
from anuvad.data.corpora import ParallelText, resolve_path
from anuvad.parsing.trees import read_treebank, treebank_pairs


def read_ptb(corpus: CorpusConfig, root: Path, name: str) -> ParallelText:
    """Penn Treebank trees → (sentence, linearised tree) pairs, traces removed (section 6.3)."""
    path = resolve_path(corpus.path, root)
    pairs = treebank_pairs(read_treebank(path, corpus.first, corpus.last), corpus.tree_leaves)
    if corpus.max_lines > 0:
        pairs = pairs[: corpus.max_lines]
    return ParallelText(
        name=name,
        src_path=path,
        tgt_path=path,
        src=[sentence for sentence, _ in pairs],
        tgt=[tree for _, tree in pairs],
    )
