"""SentencePiece tokenizers: training, loading, encoding, decoding; the owner of the special ids.

Every anuvad tokenizer reserves the same ids, so the model, the batcher and the search agree
without passing them around: ``PAD_ID`` 0, ``UNK_ID`` 1, ``BOS_ID`` 2, ``EOS_ID`` 3.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

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
        vocab: the model's own vocabulary, id → piece, when its ids are not SentencePiece's
            (an imported Marian model: SentencePiece only segments, and each piece is looked up
            here, unknown pieces becoming ``<unk>``, as Marian's tokenizer does). Its entries
            ``PAD_ID``, ``UNK_ID`` and ``EOS_ID`` must be ``<pad>``, ``<unk>`` and ``</s>``.
            None: the ids are SentencePiece's, which must then reserve anuvad's special ids.
        silent: pieces of ``vocab`` that are not text, which :meth:`decode` leaves out as it
            leaves out padding, BOS and EOS (an imported NLLB / M2M100 model's language tokens,
            ``<mask>`` and fairseq's ``<s>``: what Hugging Face's tokenizers skip as special).

    Raises:
        CheckpointError: the bytes are not a SentencePiece model, or its special ids (or the
            vocabulary's) differ from anuvad's.
    """

    def __init__(
        self, model_proto: bytes, vocab: Sequence[str] | None = None, silent: Sequence[str] = ()
    ) -> None:
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(model_proto)
        except (RuntimeError, OSError, TypeError) as exc:
            raise CheckpointError(f"not a SentencePiece model: {exc}") from exc
        if vocab is None:
            found = (
                processor.pad_id(),
                processor.unk_id(),
                processor.bos_id(),
                processor.eos_id(),
            )
            if found != SPECIAL_IDS:
                raise CheckpointError(
                    f"SentencePiece model has special ids pad/unk/bos/eos = {found}, anuvad "
                    f"needs {SPECIAL_IDS}; retrain it with anuvad prepare (train_tokenizer)"
                )
        else:
            vocab = [str(piece) for piece in vocab]
            named = {PAD_ID: "<pad>", UNK_ID: "<unk>", EOS_ID: "</s>"}
            wrong = {i: vocab[i] if i < len(vocab) else None for i in named}
            if any(wrong[i] != piece for i, piece in named.items()) or len(set(vocab)) != len(
                vocab
            ):
                raise CheckpointError(
                    f"a tokenizer vocabulary needs distinct pieces with <pad>, <unk> and </s> at "
                    f"ids {PAD_ID}, {UNK_ID} and {EOS_ID}; found {wrong}"
                )
        if silent and (vocab is None or not set(silent) <= set(vocab)):
            raise CheckpointError(
                "a tokenizer's silent pieces must be pieces of its own vocabulary; "
                f"not found: {sorted(set(silent) - set(vocab or ()))[:5]}"
            )
        self._sp = processor
        self.model_proto = bytes(model_proto)
        self.vocab: tuple[str, ...] | None = tuple(vocab) if vocab is not None else None
        self._ids = {piece: i for i, piece in enumerate(vocab)} if vocab is not None else {}
        self.silent = tuple(silent)
        self._dropped = {*_DROPPED_IDS, *(self._ids[piece] for piece in self.silent)}
        self.word_level = _is_word_model(self.model_proto)

    def state(self) -> bytes | dict[str, Any]:
        """What a model file stores: the SentencePiece bytes, with the vocabulary when it has
        its own (read back by :meth:`from_state`)."""
        if self.vocab is None:
            return self.model_proto
        state: dict[str, Any] = {"sentencepiece": self.model_proto, "vocab": list(self.vocab)}
        if self.silent:
            state["silent"] = list(self.silent)
        return state

    def vocab_json(self) -> bytes:
        """The vocabulary as :meth:`load` reads it beside the ``.model`` file (a JSON list)."""
        return json.dumps(list(self.vocab or ()), ensure_ascii=False).encode("utf-8")

    def fingerprint_bytes(self) -> bytes:
        """Bytes that change whenever the tokenization does (SentencePiece model + vocabulary)."""
        return self.model_proto + (self.vocab_json() if self.vocab is not None else b"")

    @classmethod
    def from_state(cls, state: bytes | dict[str, Any]) -> Tokenizer:
        """The tokenizer :meth:`state` described.

        Raises:
            CheckpointError: ``state`` is neither form.
        """
        if isinstance(state, bytes):
            return cls(state)
        if isinstance(state, dict) and isinstance(state.get("sentencepiece"), bytes):
            return cls(state["sentencepiece"], state.get("vocab"), state.get("silent", ()))
        raise CheckpointError(f"not a stored tokenizer: {type(state).__name__}")

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        """Load a ``.model`` file written by SentencePiece (and the vocabulary :meth:`save`
        wrote beside it, ``<file>.vocab.json``, when there is one)."""
        path = Path(path)
        if not path.is_file():
            raise CheckpointError(f"tokenizer model {path} does not exist")
        vocab_file = vocab_path(path)
        vocab = None
        if vocab_file.is_file():
            try:
                vocab = json.loads(vocab_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CheckpointError(f"{vocab_file}: not a JSON list of pieces: {exc}") from exc
        return cls(path.read_bytes(), vocab)

    def save(self, path: str | Path) -> None:
        """Write the ``.model`` file (and ``<file>.vocab.json`` when the ids are not
        SentencePiece's)."""
        path = Path(path)
        path.write_bytes(self.model_proto)
        if self.vocab is not None:
            vocab_path(path).write_bytes(self.vocab_json())

    @property
    def vocab_size(self) -> int:
        """Number of pieces, special ids included."""
        return len(self.vocab) if self.vocab is not None else int(self._sp.GetPieceSize())

    def encode(self, text: str) -> list[int]:
        """Text → piece ids, without BOS/EOS."""
        return self.encode_batch([text])[0]

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Many texts → piece ids (SentencePiece encodes the batch in C++).

        A word-level vocabulary gives exactly one id per whitespace-separated word: SentencePiece
        alone would merge a run of unknown words into one ``<unk>``, and a parsing model could
        then not tell how many leaves its tree needs.
        """
        if self.vocab is not None:
            coded = [self._language_code(t) for t in texts]
            pieces = self._sp.Encode([rest for _, rest in coded], out_type=str)
            return [self._lookup([*code, *p]) for (code, _), p in zip(coded, pieces, strict=True)]
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
            out_type=int if self.vocab is None else str,
            enable_sampling=True,
            alpha=alpha,
            nbest_size=-1,
            num_threads=1,
        )
        if self.vocab is not None:
            return [self._lookup(row) for row in ids]
        return [list(row) for row in ids]

    def _language_code(self, text: str) -> tuple[list[str], str]:
        """A leading ``>>xx<<`` (the target language of a multilingual Marian model) as one
        piece, and the text after it; Marian's tokenizer does the same."""
        if text.startswith(">>") and (end := text.find("<<")) != -1:
            return [text[: end + 2]], text[end + 2 :]
        return [], text

    def _lookup(self, pieces: Sequence[str]) -> list[int]:
        """SentencePiece pieces → this tokenizer's own ids (``<unk>`` for a piece it lacks)."""
        return [self._ids.get(piece, UNK_ID) for piece in pieces]

    def pieces(self, text: str) -> list[str]:
        """Text → the pieces themselves (for attention heatmaps), one per id of :meth:`encode`."""
        if self.word_level:
            return self.id_to_piece(self.encode(text))
        if self.vocab is not None:
            code, rest = self._language_code(text)
            return [*code, *self._sp.EncodeAsPieces(rest)]
        return list(self._sp.EncodeAsPieces(text))

    def id_to_piece(self, ids: Sequence[int]) -> list[str]:
        """Ids → pieces, special ids shown as ``<pad>``, ``<s>``, ``</s>``, ``<unk>``."""
        if self.vocab is not None:
            return [self.vocab[int(i)] for i in ids]
        return [str(self._sp.IdToPiece(int(i))) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """Piece ids → detokenized text. Padding, BOS and EOS are dropped; an ``<unk>`` shows as
        SentencePiece's ``⁇`` (:data:`UNK_SURFACE`), so that a reader sees that something
        the vocabulary lacks was there instead of a silent gap."""
        if self.vocab is not None:
            # As MarianTokenizer.batch_decode(..., skip_special_tokens=True) reads them: a
            # piece this SentencePiece model lacks (one only the source model of a shared
            # vocabulary knows, "▁case") keeps its text, its word marker read as a space; no
            # space at either end.
            kept = [self.vocab[int(i)] for i in ids if int(i) not in self._dropped]
            return str(self._sp.DecodePieces(kept)).replace("▁", " ").strip()
        return str(self._sp.DecodeIds([int(i) for i in ids if int(i) not in _DROPPED_IDS]))


def vocab_path(model_path: Path) -> Path:
    """Where :meth:`Tokenizer.save` writes the vocabulary of a tokenizer with its own ids."""
    return model_path.with_name(model_path.name + ".vocab.json")


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
