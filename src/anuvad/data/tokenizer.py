"""SentencePiece tokenizers: training, loading, encoding, decoding; the owner of the special ids.

Every anuvad tokenizer reserves the same ids, so the model, the batcher and the search agree
without passing them around: ``PAD_ID`` 0, ``UNK_ID`` 1, ``BOS_ID`` 2, ``EOS_ID`` 3.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

import sentencepiece as spm

from anuvad.config import TokenizerConfig
from anuvad.errors import CheckpointError, DataError

logger = logging.getLogger(__name__)

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3
SPECIAL_IDS = (PAD_ID, UNK_ID, BOS_ID, EOS_ID)
_DROPPED_IDS = (PAD_ID, BOS_ID, EOS_ID)  # not text: decode leaves them out
UNK_SURFACE = "⁇"  # how decode shows an unknown piece (SentencePiece's unk_surface)


class Tokenizer:
    """A loaded SentencePiece model with anuvad's special ids.

    Args:
        model_proto: the serialized SentencePiece model (the bytes of a ``.model`` file).

    Raises:
        CheckpointError: the bytes are not a SentencePiece model, or its special ids differ
            from anuvad's.
    """

    def __init__(self, model_proto: bytes) -> None:
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(model_proto)
        except (RuntimeError, OSError, TypeError) as exc:
            raise CheckpointError(f"not a SentencePiece model: {exc}") from exc
        found = (processor.pad_id(), processor.unk_id(), processor.bos_id(), processor.eos_id())
        if found != SPECIAL_IDS:
            raise CheckpointError(
                f"SentencePiece model has special ids pad/unk/bos/eos = {found}, anuvad needs "
                f"{SPECIAL_IDS}; retrain it with anuvad prepare (train_tokenizer)"
            )
        self._sp = processor
        self.model_proto = bytes(model_proto)
        self.word_level = _is_word_model(self.model_proto)

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        """Load a ``.model`` file written by SentencePiece."""
        path = Path(path)
        if not path.is_file():
            raise CheckpointError(f"tokenizer model {path} does not exist")
        return cls(path.read_bytes())

    def save(self, path: str | Path) -> None:
        """Write the ``.model`` file."""
        Path(path).write_bytes(self.model_proto)

    @property
    def vocab_size(self) -> int:
        """Number of pieces, special ids included."""
        return int(self._sp.GetPieceSize())

    def encode(self, text: str) -> list[int]:
        """Text → piece ids, without BOS/EOS."""
        return self.encode_batch([text])[0]

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Many texts → piece ids (SentencePiece encodes the batch in C++).

        A word-level vocabulary gives exactly one id per whitespace-separated word: SentencePiece
        alone would merge a run of unknown words into one ``<unk>``, and a parsing model could
        then not tell how many leaves its tree needs.
        """
        if not self.word_level:
            return [list(ids) for ids in self._sp.Encode(list(texts), out_type=int)]
        split = [text.split() for text in texts]
        flat = self._sp.Encode([w for words in split for w in words], out_type=int)
        one_each = iter([ids[0] if len(ids) == 1 else UNK_ID for ids in flat])
        return [[next(one_each) for _ in words] for words in split]

    def encode_sampled(self, texts: Sequence[str], alpha: float, seed: int) -> list[list[int]]:
        """Encode with SentencePiece sampling (subword regularisation / BPE-dropout).

        Args:
            texts: sentences.
            alpha: BPE: the probability of dropping a merge; unigram: the smoothing exponent
                over all segmentations.
            seed: SentencePiece's random seed; the same seed and texts give the same ids.

        Returns:
            One id list per sentence, without BOS/EOS (a sampled segmentation of it).
        """
        spm.set_random_generator_seed(seed)
        # One thread: SentencePiece's sampling is reproducible for a seed only in one thread.
        ids = self._sp.encode(
            list(texts),
            out_type=int,
            enable_sampling=True,
            alpha=alpha,
            nbest_size=-1,
            num_threads=1,
        )
        return [list(row) for row in ids]

    def pieces(self, text: str) -> list[str]:
        """Text → the pieces themselves (for attention heatmaps), one per id of :meth:`encode`."""
        if self.word_level:
            return self.id_to_piece(self.encode(text))
        return list(self._sp.EncodeAsPieces(text))

    def id_to_piece(self, ids: Sequence[int]) -> list[str]:
        """Ids → pieces, special ids shown as ``<pad>``, ``<s>``, ``</s>``, ``<unk>``."""
        return [str(self._sp.IdToPiece(int(i))) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """Piece ids → detokenized text. Padding, BOS and EOS are dropped; an ``<unk>`` shows as
        SentencePiece's ``⁇`` (:data:`UNK_SURFACE`), so that a reader sees that something
        the vocabulary lacks was there instead of a silent gap."""
        return str(self._sp.DecodeIds([int(i) for i in ids if int(i) not in _DROPPED_IDS]))


def _is_word_model(model_proto: bytes) -> bool:
    """Whether a serialized SentencePiece model is a word-level one (model_type ``word``)."""
    from sentencepiece import sentencepiece_model_pb2  # needs protobuf (tensorboard's dependency)

    proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
    proto.ParseFromString(model_proto)
    word = sentencepiece_model_pb2.TrainerSpec.WORD  # type: ignore[attr-defined]
    return bool(proto.trainer_spec.model_type == word)


def train_tokenizer(
    sentences: Iterable[str],
    config: TokenizerConfig,
    vocab_size: int,
    user_symbols: Sequence[str] = (),
) -> Tokenizer:
    """Train a SentencePiece model on ``sentences`` with anuvad's special ids.

    Args:
        sentences: training text, one sentence per item.
        config: model type, character coverage, sampling size and seed.
        vocab_size: pieces in the vocabulary, the four special ids included.
        user_symbols: strings that are always one piece (e.g. corpus tags such as ``<bt>``).

    Returns:
        The trained tokenizer (its model is held in memory; call ``save`` to write it).

    Raises:
        DataError: no text to train on, or a vocabulary too large for the text.
    """
    text = [s for s in sentences if s.strip()]
    if not text:
        raise DataError("cannot train a tokenizer on an empty corpus: every sentence was empty")
    buffer = io.BytesIO()
    # SentencePiece samples and shuffles sentences with a global generator; seed it for
    # reproducible vocabularies.
    spm.set_random_generator_seed(config.seed)
    try:
        spm.SentencePieceTrainer.Train(
            sentence_iterator=iter(text),
            model_writer=buffer,
            model_type=config.model_type,
            vocab_size=vocab_size,
            character_coverage=config.character_coverage,
            input_sentence_size=config.input_sentence_size,
            shuffle_input_sentence=True,
            seed_sentencepiece_size=1_000_000,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            pad_piece="<pad>",
            unk_piece="<unk>",
            bos_piece="<s>",
            eos_piece="</s>",
            # Keep digits and whitespace handling predictable across languages.
            split_digits=True,
            user_defined_symbols=list(user_symbols),
            hard_vocab_limit=config.model_type in ("bpe", "unigram"),
            minloglevel=2,
            num_threads=2,
        )
    except RuntimeError as exc:
        raise DataError(
            f"SentencePiece could not train a {config.model_type} vocabulary of {vocab_size} "
            f"pieces on {len(text)} sentences: {exc}. Lower data.tokenizer.vocab_size or give "
            f"more text."
        ) from exc
    logger.info(
        "trained %s tokenizer: %d pieces on %d sentences", config.model_type, vocab_size, len(text)
    )
    return Tokenizer(buffer.getvalue())
