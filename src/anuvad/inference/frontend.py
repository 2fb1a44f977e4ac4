"""The text side both engines share: sentences in, :class:`Translation` objects out.

An engine (the PyTorch translator, the CTranslate2 one) supplies one thing: a search over a
batch of source token ids (:data:`BatchSearch`). Everything around it is here and identical for
both: normalising, recasing shouted or title-case sentences (:mod:`anuvad.inference.casing`)
and tokenising the sources (cutting what the model cannot take, with a warning), translating
empty sources to "", grouping sentences of similar length into batches (``settings.batch_size``
sentences, or ``settings.max_tokens`` padded source tokens), running the search per batch, and
putting the results back in input order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence

from anuvad.config import DataConfig
from anuvad.data.cleaning import source_normalizer
from anuvad.data.tokenizer import Tokenizer
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.search import BetweenSteps, check_stop
from anuvad.inference.casing import fold_unreadable, recase
from anuvad.inference.translation import Candidate, Translation

logger = logging.getLogger(__name__)

# (source ids of one batch, settings, each source's index among the texts) → per source its
# candidates, best first (at least one).
BatchSearch = Callable[[list[list[int]], DecodeConfig, list[int]], list[list[Candidate]]]


def source_preparer(data: DataConfig, tokenizer: Tokenizer) -> Callable[[str], str]:
    """What a source sentence becomes before ``tokenizer`` splits it: normalised as the
    training data was (``data.clean``), letters it cannot read folded to ones it can
    (:func:`~anuvad.inference.casing.fold_unreadable`), then recased when shouted or in title
    case."""
    normalize = source_normalizer(data)
    return lambda text: recase(fold_unreadable(normalize(text), tokenizer), tokenizer)


def encode_sources(
    texts: Sequence[str],
    data: DataConfig,
    tokenizer: Tokenizer,
    max_tokens: int,
    prefix: Sequence[int] = (),
) -> list[list[int]]:
    """Source ids per text (:func:`source_preparer`, then tokenised), cut to ``max_tokens``
    pieces with a warning naming the sentence, each non-empty one after ``prefix`` (a
    multilingual model's source-language token: :mod:`anuvad.data.language_tokens`)."""
    prepare = source_preparer(data, tokenizer)
    encoded = tokenizer.encode_batch([prepare(t) for t in texts])
    for i, ids in enumerate(encoded):
        if len(ids) > max_tokens:
            logger.warning(
                "sentence %d has %d tokens; truncated to the model's %d",
                i + 1,
                len(ids),
                max_tokens,
            )
            encoded[i] = ids[:max_tokens]
    if prefix:
        encoded = [[*prefix, *ids] if ids else ids for ids in encoded]
    return encoded


def length_groups(
    lengths: Sequence[int], settings: DecodeConfig, engine_splits_tokens: bool = False
) -> Iterator[list[int]]:
    """Indices sorted by length (ascending, stable), cut into batches of ``batch_size``
    sentences, or of at most ``max_tokens`` padded source tokens (EOS included) when that is
    set. ``engine_splits_tokens``: the engine cuts token batches itself (CTranslate2), so with
    ``max_tokens`` all indices come as one group."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    if settings.max_tokens > 0 and engine_splits_tokens:
        yield order
        return
    if settings.max_tokens <= 0:
        size = max(1, settings.batch_size)
        for start in range(0, len(order), size):
            yield order[start : start + size]
        return
    batch: list[int] = []
    for i in order:  # ascending: the newest sentence is the longest (+1 for EOS)
        if batch and (len(batch) + 1) * (lengths[i] + 1) > settings.max_tokens:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def empty_translation(source: str) -> Translation:
    """What a source without tokens (empty, or only spaces) translates to: ""."""
    return Translation(source, "", [], 0.0, True, [Candidate("", [], 0.0, 0.0, True)])


def distinct(candidates: Sequence[Candidate], count: int) -> list[Candidate]:
    """The first ``count`` candidates with different texts, best first: two token sequences
    can spell one string ("▁a" "b" and "▁ab"; "." and "।" made one by punctuation), and an
    n-best list that shows a string twice offers the reader nothing."""
    seen: set[str] = set()
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.text not in seen:
            seen.add(candidate.text)
            kept.append(candidate)
    return kept[:count]


def translation_of(source: str, candidates: list[Candidate]) -> Translation:
    """A :class:`Translation` whose best output is ``candidates[0]``."""
    best = candidates[0]
    return Translation(
        source, best.text, best.token_ids, best.score, best.finished, candidates, best.quality
    )


def translate_encoded(
    texts: Sequence[str],
    encoded: Sequence[list[int]],
    settings: DecodeConfig,
    search: BatchSearch,
    progress: Callable[[int], object] | None = None,
    engine_splits_tokens: bool = False,
    stop: BetweenSteps | None = None,
) -> list[Translation]:
    """Translate ``texts`` (with their source ids ``encoded``) batch by batch; results in input
    order, each n-best list of distinct texts (:func:`distinct`). ``progress`` is called with
    the number of sentences each finished batch held; ``stop`` is asked before every batch (the
    engine's search asks it between steps too).

    Raises:
        SearchStoppedError: ``stop`` said so.
    """
    results: list[Translation | None] = [None] * len(texts)
    todo = [i for i, ids in enumerate(encoded) if ids]
    for i in set(range(len(texts))) - set(todo):
        results[i] = empty_translation(texts[i])
    lengths = [len(encoded[i]) for i in todo]
    # An n-best list asks the search for the whole beam, so that it still has ``nbest``
    # candidates once those that repeat a better one's text are left out.
    wide = settings
    if 1 < settings.nbest < settings.beam_size:
        wide = settings.with_overrides(nbest=settings.beam_size)
    for group in length_groups(lengths, settings, engine_splits_tokens):
        check_stop(stop)
        indices = [todo[j] for j in group]
        outputs = search([encoded[i] for i in indices], wide, indices)
        for index, candidates in zip(indices, outputs, strict=True):
            results[index] = translation_of(texts[index], distinct(candidates, settings.nbest))
        if progress is not None:
            progress(len(indices))
    return [r for r in results if r is not None]
