"""What ``anuvad translate`` refuses in its input, or warns about in its output: a line of
several sentences (or too long) translated whole, a text in another script than the model
reads, a translation much shorter than its source; an output path it could not write (checked
before translating, not after)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anuvad.inference.documents import DocumentTranslation
    from anuvad.inference.engine import TranslationEngine
    from anuvad.inference.translation import Translation


def input_name(path: str | None) -> str:
    """The input as messages name it: its path, or "stdin" (no ``--input``, or ``-``)."""
    return "stdin" if path in (None, "-") else str(path)


def unwritable(path: Path, replaced: bool) -> str | None:
    """Why a file could not be written at ``path`` (None: it can be, as far as can be told
    without writing). ``replaced``: written beside and renamed over (``write_atomic``: the
    folder must take a new file), else written in place (an existing file must be writable)."""
    if path.is_dir():
        return "is a folder; give a file name"
    folder = path.parent
    if not folder.is_dir():
        return f"the folder {folder} does not exist; create it first"
    if path.exists() and not replaced:
        ok, where = os.access(path, os.W_OK), path
    else:
        ok, where = os.access(folder, os.W_OK | os.X_OK), folder
    return None if ok else f"cannot write there (permissions of {where})"


def refuse_unsplit(
    translator: TranslationEngine, lines: Sequence[str], path: str | None, why: str
) -> None:
    """Lines translated whole must each be one sentence the model takes: the model translates
    a line's first sentence and stops (issue 40), and a line beyond its positions loses its end
    (issue 33). Sentences are counted as the server counts them for ``split_sentences: false``
    (:func:`anuvad.inference.documents.split_document`).

    Args:
        translator: the engine (its source language and length limit).
        lines: the input lines.
        path: the input file (None: stdin), for the message.
        why: what made the lines whole (an option), for the message.

    Raises:
        DataError: the first line of several sentences (its number and count named).
        InputTooLongError: the first line that does not fit.
    """
    from anuvad.errors import DataError, InputTooLongError
    from anuvad.inference.documents import count_sentences
    from anuvad.inference.engine import source_fits

    lang = translator.model_file.config.data.src_lang
    fits = source_fits(translator)
    fix = f"drop {why} to translate each line as a document split into sentences"
    for number, line in enumerate(lines, start=1):
        where = f"{input_name(path)}, line {number}"
        sentences = count_sentences(line, lang)
        if sentences > 1:
            raise DataError(
                f"{where} holds {sentences} sentences, but with {why} a line is translated as "
                f"one sentence and the model stops after the first; {fix}, or give one sentence "
                "per line"
            )
        if not fits(line):
            pieces = len(translator.src_tokenizer.encode(line))
            raise InputTooLongError(
                f"{where}: {len(line):,} characters ({pieces:,} pieces) are more than the "
                f"model takes as one sentence ({translator.max_src_tokens} pieces); {fix}, or "
                "break the line"
            )


LONG_WORD = 24  # characters: a shorter word is far within any model's positions


def refuse_long_words(
    translator: TranslationEngine, lines: Sequence[str], path: str | None
) -> None:
    """A word longer than the model takes is refused before anything is translated (not after
    the lines before it were written): split documents are cut at spaces at the latest, so such
    a word is the one thing that cannot be translated
    (:func:`anuvad.inference.documents.split_document`).

    Raises:
        InputTooLongError: the first such word, its file and line named.
    """
    from anuvad.errors import InputTooLongError
    from anuvad.inference.engine import source_fits
    from anuvad.inference.symbols import blank_symbols

    fits = None
    for number, line in enumerate(lines, start=1):
        for word in blank_symbols(line).split():  # emoji between sentences part them
            if len(word) <= LONG_WORD:
                continue
            fits = fits or source_fits(translator)
            if not fits(word):
                raise InputTooLongError(
                    f"{input_name(path)}, line {number}: {word[:40]!r} is a word of {len(word)} "
                    "characters, longer than the model can translate. Fix: break it with "
                    "spaces, or leave it out"
                )


def refuse_wrong_script(translator: TranslationEngine, lines: Sequence[str], model: str) -> None:
    """Refuse input mostly in another script than the model reads (English sent to the
    Hindi->English model), or mostly Hindi in Latin letters (:mod:`anuvad.inference.romanized`;
    a line of it among others is warned of), as the server does with a 422: the output would
    be nonsense. Mostly
    both by letters and by lines (of the first 200 with letters, more than half in another
    script): short English lines and one long Hindi one are English with a line kept as
    written ("Hi.", "OK." and "यह हिंदी है।" was refused whole, by letters), and a heading or
    two in English over a long Hindi paragraph are Hindi.

    Raises:
        DataError: naming the model's source language and what to do.
    """
    from anuvad.errors import DataError
    from anuvad.inference.language import wrong_script
    from anuvad.inference.romanized import ROMANIZED_FIX, romanized_hindi

    src_lang = translator.model_file.config.data.src_lang
    worded = [line for line in lines if any(c.isalpha() for c in line)][:200]
    if 2 * sum(romanized_hindi(line) for line in worded) > len(worded):
        raise DataError(f"the input {ROMANIZED_FIX}")
    romanized = [i for i, line in enumerate(lines) if romanized_hindi(line)]
    for i in romanized[:5]:
        print(
            f"warning: line {i + 1}: {lines[i][:50]!r} {ROMANIZED_FIX}; translated as it is",
            file=sys.stderr,
        )
    if len(romanized) > 5:
        print(f"warning: {len(romanized) - 5} more such lines", file=sys.stderr)
    by_lines = 2 * sum(wrong_script(line, src_lang) for line in worded) > len(worded)
    if by_lines and wrong_script("\n".join(worded), src_lang):
        raise DataError(
            f"the input is mostly not in the script of {src_lang!r}, the language {model} "
            "translates from; leave out --model to pick the shipped model of the input's "
            "language, or give the model of that language"
        )


def _where(place: int | str) -> str:
    """An input line (0-based) as messages name it, or a place named already."""
    return f"line {place + 1}" if isinstance(place, int) else place


def warn_short(place: int | str, results: Sequence[Translation]) -> None:
    """Say on stderr which translations of input line ``place`` (0-based; or a place in a
    document, named) are much shorter than their sources
    (:mod:`anuvad.inference.length_check`): likely wrong, part missing."""
    for result in results:
        if result.short:
            print(
                f"warning: {_where(place)}: the translation of {result.source[:50]!r} is much "
                "shorter than its source: likely wrong (part of it may be missing)",
                file=sys.stderr,
            )


def warn_kept(place: int | str, document: DocumentTranslation[Translation]) -> None:
    """Say on stderr which parts of input line ``place`` (0-based; or a place in a document,
    named) were kept as written: in another script than the model's source language
    (:func:`~anuvad.inference.documents.left_as_written`)."""
    from anuvad.inference.documents import left_as_written

    spans = [(s.start, s.end) for s in document.segments]
    for part in left_as_written(document.source, spans):
        print(
            f"warning: {_where(place)}: {part[:50]!r} is not in the model's source language; "
            "kept as written",
            file=sys.stderr,
        )


__all__ = ["refuse_unsplit", "refuse_wrong_script", "warn_kept", "warn_short"]
