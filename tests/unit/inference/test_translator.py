"""Translator: input order, batching by sentences or tokens, n-best, beam 1 = greedy, cache on
or off, attention views; evaluation helpers (sacreBLEU tokenizers, the paper's BLEU)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from torch import nn

from anuvad.checkpoint import ModelFile
from anuvad.config import ExperimentConfig, ModelConfig, TokenizerConfig
from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import BOS_ID, EOS_ID, train_tokenizer
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.constraints import OutputConstraint, search_constraint
from anuvad.decoding.greedy import greedy_search
from anuvad.errors import ConfigError
from anuvad.evaluation.metrics import (
    corpus_scores,
    default_tokenize,
    evaluate_translations,
    paper_bleu,
    split_compounds,
)
from anuvad.inference.frontend import length_groups
from anuvad.inference.translator import Translator
from anuvad.model.transformer import build_model

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def model_file() -> ModelFile:
    """A random English→Hindi character model whose EOS bias ends outputs at varied lengths."""
    return build_model_file(EOS_BIAS)


def build_model_file(eos_bias: float) -> ModelFile:
    from conftest import EN_HI_PAIRS

    char = TokenizerConfig(model_type="char")
    src = train_tokenizer([en for en, _ in EN_HI_PAIRS], char, 200)
    tgt = train_tokenizer([hi for _, hi in EN_HI_PAIRS], char, 200)
    model_config = ModelConfig(
        d_model=32, num_heads=4, d_ff=64, num_encoder_layers=2, num_decoder_layers=2,
        dropout=0.0, max_positions=64, src_vocab_size=src.vocab_size,
        tgt_vocab_size=tgt.vocab_size,
    )  # fmt: skip
    decode = DecodeConfig(beam_size=3, length_penalty=0.6, max_len_a=0.0, max_len_b=8)
    config = ExperimentConfig(name="translator-test", model=model_config, decode=decode)
    config.data.src_lang, config.data.tgt_lang = "en", "hi"
    torch.manual_seed(3)
    model = build_model(model_config).eval()
    bias = torch.zeros(tgt.vocab_size)
    bias[EOS_ID] = eos_bias
    model.output_bias = nn.Parameter(bias)  # as model.output_bias=true builds it
    return ModelFile(model, config, src, tgt)


EOS_BIAS = 3.0

SENTENCES = [
    "I am going home.",
    "Thank you very much.",
    "",
    "The children are playing in the garden.",
    "Yes.",
    "Where is the station?",
    "   ",
    "He drinks tea every morning.",
]


def translator(model_file: ModelFile, **decode: object) -> Translator:
    return Translator(model_file, dataclasses.replace(model_file.config.decode, **decode))  # type: ignore[arg-type]


def repetition_blocking(t: Translator, settings: DecodeConfig) -> OutputConstraint | None:
    """The constraint the translator searches under for ``settings`` (no glossary)."""
    return search_constraint(settings.no_repeat_ngram_size, t.model.config.tgt_vocab_size)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_results_come_in_input_order_whatever_the_batching(
    model_file: ModelFile, beam_size: int
) -> None:
    one = translator(model_file)
    alone = [one.translate([s], one.settings(beam_size=beam_size))[0] for s in SENTENCES]
    for decode in ({"batch_size": 3}, {"batch_size": 64}, {"max_tokens": 40}, {"max_tokens": 1}):
        batched = translator(model_file, **decode)
        results = batched.translate(SENTENCES, batched.settings(beam_size=beam_size))
        assert [r.source for r in results] == SENTENCES
        assert [r.text for r in results] == [r.text for r in alone]
        assert [r.score for r in results] == pytest.approx([r.score for r in alone], abs=1e-4)


def test_token_batches_respect_their_budget(model_file: ModelFile) -> None:
    t = translator(model_file, max_tokens=30)
    lengths = [3, 9, 4, 14, 1, 6, 6, 20, 2]
    batches = list(length_groups(lengths, t.decode))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        padded = len(batch) * (max(lengths[i] for i in batch) + 1)  # + EOS
        assert padded <= 30 or len(batch) == 1


def test_empty_lines_translate_to_empty_strings(model_file: ModelFile) -> None:
    results = translator(model_file).translate(SENTENCES)
    for source, result in zip(SENTENCES, results, strict=True):
        if not source.strip():
            assert result.text == "" and result.nbest[0].text == ""


def test_beam_one_is_greedy_search(model_file: ModelFile) -> None:
    t = translator(model_file)
    settings = t.settings(beam_size=1)
    results = t.translate(SENTENCES[:2], settings)
    src_ids, src_pad_mask = collate_source(t.encode(SENTENCES[:2]))
    greedy = greedy_search(
        t.model, src_ids, src_pad_mask, settings, constraint=repetition_blocking(t, settings)
    )
    for result, hyp in zip(results, greedy, strict=True):
        assert len(result.nbest) == 1
        assert result.token_ids == hyp.token_ids
        assert result.score == pytest.approx(hyp.log_prob)  # greedy: score = log-probability
        assert result.text == model_file.tgt_tokenizer.decode(hyp.token_ids)


def test_nbest_lists_are_best_first(model_file: ModelFile) -> None:
    for result in translator(model_file).translate(
        SENTENCES, model_file.config.decode.with_overrides(beam_size=4, nbest=3)
    ):
        if not result.source.strip():
            continue
        assert 1 <= len(result.nbest) <= 3
        assert result.text == result.nbest[0].text and result.score == result.nbest[0].score
        scores = [c.score for c in result.nbest]
        assert scores == sorted(scores, reverse=True)
        for c in result.nbest:
            length = len(c.token_ids) + c.finished
            assert c.score == pytest.approx(c.log_prob / ((5 + length) / 6) ** 0.6)


def test_nbest_lists_hold_distinct_texts_and_keep_the_best() -> None:
    """Two candidates spelling one string ("." and "।" after punctuation, or two tokenizations)
    count once: the search is asked for the whole beam and the list keeps the first ``nbest``
    distinct texts, best first."""
    from anuvad.inference.frontend import translate_encoded
    from anuvad.inference.translation import Candidate

    asked: list[int] = []

    def search(
        sources: list[list[int]], d: DecodeConfig, indices: list[int]
    ) -> list[list[Candidate]]:
        asked.append(d.nbest)
        texts = ["a b", "a b", "a c", "a b", "a d", "a e"][: d.nbest]
        return [[Candidate(t, [k], -float(k), -float(k), True) for k, t in enumerate(texts)]]

    settings = DecodeConfig(beam_size=6, nbest=3)
    (result,) = translate_encoded(["x"], [[5]], settings, search)
    assert [c.text for c in result.nbest] == ["a b", "a c", "a d"] and asked == [6]
    assert result.text == "a b" and result.score == 0.0
    (single,) = translate_encoded(["x"], [[5]], DecodeConfig(beam_size=6, nbest=1), search)
    assert [c.text for c in single.nbest] == ["a b"] and asked[-1] == 1  # nothing widened


def test_a_real_beams_nbest_is_distinct_and_its_best_is_the_one_best(model_file: ModelFile) -> None:
    t = translator(model_file)
    decode = model_file.config.decode
    lists = t.translate(SENTENCES, decode.with_overrides(beam_size=4, nbest=3))
    ones = t.translate(SENTENCES, decode.with_overrides(beam_size=4, nbest=1))
    for many, one in zip(lists, ones, strict=True):
        texts = [c.text for c in many.nbest]
        assert len(texts) == len(set(texts))
        assert many.text == one.text and many.token_ids == one.token_ids


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_cache_changes_nothing_but_speed(model_file: ModelFile, beam_size: int) -> None:
    t = translator(model_file)
    settings = t.settings(beam_size=beam_size, nbest=min(2, beam_size))
    cached = t.translate(SENTENCES, settings)
    uncached = t.translate(SENTENCES, settings, use_cache=False)
    assert [[c.text for c in r.nbest] for r in cached] == [
        [c.text for c in r.nbest] for r in uncached
    ]
    references = [
        r.text for r in t.translate(SENTENCES, t.settings(beam_size=1))
    ]  # a non-zero BLEU
    bleu_cached = corpus_scores([r.text for r in cached], references, "intl").bleu
    bleu_uncached = corpus_scores([r.text for r in uncached], references, "intl").bleu
    assert bleu_cached == bleu_uncached


def test_progress_counts_every_translated_sentence(model_file: ModelFile) -> None:
    seen: list[int] = []
    translator(model_file, batch_size=3).translate(SENTENCES, progress=seen.append)
    assert sum(seen) == sum(1 for s in SENTENCES if s.strip())
    assert max(seen) <= 3


def test_bad_search_settings_are_rejected(model_file: ModelFile) -> None:
    t = translator(model_file)
    with pytest.raises(ConfigError, match="beam_size must be at least 1"):
        t.translate(["Yes."], t.settings(beam_size=0))
    with pytest.raises(ConfigError, match="nbest must be between 1 and beam_size"):
        t.translate(["Yes."], t.settings(nbest=4))  # the model's beam is 3
    bad = dataclasses.replace(t.decode, early_stopping="never")  # built around the check
    with pytest.raises(ConfigError, match="early_stopping must be one of finished, bound"):
        t.translate(["Yes."], bad)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_attention_view_shapes_tokens_and_normalisation(
    model_file: ModelFile, beam_size: int
) -> None:
    t = translator(model_file)
    text = "The children are playing in the garden."
    view = t.attention(text, t.settings(beam_size=beam_size))
    (result,) = t.translate([text], t.settings(beam_size=beam_size))
    assert view.text == result.text and view.score == pytest.approx(result.score)
    src_ids = t.encode([text])[0]
    assert view.src_tokens[-1] == "</s>" and len(view.src_tokens) == len(src_ids) + 1
    assert view.tgt_tokens == model_file.tgt_tokenizer.id_to_piece(
        result.token_ids + ([EOS_ID] if result.finished else [])
    )
    tgt_len, src_len = len(view.tgt_tokens), len(view.src_tokens)
    assert view.num_layers == 2 and view.num_heads == 4
    attention = torch.tensor(view.cross_attention)
    assert attention.shape == (2, 4, tgt_len, src_len)
    assert torch.allclose(attention.sum(-1), torch.ones(2, 4, tgt_len), atol=1e-5)
    cosine = torch.tensor(view.cosine_similarity)
    assert cosine.shape == (tgt_len, src_len)
    assert bool((cosine.abs() <= 1 + 1e-5).all())


def test_attention_is_what_incremental_decoding_saw(model_file: ModelFile) -> None:
    """The teacher-forced pass of the view equals decode_step's attention, step by step."""
    t = translator(model_file)
    view = t.attention("Where is the station?", t.settings(beam_size=1))
    (result,) = t.translate(["Where is the station?"], t.settings(beam_size=1))
    src_ids, src_pad_mask = collate_source(t.encode(["Where is the station?"]))
    model = t.model
    with torch.no_grad():
        cache = model.init_cache(model.encode(src_ids, src_pad_mask))
        inputs = [BOS_ID, *result.token_ids]  # BOS, then each output token
        rows = []
        for token in inputs[: len(view.tgt_tokens)]:
            out = model.decode_step(torch.tensor([[token]]), cache, src_pad_mask, True)
            assert out.cross_attention is not None
            rows.append(torch.stack([a[0, :, 0] for a in out.cross_attention]))  # (layers, H, S)
    stepwise = torch.stack(rows, dim=2)  # (layers, H, T, S)
    assert torch.allclose(stepwise, torch.tensor(view.cross_attention), atol=1e-5)


