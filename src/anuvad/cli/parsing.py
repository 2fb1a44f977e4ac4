"""``anuvad parse`` and ``anuvad evaluate --task parsing``: constituency parsing (section 6.3).

Thin adapters: read sentences or trees, call :mod:`anuvad.parsing.trees` /
:mod:`anuvad.parsing.evalb`, print trees or scores.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from anuvad.config import CorpusConfig
from anuvad.errors import DataError
from anuvad.parsing.evalb import (
    COLLINS_PARAMS,
    EvalbResult,
    fill_placeholder_tags,
    score_corpus,
    take_gold_tags,
)

if TYPE_CHECKING:
    from anuvad.checkpoint import ModelFile
    from anuvad.parsing.constraint import TreeConstraint

from anuvad.cli.options import SearchOptions, add_device_option, add_search_options
from anuvad.parsing.trees import (
    ParsedSentence,
    Tree,
    parse_sentences,
    read_treebank,
    read_trees,
    remove_traces,
)


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad parse`` to the command-line parser."""
    p = add("parse", "Parse sentences (space-separated words, one per line) into PTB trees.")
    p.add_argument("--model", required=True, help="a parsing model file (.pt)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--input", help="sentences file (default stdin)")
    source.add_argument(
        "--treebank", help="parse the sentences of these trees instead (.mrg folder, glob, file)"
    )
    p.add_argument("--output", help="trees file, one per line (default stdout)")
    p.add_argument(
        "--unconstrained",
        action="store_true",
        help="let the search write any token sequence and repair ill-formed trees afterwards "
        "(default: only well-formed trees with one leaf per word are searched)",
    )
    add_device_option(p)
    add_search_options(p)
    p.set_defaults(func=cmd_parse)


def parse_with_model(
    model: str,
    device: str,
    search: SearchOptions,
    unconstrained: bool,
    sentences: Sequence[str],
) -> list[ParsedSentence]:
    """Parse ``sentences`` with the parsing model file ``model``: its decode settings under the
    command line's ``search`` options, constrained to well-formed trees unless
    ``unconstrained``."""
    from anuvad.checkpoint import load_model
    from anuvad.device import resolve_device
    from anuvad.inference.cpu import accelerate
    from anuvad.inference.translator import Translator

    model_file = load_model(model, device=resolve_device(device))
    # Settings travel in the DecodeConfig: the Translator reads it for every search it runs.
    decode = search.settings(model_file.config.decode)
    accelerate(model_file.model)
    translator = Translator(model_file, decode)
    leaves = _tree_leaves(model_file.config.data.train)
    constraint = None if unconstrained else tree_constraint(model_file)

    def translate(texts: Sequence[str]) -> list[str]:
        found = translator.translate(texts, constraint=constraint, use_cache=search.use_cache)
        return [t.text for t in found]

    return parse_sentences(translate, sentences, leaves)


def tree_constraint(model_file: ModelFile) -> TreeConstraint | None:
    """The well-formed-tree constraint for a parsing model, or None (with a warning) when its
    source vocabulary is not word-level, so that source tokens do not count words."""
    from anuvad.parsing.constraint import TreeConstraint

    if model_file.config.data.tokenizer.model_type != "word":
        print(
            "warning: the model's source vocabulary is not word-level; searching without the "
            "tree constraint (outputs are repaired instead)",
            file=sys.stderr,
        )
        return None
    vocab = model_file.tgt_tokenizer.vocab_size
    return TreeConstraint(model_file.tgt_tokenizer.id_to_piece(list(range(vocab))))


def _tree_leaves(corpora: Sequence[CorpusConfig]) -> str:
    """The leaf mode the model was trained with (its first ``ptb`` corpus), else ``xx``."""
    for corpus in corpora:
        if corpus.format == "ptb":
            return corpus.tree_leaves
    return "xx"


def _repair_summary(parsed: Sequence[ParsedSentence]) -> str:
    repaired = sum(p.repaired for p in parsed)
    kinds: Counter[str] = Counter()
    for p in parsed:
        kinds.update(p.repairs)
    detail = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    share = 100.0 * repaired / len(parsed) if parsed else 0.0
    return (
        f"{repaired} of {len(parsed)} outputs ({share:.1f}%) needed repair to become well-formed"
        + (f" ({detail})" if detail else "")
    )


def _gold_sentences(trees: Sequence[Tree]) -> list[str]:
    """The words of each gold tree without its traces."""
    sentences = []
    for tree in trees:
        pruned = remove_traces(tree)
        sentences.append(" ".join(pruned.words()) if pruned else "")
    return sentences


