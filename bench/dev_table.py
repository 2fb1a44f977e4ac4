"""One model on every English–Hindi dev set, per domain: the table of the model cards.

For an English→Hindi model (or, with the sides swapped automatically, Hindi→English)::

    .venv/bin/python bench/dev_table.py --model data/trained_models/hien_d256_L3_V8000_<time>.pt \\
        --beam-size 4 [--lines 500] [--json out.json]

Dev sets (under ``$ANUVAD_DATA`` or ``--data``): Hindi Visual Genome dev (captions; also its
part whose sides do not occur in Hindi Visual Genome train, which the general recipes drop as
dev overlap, so that models trained with and without those pairs compare fairly), NTREX-128
(news sentences), WMT24 (paragraphs: whole, and split into sentences with
``anuvad.inference.documents``) and newsdev2014 (news). sacreBLEU, cased, detokenized;
``tokenize=intl`` into Hindi, 13a into English; chrF++. Prints a Markdown table with the
decoding time of each set.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from anuvad.data.cleaning import overlap_key
from anuvad.evaluation.metrics import corpus_scores, default_tokenize
from anuvad.inference.documents import translate_documents
from anuvad.inference.translator import Translator

# name → (domain, source file, target file or TSV columns, split documents into sentences)
DEV_SETS: dict[str, tuple[str, str, str, bool]] = {
    "hvg-dev": ("captions", "en-hi/hvg/hindi-visual-genome-dev.txt", "5,6", False),
    "hvg-dev not in hvg-train": ("captions", "en-hi/hvg/hindi-visual-genome-dev.txt", "5,6", False),
    "ntrex128": ("news sentences", "en-hi/dev-general/ntrex128.{en,hi}", "", False),
    "wmt24 (whole paragraphs)": ("paragraphs", "en-hi/dev-general/wmt24.{en,hi}", "", False),
    "wmt24 (split into sentences)": ("paragraphs", "en-hi/dev-general/wmt24.{en,hi}", "", True),
    "newsdev2014": ("news", "en-hi/newsdev2014/newsdev2014.{en,hi}", "", False),
}


def read_dev(root: Path, spec: str, columns: str, src_lang: str) -> tuple[list[str], list[str]]:
    """(sources, references) in the model's direction."""
    if columns:
        en_col, hi_col = (int(c) for c in columns.split(","))
        rows = [line.split("\t") for line in (root / spec).read_text("utf-8").splitlines()]
        english = [row[en_col].strip() for row in rows]
        hindi = [row[hi_col].strip() for row in rows]
    else:
        english = (root / spec.replace("{en,hi}", "en")).read_text("utf-8").splitlines()
        hindi = (root / spec.replace("{en,hi}", "hi")).read_text("utf-8").splitlines()
    return (english, hindi) if src_lang == "en" else (hindi, english)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--lines", type=int, default=0, help="first N segments of each set")
    parser.add_argument("--sets", nargs="*", default=list(DEV_SETS), help="which dev sets")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--device", default="cpu", help="cpu (the product's), cuda, auto")
    parser.add_argument(
        "--no-repeat-ngram-size", type=int, default=0, help="block repeated n-grams (0 = off)"
    )
    parser.add_argument(
        "--length-penalty", type=float, help="beam search's alpha (default: the model file's)"
    )
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    translator = Translator.from_file(args.model, device=args.device)
    data = translator.model_file.config.data
    tokenize = default_tokenize(data.tgt_lang)
    root = Path(args.data)
    rows = []
    settings = translator.settings(
        beam_size=args.beam_size,
        no_repeat_ngram_size=args.no_repeat_ngram_size,
        length_penalty=args.length_penalty,
    )
    print(
        f"{args.model}: {data.src_lang} -> {data.tgt_lang}, beam {args.beam_size}, "
        f"length penalty {settings.length_penalty:g}, "
        f"no_repeat_ngram_size {args.no_repeat_ngram_size}, {tokenize}\n"
    )
    print("| dev set | domain | segments | BLEU | chrF++ | decoding s |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.sets:
        domain, spec, columns, split = DEV_SETS[name]
        sources, references = read_dev(root, spec, columns, data.src_lang)
        if name == "hvg-dev not in hvg-train":  # the pairs no recipe could have trained on
            train = "en-hi/hvg/hindi-visual-genome-train.txt"
            seen_src, seen_ref = read_dev(root, train, columns, data.src_lang)
            src_keys = {overlap_key(s) for s in seen_src}
            ref_keys = {overlap_key(r) for r in seen_ref}
            kept = [
                (s, r)
                for s, r in zip(sources, references, strict=True)
                if overlap_key(s) not in src_keys and overlap_key(r) not in ref_keys
            ]
            sources, references = [s for s, _ in kept], [r for _, r in kept]
        if args.lines:
            sources, references = sources[: args.lines], references[: args.lines]
        started = time.perf_counter()
        if split:
            results = translate_documents(
                sources,
                data.src_lang,
                lambda s: translator.translate(
                    s,
                    settings,
                ),
            )
            hypotheses = [r.text for r in results]
        else:
            hypotheses = [t.text for t in translator.translate(sources, settings)]
        seconds = time.perf_counter() - started
        scores = corpus_scores(hypotheses, references, tokenize)
        rows.append(
            {
                "set": name,
                "domain": domain,
                "segments": len(sources),
                "bleu": round(scores.bleu, 2),
                "chrf": round(scores.chrf, 2),
                "seconds": round(seconds, 1),
                "beam_size": settings.beam_size,
                "length_penalty": settings.length_penalty,
                "no_repeat_ngram_size": settings.no_repeat_ngram_size,
            }
        )
        print(
            f"| {name} | {domain} | {len(sources)} | {scores.bleu:.1f} | {scores.chrf:.1f} | "
            f"{seconds:.0f} |",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
