"""Three checks of issue 40 on NTREX-128 dev with a shipped model (greedy or beam 4, one thread):

* ``runs``: how often a search writes a run ("ऑटोटोटो", runs of quotes): outputs of greedy and
  beam 4 in which one to four characters repeat three times in a row (spaces removed), with
  each search's chrF++ (item 6).
* ``copying``: does copying (numbers with their signs, dates with their months, links) cost
  quality? chrF++ and BLEU (``intl``) with beam 4 and the default copying policy (item 3). Run
  it in a worktree of an older commit too (``PYTHONPATH=<it>/src``) to compare.
* ``long``: does cutting a long sentence at its clauses help? The first ``--count`` sentences
  longer than ``--limit`` source pieces, translated whole and cut by
  :func:`anuvad.inference.documents.split_document` into parts of at most ``--limit`` pieces
  (greedy): chrF++ and output length per reference length (item 1b).

Usage::

    python bench/dev_checks.py runs --count 300
    python bench/dev_checks.py copying --count 500
    python bench/dev_checks.py long --limit 48 --count 120   [--pair hien] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import sacrebleu

from anuvad.cli.serve import shipped_model
from anuvad.inference.documents import assemble, split_document
from anuvad.inference.engine import TranslationEngine, load_engine
from anuvad.inference.frontend import source_preparer
from anuvad.inference.verbatim import Verbatim

RUN = re.compile(r"(.{1,4}?)\1{2,}")


def chrf(outputs: list[str], references: list[str]) -> float:
    return float(sacrebleu.corpus_chrf(outputs, [references], word_order=2).score)


def runs(engine: TranslationEngine, src: list[str], ref: list[str], count: int) -> None:
    src, ref = src[:count], ref[:count]
    for name, beam in (("greedy", 1), ("beam 4", 4)):
        outputs = [t.text for t in engine.translate(src, engine.settings(beam_size=beam, nbest=1))]
        found = sum(bool(RUN.search(o.replace(" ", ""))) for o in outputs)
        print(
            f"{name}: {found} of {len(outputs)} outputs with a run; chrF++ {chrf(outputs, ref):.2f}"
        )


def copying(engine: TranslationEngine, src: list[str], ref: list[str], count: int) -> None:
    src, ref = src[:count], ref[:count]
    started = time.perf_counter()
    results = engine.translate(src, engine.settings(beam_size=4), verbatim=Verbatim())
    outputs = [r.text for r in results]
    bleu = sacrebleu.corpus_bleu(outputs, [ref], tokenize="intl").score
    seconds = time.perf_counter() - started
    print(f"chrF++ {chrf(outputs, ref):.2f}, BLEU {bleu:.2f}, {seconds:.0f} s")


def long(engine: TranslationEngine, src: list[str], ref: list[str], count: int, limit: int) -> None:
    tokenizer = engine.src_tokenizer
    prepare = source_preparer(engine.model_file.config.data, tokenizer)

    def pieces(text: str) -> int:
        return len(tokenizer.encode(prepare(text)))

    chosen = [i for i, s in enumerate(src) if pieces(s) > limit][:count]
    src, ref = [src[i] for i in chosen], [ref[i] for i in chosen]
    greedy = engine.settings(beam_size=1, nbest=1)
    lang = engine.model_file.config.data.src_lang
    whole = [t.text for t in engine.translate(src, greedy)]
    cut = []
    for sentence in src:
        parts = split_document(sentence, lang, fits=lambda s: pieces(s) <= limit)
        outputs = [t.text for t in engine.translate([p.text for p in parts], greedy)]
        cut.append(assemble(sentence, parts, outputs))
    print(f"{len(src)} NTREX sentences over {limit} pieces, greedy")
    for name, outputs in (("whole", whole), ("cut", cut)):
        ratio = sum(map(len, outputs)) / sum(map(len, ref))
        print(f"{name}: chrF++ {chrf(outputs, ref):.1f}, output/reference length {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check", choices=["runs", "copying", "long"])
    parser.add_argument("--count", type=int, default=300, help="sentences")
    parser.add_argument("--limit", type=int, default=48, help="long: source pieces per part")
    parser.add_argument("--pair", default="enhi", choices=["enhi", "hien"])
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    threads = 2 if args.check == "copying" else 1
    engine = load_engine(shipped_model(pair=args.pair), threads=threads)
    dev = Path(args.data) / "en-hi" / "dev-general"
    src = (dev / f"ntrex128.{args.pair[:2]}").read_text(encoding="utf-8").splitlines()
    ref = (dev / f"ntrex128.{args.pair[2:]}").read_text(encoding="utf-8").splitlines()
    if args.check == "runs":
        runs(engine, src, ref, args.count)
    elif args.check == "copying":
        copying(engine, src, ref, args.count)
    else:
        long(engine, src, ref, args.count, args.limit)


if __name__ == "__main__":
    main()