def cmd_parse(args: argparse.Namespace) -> int:
    """``anuvad parse``: sentences in, one tree per line out; repairs reported on stderr."""
    if args.treebank:
        sentences = _gold_sentences(read_treebank(args.treebank))
    elif args.input:
        sentences = Path(args.input).read_text(encoding="utf-8").splitlines()
    else:
        sentences = sys.stdin.read().splitlines()
    search = SearchOptions.from_args(args)
    parsed = parse_with_model(args.model, args.device, search, args.unconstrained, sentences)
    text = "".join(p.tree.to_string() + "\n" for p in parsed)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"parsed {len(parsed)} sentences; {_repair_summary(parsed)}", file=sys.stderr)
    return 0


def _read_hypotheses(path: str) -> list[Tree | None]:
    """One tree per line; a line that is not one tree is None (an error sentence, as EVALB)."""
    trees: list[Tree | None] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            found = read_trees(line, f"{path} line {number}")
        except DataError:
            found = []
        trees.append(found[0] if len(found) == 1 else None)
    return trees


def run_parsing_evaluation(args: argparse.Namespace) -> int:
    """``anuvad evaluate --task parsing``: EVALB (COLLINS.prm) bracket scores.

    ``args`` holds ``references`` (gold trees), ``json`` (bool) and either ``hypotheses`` (a file
    of trees, one per line) or ``model`` (a parsing model; it parses ``source``, a sentences file,
    or the gold trees' own sentences when ``source`` is None).

    Returns:
        0, or 2 when neither hypotheses nor a model is given or the counts differ.
    """
    # A .mrg folder, a glob or a file (.mrg, or one tree per line): the reader takes them all.
    golds = read_treebank(args.references)
    parsed: list[ParsedSentence] | None = None
    if args.hypotheses:
        tests = _read_hypotheses(args.hypotheses)
    elif args.model:
        if args.source:
            sentences = Path(args.source).read_text(encoding="utf-8").splitlines()
        else:
            sentences = _gold_sentences(golds)
        search = SearchOptions.from_args(args)
        parsed = parse_with_model(args.model, args.device, search, args.unconstrained, sentences)
        tests = [p.tree for p in parsed]
        if args.write_hypotheses:
            trees = "".join(p.tree.to_string() + "\n" for p in parsed)
            Path(args.write_hypotheses).write_text(trees, encoding="utf-8")
    else:
        print("error: give --hypotheses FILE, or --model FILE to parse first", file=sys.stderr)
        return 2
    if len(tests) != len(golds):
        print(
            f"error: {len(tests)} parsed sentences but {len(golds)} gold trees in "
            f"{args.references}; they must be aligned one to one",
            file=sys.stderr,
        )
        return 2
    gold_tags = args.tags == "gold"
    right = compared = 0
    for test, gold in zip(tests, golds, strict=True):
        if test is None:
            continue
        if gold_tags:
            correct, words = take_gold_tags(test, gold)
            right, compared = right + correct, compared + words
        else:
            fill_placeholder_tags(test, gold)
    result = score_corpus(golds, tests, COLLINS_PARAMS)
    tag_accuracy = round(100 * right / compared, 2) if compared else None
    _print_result(args, result, parsed, tag_accuracy)
    return 0


def _print_result(
    args: argparse.Namespace,
    result: EvalbResult,
    parsed: list[ParsedSentence] | None,
    tag_accuracy: float | None,
) -> None:
    tags = args.tags
    if args.json:
        data: dict[str, object] = {"task": "parsing", "params": "COLLINS.prm", "tags": tags}
        data.update(result.to_dict())
        if tag_accuracy is not None:
            data["tag_accuracy"] = tag_accuracy
        if parsed is not None:
            data["repaired"] = sum(p.repaired for p in parsed)
            data["repaired_share"] = round(sum(p.repaired for p in parsed) / max(len(parsed), 1), 4)
        print(json.dumps(data, indent=2))
        return
    for name, counts in (("all", result.all), (f"len<={result.cutoff_len}", result.short)):
        print(
            f"{name:>8}: F1 {counts.f1:6.2f}  P {counts.precision:6.2f}  R {counts.recall:6.2f}  "
            f"({counts.matched} matched, {counts.gold} gold, {counts.test} test brackets; "
            f"{counts.sentences} sentences, {counts.error_sentences} errors, "
            f"{counts.skipped_sentences} skipped)"
        )
    if tags == "gold":
        known = (
            "" if tag_accuracy is None else f"{tag_accuracy:.2f} % of the parses' tags were right"
        )
        print(
            f"scored with the gold tags (punctuation by gold tags){'; ' + known if known else ''}"
        )
    if parsed is not None:
        print(_repair_summary(parsed))
