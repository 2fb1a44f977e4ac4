"""``anuvad translate`` of an office document or e-book (``--input report.docx --output
report.hi.docx``; .docx, .pptx, .xlsx, .odt, .odp, .epub), or of subtitles (``.srt``, ``.vtt``:
to ``--output`` or stdout): its paragraphs or cues translated as the server's
``translate_file`` translates them (each a document: split into sentences and put back; inline
formatting placed by the model's word alignment), everything else in the file as it was
(:mod:`anuvad.inference.office`, :mod:`anuvad.inference.subtitles`). Chosen by the ``--input``
file's extension with the default ``--format auto``.
"""

from __future__ import annotations

import argparse
from pathlib import Path, PurePosixPath

from anuvad.atomic import write_atomic
from anuvad.cli.html_file import plain_text_options, write_output
from anuvad.cli.input_checks import input_name, warn_kept, warn_short
from anuvad.cli.job import TranslationJob
from anuvad.data.text_files import input_bytes
from anuvad.errors import DataError
from anuvad.inference.office import OfficeDocument, OfficeError, is_office, read_office
from anuvad.inference.subtitles import SubtitleError, Subtitles, is_subtitles, read_subtitles

BOM = "\ufeff"


def is_office_input(args: argparse.Namespace) -> bool:
    """Whether the input is an office document or subtitles: an ``--input`` with one of their
    extensions and the default ``--format auto``."""
    name = str(args.input or "")
    return args.format == "auto" and bool(name) and (is_office(name) or is_subtitles(name))


def office_usage_error(args: argparse.Namespace) -> str | None:
    """What an office or subtitle input cannot be translated with, or an office output that the
    input cannot give (None: nothing)."""
    output = str(args.output or "")
    if is_office(output) and not (
        is_office_input(args)
        and PurePosixPath(str(args.input)).suffix.lower() == PurePosixPath(output).suffix.lower()
    ):  # plain text written into "x.docx" made a file no office program opens
        wanted = PurePosixPath(output).suffix.lower()
        own = PurePosixPath(str(args.input)).suffix.lower() if is_office_input(args) else ".txt"
        return (
            f"--output {output}: a {wanted} file is written only from a {wanted} input (the "
            f"translation keeps its format); name the output {own}"
        )
    if not is_office_input(args):
        return None
    suffix = PurePosixPath(str(args.input)).suffix.lower()
    if not args.output and not is_subtitles(str(args.input)):
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


def read_office_input(path: str) -> OfficeDocument | Subtitles:
    """The office document or subtitles at ``path``.

    Raises:
        DataError: missing, a folder, or not a file of its format (naming it and the fix).
    """
    file = Path(path)
    data = input_bytes(file, "a document")
    try:
        if not is_subtitles(path):
            return read_office(data, str(file))
        return read_subtitles(data.decode("utf-8"), str(file))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{file}: line {line}: not UTF-8 text; save it as UTF-8") from None
    except (OfficeError, SubtitleError) as exc:
        raise DataError(str(exc)) from None


def translate_office_file(
    args: argparse.Namespace, job: TranslationJob, document: OfficeDocument | Subtitles
) -> None:
    """The document with its paragraphs (cues) translated, written to ``--output`` (subtitles:
    or stdout); a paragraph's likely-wrong or kept sentences and one too long to translate are
    named by its place ("word/document.xml, paragraph 12", "line 40")."""
    from anuvad.inference.alignment import word_alignment
    from anuvad.inference.markup import unit_translations

    texts, places = document.texts(), document.places()
    name = input_name(args.input)
    documents = job.documents(texts, lambda i: f"{name}, {places[i]}")
    for place, translated in zip(places, documents, strict=True):
        warn_short(place, translated.sentences)
        warn_kept(place, translated)
    if isinstance(document, Subtitles):
        bom = Path(args.input).read_bytes().startswith(BOM.encode())
        write_output(args, (BOM if bom else "") + document.translated([d.text for d in documents]))
        return
    engine = job.translator  # inline formatting placed by the model's alignment
    align = unit_translations(
        document.inline(), documents, lambda r: word_alignment(engine.attention_of(r), r.read)
    )
    write_atomic(Path(args.output), document.translated(align))


def copy_unchanged(args: argparse.Namespace) -> None:
    """A document without text to translate, written to ``--output`` (or stdout) as it is."""
    data = Path(args.input).read_bytes()
    if args.output:
        write_atomic(Path(args.output), data)
    else:
        write_output(args, data.decode("utf-8"))


__all__ = [
    "copy_unchanged",
    "is_office_input",
    "office_usage_error",
    "read_office_input",
    "translate_office_file",
]
