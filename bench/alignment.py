"""How well the cross-attention alignment puts inline markup on the right word
(anuvad.inference.alignment, used to place HTML's <b>, <a>, ... in a translation).

Gold links come from a bilingual dictionary, only where they are unambiguous: a source word
whose dictionary translations match exactly one word of the model's translation, and that
target word matching no other source word of the sentence. For each such link the alignment
is right when the target word's aligned source word is that source word. And as markup around
the source word would be placed (anuvad.inference.inline: the target words aligned to it, on
one stretch): "exact" when the stretch is the target word alone, "on it" when it holds it.
Compared: the attention of each decoder layer, of all layers, and word order alone (the
fallback).

    .venv/bin/python bench/alignment.py --model data/trained_models/enhi_....pt \\
        --src $ANUVAD_DATA/en-hi/dev-general/ntrex128.en \\
        --lexicon $ANUVAD_DATA/en-hi/dictionary/muse-en-hi.tsv --sentences 200
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import torch

import anuvad.inference.alignment as alignment
from anuvad.inference.translator import Translator

_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


def _word(text: str) -> str:
    return _PUNCT.sub("", text).lower().replace("।", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--src", required=True, help="source sentences, one per line")
    parser.add_argument("--lexicon", required=True, help="source<TAB>target per line")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--swap", action="store_true", help="the lexicon is target<TAB>source")
    args = parser.parse_args()
    torch.set_num_threads(1)
    lexicon: dict[str, set[str]] = defaultdict(set)
    for line in Path(args.lexicon).read_text(encoding="utf-8").splitlines():
        src, _, tgt = line.partition("\t")
        if args.swap:
            src, tgt = tgt, src
        if tgt:
            lexicon[src.strip().lower()].add(tgt.strip().lower())
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    settings = translator.settings(beam_size=args.beam_size)
    sources = Path(args.src).read_text(encoding="utf-8").splitlines()[: args.sentences]
    variants = {"layer 1": (0,), "layer 2": (1,), "layer 3": (2,), "all layers": (0, 1, 2)}
    right = dict.fromkeys([*variants, "layer 3, the next step's row", "word order"], 0)
    exact = dict.fromkeys(right, 0)
    on_it = dict.fromkeys(right, 0)
    links = unmatched = 0
    start = time.perf_counter()
    for source in sources:
        (result,) = translator.translate([source], settings)
        view = translator.attention_of(result)
        src_words = [_word(w) for w in source.split()]
        tgt_words = [_word(w) for w in result.text.split()]
        gold: list[tuple[int, int]] = []
        owners: dict[int, list[int]] = defaultdict(list)
        for i, word in enumerate(src_words):
            found = [j for j, t in enumerate(tgt_words) if t and t in lexicon.get(word, ())]
            if len(found) == 1:
                gold.append((i, found[0]))
            for j in found:
                owners[j].append(i)
        gold = [(i, j) for i, j in gold if owners[j] == [i]]
        if not gold:
            continue
        found_any = False
        for name, layers in variants.items():
            alignment.LAYERS = layers
            aligned = alignment.word_alignment(view)
            if aligned is None:
                unmatched += 1 if name == "layer 1" else 0
                continue
            found_any = True
            right[name] += sum(aligned[j] == i for i, j in gold)
            _count_stretches(aligned, gold, name, exact, on_it)
        if found_any:
            alignment.LAYERS = (2,)
            shifted = dataclasses.replace(
                view,
                cross_attention=[
                    [head[1:] + head[-1:] for head in layer] for layer in view.cross_attention
                ],
            )
            aligned = alignment.word_alignment(shifted)
            if aligned is not None:
                right["layer 3, the next step's row"] += sum(aligned[j] == i for i, j in gold)
                _count_stretches(aligned, gold, "layer 3, the next step's row", exact, on_it)
            order = alignment.diagonal(len(src_words), len(tgt_words))
            right["word order"] += sum(order[j] == i for i, j in gold)
            _count_stretches(order, gold, "word order", exact, on_it)
            links += len(gold)
    elapsed = time.perf_counter() - start
    print(f"{len(sources)} sentences, {links} dictionary links, {unmatched} sentences whose "
          f"pieces were not their words; {elapsed:.0f} s")  # fmt: skip
    print("| alignment | links right | markup on the word alone | markup on it |")
    print("|---|---:|---:|---:|")
    for name, count in right.items():
        shares = [f"{c / max(1, links):.1%}" for c in (count, exact[name], on_it[name])]
        print(f"| {name} | {' | '.join(shares)} |")


def _count_stretches(
    aligned: Sequence[int],
    gold: list[tuple[int, int]],
    name: str,
    exact: dict[str, int],
    on_it: dict[str, int],
) -> None:
    """Markup around source word i placed as inline.py places it: the target words aligned to
    i, their largest group (words at most one apart), the words between taken in."""
    for i, j in gold:
        where = [k for k, a in enumerate(aligned) if a == i]
        if not where:
            continue
        groups = [[where[0]]]
        for k in where[1:]:
            if k - groups[-1][-1] <= 2:
                groups[-1].append(k)
            else:
                groups.append([k])
        kept = max(groups, key=len)
        stretch = range(kept[0], kept[-1] + 1)
        exact[name] += list(stretch) == [j]
        on_it[name] += j in stretch


if __name__ == "__main__":
    main()
