"""``anuvad translate`` of an HTML document: the text between its tags translated as the
server's ``format: "html"`` translates it (each unit, a text run or runs joined by inline
elements, a document: split into sentences and put back; inline tags placed by the model's word
alignment), its markup byte for byte, written whole (not line by line: a line of markup is not
a sentence). Chosen by ``--format html``, or by an ``--input`` named ``.html`` / ``.htm``.

As the server's ``translate_file`` does, a byte-order mark stays in front, and a page that
declares another character set than UTF-8 gets one (which overrides the declaration).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from anuvad.atomic import write_atomic
from anuvad.cli.input_checks import input_name, warn_kept, warn_short
from anuvad.cli.job import TranslationJob

BOM = "\ufeff"


def is_html(args: argparse.Namespace) -> bool:
    """Whether the input is an HTML document: ``--format html``, or an ``--input`` named
    ``.html`` / ``.htm`` with the default ``--format auto``."""
    if args.format != "auto":
        return bool(args.format == "html")
    return bool(args.input) and str(args.input).lower().endswith((".html", ".htm"))


# Tags of an HTML page or fragment, as text of a plain-text input.
_HTML_TAG = re.compile(
    r"</?(?:p|div|span|b|i|u|em|strong|h[1-6]|a|ul|ol|li|br|hr|table|tr|td|th|html|body|head"
    r"|title|section|article|header|footer|nav|img)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)


def html_hint(lines: list[str]) -> str | None:
    """What to tell a user whose plain-text input holds HTML tags (None: it holds none): as
    text, the tags are the model's to translate like words ("<p>Visit <b>Delhi</b></p>" came
    back as "* आज सुबह 20 बजे …")."""
    for number, line in enumerate(lines, start=1):
        if tag := _HTML_TAG.search(line):
            return (
                f"line {number} holds an HTML tag ({tag.group()[:40]}); it is translated as "
                "plain text, tags and all: give --format html (or name the file .html) to "
                "translate the text between the tags and keep the markup"
            )
    return None


def html_usage_error(args: argparse.Namespace) -> str | None:
    """What an HTML input cannot be translated with, naming the options given (None:
    nothing)."""
    if not is_html(args) or not (given := plain_text_options(args)):
        return None
    return (
        f"an HTML document is translated whole (the text between its tags; the markup kept), "
        f"and {' and '.join(given)} need{'s' if len(given) == 1 else ''} plain text: drop "
        f"{'it' if len(given) == 1 else 'them'}, or give --format text to translate the file "
        "line by line, markup and all"
    )


def plain_text_options(args: argparse.Namespace) -> list[str]:
    """The options given that only a plain-text input can be translated with (a document,
    HTML or office, is translated whole)."""
    return [
        option
        for option, used in (
            ("--nbest", args.nbest > 1),
            ("--attention", bool(args.attention)),
            ("--scores", args.scores),
            ("--no-split-sentences", args.split_sentences is False),
            ("torchrun", int(os.environ.get("WORLD_SIZE", "1")) > 1),
        )
        if used
    ]


def write_output(args: argparse.Namespace, text: str) -> None:
    """``text`` into ``--output`` (atomically) or stdout, as UTF-8 bytes where stdout has a
    buffer (byte for byte on any platform: no console line endings, no code page)."""
    if args.output:
        write_atomic(Path(args.output), text.encode("utf-8"))
        return
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a test's StringIO
        sys.stdout.write(text)
    else:
        buffer.write(text.encode("utf-8"))
        buffer.flush()


def translate_html_file(args: argparse.Namespace, job: TranslationJob, document: str) -> None:
    """The HTML ``document`` with its text runs translated as the server translates them, its
    markup as it was, written to ``--output`` or stdout; a run's likely-wrong or kept
    sentences and a run too long to translate are named by the line where the run begins."""
    from anuvad.inference.alignment import word_alignment
    from anuvad.inference.markup import (
        declares_other_charset,
        html_units,
        run_lines,
        translate_html,
        unit_translations,
    )

    bom = document.startswith(BOM)
    document = document.removeprefix(BOM)  # never part of a run's text
    units, lines = html_units(document), run_lines(document)
    runs = [unit.text for unit in units]
    if args.format == "auto":
        print(
            f"anuvad: translating {input_name(args.input)} as HTML (the text between its tags); "
            "--format text translates it line by line",
            file=sys.stderr,
        )
    name = input_name(args.input)
    documents = job.documents(runs, lambda i: f"{name}, line {lines[i]} (a text run)")
    for line, translated in zip(lines, documents, strict=True):
        warn_short(line - 1, translated.sentences)
        warn_kept(line - 1, translated)
    engine = job.translator
    inline = [unit.block is not None for unit in units]
    placed = unit_translations(
        inline, documents, lambda r: word_alignment(engine.attention_of(r), r.read)
    )
    tgt_lang = engine.model_file.config.data.tgt_lang
    out = translate_html(document, lambda given: placed, tgt_lang)
    write_output(args, (BOM if bom or declares_other_charset(document) else "") + out)


__all__ = [
    "html_usage_error",
    "is_html",
    "plain_text_options",
    "translate_html_file",
    "write_output",
]
