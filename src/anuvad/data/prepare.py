"""``anuvad prepare``: raw parallel text → tokenizers and encoded, cleaned token ids on disk.

:func:`prepare_data` reads the corpora of ``config.data``, trains the SentencePiece model(s),
encodes, cleans the training pairs and writes one folder; :func:`load_prepared` reads it back.
The folder holds::

    src.spm.model, tgt.spm.model   SentencePiece models (identical bytes with a joint vocabulary)
    train.pt, valid.pt             token ids without BOS/EOS (see EncodedCorpus.save)
    valid.src.txt, valid.tgt.txt   the raw dev text, one sentence per line (references for BLEU)
    report.json                    data settings, corpora, counts, vocabulary sizes, filter report

Every file is written atomically (temporary name in the same folder, then ``os.replace``), and
``report.json`` last, so a folder with a report is complete.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anuvad.config import CorpusConfig, DataConfig, ExperimentConfig
from anuvad.data.cleaning import (
    CLEAN_DROP_REASONS,
    CleaningReport,
    DevIndex,
    clean_corpus,
    normalizer_for,
)
from anuvad.data.corpora import (
    FilterReport,
    ParallelText,
    filter_pairs,
    read_corpora,
    require_nonempty_sides,
)
from anuvad.data.encoded import FORMAT_VERSION, EncodedCorpus
from anuvad.data.prepared_folder import (
    PREPARED_FILES,
    REPORT_FILE,
    PreparedData,
    load_prepared,
    write_prepared,
)
from anuvad.data.tokenizer import Tokenizer, train_tokenizer
from anuvad.errors import DataError

logger = logging.getLogger(__name__)

__all__ = ["PreparedData", "load_prepared", "prepare_data", "prepare_or_load", "with_vocab_sizes"]


def _concat(texts: list[ParallelText]) -> tuple[list[str], list[str]]:
    src = [s for text in texts for s in text.src]
    tgt = [t for text in texts for t in text.tgt]
    return src, tgt


def _corpora_report(texts: list[ParallelText]) -> list[dict[str, Any]]:
    """Which files each corpus was read from and how many pairs it gave."""
    return [
        {"name": t.name, "src_file": str(t.src_path), "tgt_file": str(t.tgt_path), "pairs": len(t)}
        for t in texts
    ]


def _train_tokenizers(
    data: DataConfig, src_text: list[str], tgt_text: list[str], tags: list[str]
) -> tuple[Tokenizer, Tokenizer]:
    """Source tags (e.g. ``<bt>``) become single pieces of the source vocabulary."""
    cfg = data.tokenizer
    if cfg.joint:
        # One vocabulary over both languages, so embeddings can be shared (section 3.4).
        joint = train_tokenizer(
            itertools.chain(src_text, tgt_text), cfg, cfg.vocab_size, user_symbols=tags
        )
        return joint, joint
    src_tok = train_tokenizer(
        src_text, cfg, cfg.src_vocab_size or cfg.vocab_size, user_symbols=tags
    )
    tgt_tok = train_tokenizer(tgt_text, cfg, cfg.tgt_vocab_size or cfg.vocab_size)
    return src_tok, tgt_tok


def weighted_sample(indices: list[int], weight: float, seed: str) -> list[int]:
    """``indices`` repeated ``int(weight)`` times plus a seeded random share ``weight % 1``.

    Args:
        indices: the kept pairs of one corpus, in order.
        weight: how often the corpus is seen per epoch (> 0).
        seed: the random seed of the fractional part (e.g. ``"1:hvg"``: stable per corpus).

    Returns:
        Pair indices; each appears ``int(weight)`` or ``int(weight) + 1`` times, and
        ``round(weight * len(indices))`` in all.
    """
    whole = int(weight)
    chosen = indices * whole
    extra = round(weight * len(indices)) - len(chosen)
    if extra > 0:
        picked = random.Random(seed).sample(range(len(indices)), extra)
        chosen += [indices[i] for i in sorted(picked)]
    return chosen


def _dropped(cleaning: CleaningReport, tokens: FilterReport) -> dict[str, int]:
    """One corpus's drops by reason, text- and token-level together (only reasons that hit)."""
    total: dict[str, int] = {}
    for reason, n in (*cleaning.dropped.items(), *tokens.dropped.items()):
        total[reason] = total.get(reason, 0) + n
    return {reason: n for reason, n in total.items() if n}


