"""What ``anuvad translate`` cannot be given: options that do not go together, outputs that
cannot be written or would overwrite the input. Checked before anything is read or loaded."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from anuvad.cli.html_file import html_usage_error
from anuvad.cli.input_checks import unwritable
from anuvad.cli.office_file import office_usage_error

__all__ = ["usage_error"]


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the options taken together (None: nothing)."""
    if problem := html_usage_error(args) or office_usage_error(args):
        return problem
    if args.scores and args.nbest > 1:
        return "--scores writes one JSON object per line; use --nbest 1"
    if args.split_sentences and (args.nbest > 1 or args.attention):
        return (
            "--split-sentences gives one translation per line, assembled from its sentences; "
            "--nbest and --attention need one sentence per line (drop --split-sentences)"
        )
    if args.chunk_lines < 1:
        return f"--chunk-lines must be at least 1, got {args.chunk_lines}"
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not args.input:
        return "under torchrun every worker reads the input: give it as --input FILE, not on stdin"
    for option, path, replaced in (
        ("--output", args.output, True),  # write_atomic
        ("--attention", args.attention, False),  # written in place
    ):
        if path and (problem := unwritable(Path(path), replaced)):
            return f"{option} {path}: {problem}"
        if path and args.input and Path(path).resolve() == Path(args.input).resolve():
            return (
                f"{option} {path}: is the --input file (the source would be lost); write elsewhere"
            )
    return None
