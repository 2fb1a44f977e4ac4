"""Tokenizer: special ids, round trips on Devanagari and Latin text, saving and loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.config import TokenizerConfig
from anuvad.data.tokenizer import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIAL_IDS,
    UNK_ID,
    UNK_SURFACE,
    Tokenizer,
    train_tokenizer,
)
from anuvad.errors import CheckpointError, DataError


def _text(pairs: list[tuple[str, str]]) -> list[str]:
    return [en for en, _ in pairs] + [hi for _, hi in pairs]


@pytest.mark.parametrize(("model_type", "vocab_size"), [("bpe", 250), ("unigram", 200)])
def test_round_trip_on_hindi_and_english(
    en_hi_pairs: list[tuple[str, str]], model_type: str, vocab_size: int
) -> None:
    text = _text(en_hi_pairs)
    tok = train_tokenizer(text, TokenizerConfig(model_type=model_type), vocab_size)
    assert tok.vocab_size == vocab_size
    for sentence in text:
        ids = tok.encode(sentence)
        assert ids, sentence
        assert UNK_ID not in ids, sentence
        assert not set(ids) & {PAD_ID, BOS_ID, EOS_ID}
        assert tok.decode(ids) == sentence
    # Unseen Hindi made of seen characters round-trips too.
    unseen = "बच्चे आसमान में पक्षी देख रहे हैं।"
    assert tok.decode(tok.encode(unseen)) == unseen


def test_special_ids_are_zero_to_three(en_hi_pairs: list[tuple[str, str]]) -> None:
    tok = train_tokenizer(_text(en_hi_pairs), TokenizerConfig(), 150)
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID) == SPECIAL_IDS == (0, 1, 2, 3)
    assert tok.id_to_piece([0, 1, 2, 3]) == ["<pad>", "<unk>", "<s>", "</s>"]
    hello = tok.encode("The sky is blue.")
    assert tok.decode([BOS_ID, *hello, EOS_ID, PAD_ID]) == "The sky is blue."


def test_an_unknown_piece_is_shown_not_dropped(en_hi_pairs: list[tuple[str, str]]) -> None:
    tok = train_tokenizer(_text(en_hi_pairs), TokenizerConfig(), 150)
    sky, blue = tok.encode("The sky"), tok.encode("is blue.")
    text = tok.decode([*sky, UNK_ID, *blue])
    assert UNK_SURFACE in text
    assert text.replace(UNK_SURFACE, "").split() == ["The", "sky", "is", "blue."]


def test_encode_batch_matches_encode(en_hi_pairs: list[tuple[str, str]]) -> None:
    text = _text(en_hi_pairs)
    tok = train_tokenizer(text, TokenizerConfig(), 150)
    assert tok.encode_batch(text) == [tok.encode(s) for s in text]


def test_training_is_deterministic(en_hi_pairs: list[tuple[str, str]]) -> None:
    text = _text(en_hi_pairs)
    first = train_tokenizer(text, TokenizerConfig(seed=3), 150)
    second = train_tokenizer(text, TokenizerConfig(seed=3), 150)
    assert first.model_proto == second.model_proto


def test_save_and_load(tmp_path: Path, en_hi_pairs: list[tuple[str, str]]) -> None:
    text = _text(en_hi_pairs)
    tok = train_tokenizer(text, TokenizerConfig(), 150)
    tok.save(tmp_path / "x.model")
    loaded = Tokenizer.load(tmp_path / "x.model")
    assert loaded.encode_batch(text) == tok.encode_batch(text)


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="empty corpus"):
        train_tokenizer(["", "   "], TokenizerConfig(), 100)
    with pytest.raises(CheckpointError, match="does not exist"):
        Tokenizer.load(tmp_path / "missing.model")
    with pytest.raises(CheckpointError, match="not a SentencePiece model"):
        Tokenizer(b"not a model")


def test_a_word_vocabulary_gives_one_id_per_word_even_for_runs_of_unknown_words() -> None:
    sentences = ["the dog barks .", "the cat sleeps .", "a dog and a cat ."] * 3
    tok = train_tokenizer(sentences, TokenizerConfig(model_type="word"), 14)
    assert tok.word_level
    text = "the aardvark zebra quokka barks ."  # SentencePiece alone: one <unk> for 3 words
    ids = tok.encode(text)
    assert len(ids) == len(text.split()) and ids[1:4] == [UNK_ID] * 3
    assert tok.encode_batch([text, "", "dog"]) == [ids, [], tok.encode("dog")]
    assert tok.pieces(text)[:2] == ["▁the", "<unk>"]
    assert not train_tokenizer(sentences, TokenizerConfig(model_type="bpe"), 30).word_level