def test_attention_of_an_empty_sentence(model_file: ModelFile) -> None:
    view = translator(model_file).attention("")
    assert view.src_tokens == ["</s>"]
    assert len(view.cross_attention[0][0]) == len(view.tgt_tokens)


# ------------------------------------------------------------------------------------------
# Evaluation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ein Mountain-Bike", "ein Mountain ##AT##-##AT## Bike"),
        ("E-Mail-Adresse", "E ##AT##-##AT## Mail ##AT##-##AT## Adresse"),
        ("a-b-c", "a ##AT##-##AT## b-c"),  # like perl's s///g: matches do not overlap
        ("1990 - 2000", "1990 - 2000"),  # a free-standing hyphen is not a compound
        ("-5", "-5"),
    ],
)
def test_compound_splitting_follows_get_ende_bleu(text: str, expected: str) -> None:
    assert split_compounds(text) == expected


def test_paper_bleu_tokenizes_and_splits_compounds() -> None:
    ref = "Ein Mountain-Bike-Fahrer fährt bergab."
    assert paper_bleu([ref], [ref]).bleu == pytest.approx(100.0)
    # Only the compound's second half differs: split, three of its pieces still match.
    split = paper_bleu(["Ein Mountain-Rad-Fahrer fährt bergab."], [ref]).bleu
    whole = corpus_scores(["Ein Mountain-Rad-Fahrer fährt bergab."], [ref], "none").bleu
    assert split > whole
    assert "##AT##" in paper_bleu([ref], [ref]).label


