"""The well-formed-tree constraint: parsing models write only linearised trees.

:class:`TreeConstraint` plugs into the search's generic hook
(:class:`anuvad.decoding.constraints.OutputConstraint`): brackets close in order with their own
label, every constituent covers at least one leaf, there is one root, and the tree has exactly
one leaf per input word (:mod:`anuvad.parsing.trees`), so no output needs repair. The search
still ranks by the model's probabilities; it only never follows a continuation that cannot
become a tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from anuvad.data.tokenizer import EOS_ID, SPECIAL_IDS
from anuvad.decoding.constraints import NEG_INF, ConstraintRows, OutputConstraint

WORD_START = "\u2581"  # SentencePiece's word-start marker, as in "▁(NP"


@dataclass(frozen=True)
class _TreeState:
    """A prefix of a linearised tree: open labels, whether the innermost open constituent
    already covers a leaf, leaves so far, whether the root has closed, tokens so far."""

    stack: tuple[str, ...] = ()
    top_filled: bool = False
    leaves: int = 0
    closed_root: bool = False
    length: int = 0


class TreeConstraint(OutputConstraint):
    """Well-formed trees with one leaf per source word (a word-level source vocabulary).

    Target tokens are classed by their pieces (SentencePiece's ``▁`` dropped): ``(X`` opens X,
    ``)X`` closes it, the special ids, bare ``(`` / ``)`` and an ``(X`` without a ``)X`` are
    never produced, anything else is a leaf (a tag or ``XX``).
    A row's word count is its source length minus EOS. Near the output limit, tokens that would
    leave too few positions to finish the tree (one per missing leaf, one per open bracket) are
    forbidden too; a row whose limit is too short for any tree is left unconstrained.
    """

    def __init__(self, pieces: Sequence[str]) -> None:
        self.vocab_size = len(pieces)
        self.opens: dict[int, str] = {}
        self.closes: dict[str, int] = {}
        leaves: list[int] = []
        for index, raw in enumerate(pieces):
            piece = raw.removeprefix(WORD_START)
            if index in SPECIAL_IDS or piece in ("(", ")"):
                continue
            if piece.startswith("("):
                self.opens[index] = piece[1:]
            elif piece.startswith(")"):
                self.closes[piece[1:]] = index
            else:
                leaves.append(index)
        # An opening bracket whose label has no closing token could never close: never open it.
        self.opens = {i: label for i, label in self.opens.items() if label in self.closes}
        if not self.opens or not leaves:
            raise ValueError(
                "the target vocabulary has no bracket pairs or no leaf tokens: not a parsing "
                f"model ({len(self.opens)} bracket pairs, {len(leaves)} leaves)"
            )
        self.open_ids = torch.tensor(sorted(self.opens))
        self.leaf_ids = torch.tensor(leaves)
        self.close_set = frozenset(self.closes.values())

    def start(self, src_pad_mask: Tensor, limits: Sequence[int]) -> ConstraintRows:
        words = ((~src_pad_mask).sum(dim=1) - 1).clamp(min=0).tolist()  # (N,) minus EOS
        return _TreeRows(self, [int(w) for w in words], list(limits))


class _TreeRows(ConstraintRows):
    def __init__(self, tree: TreeConstraint, words: list[int], limits: list[int]) -> None:
        self.tree = tree
        self.words = words
        # A search stops a row at its limit even when the next token would be EOS, so EOS has
        # to come by step limit - 1: the tree itself gets limit - 1 tokens.
        self.limits = [limit - 1 for limit in limits]
        # A tree over n words needs at least n + 2 tokens: "(X", n leaves, ")X".
        self.free = [budget < n + 2 or n == 0 for n, budget in zip(words, self.limits, strict=True)]
        self.states = [_TreeState() for _ in words]

    def _to_finish(self, state: _TreeState, words: int) -> int:
        """Fewest tokens that complete the tree from ``state`` (EOS not counted)."""
        opening = 2 if not state.stack and not state.closed_root else 0  # "(X" ... ")X"
        return (words - state.leaves) + len(state.stack) + opening

    def mask(self) -> Tensor:
        tree, rows = self.tree, len(self.states)
        allowed = torch.zeros(rows, tree.vocab_size, dtype=torch.bool)  # (N, V)
        open_ok = torch.zeros(rows, dtype=torch.bool)
        leaf_ok = torch.zeros(rows, dtype=torch.bool)
        close_rows: list[int] = []
        close_ids: list[int] = []
        for row, state in enumerate(self.states):
            n = self.words[row]
            if self.free[row]:
                allowed[row] = True
                allowed[row, list(SPECIAL_IDS)] = False
                allowed[row, EOS_ID] = True
                continue
            # Every allowed token keeps _to_finish(state) <= the tokens left, so a leaf, a
            # close or the root's "(X" always fit; a nested open costs one token more.
            spare = self.limits[row] - state.length - self._to_finish(state, n)
            if not state.closed_root and state.leaves < n:
                open_ok[row] = not state.stack or spare >= 2
                leaf_ok[row] = bool(state.stack)
            # The root closes last, once every word has its leaf.
            if state.stack and state.top_filled and (len(state.stack) > 1 or state.leaves == n):
                close_rows.append(row)
                close_ids.append(tree.closes[state.stack[-1]])
            if not state.stack and state.closed_root and state.leaves == n:
                allowed[row, EOS_ID] = True
        allowed[:, tree.open_ids] |= open_ok[:, None]
        allowed[:, tree.leaf_ids] |= leaf_ok[:, None]
        allowed[close_rows, close_ids] = True
        mask = torch.zeros(rows, tree.vocab_size)
        return mask.masked_fill_(~allowed, NEG_INF)

    def advance(self, rows: Sequence[int], tokens: Sequence[int]) -> None:
        self.keep(rows)
        self.states = [self._step(s, t) for s, t in zip(self.states, tokens, strict=True)]

    def keep(self, rows: Sequence[int]) -> None:
        self.states = [self.states[r] for r in rows]
        self.words = [self.words[r] for r in rows]
        self.limits = [self.limits[r] for r in rows]
        self.free = [self.free[r] for r in rows]

    def _step(self, state: _TreeState, token: int) -> _TreeState:
        length = state.length + 1
        label = self.tree.opens.get(token)
        if label is not None:
            return _TreeState((*state.stack, label), False, state.leaves, False, length)
        if token in self.tree.close_set:
            if not state.stack:
                return _TreeState(state.stack, state.top_filled, state.leaves, True, length)
            stack = state.stack[:-1]
            return _TreeState(stack, True, state.leaves, not stack, length)
        return _TreeState(state.stack, True, state.leaves + 1, state.closed_root, length)
