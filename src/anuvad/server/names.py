"""``names: "model"`` in ``POST /translate``: names the model cannot translate, written in its
own Devanagari spelling (issue 39 item 7, as ``anuvad translate --names model`` does).

The sentences are translated once; the names in them (:func:`anuvad.inference.names.find_names`)
are spelled by the model, each alone, through the same micro-batcher; a sentence whose
translation lacks a name's spelling is translated again with the name required as a term
(:func:`anuvad.inference.names.name_glossaries`), and that translation replaces the first unless
it ran on (:func:`anuvad.inference.names.ran_on`). Every model call goes through the batcher,
so the model thread is never shared and the request's time limit covers both passes.
IndicXlit (``--names xlit`` in the CLI) ranks its spellings with a forced pass of the model
outside the batcher, so the server offers the model's own spelling only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from anuvad.decode_config import DecodeConfig
from anuvad.inference.glossary import Glossary
from anuvad.inference.names import find_names, name_glossaries, ran_on, usable_spelling
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import Verbatim
from anuvad.server.state import ServedModel


def _left(deadline: float | None) -> float | None:
    """Seconds until ``deadline`` (``time.monotonic``), at least a millisecond: the batcher
    answers a request past it with its 504."""
    return None if deadline is None else max(0.001, deadline - time.monotonic())


async def with_names(
    model: ServedModel,
    sentences: Sequence[str],
    first: list[Translation],
    settings: DecodeConfig,
    deadline: float | None,
    terms: Glossary | None,
    quality: bool,
    verbatim: Verbatim | None,
) -> list[Translation]:
    """``first`` (the translations of ``sentences``), with those that missed a name replaced by
    a translation that writes it in the model's spelling (see the module docstring); every call
    ends by ``deadline`` (``time.monotonic``, the request's, first pass included; None: no
    limit), and one that fails cancels the others."""
    every = sorted({name for sentence in sentences for name in find_names(sentence)})
    if not every:
        return first
    greedy = model.engine.settings(beam_size=1, nbest=1)
    spelled = await model.batcher.translate(every, greedy, _left(deadline), quality=False)
    spelling = {n: usable_spelling(n, r.text) for n, r in zip(every, spelled, strict=True)}

    def speller(names: Sequence[str]) -> list[str | None]:
        return [spelling[name] for name in names]

    keep = verbatim.keep if verbatim else ()
    texts = [r.text for r in first]
    glossaries = name_glossaries(sentences, speller, terms, first=texts, own=speller, keep=keep)
    again = [i for i, glossary in enumerate(glossaries) if glossary is not terms]
    async with asyncio.TaskGroup() as group:  # one failing cancels the rest
        tasks = [
            group.create_task(
                model.batcher.translate(
                    [sentences[i]], settings, _left(deadline), glossaries[i], quality=quality,
                    verbatim=verbatim,
                )
            )
            for i in again
        ]  # fmt: skip
    results = list(first)
    for i, task in zip(again, tasks, strict=True):
        (result,) = task.result()
        if not ran_on(texts[i], result.text, glossaries[i]):
            results[i] = result
    return results


__all__ = ["with_names"]
