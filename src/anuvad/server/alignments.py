"""Word alignments of translated sentences, on the model's thread: for placing an HTML unit's
inline elements, and for a request that asks for them (``alignment: true``)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Sequence

from anuvad.inference.alignment import word_alignment
from anuvad.inference.engine import TranslationEngine
from anuvad.inference.translation import Translation
from anuvad.server.state import ServedModel

logger = logging.getLogger(__name__)
CHUNK = 16  # sentences aligned per model call (each is a forward pass over its translation)


async def align_sentences(
    model: ServedModel,
    results: Sequence[Translation],
    wanted: Sequence[int],
    deadline: float | None,
) -> dict[int, list[int] | None]:
    """The word alignment of each sentence ``wanted`` (indices into ``results``), by the model
    that translated them; in chunks, so that other requests' sentences interleave. A sentence
    whose alignment fails, or any left when ``deadline`` (``time.monotonic``) has passed, gets
    None: its markup is placed in word order rather than failing a request whose translation
    is done."""
    aligned: dict[int, list[int] | None] = dict.fromkeys(wanted)
    for start in range(0, len(wanted), CHUNK):
        if deadline is not None and time.monotonic() > deadline:
            break
        chunk = list(wanted[start : start + CHUNK])
        done = await model.batcher.call(functools.partial(_align, model.engine, results, chunk))
        aligned.update(zip(chunk, done, strict=True))
    return aligned


def _align(
    engine: TranslationEngine, results: Sequence[Translation], chunk: list[int]
) -> list[list[int] | None]:
    found: list[list[int] | None] = []
    for i in chunk:
        try:
            found.append(word_alignment(engine.attention_of(results[i]), results[i].read))
        except Exception:  # a sentence not aligned is placed in word order
            logger.exception("no word alignment for sentence %d", i)
            found.append(None)
    return found


__all__ = ["CHUNK", "align_sentences"]
