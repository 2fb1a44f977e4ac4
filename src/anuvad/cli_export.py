"""``anuvad export``: rewrite a model file for release (16-bit weights) or another engine."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def cmd_export(args: argparse.Namespace) -> int:
    """Write the exported model file and say where it went and how large it is."""
    from anuvad.checkpoint import export_model_file

    out = export_model_file(args.model, args.out, dtype=args.dtype)
    size_mb = out.stat().st_size / 1e6
    before_mb = Path(args.model).stat().st_size / 1e6
    print(f"wrote {out} ({args.dtype} weights, {size_mb:.1f} MB; was {before_mb:.1f} MB)")
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad export`` to the CLI."""
    p = add("export", "Rewrite a model file with 16-bit weights (a release file).")
    p.add_argument("model", help="a model file (.pt)")
    p.add_argument(
        "--out",
        required=True,
        help="the file to write, or a folder (then named <pair>_d<D>_L<layers>_V<vocab>_<time>.pt)",
    )
    p.add_argument(
        "--dtype",
        default="float16",
        choices=["float16", "bfloat16", "float32"],
        help="storage dtype of the weights (restored to float32 on load; default float16)",
    )
    p.set_defaults(func=cmd_export)