def test_intl_splits_the_danda_for_hindi() -> None:
    assert default_tokenize("hi") == "intl" and default_tokenize("de") == "13a"
    hyp, ref = ["वह मेरी बहन है।"], ["वह मेरी बहन है ।"]
    assert corpus_scores(hyp, ref, "intl").bleu == pytest.approx(100.0)
    assert corpus_scores(hyp, ref, "13a").bleu < 100.0


def test_evaluation_table_and_json_name_every_metric() -> None:
    result = evaluate_translations(["a b c d"], ["a b c d"], "13a", "de", {"beam_size": 4})
    data = result.to_dict()
    assert data["bleu"] == pytest.approx(100.0) and data["paper_bleu"] == pytest.approx(100.0)
    assert data["settings"] == {"beam_size": 4}
    assert data["bleu_signature"].startswith("nrefs:1") and "tok:13a" in data["bleu_signature"]
    table = result.to_table()
    assert "sacreBLEU" in table and "paper, tokenized" in table and "chrF++" in table
    assert not math.isnan(data["chrf"])


@pytest.mark.parametrize("beam_size", [1, 3])
def test_the_settings_block_repeated_ngrams(model_file: ModelFile, beam_size: int) -> None:
    """``no_repeat_ngram_size`` travels in the settings: no output repeats a bigram."""
    no_eos = build_model_file(-5.0)  # without an EOS bias a random model loops to the limit
    t = translator(no_eos, max_len_b=30)
    free = t.translate(SENTENCES, t.settings(beam_size=beam_size))

    def repeats(ids: list[int]) -> bool:
        grams = [tuple(ids[i : i + 2]) for i in range(len(ids) - 1)]
        return len(grams) != len(set(grams))

    assert any(repeats(r.token_ids) for r in free)  # the setting will have something to do
    blocked = t.translate(SENTENCES, t.settings(beam_size=beam_size, no_repeat_ngram_size=2))
    assert not any(repeats(r.token_ids) for r in blocked)