def _add_reports(total: FilterReport, cleaning: CleaningReport, tokens: FilterReport) -> None:
    """Fold one corpus's text- and token-level counts into the training set's report."""
    total.total += cleaning.total
    total.kept += tokens.kept
    for reason, n in (*cleaning.dropped.items(), *tokens.dropped.items()):
        total.dropped[reason] = total.dropped.get(reason, 0) + n


def _data_fingerprint(
    data: DataConfig, tokenizers: tuple[Tokenizer, Tokenizer] | None = None
) -> dict[str, Any]:
    """The data settings the prepared files depend on, as JSON would return them."""
    settings = dataclasses.asdict(data)
    for batching_only in ("max_tokens", "valid_max_tokens"):
        del settings[batching_only]
    settings["data_root"] = str(data.resolve_root())
    if tokenizers is not None:  # given, not trained: the files depend on their exact bytes
        del settings["tokenizer"]
        settings["given_tokenizers"] = [
            hashlib.sha256(tok.fingerprint_bytes()).hexdigest() for tok in tokenizers
        ]
    result: dict[str, Any] = json.loads(json.dumps(settings))
    return result


def prepare_data(
    config: ExperimentConfig,
    out_dir: Path,
    tokenizers: tuple[Tokenizer, Tokenizer] | None = None,
) -> PreparedData:
    """Read, tokenize, clean and save the corpora of ``config.data`` into ``out_dir``.

    Training pairs are cleaned with :func:`anuvad.data.corpora.filter_pairs`; validation pairs are
    kept all, but may not have an empty side. The tokenizer(s) are trained on the raw training text
    unless ``tokenizers`` are given (continued training of a model file keeps its vocabularies;
    a corpus tag is then encoded as ordinary pieces).

    Args:
        config: the experiment; only ``config.data`` is used.
        out_dir: the folder to write (created if needed; files in it are replaced).
        tokenizers: (source, target) tokenizers to use instead of training new ones.

    Returns:
        The prepared data, as :func:`load_prepared` would return it.

    Raises:
        DataError: ``out_dir`` is a file; no training corpus is configured, a corpus cannot be
            read, a dev pair has an empty side, the tokenizer cannot be trained, or no training
            pair survives cleaning.
    """
    for folder in (out_dir, *out_dir.parents):
        if folder.exists() and not folder.is_dir():  # before hours of tokenizer training
            raise DataError(
                f"cannot write the prepared data into {out_dir}: {folder} is a file; give a "
                "folder (--out / --data)"
            )
    data = config.data
    used = _weighted_corpora(data)
    root = data.resolve_root()
    valid_texts = read_corpora(data.valid, root)
    for text in valid_texts:
        require_nonempty_sides(text)
    cleaned, cleaning = _clean_training(data, used, read_corpora(used, root), valid_texts)
    if tokenizers is None:
        tags = sorted({corpus.tag for corpus in used if corpus.tag})
        src_tok, tgt_tok = _train_tokenizers(data, *_concat(cleaned), tags)
    else:
        src_tok, tgt_tok = tokenizers
    training = _encode_training(data, used, cleaned, cleaning, src_tok, tgt_tok)
    valid_src, valid_tgt = _concat(valid_texts)
    valid = _encode_valid(data, valid_src, valid_tgt, src_tok, tgt_tok)
    summary: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "data_config": _data_fingerprint(data, tokenizers),
        "src_vocab_size": src_tok.vocab_size,
        "tgt_vocab_size": tgt_tok.vocab_size,
        "train": {
            "corpora": training.corpora,
            "filter": training.report.to_dict(),
            "pairs": len(training.ids),
            "src_tokens": sum(len(s) for s in training.ids.src),
            "tgt_tokens": sum(len(t) for t in training.ids.tgt),
        },
        "valid": {"corpora": _corpora_report(valid_texts), "pairs": len(valid)},
    }
    prepared = PreparedData(
        src_tok, tgt_tok, training.ids, valid, valid_src, valid_tgt, summary,
        training.src_text, training.tgt_text,
    )  # fmt: skip
    write_prepared(Path(out_dir), prepared)
    return prepared


