"""Back-translation (Sennrich et al., 2016): monolingual target-language text becomes synthetic
training pairs, translated into the source language by a reverse model.

For an English→Hindi model, a Hindi→English model translates monolingual Hindi; each pair is
(synthetic English, real Hindi). Train on them with a ``tag`` on the corpus (``<bt>``, Caswell et
al. 2019, "Tagged Back-Translation") so the forward model can tell synthetic sources from real
ones, and mix them with the real pairs at a weight chosen on dev data.

:func:`backtranslate` writes ``<prefix>.<src>`` and ``<prefix>.<tgt>`` as aligned files (language
codes from the reverse model: its target language is the forward source). It works in chunks and
can be killed at any moment: the finished chunks live in ``.partial`` files with a progress
record, a second call continues after the last finished chunk, and the final files appear only
when everything is done (renamed into place, never half-written). Lines that are empty, or
whose translation is empty, are skipped and counted. Under ``torchrun`` the chunks are shared
among the workers and the files are the ones a single process writes (issue 39).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anuvad.atomic import write_atomic
from anuvad.data.text_files import read_text_lines
from anuvad.distributed import DistributedContext, from_main
from anuvad.errors import DataError
from anuvad.inference.sharding import map_chunks

if TYPE_CHECKING:
    from anuvad.decode_config import DecodeConfig
    from anuvad.inference.engine import TranslationEngine

logger = logging.getLogger(__name__)

__all__ = ["BacktranslationResult", "backtranslate", "output_paths"]


@dataclass(frozen=True)
class BacktranslationResult:
    """What one :func:`backtranslate` call did.

    Attributes:
        synthetic_path: the synthetic side (the forward model's source language).
        real_path: the monolingual side, line-aligned with ``synthetic_path``.
        read: monolingual lines read (after ``max_lines``).
        written: pairs in the output files.
        skipped: lines dropped: empty input lines and empty translations.
        resumed_from: input lines already done by an earlier, interrupted call.
        seconds: time spent translating in this call.
    """

    synthetic_path: Path
    real_path: Path
    read: int
    written: int
    skipped: int
    resumed_from: int
    seconds: float


def output_paths(prefix: Path, synthetic_lang: str, real_lang: str) -> tuple[Path, Path]:
    """``<prefix>.<synthetic_lang>`` and ``<prefix>.<real_lang>``."""
    return (
        prefix.with_name(f"{prefix.name}.{synthetic_lang}"),
        prefix.with_name(f"{prefix.name}.{real_lang}"),
    )


def _partial(path: Path) -> Path:
    return path.with_name(f"{path.name}.partial")


def _read_progress(progress_path: Path, expected_source: list[str]) -> tuple[int, int]:
    """(input lines done, pairs written) from an earlier call; (0, 0) when starting afresh."""
    if not progress_path.is_file():
        return 0, 0
    try:
        record = json.loads(progress_path.read_text(encoding="utf-8"))
        done, written, sources = int(record["done"]), int(record["written"]), record["inputs"]
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(
            f"{progress_path} is not a back-translation progress record ({exc}). Fix: delete it "
            f"and the .partial files beside it to start again."
        ) from exc
    if sources != expected_source:
        raise DataError(
            f"{progress_path} belongs to a back-translation of {sources}, not {expected_source}. "
            f"Fix: choose another --out-prefix, or delete the progress file and the .partial "
            f"files beside it to start again."
        )
    return done, written


def _truncate_lines(path: Path, keep: int) -> None:
    """Keep the first ``keep`` lines of ``path`` (bytes after a finished chunk are dropped)."""
    if not path.exists():
        if keep:
            raise DataError(f"{path} is missing but the progress record counts {keep} lines")
        path.write_bytes(b"")
        return
    with path.open("rb+") as handle:
        offset = 0
        for _ in range(keep):
            line = handle.readline()
            if not line.endswith(b"\n"):
                raise DataError(
                    f"{path} holds fewer lines than its progress record ({keep}). Fix: delete "
                    f"the .partial and .progress.json files of this prefix and run again."
                )
            offset += len(line)
        handle.truncate(offset)


def _append(path: Path, lines: Sequence[str]) -> None:
    with path.open("ab") as handle:
        handle.write("".join(f"{line}\n" for line in lines).encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def backtranslate(
    engine: TranslationEngine,
    inputs: Sequence[Path],
    out_prefix: Path,
    *,
    settings: DecodeConfig | None = None,
    max_lines: int = 0,
    chunk_lines: int = 2000,
    progress: Callable[[int, int], object] | None = None,
    use_cache: bool = True,
    context: DistributedContext | None = None,
) -> BacktranslationResult:
    """Translate monolingual text with a reverse model into aligned synthetic pairs.

    Args:
        engine: the reverse model (e.g. Hindi→English for an English→Hindi system).
        inputs: monolingual files in the reverse model's source language, one sentence a line
            (``.gz`` is read as gzip); read in order.
        out_prefix: where the pairs go: ``<prefix>.<engine's tgt lang>`` (synthetic) and
            ``<prefix>.<engine's src lang>`` (the input lines).
        settings: the search (None: greedy search, the engine's other settings: fast, and
            tagged training copes with its monotony); ``no_repeat_ngram_size`` keeps a weak
            reverse model from writing loops.
        max_lines: read only the first N lines of each input file (0 = all).
        chunk_lines: input lines per finished chunk (what a kill can lose).
        progress: called with (input lines done, input lines in all) after every chunk.
        use_cache: the key/value cache (False: re-run the decoder each step, for benchmarks).
        context: this process' place among the workers ``torchrun`` started (None: one
            process): each rank translates whole chunks (:mod:`anuvad.inference.sharding`),
            rank 0 writes them in input order; the files equal one process' files.

    Returns:
        What was read, written and skipped (``written`` and ``skipped`` counted on rank 0).

    Raises:
        DataError: an input file is missing or not UTF-8 (naming the line), or the progress
            record of an interrupted call belongs to other inputs.
    """
    if chunk_lines < 1:
        raise ValueError(f"chunk_lines must be at least 1, got {chunk_lines}")
    context = context or DistributedContext()
    settings = settings or engine.settings(beam_size=1)
    data = engine.model_file.config.data
    synthetic_path, real_path = output_paths(out_prefix, data.tgt_lang, data.src_lang)
    source_names = [str(path) for path in inputs]
    lines = [line for path in inputs for line in read_text_lines(path, max_lines)]
    progress_path = out_prefix.with_name(f"{out_prefix.name}.progress.json")

    def begin() -> tuple[int, int, bool]:
        """(input lines done, pairs written, finished) on rank 0, which alone writes."""
        if synthetic_path.exists() and real_path.exists():
            logger.info("%s and %s exist; nothing to do", synthetic_path, real_path)
            return len(lines), sum(1 for _ in synthetic_path.open("rb")), True
        out_prefix.parent.mkdir(parents=True, exist_ok=True)
        done, written = _read_progress(progress_path, source_names)
        for path in (synthetic_path, real_path):
            if done and path.exists() and not _partial(path).exists():
                os.replace(path, _partial(path))  # killed between the two final renames
            _truncate_lines(_partial(path), written)
        return done, written, False

    done, written, finished = from_main(begin, context)
    if finished:
        return BacktranslationResult(
            synthetic_path, real_path, len(lines), written, 0, len(lines), 0.0
        )
    resumed_from = done
    started = time.monotonic()

    def work(_offset: int, chunk: Sequence[str]) -> list[str]:
        """One translation per line of ``chunk``; "" for an empty line."""
        translated = iter(
            engine.translate([line for line in chunk if line], settings, use_cache=use_cache)
        )
        return [next(translated).text.strip() if line else "" for line in chunk]

    for finished_round in map_chunks(lines, work, context, chunk_size=chunk_lines, start=done):
        if context.is_main:
            real = lines[done : finished_round.done]
            pairs = [
                (out, src) for out, src in zip(finished_round.results, real, strict=True) if out
            ]
            _append(_partial(synthetic_path), [out for out, _ in pairs])
            _append(_partial(real_path), [src for _, src in pairs])
            written += len(pairs)
            record = {"inputs": source_names, "done": finished_round.done, "written": written}
            write_atomic(progress_path, json.dumps(record).encode("utf-8"))
        done = finished_round.done
        if progress is not None:
            progress(done, len(lines))
    if context.is_main:
        os.replace(_partial(real_path), real_path)
        os.replace(_partial(synthetic_path), synthetic_path)
        progress_path.unlink(missing_ok=True)
        logger.info(
            "back-translated %d lines into %d pairs (%s, %s) in %.0f s",
            len(lines) - resumed_from,
            written,
            synthetic_path,
            real_path,
            time.monotonic() - started,
        )
    return BacktranslationResult(
        synthetic_path,
        real_path,
        len(lines),
        written,
        len(lines) - written,
        resumed_from,
        time.monotonic() - started,
    )
