"""Terminology constraints measured with oracle terms (Dinu et al. 2019 style).

For each dev sentence, the oracle terms are English→Hindi dictionary entries
(``en-hi/dictionary/en-hi-combined.tsv``) whose English side occurs in the source as a term
(anuvad's glossary matching) and whose Hindi side occurs in the reference but not in the
unconstrained translation: renderings the model does not produce by itself. At most
``--terms`` per sentence, longer English terms first; stop-word-like entries (one or two
letters, or in the 300 most frequent English dictionary words) are skipped.

Prints: sentences with terms, term use rate with and without the glossary, BLEU / chrF++ of the
whole set without and with the glossary, and the decoding time of both (same process, same
batches).

    python bench/glossary.py --model data/trained_models/enhi_<...>.pt --lines 500
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from anuvad.evaluation.metrics import corpus_scores
from anuvad.inference.glossary import Glossary
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

STOP = {
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "is", "are", "was", "were",
    "be", "been", "for", "with", "by", "from", "as", "it", "this", "that", "these", "those",
    "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "your", "its", "not",
    "but", "if", "so", "do", "does", "did", "has", "have", "had", "will", "would", "can",
    "could", "may", "might", "shall", "should", "must", "there", "here", "what", "which", "who",
    "when", "where", "why", "how", "all", "any", "some", "no", "more", "most", "other", "such",
    "one", "two", "also", "than", "then", "into", "out", "up", "down", "over", "about", "after",
}  # fmt: skip


def read_lines(path: Path, count: int) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:count] if count else lines


def oracle_glossaries(
    sources: list[str], references: list[str], plain: list[str], entries: list[tuple[str, str]],
    per_sentence: int,
) -> list[Glossary | None]:  # fmt: skip
    """Per sentence, its oracle terms (None: none)."""
    by_word: dict[str, list[tuple[str, str]]] = {}
    for en, hi in entries:
        words = en.lower().split()
        if not words or len(en) <= 2 or en.lower() in STOP or len(hi.strip()) < 2:
            continue
        by_word.setdefault(words[0], []).append((en, hi.strip()))
    result: list[Glossary | None] = []
    for source, reference, output in zip(sources, references, plain, strict=True):
        source_words = {w.strip(".,;:!?\"'()").lower() for w in source.split()}
        candidates = [e for w in source_words for e in by_word.get(w, [])]
        candidates.sort(key=lambda e: (-len(e[0]), e[0]))
        chosen: list[tuple[str, str]] = []
        used_hi: set[str] = set()
        for en, hi in candidates:
            if len(chosen) == per_sentence:
                break
            wanted = hi in reference and hi not in output and hi not in used_hi
            if any(en == e for e, _ in chosen):
                continue  # one translation per term: a glossary refuses two
            if wanted and Glossary.from_pairs([(en, hi)]).matches(source):
                chosen.append((en, hi))
                used_hi.add(hi)
        result.append(Glossary.from_pairs(chosen) if chosen else None)
    return result


def term_use(
    glossaries: list[Glossary | None], sources: list[str], outputs: list[str]
) -> tuple[int, int]:
    used = total = 0
    for glossary, source, output in zip(glossaries, sources, outputs, strict=True):
        for entry in glossary.matches(source) if glossary else []:
            total += 1
            used += entry.target in output
    return used, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--set", default="en-hi/dev-general/ntrex128", help="path without .en/.hi")
    parser.add_argument("--lines", type=int, default=0, help="first N sentences (0: all)")
    parser.add_argument("--terms", type=int, default=2, help="oracle terms per sentence at most")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument(
        "--verbatim", action="store_true",
        help="both runs under the served policy (numbers, links, names copied: Verbatim)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    root = Path(args.data)
    sources = read_lines(root / f"{args.set}.en", args.lines)
    references = read_lines(root / f"{args.set}.hi", args.lines)
    entries = []
    for line in (
        (root / "en-hi/dictionary/en-hi-combined.tsv").read_text(encoding="utf-8").splitlines()
    ):
        fields = line.split("\t")
        if len(fields) >= 2:
            entries.append((fields[0], fields[1]))

    translator = Translator.from_file(args.model, device="cpu")
    settings = translator.settings(
        beam_size=args.beam_size, batch_size=args.batch_size, max_tokens=0
    )
    data = translator.model_file.config.data
    policy = Verbatim(langs=(data.src_lang, data.tgt_lang)) if args.verbatim else None
    translator.translate(sources[:32], settings)  # warm-up
    start = time.perf_counter()
    plain = [t.text for t in translator.translate(sources, settings, verbatim=policy)]
    plain_s = time.perf_counter() - start
    glossaries = oracle_glossaries(sources, references, plain, entries, args.terms)
    start = time.perf_counter()
    constrained = [
        t.text
        for t in translator.translate(sources, settings, glossary=glossaries, verbatim=policy)
    ]
    constrained_s = time.perf_counter() - start

    with_terms = sum(g is not None for g in glossaries)
    used_plain, total = term_use(glossaries, sources, plain)
    used, _ = term_use(glossaries, sources, constrained)
    a = corpus_scores(plain, references, "intl")
    b = corpus_scores(constrained, references, "intl")
    print(f"{Path(args.model).name}, {args.set} ({len(sources)} sentences), beam {args.beam_size}, "
          f"batch {args.batch_size}, {torch.get_num_threads()} threads")  # fmt: skip
    print()
    print("| | without glossary | with oracle glossary |")
    print("|---|---:|---:|")
    print(f"| sentences with terms | {with_terms} | {with_terms} |")
    rate_a, rate_b = used_plain / max(1, total), used / max(1, total)
    print(f"| term use rate ({total} terms) | {rate_a:.1%} | {rate_b:.1%} |")
    print(f"| BLEU / chrF++ (all) | {a.bleu:.1f} / {a.chrf:.1f} | {b.bleu:.1f} / {b.chrf:.1f} |")
    ratio = constrained_s / plain_s
    print(f"| decoding seconds | {plain_s:.1f} | {constrained_s:.1f} ({ratio:.2f}x) |")


if __name__ == "__main__":
    main()