def test_the_bound_rule_reaches_the_beam_search(model_file: ModelFile) -> None:
    t = translator(model_file)
    # A strong length penalty: on these sentences the rule changes what the search returns.
    finished = t.settings(nbest=2, length_penalty=2.0)
    settings = t.settings(nbest=2, length_penalty=2.0, early_stopping="bound")
    bound = t.translate(SENTENCES, settings)
    nbest_ids = [[c.token_ids for c in r.nbest] for r in bound]
    assert nbest_ids != [[c.token_ids for c in r.nbest] for r in t.translate(SENTENCES, finished)]
    encoded = t.encode(SENTENCES)
    src_ids, pad = collate_source([ids for ids in encoded if ids])
    constraint = repetition_blocking(t, settings)
    want = beam_search(t.model, src_ids, pad, settings, constraint=constraint)
    got = [r for r, ids in zip(bound, encoded, strict=True) if ids]
    for result, hyps in zip(got, want, strict=True):
        assert [c.token_ids for c in result.nbest] == [h.token_ids for h in hyps]


def test_a_translation_call_stops_between_batches_and_steps(model_file: ModelFile) -> None:
    from anuvad.errors import SearchStoppedError

    t = translator(model_file, batch_size=2)
    batches: list[int] = []
    asked = 0

    def after_first_batch() -> bool:
        nonlocal asked
        asked += 1
        return bool(batches)  # stop as soon as one batch is done

    with pytest.raises(SearchStoppedError):
        t.translate(SENTENCES, progress=batches.append, stop=after_first_batch)
    assert batches == [2] and asked > 2  # asked between steps too, not only between batches
