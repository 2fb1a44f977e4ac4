"""The tree constraint: random models searched under it write only well-formed trees."""

from __future__ import annotations

import pytest
import torch

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import EOS_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.greedy import greedy_search
from anuvad.parsing.constraint import TreeConstraint
from anuvad.parsing.trees import delinearize
from conftest import random_model, search_outputs

pytestmark = pytest.mark.usefixtures("one_thread")

# Target pieces of a parsing model: the four special ids, brackets of two labels, tags.
PIECES = ["<pad>", "<unk>", "<s>", "</s>", "(S", ")S", "(NP", ")NP", "DT", "NN", ".", "(", "(VP"]
# As a word-level SentencePiece model spells them (the constraint drops the word-start mark).
SP_PIECES = [p if i < 4 else "\u2581" + p for i, p in enumerate(PIECES)]
SOURCES = [[5, 9, 12, 7, 22, 8, 14], [6], [11, 4, 29, 17], [13, 13, 20, 5, 6, 7, 8, 9, 10], [25]]


def well_formed(token_ids: list[int], words: int) -> bool:
    output = " ".join(PIECES[i] for i in token_ids)
    return delinearize(output, ["w"] * words, leaves="pos").repairs == {}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("beam", [1, 3])
def test_constrained_search_writes_only_well_formed_trees_with_one_leaf_per_word(
    seed: int, beam: int
) -> None:
    model, constraint = random_model(seed, len(PIECES)), TreeConstraint(SP_PIECES)
    outputs = search_outputs(model, SOURCES, beam, constraint, length_penalty=0.3)
    for source, hyps in zip(SOURCES, outputs, strict=True):
        assert len(hyps) == beam
        for hyp in hyps:
            assert hyp.finished and well_formed(hyp.token_ids, len(source)), hyp
    unconstrained = [h for [h] in search_outputs(model, SOURCES, 1, None)]
    assert not all(  # the constraint did something: a random model alone writes garbage
        h.finished and well_formed(h.token_ids, len(s))
        for h, s in zip(unconstrained, SOURCES, strict=True)
    )


def test_beam_one_equals_greedy_under_the_constraint() -> None:
    model, constraint = random_model(3, len(PIECES)), TreeConstraint(PIECES)
    src_ids, src_pad_mask = collate_source(SOURCES)
    settings = DecodeConfig(beam_size=1, length_penalty=0.0, max_len_a=3.0, max_len_b=10)
    greedy = greedy_search(model, src_ids, src_pad_mask, settings, constraint=constraint)
    beam = beam_search(model, src_ids, src_pad_mask, settings, constraint=constraint)
    assert [h.token_ids for h in greedy] == [b[0].token_ids for b in beam]
    for g, (b,) in zip(greedy, beam, strict=True):
        assert g.log_prob == pytest.approx(b.log_prob, abs=1e-4)


def test_a_tight_limit_still_fits_a_tree_and_a_too_tight_one_is_left_free() -> None:
    model, constraint = random_model(4, len(PIECES)), TreeConstraint(PIECES)
    src_ids, src_pad_mask = collate_source(SOURCES)
    # limit = source tokens (words + EOS) + 2 = words + 3: exactly "(X", the leaves, ")X", EOS.
    tight = DecodeConfig(max_len_a=1.0, max_len_b=2)
    fitted = greedy_search(model, src_ids, src_pad_mask, tight, constraint=constraint)
    for hyp, source in zip(fitted, SOURCES, strict=True):
        assert hyp.finished and len(hyp.token_ids) == len(source) + 2
        assert well_formed(hyp.token_ids, len(source))
    # limit = words + 2: no finished tree fits; the rows search freely instead of getting stuck.
    too_tight = DecodeConfig(max_len_a=1.0, max_len_b=1)
    free = greedy_search(model, src_ids, src_pad_mask, too_tight, constraint=constraint)
    assert all(len(h.token_ids) <= len(s) + 2 for h, s in zip(free, SOURCES, strict=True))


def test_the_mask_follows_the_tree_rules() -> None:
    constraint = TreeConstraint(PIECES)
    ids = {piece: index for index, piece in enumerate(PIECES)}
    rows = constraint.start(torch.tensor([[False, False, False]]), [20])  # 2 words + EOS

    def allowed() -> set[str]:
        mask = rows.mask()[0]
        return {PIECES[i] for i in range(len(PIECES)) if mask[i] == 0}

    assert allowed() == {"(S", "(NP"}  # a bracket first; "(VP" has no ")VP": never opened
    rows.advance([0], [ids["(S"]])
    assert allowed() == {"(S", "(NP", "DT", "NN", "."}  # no close: S is empty
    rows.advance([0], [ids["NN"]])
    assert ")S" not in allowed() and ")NP" not in allowed()  # the root closes last
    rows.advance([0], [ids["(NP"]])
    rows.advance([0], [ids["DT"]])  # both words used: no more leaves or brackets
    assert allowed() == {")NP"}
    rows.advance([0], [ids[")NP"]])
    assert allowed() == {")S"}
    rows.advance([0], [ids[")S"]])
    assert allowed() == {"</s>"} and PIECES[EOS_ID] == "</s>"


def test_a_vocabulary_without_brackets_is_refused() -> None:
    with pytest.raises(ValueError, match="not a parsing model"):
        TreeConstraint(["<pad>", "<unk>", "<s>", "</s>", "hello", "world"])
