"""``anuvad import``: a Hugging Face Marian (OPUS-MT and the like), a Marian release zip (a
file, a folder or a URL) or an M2M100 / NLLB-200 model → an anuvad model file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def cmd_import(args: argparse.Namespace) -> int:
    """Import, then say what was written and what it holds."""
    from anuvad.cli.data import DownloadProgress
    from anuvad.data.language_tokens import parse_pairs
    from anuvad.errors import AnuvadError
    from anuvad.interop.importer import import_model

    shown = DownloadProgress()  # a release URL's download, on one stderr line
    unfinished = False

    def progress(done: int, total: int | None) -> None:
        nonlocal unfinished
        shown(done, total)
        unfinished = done != total

    try:
        imported = import_model(
            args.source,
            args.out,
            src_lang=args.src_lang,
            tgt_lang=args.tgt_lang,
            revision=args.revision,
            pairs=parse_pairs(args.pairs) if args.pairs else None,
            progress=progress,
        )
    except AnuvadError:
        if unfinished:  # the error goes on a line of its own, not after the byte count
            print(file=sys.stderr)
        raise
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
        "Import a Hugging Face Marian model (e.g. Helsinki-NLP/opus-mt-en-hi), a Marian release "
        "zip (OPUS-MT / Tatoeba-MT; a file, a folder or its URL) or an M2M100 / NLLB-200 model "
        "(e.g. facebook/nllb-200-distilled-600M, with --pairs) as an anuvad model file.",
    )
    p.add_argument(
        "source",
        help="a hub model id (downloaded; HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE are "
        "respected) or a local folder in Hugging Face's layout (Marian: config.json, "
        "model.safetensors or pytorch_model.bin, source.spm, target.spm, vocab.json; M2M100 / "
        "NLLB: config.json, the weights, sentencepiece.bpe.model and tokenizer.json or "
        "vocab.json), or a Marian release as OPUS-MT / Tatoeba-MT publish it: the .zip or its "
        "folder (decoder.yml, the .npz, *.vocab.yml, source.spm, target.spm), or its http(s) URL "
        "(e.g. https://object.pouta.csc.fi/Tatoeba-MT-models/eng-hin/opus+bt-2021-04-10.zip: "
        "downloaded into the user cache, $ANUVAD_CACHE or ~/.cache/anuvad, resumed if cut)",
    )
    p.add_argument(
        "--out",
        help="the model file to write, or a folder for the default name (default: "
        "data/trained_models/<pair>_d<D>_L<layers>_V<vocab>_<time>.pt)",
    )
    p.add_argument(
        "--src-lang",
        help="source language code (default: from an opus-mt-xx-yy name, or a release's README)",
    )
    p.add_argument(
        "--tgt-lang",
        help="target language code (default: from an opus-mt-xx-yy name, or a release's README); "
        "for a multilingual-target release (>>hin<< tokens) the file then puts that language's "
        "token before each sentence itself",
    )
    p.add_argument(
        "--pairs",
        help="M2M100 / NLLB or a multilingual-target Marian release: the language pairs the file "
        "offers, SRC-TGT comma-separated, the default first (e.g. eng_Latn-hin_Deva,hin_Deva-"
        "eng_Latn; en-hi for M2M100; eng-hin,eng-mar for a release with >>hin<< tokens)",
    )
    p.add_argument("--revision", help="hub revision: a branch, tag or commit (default: main)")
    p.set_defaults(func=cmd_import)
