"""Required phrases of a batch: what each sentence's output must contain, and the constraint
the search runs under.

A sentence's phrases are its glossary terms' translations (:mod:`anuvad.inference.glossary`)
and what its :class:`~anuvad.inference.verbatim.Verbatim` policy finds to copy (numbers, links,
e-mail addresses, marked names), each ending at its boundary
(:mod:`anuvad.decoding.boundaries`). The torch engine's translator
(:meth:`anuvad.inference.translator.Translator.translate`) calls :func:`batch_requirements` and
:func:`phrase_constraint`; a batch in which no sentence has a phrase is searched exactly as
without.

Each sentence is searched freely first (:func:`anuvad.decoding.constraints.free_first`): where
its candidates already hold every phrase and write no digit the constraint would forbid, they
are kept, and only the others are searched again under the constraint. Dynamic beam
allocation favours hypotheses that write their phrases early, so a sentence whose free
translation was right came back reordered around its numbers ("समूह ने 649 मिलियन लोगों का
अनुमान लगाया है कि …" for "The group estimates … nearly 649 million people"): NTREX-128's 447
sentences with numbers scored chrF++ 31.2 constrained throughout against 32.0 unconstrained
(docs/benchmarks.md). Greedy search goes under its phrases at once (:func:`search_with_phrases`).

Greedy search (beam size 1) gets the guarantee alone: it sees a missing phrase only when it
wants to end, and then writes the phrase there and ends (it wrote on until the phrase fitted,
junk around it, in 42 of NTREX-128's 447 sentences with numbers; docs/benchmarks.md); a phrase
written after the sentence's final mark goes before it. Searching those sentences with a small
beam instead scored lower in twice the time, so beam size 1 stays greedy search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from anuvad.decode_config import DecodeConfig
from anuvad.decoding.boundaries import Boundary, is_digit
from anuvad.decoding.constraints import AllOf, OutputConstraint, W, free_first
from anuvad.decoding.source_numbers import SourceDigitsOnly
from anuvad.decoding.terms import RequiredPhrase, TermConstraint
from anuvad.errors import DataError
from anuvad.inference.currency import read_amounts
from anuvad.inference.dates import read_times
from anuvad.inference.glossary import UNSPELLABLE, Glossary
from anuvad.inference.language import foreign_script
from anuvad.inference.ordinals import read_ordinals, small_ordinals
from anuvad.inference.placeholders import HIDDEN_KINDS, Hidden, hide
from anuvad.inference.post_search import signed, unsigned
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import (
    UNSPELLABLE_SPAN,
    PhraseEncoder,
    Span,
    Verbatim,
    copied_report,
    find_spans,
    per_text_policies,
)


@dataclass(frozen=True)
class Requirements:
    """What one sentence's output must contain, and what was found in it for the report.

    Attributes:
        phrases: the glossary translations of the terms in it, then the spans' phrases (each
            target once).
        spans: what ``verbatim`` found, outside the glossary's terms.
        spelled: per span, whether it is required (False: the vocabulary cannot spell it).
        digits_from: where :attr:`Verbatim.only_source_numbers` applies (every source digit
            is in a phrase), the phrases whose digits the output may write, each once per
            occurrence in the source; None: digits are not restricted.
        hidden: the sentence as the model sees it, its links, e-mail addresses and file names
            behind placeholders (:mod:`anuvad.inference.placeholders`), whose phrases are
            required in their stead; None: the sentence as it is.
        texts: what the output must hold, as text once placeholders are revealed: the
            glossary's translations, each span's target with and without its sign.
    """

    phrases: tuple[RequiredPhrase, ...] = ()
    spans: tuple[Span, ...] = ()
    spelled: tuple[bool, ...] = ()
    digits_from: tuple[RequiredPhrase, ...] | None = None
    hidden: Hidden | None = None
    texts: tuple[str, ...] = ()


def requirements(
    text: str, glossary: Glossary | None, verbatim: Verbatim | None, encoder: PhraseEncoder
) -> Requirements:
    """What the translation of ``text`` must contain.

    Args:
        text: one source sentence.
        glossary: its terms (None: none); every translation must be spellable (the caller
            checks: :meth:`Glossary.unspellable`).
        verbatim: what must be copied (None: nothing).
        encoder: the target vocabulary's phrases.
    """
    entries = glossary.matches(text) if glossary else []
    # A term translated into another script than the target's ("Supreme Court" → "SC" in
    # Hindi) is copied behind a placeholder as a marked name is: required letter by letter it
    # drew junk ("… है Stumbrion Sthaver St in पर in Delform SC।").
    named = [
        Span("name", start, end, entry.target, Boundary.WORD)
        for start, end, entry in (glossary.matched(text) if glossary and verbatim else [])
        if verbatim and verbatim.langs and foreign_script(entry.target, verbatim.langs[1])
    ]
    entries = [e for e in entries if not any(e.target == n.target for n in named)]
    terms = [encoder.term(e.target) for e in entries]
    if verbatim is None:
        return Requirements(tuple(terms), texts=tuple(e.target for e in entries))
    taken = glossary.match_spans(text) if glossary else []
    found = sorted([*find_spans(text, verbatim, taken), *named], key=lambda s: s.start)
    spans = [unsigned(span, encoder.spellable) for span in found]
    hidden = hide(text, spans, encoder.spellable)
    langs = verbatim.langs or ("", "")
    read = read_amounts(hidden.text, *langs) if verbatim.numbers else hidden.text
    times = {s.target for s in spans if s.kind == "date"}  # only a required time loses its word
    read = read_ordinals(read_times(read, *langs, times), langs[0]) if verbatim.numbers else read
    # "USD 25" read as "$25" (inference.currency), "सुबह 10 बजे" as "10 बजे" (inference.dates),
    # "2nd" as "second" (inference.ordinals)
    hidden = replace(hidden, text=read)
    placeholder = dict(zip(hidden.starts, hidden.names, strict=True))
    kept = [
        encoder.term(placeholder[span.start])
        if span.kind in HIDDEN_KINDS and span.start in placeholder
        else encoder.span(span)
        for span in spans
    ]
    spelled = [k for k in kept if k is not None]
    covered = taken + [(s.start, s.end) for s, k in zip(spans, kept, strict=True) if k]
    covered += small_ordinals(text)  # "2nd": read as a word
    # A sentence with a phrase to hold writes no digit outside its phrases: greedy search,
    # writing on until a name fits, wrote "… के लिए को खुलेगा.2.3.1.12.2 में" around a sentence
    # without a digit ("Rohit Sharma and Virat Kohli will open the batting, said Rohit Sharma.").
    digits_only = (
        verbatim.only_source_numbers
        and bool(terms or spans)
        and all(
            any(a <= i < b for a, b in covered) for i, char in enumerate(text) if is_digit(char)
        )
    )
    return Requirements(
        phrases=tuple(dict.fromkeys([*terms, *spelled])),  # each target required once
        spans=tuple(spans),
        spelled=tuple(k is not None for k in kept),
        # A term may be written once (it is required once), a span once per occurrence.
        digits_from=(*terms, *spelled) if digits_only else None,
        hidden=hidden if hidden.names or hidden.only_addresses or read != text else None,
        texts=(
            *(e.target for e in entries),
            *(t for span in spans for t in (span.target, span.written)),
        ),
    )


def batch_requirements(
    texts: Sequence[str],
    glossary: Glossary | Sequence[Glossary | None] | None,
    verbatim: Verbatim | Sequence[Verbatim | None] | None,
    encoder: PhraseEncoder,
) -> list[Requirements]:
    """Per text, what its output must contain (:func:`requirements`: the glossary's terms, then
    what ``verbatim`` finds outside them); one glossary and policy for all texts or one each.

    Raises:
        DataError: a glossary translation holds characters the target vocabulary lacks (it
            could only come out as ⁇), naming the term.
        ValueError: a list of glossaries or policies is not one per text.
    """
    if glossary is None or isinstance(glossary, Glossary):
        per_text: list[Glossary | None] = [glossary] * len(texts)
    else:
        per_text = list(glossary)
    policies = per_text_policies(verbatim, len(texts))
    if len(per_text) != len(texts):
        raise ValueError(f"{len(per_text)} glossaries for {len(texts)} texts")
    for checked in {id(g): g for g in per_text if g}.values():  # each glossary once
        bad = checked.unspellable(encoder.tokenizer)
        if bad:
            entry = checked.entries[bad[0]]
            raise DataError(
                f"glossary: the translation {entry.target!r} of {entry.source!r} "
                f"{UNSPELLABLE}; use other words for it"
            )
    return [
        requirements(text, own, policy, encoder)
        for text, own, policy in zip(texts, per_text, policies, strict=True)
    ]


def phrase_constraint(
    batch: Sequence[Requirements], encoder: PhraseEncoder, vocab_size: int
) -> OutputConstraint | None:
    """The constraint a batch of sentences is searched under: each holds its phrases whole
    (:class:`~anuvad.decoding.terms.TermConstraint`), and where ``digits_from`` is given,
    writes no other digits (:class:`~anuvad.decoding.source_numbers.SourceDigitsOnly`); None
    when no sentence of the batch has a phrase (it searches exactly as without)."""
    if not any(r.phrases for r in batch):
        return None
    terms = TermConstraint([r.phrases for r in batch], vocab_size, encoder.table)
    if all(r.digits_from is None for r in batch):
        return terms
    digits = SourceDigitsOnly([r.digits_from for r in batch], encoder.table)
    return AllOf([terms, digits])  # the terms first: they decide where both leave nothing


def search_with_phrases(
    sources: list[list[int]],
    batch: Sequence[Requirements],
    run: Callable[[list[list[int]], OutputConstraint | None], list[list[W]]],
    encoder: PhraseEncoder,
    vocab_size: int,
    limits: Sequence[int],
    settings: DecodeConfig,
) -> list[list[W]]:
    """Outputs per source of ``batch``, each holding its phrases: beam search free first
    (:func:`~anuvad.decoding.constraints.free_first`, the module docstring), greedy search
    under the phrases at once (where its free output holds them, every token it took was
    allowed, so it writes the same; searching freely first cost 1.2x the time for nothing).

    Args:
        sources: the batch's source ids.
        batch: what each sentence's output must contain.
        run: searches some sources under a constraint (None: freely).
        encoder: the target vocabulary's phrases.
        vocab_size: the target vocabulary size.
        limits: each sentence's output limit in tokens.
        settings: the search's settings (beam size, n-best).

    Returns:
        Per source, in order, its outputs (as ``run`` gives them).
    """

    def constraint_for(chosen: list[int]) -> OutputConstraint | None:
        return phrase_constraint([batch[j] for j in chosen], encoder, vocab_size)

    if settings.beam_size == 1:
        return run(sources, constraint_for(list(range(len(sources)))))
    return free_first(sources, constraint_for, run, limits, settings.nbest)


def report_copied(results: Sequence[Translation], required: Sequence[Requirements]) -> None:
    """Each result's signs written back (:func:`~anuvad.inference.post_search.signed`) and its
    ``copied``: what became of every span its source's requirements found, in place."""
    for result, own in zip(results, required, strict=True):
        signed(result, own.spans)
        result.copied = copied_report(
            own.spans, result.source, result.text, own.spelled, UNSPELLABLE_SPAN
        )