def _weighted_corpora(data: DataConfig) -> list[CorpusConfig]:
    """The training corpora with a weight above 0 (those at 0 are logged as left out).

    Raises:
        DataError: none is left.
    """
    used = [corpus for corpus in data.train if corpus.weight > 0]
    if not used:
        raise DataError(
            "data.train lists no corpus with a weight above 0; add at least one (format aligned "
            "with src/tgt files, or tsv with path/src_column/tgt_column) to the config"
        )
    left_out = [
        corpus.name or corpus.src or corpus.path for corpus in data.train if not corpus.weight
    ]
    if left_out:
        logger.info("left out (weight 0): %s", ", ".join(left_out))
    return used


def _clean_training(
    data: DataConfig,
    used: list[CorpusConfig],
    train_texts: list[ParallelText],
    valid_texts: list[ParallelText],
) -> tuple[list[ParallelText], list[CleaningReport]]:
    """Each training corpus cleaned (text rules, dev overlap, duplicates across corpora) and
    tagged, with what cleaning dropped from it."""
    dev: DevIndex | None = None
    if data.clean.drop_dev_overlap:
        dev = DevIndex()
        for text in [*valid_texts, *read_corpora(data.clean.exclude, data.resolve_root())]:
            dev.add(text.src, text.tgt)
    seen: set[tuple[str, str]] | None = set() if data.dedup else None
    cleaned: list[ParallelText] = []
    cleaning: list[CleaningReport] = []
    for corpus, text in zip(used, train_texts, strict=True):
        kept_text, corpus_report = clean_corpus(
            text, data.clean, data.src_lang, data.tgt_lang, dev, seen
        )
        if corpus.tag:
            kept_text.src = [f"{corpus.tag} {s}" for s in kept_text.src]
        cleaned.append(kept_text)
        cleaning.append(corpus_report)
    return cleaned, cleaning


@dataclass
class _Training:
    """The encoded training pairs, the text each was encoded from, and the reports."""

    ids: EncodedCorpus
    src_text: list[str]
    tgt_text: list[str]
    report: FilterReport
    corpora: list[dict[str, Any]]


