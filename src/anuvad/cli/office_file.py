"""``anuvad translate`` of an office document or e-book (``--input report.docx --output
report.hi.docx``; .docx, .pptx, .xlsx, .odt, .odp, .epub): its paragraphs translated as the
server's ``translate_file`` translates them (each a document: split into sentences and put
back; an e-book's inline elements placed by the model's word alignment), everything else in
the file as it was (:mod:`anuvad.inference.office`). Chosen by the
``--input`` file's extension with the default ``--format auto``.
"""

from __future__ import annotations

import argparse
from pathlib import Path, PurePosixPath

from anuvad.atomic import write_atomic
from anuvad.cli.html_file import plain_text_options
from anuvad.cli.input_checks import input_name, warn_kept, warn_short
from anuvad.cli.job import TranslationJob
from anuvad.errors import DataError
from anuvad.inference.office import OfficeDocument, OfficeError, is_office, read_office


def is_office_input(args: argparse.Namespace) -> bool:
    """Whether the input is an office document: an ``--input`` with one of their extensions
    and the default ``--format auto``."""
    return args.format == "auto" and bool(args.input) and is_office(str(args.input))


def office_usage_error(args: argparse.Namespace) -> str | None:
    """What an office input cannot be translated with (None: nothing)."""
    if not is_office_input(args):
        return None
    suffix = PurePosixPath(str(args.input)).suffix.lower()
    if not args.output:
        stem = PurePosixPath(str(args.input)).stem
        return (
            f"a {suffix} translation is a {suffix} file, not text: give --output (for example "
            f"--output {stem}.hi{suffix})"
        )
    if not (given := plain_text_options(args)):
        return None
    return (
        f"a {suffix} document is translated paragraph by paragraph into a {suffix} file, and "
        f"{' and '.join(given)} need{'s' if len(given) == 1 else ''} plain text: drop "
        f"{'it' if len(given) == 1 else 'them'}"
    )


def read_office_input(path: str) -> OfficeDocument:
    """The office document at ``path``.

    Raises:
        DataError: missing, a folder, or not a file of its format (naming it and the fix).
    """
    file = Path(path)
    if file.is_dir():
        raise DataError(f"input file {file} is a folder; give a document")
    if not file.is_file():
        raise DataError(f"input file {file} does not exist")
    try:
        return read_office(file.read_bytes(), str(file))
    except OfficeError as exc:
        raise DataError(str(exc)) from None


def translate_office_file(
    args: argparse.Namespace, job: TranslationJob, document: OfficeDocument
) -> None:
    """The document with its paragraphs translated, written to ``--output``; a paragraph's
    likely-wrong or kept sentences and one too long to translate are named by its place
    ("word/document.xml, paragraph 12")."""
    from anuvad.inference.alignment import word_alignment
    from anuvad.inference.markup import unit_translations

    texts, places = document.texts(), document.places()
    name = input_name(args.input)
    documents = job.documents(texts, lambda i: f"{name}, {places[i]}")
    for place, translated in zip(places, documents, strict=True):
        warn_short(place, translated.sentences)
        warn_kept(place, translated)
    engine = job.translator  # an e-book's inline elements placed by the model's alignment
    align = unit_translations(
        document.inline(), documents, lambda r: word_alignment(engine.attention_of(r))
    )
    write_atomic(Path(args.output), document.translated(align))


def copy_unchanged(args: argparse.Namespace) -> None:
    """A document without text to translate, written to ``--output`` as it is."""
    write_atomic(Path(args.output), Path(args.input).read_bytes())


__all__ = [
    "copy_unchanged",
    "is_office_input",
    "office_usage_error",
    "read_office_input",
    "translate_office_file",
]
