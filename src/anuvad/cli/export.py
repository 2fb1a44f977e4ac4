"""``anuvad export``: rewrite a model file for release (16-bit weights) or another engine
(a CTranslate2 model folder, a Hugging Face Marian folder, a folder that translates in the
browser)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from anuvad.inference.ct2 import QUANTIZATIONS


def _size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def cmd_export(args: argparse.Namespace) -> int:
    """Write the exported model (file or folder) and say where it went and how large it is."""
    before_mb = _size_mb(Path(args.model))
    if args.overrides and args.format != "anuvad":
        print(
            f"error: search settings ({' '.join(args.overrides)}) change an anuvad model file; "
            f"export the changed file with --format {args.format} afterwards",
            file=sys.stderr,
        )
        return 2
    if args.format == "huggingface":
        from anuvad.interop.exporter import export_huggingface

        folder = export_huggingface(args.model, args.out, force=args.force)
        print(
            f"wrote {folder}/ (Hugging Face Marian: MarianMTModel.from_pretrained and "
            f"pipeline('translation') load it; {_size_mb(folder):.1f} MB, model card README.md)"
        )
        return 0
    if args.format == "ctranslate2":
        from anuvad.inference.ct2.export import export_ctranslate2

        folder = export_ctranslate2(
            args.model, args.out, quantization=args.quantization, force=args.force
        )
        print(
            f"wrote {folder}/ (CTranslate2, {args.quantization} weights, "
            f"{_size_mb(folder):.1f} MB; was {before_mb:.1f} MB)"
        )
        return 0
    if args.format == "web":
        from anuvad.web.export import export_web

        folder, check = export_web(args.model, args.out, args.dtype or "float32", args.force)
        print(
            f"wrote {folder}/ (web: {args.dtype or 'float32'} ONNX graphs, JavaScript runtime; "
            f"{_size_mb(folder):.1f} MB; log-probabilities within {check.max_abs_diff:.1e} of "
            f"the torch model, best token agreeing at {check.argmax_agree}/{check.steps} steps)"
        )
        return 0
    from anuvad.checkpoint import export_model_file

    # Only search settings to change: the weights keep the file's storage dtype (rounding
    # nothing); otherwise a release file, float16 by default.
    dtype = args.dtype or (None if args.overrides else "float16")
    if dtype == "int8":
        print("error: --dtype int8 is for --format web only", file=sys.stderr)
        return 2
    out = export_model_file(args.model, args.out, dtype=dtype, decode=args.overrides)
    changed = f"; search settings {', '.join(args.overrides)}" if args.overrides else ""
    stored = f"{dtype} weights" if dtype else "weights stored as before"
    print(f"wrote {out} ({stored}, {_size_mb(out):.1f} MB; was {before_mb:.1f} MB{changed})")
    stale = sorted(Path(out).parent.glob(f"{Path(out).stem}*.confidence.json"))
    if args.overrides and stale:
        print(
            f"note: {', '.join(p.name for p in stale)} was fitted on the old file (its SHA-256 "
            "no longer matches): refit it with anuvad calibrate (make calibrate for the shipped "
            "models), as for any model that names this one as its reverse model",
            file=sys.stderr,
        )
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad export`` to the CLI."""
    p = add(
        "export",
        "Rewrite a model file with 16-bit weights (a release file) or other search settings, or "
        "export it to CTranslate2, Hugging Face or the web.",
    )
    p.add_argument("model", help="a model file (.pt)")
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="decode.SETTING=VALUE",
        help="anuvad format: change a search setting the file carries (what translate and serve "
        "use unless told otherwise), e.g. decode.length_penalty=1.5 decode.beam_size=5; the "
        "weights stay as they are",
    )
    p.add_argument(
        "--out",
        required=True,
        help="anuvad: the file to write (the model file itself to change it in place), or a "
        "folder (then named <pair>_d<D>_L<layers>_V<vocab>_<time>.pt); ctranslate2: the model "
        "folder to write",
    )
    p.add_argument(
        "--format",
        default="anuvad",
        choices=["anuvad", "ctranslate2", "huggingface", "web"],
        help="anuvad (a .pt model file; default), ctranslate2 (a folder for "
        "anuvad translate/serve --engine ctranslate2, or CTranslate2 itself), huggingface "
        "(a Marian folder for transformers, with its model card) or web (a folder that "
        "translates in the browser: ONNX graphs and a JavaScript runtime)",
    )
    p.add_argument(
        "--dtype",
        default=None,
        choices=["float16", "bfloat16", "float32", "int8"],
        help="anuvad format: storage dtype of the weights (restored to float32 on load; "
        "default float16); web format: float32 (default: the model's own numbers, stored as "
        "float16 where that is exact, as for the shipped models), float16 (every weight "
        "rounded) or int8; with only search settings to change, the file's own",
    )
    p.add_argument(
        "--quantization",
        default="float32",
        choices=QUANTIZATIONS,
        help="ctranslate2 format: weight type (default float32; int8 is 8-bit weights with "
        "float32 activations on the CPU)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="ctranslate2, huggingface and web formats: replace an existing folder",
    )
    p.set_defaults(func=cmd_export)
