"""Terminology constraints: the KMP automaton against brute force (with a start class too), and
the guarantee on random tiny models (greedy and beam, n-best, with repetition blocking, tight
limits): every output holds every required phrase (whole, where it has a boundary), and
sentences without phrases decode exactly as without."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
import torch
from test_search import CONFIG, SOURCES, case_model

from anuvad.data.batching import collate_source
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.beam_allocation import allocate_beams
from anuvad.decoding.boundaries import Boundary, BoundaryTable, holds
from anuvad.decoding.constraints import search_constraint
from anuvad.decoding.search import Hypothesis
from anuvad.decoding.terms import (
    RequiredPhrase,
    TermConstraint,
    failure_table,
    next_partial,
)
from conftest import random_model, search_outputs

pytestmark = pytest.mark.usefixtures("one_thread")


def contains(tokens: Sequence[int], phrase: Sequence[int]) -> bool:
    n = len(phrase)
    return any(list(tokens[i : i + n]) == list(phrase) for i in range(len(tokens) - n + 1))


def test_the_automaton_matches_a_brute_force_suffix_check() -> None:
    rng = random.Random(0)
    for _ in range(300):
        phrase = tuple(rng.choice([4, 5, 6]) for _ in range(rng.randint(1, 5)))
        table = failure_table(phrase)
        partial, seen = 0, []
        for _ in range(30):
            token = rng.choice([4, 5, 6])
            seen.append(token)
            partial = next_partial(phrase, table, partial, token)
            # The longest suffix of what was seen that is a prefix of the phrase.
            want = max(
                (
                    n
                    for n in range(len(phrase) + 1)
                    if n <= len(seen) and tuple(seen[len(seen) - n :]) == phrase[:n]
                ),
                default=0,
            )
            assert partial == want, (phrase, seen)
            if partial == len(phrase):
                partial = table[partial]  # keep matching after a full match, as KMP does


def random_phrases(rng: random.Random, vocab: int, count: int) -> list[list[list[int]]]:
    return [
        [
            [rng.randrange(4, vocab) for _ in range(rng.randint(1, 3))]
            for _ in range(rng.randint(0, 2))
        ]
        for _ in range(count)
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("no_repeat", [0, 2])
def test_every_output_holds_every_phrase(seed: int, k: int, no_repeat: int) -> None:
    model = case_model(seed, 1.5 if seed == 2 else 0.0)  # seed 2: EOS favoured, short outputs
    vocab = CONFIG.tgt_vocab_size
    rng = random.Random(seed * 10 + k)
    phrases = random_phrases(rng, vocab, len(SOURCES))
    assert any(phrases)  # some sentence has a phrase to hold (else nothing is checked)
    constraint = search_constraint(no_repeat, vocab, first=TermConstraint(phrases, vocab))
    results = search_outputs(model, SOURCES, k, constraint, max_len=(1.0, 3))
    for wanted, hypotheses in zip(phrases, results, strict=True):
        assert hypotheses
        for hypothesis in hypotheses:
            for phrase in wanted:
                assert contains(hypothesis.token_ids, phrase), (wanted, hypothesis.token_ids)


def test_a_phrase_as_long_as_the_limit_still_fits() -> None:
    model = case_model(1, 0.0)
    src_ids, src_pad_mask = collate_source([[6]])  # limit: 1 * 2 (with EOS) + 2 = 4 tokens
    phrase = [7, 8, 9, 6]
    constraint = TermConstraint([[phrase]], CONFIG.tgt_vocab_size)
    settings = DecodeConfig(beam_size=4, nbest=4, max_len_a=1.0, max_len_b=2)
    (hyps,) = beam_search(model, src_ids, src_pad_mask, settings, constraint=constraint)
    assert all(h.token_ids == phrase for h in hyps)


def test_sentences_without_phrases_decode_as_without_a_constraint() -> None:
    model = case_model(0, 0.0)
    vocab = CONFIG.tgt_vocab_size
    src_ids, src_pad_mask = collate_source(SOURCES)
    settings = DecodeConfig(beam_size=4, nbest=2, max_len_a=1.0, max_len_b=3)
    plain = beam_search(model, src_ids, src_pad_mask, settings)
    empty = TermConstraint([[] for _ in SOURCES], vocab)
    constrained = beam_search(model, src_ids, src_pad_mask, settings, constraint=empty)
    for a, b in zip(plain, constrained, strict=True):
        assert [h.token_ids for h in a] == [h.token_ids for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b])


def test_wrong_batch_size_is_refused() -> None:
    constraint = TermConstraint([[[5]], [[6]]], 30)
    with pytest.raises(ValueError, match="3 search rows do not fit the phrases of 2 sentences"):
        constraint.start(torch.zeros((3, 4), dtype=torch.bool), [5, 5, 5])


@pytest.mark.parametrize("seed", [0, 1])
def test_constrained_beam_search_in_a_batch_equals_one_sentence_at_a_time(seed: int) -> None:
    """Dynamic beam allocation works per sentence: a sentence's hypotheses (tokens and scores)
    do not depend on the other sentences of its batch or their phrases."""
    model = case_model(seed, 0.0)
    vocab = CONFIG.tgt_vocab_size
    phrases = random_phrases(random.Random(seed + 7), vocab, len(SOURCES))
    phrases[0] = phrases[0] or [[5, 6]]  # at least one sentence with a phrase
    src_ids, src_pad_mask = collate_source(SOURCES)
    settings = DecodeConfig(beam_size=3, nbest=3, max_len_a=1.0, max_len_b=3)
    batched = beam_search(
        model, src_ids, src_pad_mask, settings, constraint=TermConstraint(phrases, vocab)
    )
    for i, source in enumerate(SOURCES):
        one_ids, one_mask = collate_source([source])
        (alone,) = beam_search(
            model, one_ids, one_mask, settings, constraint=TermConstraint([phrases[i]], vocab)
        )
        assert [h.token_ids for h in batched[i]] == [h.token_ids for h in alone], i
        assert [h.score for h in batched[i]] == pytest.approx([h.score for h in alone], abs=1e-4)


class OneWantedToken:
    """Rows' wanted tokens for :func:`allocate_beams`: only ``row`` wants ``token``, which is the
    only token that makes progress."""

    def __init__(self, row: int, token: int) -> None:
        self.row, self.token = row, token

    def wanted(self, row: int) -> list[int]:
        return [self.token] if row == self.row else []

    def progress_after(self, row: int, token: int) -> int:
        return 1 if (row, token) == (self.row, self.token) else 0


@pytest.mark.parametrize("row", [0, 1, 2, 3, 5])
def test_allocation_offers_each_beam_its_wanted_token(row: int) -> None:
    """Dynamic beam allocation: the token a beam needs for its phrase competes in that beam's
    own sentence (its own bank), even when it is far outside the K best (Post & Vilar 2018)."""
    k, vocab, sentences = 2, 12, 3
    candidates = torch.full((sentences * k, vocab), -50.0)  # (B*K, V) running scores
    candidates[:, 4], candidates[:, 5] = -1.0, -2.0  # every row's top tokens: 4, then 5
    beam_scores = torch.zeros(sentences, k)  # all beams live
    # per sentence: beams, tokens, values of its top K
    top: list[list[Any]] = [[0, 1], [4, 4], [-1.0, -1.0]]
    beams, tokens, _ = allocate_beams(
        OneWantedToken(row, 9),  # type: ignore[arg-type]
        candidates, beam_scores, [top[0]] * sentences, [top[1]] * sentences,
        [top[2]] * sentences, k,
    )  # fmt: skip
    for i in range(sentences):
        offered = set(zip(beams[i], tokens[i], strict=True))
        assert ((row % k, 9) in offered) == (i == row // k), (i, offered)
        assert len(beams[i]) == k


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("constrained", [False, True])
def test_what_the_search_records_of_each_token_is_what_a_forced_pass_computes(
    seed: int, k: int, constrained: bool
) -> None:
    """``signals=True``: every hypothesis (finished, or cut by the length limit; under required
    phrases and repetition blocking too) carries each token's log-probability and entropy, equal
    to a teacher-forced pass over it, and the log-probabilities sum to its ``log_prob``. The
    confidence uses them instead of that pass."""
    vocab = CONFIG.tgt_vocab_size
    phrases = random_phrases(random.Random(seed + k), vocab, len(SOURCES))
    constraint = (
        search_constraint(2, vocab, first=TermConstraint(phrases, vocab)) if constrained else None
    )
    finished = set()
    # Outputs cut by a short limit, and outputs that end (EOS strongly favoured).
    for eos_bias, limit in ((0.0, (1.0, 2)), (3.0, (3.0, 30))):
        model = case_model(seed, eos_bias)
        results = search_outputs(model, SOURCES, k, constraint, max_len=limit, signals=True)
        plain = search_outputs(model, SOURCES, k, constraint, max_len=limit)
        finished |= check_recorded(model, results, plain)
    assert finished == {True, False}  # both kinds were checked


def check_recorded(
    model: Any, results: list[list[Hypothesis]], plain: list[list[Hypothesis]]
) -> set[bool]:
    """Assert the recorded signals of ``results`` against a forced pass; ``plain`` (the same
    search without recording) has the same outputs and no signals. Returns the ``finished``
    values seen."""
    from anuvad.inference.confidence import output_signals

    finished = set()
    for source, hypotheses, without in zip(SOURCES, results, plain, strict=True):
        assert [h.token_ids for h in hypotheses] == [h.token_ids for h in without]
        assert all(h.token_log_probs is None and h.entropies is None for h in without)
        outputs = [(h.token_ids, h.finished) for h in hypotheses]
        forced = output_signals(model, [source] * len(hypotheses), outputs, attention=False)
        for h, f in zip(hypotheses, forced, strict=True):
            finished.add(h.finished)
            assert h.token_log_probs is not None and h.entropies is not None
            assert len(h.token_log_probs) == len(h.token_ids) + h.finished
            assert h.token_log_probs == pytest.approx(f.log_probs, abs=1e-4)
            assert h.entropies == pytest.approx(f.entropies, abs=1e-4)
            assert sum(h.token_log_probs) == pytest.approx(h.log_prob, abs=1e-4)
    return finished


# -- boundaries: a phrase counts only whole (issue 34, item 3) --------------------------------

# A toy vocabulary with word starts, digits, a separator and a vowel sign, for random models.
PIECES = ["<pad>", "<unk>", "<s>", "</s>", "▁", "1", "2", "▁a", "b", ".", "(", "▁c", "ो", "-"]
TABLE = BoundaryTable.from_pieces(PIECES)


def number(rng: random.Random) -> RequiredPhrase:
    """A number ("▁" and one to three digits of 1 and 2: prefixes of each other are common)."""
    digits = tuple(rng.choice([5, 6]) for _ in range(rng.randint(1, 3)))
    return RequiredPhrase((4, *digits), Boundary.NUMBER, TABLE.number_starts)


def word(rng: random.Random) -> RequiredPhrase:
    """A word phrase: "▁a" or "▁c", then up to two pieces that continue a word."""
    rest = tuple(rng.choice([8, 12]) for _ in range(rng.randint(0, 2)))
    return RequiredPhrase((rng.choice([7, 11]), *rest), Boundary.WORD)


def bounded_phrases(rng: random.Random) -> list[list[RequiredPhrase]]:
    """Per source, up to three numbers and words that fit its output limit (max_len 1.0, 6)."""
    result = []
    for source in SOURCES:
        room = len(source) + 1 + 6  # a * (source + EOS) + b
        drawn = [rng.choice([number, word])(rng) for _ in range(rng.randint(0, 3))]
        kept: list[RequiredPhrase] = []
        for phrase in drawn:
            if sum(len(p.tokens) for p in kept) + len(phrase.tokens) <= room:
                kept.append(phrase)
        result.append(kept)
    return result


def held_whole(tokens: Sequence[int], phrase: RequiredPhrase) -> bool:
    """Some occurrence of ``phrase`` in ``tokens`` is followed (after passing pieces) by the
    end or by a piece that does not glue onto it."""
    n = len(phrase.tokens)
    for i in range(len(tokens) - n + 1):
        if all(phrase.accepts(p, tokens[i + p]) for p in range(n)):
            j = i + n
            while j < len(tokens) and bool(TABLE.passing[phrase.boundary][tokens[j]]):
                j += 1
            if j == len(tokens) or not bool(TABLE.glue[phrase.boundary][tokens[j]]):
                return True
    return False


def test_the_automaton_with_a_start_class_matches_a_brute_force_suffix_check() -> None:
    rng = random.Random(1)
    for _ in range(300):
        phrase = RequiredPhrase(
            tuple(rng.choice([4, 5, 6]) for _ in range(rng.randint(1, 5))),
            starts=frozenset(rng.sample([4, 5, 6, 7], rng.randint(0, 2))),
        )
        table = failure_table(phrase)
        partial, seen = 0, []
        for _ in range(30):
            token = rng.choice([4, 5, 6, 7])
            seen.append(token)
            partial = next_partial(phrase, table, partial, token)
            want = max(
                n
                for n in range(len(phrase.tokens) + 1)
                if n <= len(seen)
                and all(phrase.accepts(p, seen[len(seen) - n + p]) for p in range(n))
            )
            assert partial == want, (phrase, seen)
            if partial == len(phrase.tokens):
                partial = table[partial]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("no_repeat", [0, 2])
def test_every_output_holds_every_bounded_phrase_whole(seed: int, k: int, no_repeat: int) -> None:
    """Numbers and words with boundaries, some prefixes of others ("12" and "121"): every
    output (greedy, beam, n-best, tight limits) holds each one with nothing glued on."""
    rng = random.Random(seed * 7 + k)
    model = random_model(seed, len(PIECES))
    phrases = bounded_phrases(rng)
    assert any(phrases)
    terms = TermConstraint(phrases, len(PIECES), TABLE)
    constraint = search_constraint(no_repeat, len(PIECES), first=terms)
    results = search_outputs(model, SOURCES, k, constraint, max_len=(1.0, 6))
    for wanted, hypotheses in zip(phrases, results, strict=True):
        for hypothesis in hypotheses:
            for phrase in wanted:
                assert held_whole(hypothesis.token_ids, phrase), (phrase, hypothesis.token_ids)


def test_without_boundaries_the_same_searches_glue_phrases_into_longer_words() -> None:
    """The check above bites: the same phrases as bare token ids come out glued somewhere."""
    glued = 0
    for seed in range(4):
        rng = random.Random(seed * 7 + 4)
        model = random_model(seed, len(PIECES))
        phrases = bounded_phrases(rng)
        bare = [[RequiredPhrase(p.tokens) for p in wanted] for wanted in phrases]
        results = search_outputs(
            model, SOURCES, 4, TermConstraint(bare, len(PIECES)), max_len=(1.0, 6)
        )
        for wanted, hypotheses in zip(phrases, results, strict=True):
            glued += sum(not held_whole(h.token_ids, p) for h in hypotheses for p in wanted)
    assert glued > 0


def test_a_pending_number_comes_undone_when_a_longer_one_goes_on() -> None:
    """ "20" then "2" again: the row is writing "202" of the longer number, so "20" is missing
    again (a token continuing another phrase may glue); a bare digit otherwise may not."""
    twenty = RequiredPhrase((4, 6, 5), Boundary.NUMBER, TABLE.number_starts)  # ▁ 2 1
    longer = RequiredPhrase((4, 6, 5, 6), Boundary.NUMBER, TABLE.number_starts)  # ▁ 2 1 2
    rows = TermConstraint([[twenty, longer]], len(PIECES), TABLE).start(
        torch.zeros((1, 3), dtype=torch.bool), [20]
    )
    for token in (4, 6, 5):
        rows.advance([0], [token])
    state = rows.states[0]
    assert state.pending == (1, 0) and state.partial == (0, 3)
    mask = rows.mask()[0]
    assert mask[6] == 0.0  # continues the longer number
    assert mask[5] == float("-inf")  # a digit that continues nothing: would make "211"
    assert mask[3] == float("-inf")  # EOS: "212" is still missing
    rows.advance([0], [6])
    state = rows.states[0]
    assert state.met == (False, False) and state.pending == (0, 1)  # "21" is inside "212"


@pytest.mark.parametrize(("seed", "eos_bias"), [(0, 3.0), (1, 1.5), (2, 1.5)])
def test_greedy_search_ends_by_writing_what_it_misses_where_it_would_have_ended(
    seed: int, eos_bias: float
) -> None:
    """Greedy search writes a missing phrase when its model would end, then ends: no junk
    written on until the phrase happens to fit (the model's own output, then the phrase)."""
    model = case_model(seed, eos_bias)  # EOS favoured: outputs that end
    vocab = CONFIG.tgt_vocab_size
    plain = [h[0] for h in search_outputs(model, SOURCES, 1, None, max_len=(3.0, 10))]
    rng = random.Random(seed)
    phrases = [[[rng.randrange(4, vocab) for _ in range(2)]] for _ in SOURCES]
    constraint = TermConstraint(phrases, vocab)
    results = search_outputs(model, SOURCES, 1, constraint, max_len=(3.0, 10))
    checked = 0
    for source, own, wanted, (hypothesis,) in zip(SOURCES, plain, phrases, results, strict=True):
        out, (phrase,), ended = hypothesis.token_ids, wanted, own.token_ids
        assert contains(out, phrase), (ended, phrase, out)
        room = 3 * (len(source) + 1) + 10 - len(ended)
        if not own.finished or contains(ended, phrase) or room <= len(phrase):
            continue
        checked += 1
        assert hypothesis.finished and out[: len(ended)] == ended, (ended, phrase, out)
        assert len(out) <= len(ended) + len(phrase), (ended, phrase, out)
    assert checked  # some sentence's own output ended without its phrase


def test_a_number_after_a_digit_and_a_hyphen_is_part_of_that_number() -> None:
    """ "12" and "2-12" given (as "2345" and "011-2345-6789"): the "12" the hyphen seems to
    begin in "▁2-12" is the phone number's tail, not the "12" (as :func:`holds` reads the
    text), so the row still misses it; after a word start, "▁-12" is a "12" (a minus sign)."""
    twelve = RequiredPhrase((4, 5, 6), Boundary.NUMBER, TABLE.number_starts)  # ▁ 1 2
    joined = RequiredPhrase((4, 6, 13, 5, 6), Boundary.NUMBER, TABLE.number_starts)  # ▁ 2 - 1 2
    assert holds("2-12 a", "2-12", Boundary.NUMBER) and not holds("2-12 a", "12", Boundary.NUMBER)
    for tokens, twelve_done in (((4, 6, 13, 5, 6, 7), False), ((4, 13, 5, 6, 7), True)):
        rows = TermConstraint([[twelve, joined]], len(PIECES), TABLE).start(
            torch.zeros((1, 3), dtype=torch.bool), [20]
        )
        for token in tokens:
            rows.advance([0], [token])
        assert rows.states[0].done()[0] is twelve_done, tokens


@pytest.mark.parametrize("k", [1, 3])
def test_free_first_keeps_a_free_output_that_meets_its_phrases_and_searches_the_rest_again(
    k: int,
) -> None:
    """A sentence whose free outputs already hold its phrases keeps them (dynamic beam
    allocation would have moved its phrases forward); the others come out exactly as the
    constrained search alone writes them."""
    from anuvad.decoding.constraints import admits, free_first
    from anuvad.decoding.search import max_output_lengths

    model = random_model(3, len(PIECES))
    free = search_outputs(model, SOURCES, k, None, max_len=(1.0, 6))
    drawn = bounded_phrases(random.Random(k))
    # even sentences require a piece their first free output holds, odd ones random phrases
    phrases = [
        [RequiredPhrase((outputs[0].token_ids[0],))] if i % 2 == 0 else drawn[i]
        for i, outputs in enumerate(free)
    ]
    limits = max_output_lengths(collate_source(SOURCES)[1], 1.0, 6).tolist()

    def constraint_for(chosen: list[int]) -> TermConstraint | None:
        given = [phrases[j] for j in chosen]
        return TermConstraint(given, len(PIECES), TABLE) if any(given) else None

    def run(chosen: list[list[int]], terms: Any) -> list[list[Hypothesis]]:
        return search_outputs(model, chosen, k, terms, max_len=(1.0, 6))

    found = free_first(SOURCES, constraint_for, run, limits, k)
    kept = redone = 0
    for j, outputs in enumerate(found):
        tokens = [o.token_ids for o in outputs]
        alone = constraint_for([j])
        met = alone is None or all(
            admits(alone, o.token_ids, limits[j], o.finished) for o in free[j][:k]
        )
        expected = free[j] if met else run([SOURCES[j]], alone)[0]
        assert tokens == [o.token_ids for o in expected], j
        kept += met and alone is not None
        redone += not met
        if met:  # a kept free output holds its phrases as the constrained search's would
            assert all(held_whole(t, p) for t in tokens[:k] for p in phrases[j]), j
    assert kept and redone  # both ways taken
