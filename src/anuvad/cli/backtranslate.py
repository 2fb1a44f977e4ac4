"""``anuvad backtranslate``: a thin adapter over
:func:`anuvad.inference.backtranslate.backtranslate` (resumable; shared among the workers when
started by ``torchrun``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from anuvad.cli.job import load_translator
from anuvad.cli.options import (
    EngineOptions,
    SearchOptions,
    add_engine_options,
    add_search_options,
    join_workers,
    load_in_turn,
)


def cmd_backtranslate(args: argparse.Namespace) -> int:
    """Translate monolingual files with a reverse model into synthetic pairs (resumable; shared
    among the workers when started by ``torchrun``)."""
    from tqdm import tqdm

    from anuvad.distributed import shutdown_distributed
    from anuvad.inference.backtranslate import backtranslate

    search = SearchOptions.from_args(args)
    context, options = join_workers(EngineOptions.from_args(args))
    # No confidence is reported: the reverse model a calibration names is not loaded.
    translator = load_in_turn(
        context, lambda: load_translator(options, args.model, confidence=False)
    )
    # Greedy unless asked otherwise: fast, and tagged training copes with its monotony.
    settings = search.settings(translator.decode, beam_size=search.get("beam_size") or 1)
    show_bar = not args.no_progress and context.is_main
    with tqdm(unit="line", disable=not show_bar, file=sys.stderr) as bar:

        def show(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        result = backtranslate(
            translator,
            [Path(p) for p in args.input],
            Path(args.out_prefix),
            settings=settings,
            max_lines=args.max_lines,
            chunk_lines=args.chunk_lines,
            progress=show,
            use_cache=search.use_cache,
            context=context,
        )
    shutdown_distributed(context, wait_for_all=True)
    if context.is_main:
        print(
            f"{result.written} synthetic pairs in {result.synthetic_path} / {result.real_path} "
            f"({result.read} lines read, {result.skipped} skipped as empty, "
            f"{result.resumed_from} done by an earlier run, {result.seconds:.0f} s"
            + (f", {context.world_size} workers)" if context.enabled else ")")
        )
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad backtranslate`` to the command-line parser."""
    p = add(
        "backtranslate",
        "Translate monolingual target-language text with a reverse model into synthetic "
        "training pairs (resumable).",
    )
    p.add_argument("--model", required=True, help="the reverse model (e.g. Hindi->English)")
    p.add_argument(
        "--input", required=True, nargs="+", help="monolingual files, one sentence a line (.gz ok)"
    )
    p.add_argument(
        "--out-prefix",
        required=True,
        help="writes PREFIX.<reverse target lang> (synthetic) and PREFIX.<reverse source lang>",
    )
    p.add_argument("--max-lines", type=int, default=0, help="first N lines of each input file")
    p.add_argument(
        "--chunk-lines", type=int, default=2000, help="lines per saved chunk (what a kill loses)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_engine_options(p)
    add_search_options(p)
    p.set_defaults(func=cmd_backtranslate)
