"""Does cutting a long sentence at its clauses help a small model? (issue 40 item 1b)

Translates the first ``--count`` NTREX-128 dev sentences longer than ``--limit`` source pieces
whole, and cut by :func:`anuvad.inference.documents.split_document` (clauses, then conjunctions,
then spaces) into parts of at most ``--limit`` pieces; prints chrF++ and the output length per
reference length of each. Greedy search, the shipped model of ``--pair``.

Usage::

    python bench/long_sentences.py --limit 48 --count 120 [--pair enhi] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sacrebleu

from anuvad.cli.serve import shipped_model
from anuvad.inference.documents import assemble, split_document
from anuvad.inference.engine import load_engine
from anuvad.inference.frontend import source_preparer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=48, help="source pieces a part may have")
    parser.add_argument("--count", type=int, default=120, help="sentences over the limit")
    parser.add_argument("--pair", default="enhi", choices=["enhi", "hien"])
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    engine = load_engine(shipped_model(pair=args.pair), threads=1)
    src_lang, tgt_lang = args.pair[:2], args.pair[2:]
    dev = Path(args.data) / "en-hi" / "dev-general"
    sources = (dev / f"ntrex128.{src_lang}").read_text(encoding="utf-8").splitlines()
    references = (dev / f"ntrex128.{tgt_lang}").read_text(encoding="utf-8").splitlines()
    tokenizer = engine.src_tokenizer
    prepare = source_preparer(engine.model_file.config.data, tokenizer)

    def pieces(text: str) -> int:
        return len(tokenizer.encode(prepare(text)))

    chosen = [i for i, s in enumerate(sources) if pieces(s) > args.limit][: args.count]
    src = [sources[i] for i in chosen]
    ref = [references[i] for i in chosen]
    greedy = engine.settings(beam_size=1, nbest=1)
    whole = [t.text for t in engine.translate(src, greedy)]
    cut = []
    for sentence in src:
        parts = split_document(sentence, src_lang, fits=lambda s: pieces(s) <= args.limit)
        outputs = [t.text for t in engine.translate([p.text for p in parts], greedy)]
        cut.append(assemble(sentence, parts, outputs))
    print(f"{len(src)} NTREX sentences over {args.limit} pieces, greedy, {args.pair}")
    for name, outputs in (("whole", whole), ("cut", cut)):
        chrf = sacrebleu.corpus_chrf(outputs, [ref], word_order=2).score
        ratio = sum(map(len, outputs)) / sum(map(len, ref))
        print(f"{name}: chrF++ {chrf:.1f}, output/reference length {ratio:.2f}")


if __name__ == "__main__":
    main()
