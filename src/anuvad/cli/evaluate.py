"""``anuvad evaluate``: a thin adapter over :mod:`anuvad.evaluation.metrics` (hypotheses given,
or translated here with ``--model``); ``--task parsing`` is :mod:`anuvad.cli.parsing`'s."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anuvad.cli.input_checks import unwritable
from anuvad.cli.job import TranslationJob, load_translator, read_input_lines
from anuvad.cli.options import (
    EngineOptions,
    SearchOptions,
    add_engine_options,
    add_glossary_option,
    add_search_options,
    read_glossary,
)
from anuvad.config import BLEU_TOKENIZERS


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score hypotheses (given, or translated with ``--model``) against references."""
    if args.task == "parsing":
        from anuvad.cli.parsing import run_parsing_evaluation

        code: int = run_parsing_evaluation(args)
        return code
    return _evaluate_translation(args)


def _translate_sources(args: argparse.Namespace) -> tuple[list[str], dict[str, Any], str]:
    """``--model`` translates ``--source``: (hypotheses, the settings used, target language)."""
    from tqdm import tqdm

    glossary = read_glossary(args.glossary)
    search = SearchOptions.from_args(args)
    translator = load_translator(EngineOptions.from_args(args), args.model, confidence=False)
    used = search.settings(translator.decode)
    sources = read_input_lines(args.source)
    total = None if args.split_sentences else len(sources)  # documents: sentences unknown
    with tqdm(total=total, unit="sent", disable=args.no_progress, file=sys.stderr) as bar:
        job = TranslationJob(translator, used, search.use_cache, bar.update, glossary)
        if args.split_sentences:
            hypotheses = [d.text for d in job.documents(sources)]
        else:
            hypotheses = [r.text for r in job.sentences(sources)]
    settings = {
        "model": str(args.model),
        **{
            name: getattr(used, name)
            for name in ("beam_size", "length_penalty", "max_len_a", "max_len_b")
        },
    }
    return hypotheses, settings, translator.model_file.config.data.tgt_lang


def _evaluate_translation(args: argparse.Namespace) -> int:
    from anuvad.evaluation.metrics import default_tokenize, evaluate_translations

    if args.write_hypotheses and (problem := unwritable(Path(args.write_hypotheses), False)):
        print(f"error: --write-hypotheses {args.write_hypotheses}: {problem}", file=sys.stderr)
        return 2  # before translating, not after
    references = read_input_lines(args.references)
    settings: dict[str, Any] = {}
    tgt_lang: str | None = None
    if args.hypotheses:
        hypotheses = read_input_lines(args.hypotheses)
    elif args.model and args.source:
        hypotheses, settings, tgt_lang = _translate_sources(args)
    else:
        print("error: give --hypotheses FILE, or --model MODEL --source FILE", file=sys.stderr)
        return 2
    if len(hypotheses) != len(references):
        print(
            f"error: {len(hypotheses)} hypotheses but {len(references)} references in "
            f"{args.references}; they must be aligned line by line",
            file=sys.stderr,
        )
        return 2
    if args.write_hypotheses:
        Path(args.write_hypotheses).write_text(
            "".join(h + "\n" for h in hypotheses), encoding="utf-8"
        )
    tokenize = args.tokenize or default_tokenize(args.tgt_lang or tgt_lang)
    paper_lang = (args.tgt_lang or tgt_lang or "de") if args.paper_bleu else None
    result = evaluate_translations(hypotheses, references, tokenize, paper_lang, settings)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(result.to_table())
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad evaluate`` to the command-line parser."""
    p = add("evaluate", "Score translations (sacreBLEU BLEU, chrF++, the paper's BLEU) or parses.")
    p.add_argument("--task", choices=("translation", "parsing"), default="translation")
    p.add_argument("--hypotheses", help="system outputs, one per line")
    p.add_argument("--model", help="translate --source with this model file instead")
    p.add_argument("--source", help="source sentences for --model, one per line")
    p.add_argument("--references", required=True, help="references, one per line")
    p.add_argument(
        "--tokenize",
        choices=BLEU_TOKENIZERS,
        help="sacreBLEU tokenizer (default intl for Hindi, else 13a)",
    )
    p.add_argument("--tgt-lang", help="target language when not known from --model (e.g. hi, de)")
    p.add_argument(
        "--paper-bleu", action="store_true", help="also the paper's tokenized, compound-split BLEU"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--write-hypotheses", metavar="FILE", help="write the hypotheses here")
    p.add_argument(
        "--tags",
        choices=("own", "gold"),
        default="own",
        help="parsing: which tags decide what is punctuation: the parse's own (EVALB as is; a "
        "mistagged comma makes the sentence a 'length unmatch' error) or the gold tags (tags "
        "are not scored; for parsers without a tagger)",
    )
    p.add_argument(
        "--unconstrained",
        action="store_true",
        help="parsing with --model: search any token sequence and repair ill-formed trees "
        "afterwards (default: only well-formed trees with one leaf per word)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--split-sentences",
        action="store_true",
        help="each source line is a document (a paragraph, or several sentences): split it "
        "into sentences, translate them and put the translations back in place (one "
        "hypothesis per line); without it a line is one sentence, as in test sets",
    )
    add_engine_options(p)
    add_search_options(p)
    add_glossary_option(p)
    p.set_defaults(func=cmd_evaluate)
