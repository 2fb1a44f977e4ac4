"""The prepared-data folder that ``anuvad prepare`` writes: its files, written and read back.

src.spm.model, tgt.spm.model   SentencePiece models (identical bytes with a joint vocabulary)
train.pt, valid.pt             encoded pairs (:class:`anuvad.data.encoded.EncodedCorpus`)
valid.src.txt, valid.tgt.txt   the raw dev text (BLEU references)
train.src.txt, train.tgt.txt   the text of every training pair (subword sampling)
report.json                    the data settings and what cleaning kept and dropped
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anuvad.atomic import write_atomic
from anuvad.data.encoded import REDO, EncodedCorpus
from anuvad.data.tokenizer import Tokenizer, vocab_path
from anuvad.errors import CheckpointError, DataError

logger = logging.getLogger(__name__)

SRC_MODEL = "src.spm.model"
TGT_MODEL = "tgt.spm.model"
TRAIN_FILE = "train.pt"
VALID_FILE = "valid.pt"
VALID_SRC_TEXT = "valid.src.txt"
VALID_TGT_TEXT = "valid.tgt.txt"
# The text of every training pair, aligned with train.pt (cleaned, tagged, weighted): what
# train.subword_sampling re-encodes each epoch. Optional: older folders lack them.
TRAIN_SRC_TEXT = "train.src.txt"
TRAIN_TGT_TEXT = "train.tgt.txt"
REPORT_FILE = "report.json"
PREPARED_FILES = (
    SRC_MODEL,
    TGT_MODEL,
    TRAIN_FILE,
    VALID_FILE,
    VALID_SRC_TEXT,
    VALID_TGT_TEXT,
    REPORT_FILE,
)


@dataclass
class PreparedData:
    """Everything training needs from ``anuvad prepare``.

    Attributes:
        src_tokenizer: the source-language tokenizer.
        tgt_tokenizer: the target-language tokenizer (the same model when joint).
        train: the cleaned, encoded training pairs.
        valid: the encoded validation pairs (all of them, unfiltered; may be empty).
        valid_src_text: raw validation source sentences, aligned with ``valid``.
        valid_tgt_text: raw validation target sentences (BLEU references).
        report: the contents of ``report.json``.
        train_src_text: the text each training source was encoded from (empty for folders
            prepared before these files existed).
        train_tgt_text: the same for the targets.
    """

    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    train: EncodedCorpus
    valid: EncodedCorpus
    valid_src_text: list[str]
    valid_tgt_text: list[str]
    report: dict[str, Any]
    train_src_text: list[str] = dataclasses.field(default_factory=list)
    train_tgt_text: list[str] = dataclasses.field(default_factory=list)


def write_lines(path: Path, lines: list[str]) -> None:
    write_atomic(path, "".join(f"{line}\n" for line in lines).encode("utf-8"))


def write_prepared(out_dir: Path, prepared: PreparedData) -> None:
    """Write the prepared folder, every file atomically and ``report.json`` last (a folder
    with a report is complete)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, tokenizer in (
        (SRC_MODEL, prepared.src_tokenizer),
        (TGT_MODEL, prepared.tgt_tokenizer),
    ):
        write_atomic(out_dir / name, tokenizer.model_proto)
        if tokenizer.vocab is not None:  # an imported model's own ids (read by Tokenizer.load)
            write_atomic(vocab_path(out_dir / name), tokenizer.vocab_json())
    prepared.train.save(out_dir / TRAIN_FILE)
    prepared.valid.save(out_dir / VALID_FILE)
    write_lines(out_dir / VALID_SRC_TEXT, prepared.valid_src_text)
    write_lines(out_dir / VALID_TGT_TEXT, prepared.valid_tgt_text)
    write_lines(out_dir / TRAIN_SRC_TEXT, prepared.train_src_text)
    write_lines(out_dir / TRAIN_TGT_TEXT, prepared.train_tgt_text)
    write_atomic(
        out_dir / REPORT_FILE,
        (json.dumps(prepared.report, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
    )
    logger.info(
        "prepared %d training and %d validation pairs in %s (vocab %d / %d)",
        len(prepared.train), len(prepared.valid), out_dir,
        prepared.src_tokenizer.vocab_size, prepared.tgt_tokenizer.vocab_size,
    )  # fmt: skip


def read_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    # Split on "\n" only: sentences may hold other Unicode line separators.
    return text[:-1].split("\n") if text else []


def load_prepared(out_dir: Path) -> PreparedData:
    """Read a folder written by :func:`prepare_data`.

    Args:
        out_dir: the folder.

    Returns:
        The tokenizers, encoded corpora, raw dev text and report.

    Raises:
        DataError: a file is missing or unreadable, or the files disagree with each other.
    """
    out_dir = Path(out_dir)
    missing = [name for name in PREPARED_FILES if not (out_dir / name).is_file()]
    if missing:
        raise DataError(
            f"prepared data in {out_dir} is incomplete (missing {', '.join(missing)}); {REDO}"
        )
    try:
        src_tok = Tokenizer.load(out_dir / SRC_MODEL)
        tgt_tok = Tokenizer.load(out_dir / TGT_MODEL)
    except CheckpointError as exc:
        raise DataError(f"{out_dir}: {exc}; {REDO}") from exc
    try:
        report = json.loads((out_dir / REPORT_FILE).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{out_dir / REPORT_FILE} is not valid JSON ({exc}); {REDO}") from exc
    train = EncodedCorpus.load(out_dir / TRAIN_FILE)
    valid = EncodedCorpus.load(out_dir / VALID_FILE)
    valid_src = read_lines(out_dir / VALID_SRC_TEXT)
    valid_tgt = read_lines(out_dir / VALID_TGT_TEXT)
    if not len(valid_src) == len(valid_tgt) == len(valid):
        raise DataError(
            f"{out_dir}: {VALID_SRC_TEXT} has {len(valid_src)} lines, {VALID_TGT_TEXT} "
            f"{len(valid_tgt)} and {VALID_FILE} {len(valid)} pairs; they must agree; {REDO}"
        )
    for corpus, name in ((train, TRAIN_FILE), (valid, VALID_FILE)):
        for seqs, tok, side in ((corpus.src, src_tok, "source"), (corpus.tgt, tgt_tok, "target")):
            top = max((max(s) for s in seqs if s), default=-1)
            if top >= tok.vocab_size:
                raise DataError(
                    f"{out_dir / name}: {side} id {top} is outside the {tok.vocab_size}-piece "
                    f"tokenizer (files from different runs?); {REDO}"
                )
    train_text: list[list[str]] = [[], []]
    if (out_dir / TRAIN_SRC_TEXT).is_file() and (out_dir / TRAIN_TGT_TEXT).is_file():
        train_text = [read_lines(out_dir / TRAIN_SRC_TEXT), read_lines(out_dir / TRAIN_TGT_TEXT)]
        if not len(train_text[0]) == len(train_text[1]) == len(train):
            raise DataError(
                f"{out_dir}: {TRAIN_SRC_TEXT} / {TRAIN_TGT_TEXT} have {len(train_text[0])} / "
                f"{len(train_text[1])} lines but {TRAIN_FILE} {len(train)} pairs; {REDO}"
            )
    logger.info(
        "loaded %d training and %d validation pairs from %s", len(train), len(valid), out_dir
    )
    return PreparedData(src_tok, tgt_tok, train, valid, valid_src, valid_tgt, report, *train_text)


def corpus_digest(corpus: EncodedCorpus) -> str:
    """A SHA-256 of a corpus' token ids, pair by pair (order counts)."""
    digest = hashlib.sha256()
    for src, tgt in zip(corpus.src, corpus.tgt, strict=True):
        digest.update(array("i", src).tobytes())
        digest.update(b"\xff\xff\xff\xff")  # -1: no token id
        digest.update(array("i", tgt).tobytes())
        digest.update(b"\xfe\xff\xff\xff")  # -2
    return digest.hexdigest()


def data_fingerprint(prepared: PreparedData) -> dict[str, Any]:
    """What a resumed run must find again: the pair counts and digests of the training and
    dev sets (kept in every training checkpoint)."""
    return {
        "train_pairs": len(prepared.train),
        "train_sha256": corpus_digest(prepared.train),
        "valid_pairs": len(prepared.valid),
        "valid_sha256": corpus_digest(prepared.valid),
    }


def fingerprint_differences(saved: dict[str, Any], found: dict[str, Any]) -> list[str]:
    """Readable differences between two :func:`data_fingerprint` results ([] when equal)."""
    differences = []
    for part, name in (("train", "training"), ("valid", "dev")):
        was = (saved.get(f"{part}_pairs"), saved.get(f"{part}_sha256"))
        now = (found.get(f"{part}_pairs"), found.get(f"{part}_sha256"))
        if was != now:
            differences.append(
                f"{name} pairs: {was[0]} then (sha256 {str(was[1])[:12]}), {now[0]} now "
                f"(sha256 {str(now[1])[:12]})"
            )
    return differences
