"""``anuvad translate`` of an HTML document: the text between its tags translated as the
server's ``format: "html"`` translates it (each text run a document: split into sentences and
put back), its markup byte for byte, written whole (not line by line: a line of markup is not
a sentence). Chosen by ``--format html``, or by an ``--input`` named ``.html`` / ``.htm``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from anuvad.atomic import write_atomic
from anuvad.cli.input_checks import input_name
from anuvad.cli.job import TranslationJob
from anuvad.errors import InputTooLongError


def is_html(args: argparse.Namespace) -> bool:
    """Whether the input is an HTML document: ``--format html``, or an ``--input`` named
    ``.html`` / ``.htm`` with the default ``--format auto``."""
    if args.format != "auto":
        return bool(args.format == "html")
    return bool(args.input) and str(args.input).lower().endswith((".html", ".htm"))


def html_usage_error(args: argparse.Namespace) -> str | None:
    """What an HTML input cannot be translated with (None: nothing)."""
    if is_html(args) and (
        args.nbest > 1
        or args.attention
        or args.scores
        or args.split_sentences is False
        or int(os.environ.get("WORLD_SIZE", "1")) > 1
    ):
        return (
            "an HTML document is translated whole (the text between its tags; the markup kept): "
            "--nbest, --attention, --scores, --no-split-sentences and torchrun need plain text "
            "(--format text translates the file line by line, markup and all)"
        )
    return None


def write_output(args: argparse.Namespace, text: str) -> None:
    """``text`` into ``--output`` (atomically) or stdout (a Windows console adds its own \r)."""
    if args.output:
        write_atomic(Path(args.output), text.encode("utf-8"))
        return
    sys.stdout.write(text if os.linesep == "\n" else text.replace("\r\n", "\n"))
    sys.stdout.flush()


def translate_html_file(args: argparse.Namespace, job: TranslationJob, document: str) -> None:
    """The HTML ``document`` with its text runs translated as the server translates them (each
    a document: split into sentences and put back), its markup as it was."""
    from anuvad.inference.markup import html_texts, translate_html

    runs = html_texts(document)  # the same runs as cmd_translate's, in order
    try:
        translated = [d.text for d in job.documents(runs)]
    except InputTooLongError as exc:
        if exc.document is None:
            raise
        where = f"{input_name(args.input)}, text run {exc.document + 1} (between its tags)"
        raise InputTooLongError(f"{where}: {exc.detail or exc}") from None
    write_output(args, translate_html(document, lambda given: translated))


__all__ = ["html_usage_error", "is_html", "translate_html_file", "write_output"]
