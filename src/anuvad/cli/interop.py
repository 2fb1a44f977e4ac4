"""``anuvad import``: a Hugging Face Marian model (OPUS-MT and the like) → an anuvad model file."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def cmd_import(args: argparse.Namespace) -> int:
    """Import, then say what was written and what it holds."""
    from anuvad.interop.importer import import_marian

    imported = import_marian(
        args.source,
        args.out,
        src_lang=args.src_lang,
        tgt_lang=args.tgt_lang,
        revision=args.revision,
    )
    print(
        f"wrote {imported.path} ({imported.src_lang}->{imported.tgt_lang}, "
        f"{imported.parameters / 1e6:.1f} M parameters, from {imported.source}); try: "
        f"anuvad translate --model {imported.path}"
    )
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad import`` to the CLI."""
    p = add(
        "import",
        "Import a Hugging Face Marian model (e.g. Helsinki-NLP/opus-mt-en-hi) as an anuvad model "
        "file.",
    )
    p.add_argument(
        "source",
        help="a hub model id (downloaded; HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE are "
        "respected) or a local folder in Hugging Face's Marian layout (config.json, "
        "model.safetensors or pytorch_model.bin, source.spm, target.spm, vocab.json)",
    )
    p.add_argument(
        "--out",
        help="the model file to write, or a folder for the default name (default: "
        "data/trained_models/<pair>_d<D>_L<layers>_V<vocab>_<time>.pt)",
    )
    p.add_argument("--src-lang", help="source language code (default: from an opus-mt-xx-yy name)")
    p.add_argument("--tgt-lang", help="target language code (default: from an opus-mt-xx-yy name)")
    p.add_argument("--revision", help="hub revision: a branch, tag or commit (default: main)")
    p.set_defaults(func=cmd_import)