def _encode_training(
    data: DataConfig,
    used: list[CorpusConfig],
    cleaned: list[ParallelText],
    cleaning: list[CleaningReport],
    src_tok: Tokenizer,
    tgt_tok: Tokenizer,
) -> _Training:
    """Encode each cleaned corpus, drop pairs too long or too unequal in length, and sample it
    by its weight.

    Raises:
        DataError: no training pair is left.
    """
    # Every reason, text-level first, in the order the checks run.
    reasons = dict.fromkeys((*CLEAN_DROP_REASONS, "too_long", "length_ratio"), 0)
    training = _Training(EncodedCorpus(src=[], tgt=[]), [], [], FilterReport(dropped=reasons), [])
    for corpus, text, corpus_cleaning in zip(used, cleaned, cleaning, strict=True):
        src_ids = src_tok.encode_batch(text.src)
        tgt_ids = tgt_tok.encode_batch(text.tgt)
        # Duplicates were dropped above, across corpora (after normalisation).
        kept, corpus_filter = filter_pairs(
            text.src, text.tgt, src_ids, tgt_ids,
            max_len=data.max_len, max_len_ratio=data.max_len_ratio, dedup=False,
        )  # fmt: skip
        chosen = weighted_sample(kept, corpus.weight, f"{data.sample_seed}:{text.name}")
        training.ids.src.extend(src_ids[i] for i in chosen)
        training.ids.tgt.extend(tgt_ids[i] for i in chosen)
        training.src_text.extend(text.src[i] for i in chosen)
        training.tgt_text.extend(text.tgt[i] for i in chosen)
        _add_reports(training.report, corpus_cleaning, corpus_filter)
        training.corpora.append(
            {
                "name": text.name,
                "src_file": str(text.src_path),
                "tgt_file": str(text.tgt_path),
                "pairs": corpus_cleaning.total,
                "cleaning": corpus_cleaning.to_dict(),
                "filter": corpus_filter.to_dict(),
                "kept": len(kept),
                "weight": corpus.weight,
                "tag": corpus.tag,
                "pairs_in_training": len(chosen),
            }
        )
        dropped = {
            reason: corpus_cleaning.dropped.get(reason, 0) + corpus_filter.dropped.get(reason, 0)
            for reason in (*corpus_cleaning.dropped, *corpus_filter.dropped)
        }
        logger.info(
            "corpus %r: %d read, %d kept, %d in training (weight %g); dropped %s",
            text.name, corpus_cleaning.total, len(kept), len(chosen), corpus.weight,
            {reason: count for reason, count in dropped.items() if count},
        )  # fmt: skip
    if not len(training.ids):
        raise DataError(
            f"no training pairs left after cleaning ({training.report.summary()}). Fix: check "
            f"the corpora, or relax data.max_len / data.max_len_ratio / data.dedup / data.clean"
        )
    return training


def _encode_valid(
    data: DataConfig, src: list[str], tgt: list[str], src_tok: Tokenizer, tgt_tok: Tokenizer
) -> EncodedCorpus:
    """The dev pairs encoded (normalised as the training text was; never filtered)."""
    if data.clean.normalize:
        norm_src, norm_tgt = normalizer_for(data.src_lang), normalizer_for(data.tgt_lang)
        src, tgt = [norm_src(s) for s in src], [norm_tgt(t) for t in tgt]
    return EncodedCorpus(src=src_tok.encode_batch(src), tgt=tgt_tok.encode_batch(tgt))


def prepare_or_load(
    config: ExperimentConfig,
    out_dir: Path,
    tokenizers: tuple[Tokenizer, Tokenizer] | None = None,
) -> PreparedData:
    """Load ``out_dir`` if it was prepared with the same data settings, else prepare it.

    "Same" compares ``config.data`` (batch sizes aside, with the data root resolved) against the
    settings recorded in ``report.json``; the corpus files themselves are not checksummed, so run
    :func:`prepare_data` again after editing a corpus in place.

    Args:
        config: the experiment; only ``config.data`` is used.
        out_dir: the prepared-data folder (the cache).
        tokenizers: as :func:`prepare_data` (part of what "same settings" compares).

    Returns:
        The prepared data.

    Raises:
        DataError: as :func:`prepare_data`, or a complete folder has unreadable files.
    """
    out_dir = Path(out_dir)
    if all((out_dir / name).is_file() for name in PREPARED_FILES):
        try:
            recorded = json.loads((out_dir / REPORT_FILE).read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            recorded = {}
        if isinstance(recorded, dict) and recorded.get("data_config") == _data_fingerprint(
            config.data, tokenizers
        ):
            return load_prepared(out_dir)
        logger.warning("%s was prepared with other data settings; preparing it again", out_dir)
    return prepare_data(config, out_dir, tokenizers)


def with_vocab_sizes(config: ExperimentConfig, prepared: PreparedData) -> ExperimentConfig:
    """The config with ``model.src/tgt_vocab_size`` taken from the prepared tokenizers."""
    model = dataclasses.replace(
        config.model,
        src_vocab_size=prepared.src_tokenizer.vocab_size,
        tgt_vocab_size=prepared.tgt_tokenizer.vocab_size,
    )
    resolved = dataclasses.replace(config, model=model)
    resolved.validate()
    return resolved
