"""``anuvad translate`` and ``anuvad evaluate``: thin adapters over a translation engine
(:mod:`anuvad.inference.engine`: the PyTorch :class:`Translator` or CTranslate2) and
:mod:`anuvad.evaluation.metrics` (``evaluate --task parsing`` is :mod:`anuvad.cli.parsing`'s)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anuvad.config import DecodeConfig
    from anuvad.inference.engine import TranslationEngine
    from anuvad.inference.translation import Translation


def _add_search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")
    p.add_argument(
        "--engine",
        choices=("torch", "ctranslate2"),
        default="torch",
        help="torch (anuvad's search) or ctranslate2 (--model: an exported folder, or a .pt "
        "exported once into the user cache)",
    )
    p.add_argument(
        "--compute-type",
        default="default",
        help="ctranslate2 only: int8, int8_float32, bfloat16, float32, ... (default: as exported)",
    )
    p.add_argument("--beam-size", type=int, help="beam size K; 1 = greedy (default: the model's)")
    p.add_argument(
        "--length-penalty", type=float, help="alpha of ((5+|Y|)/6)^alpha (default: the model's)"
    )
    p.add_argument("--max-len-a", type=float, help="output limit a*source_length + b: a")
    p.add_argument("--max-len-b", type=int, help="output limit a*source_length + b: b")
    p.add_argument("--batch-size", type=int, default=0, help="sentences per batch")
    p.add_argument(
        "--batch-tokens", type=int, default=0, help="batch by source tokens instead of sentences"
    )
    p.add_argument("--no-cache", action="store_true", help="decode without the key/value cache")
    p.add_argument(
        "--no-repeat-ngram-size",
        type=int,
        metavar="N",
        help="never write the same N target pieces twice in one output (stops loops on "
        "unfamiliar input; 0 = off; default: the model's)",
    )
    p.add_argument(
        "--early-stopping",
        choices=["finished", "bound"],
        help="finished (default): a beam stops once K hypotheses have ended; bound: it goes on "
        "while an unfinished one could still win (the paper code's rule; torch engine)",
    )


def read_input_lines(path: str | None) -> list[str]:
    """Input lines (a file, or stdin for None), each line checked for UTF-8 (see
    :func:`anuvad.data.corpora.read_input_lines`)."""
    from anuvad.data.corpora import read_input_lines as read

    return read(path)


def _add_split_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--split-sentences",
        action="store_true",
        help="each input line is a document (a paragraph, or several sentences): split it "
        "into sentences, translate them and put the translations back in place (one output "
        "line per input line)",
    )


def _translator(args: argparse.Namespace) -> TranslationEngine:
    from anuvad.inference.engine import load_engine

    translator = load_engine(
        args.model,
        engine=args.engine,
        device=args.device,
        compute_type=getattr(args, "compute_type", "default"),
    )
    changes = {"batch_size": args.batch_size or None, "max_tokens": args.batch_tokens or None}
    translator.decode = dataclasses.replace(
        translator.decode, **{k: v for k, v in changes.items() if v is not None}
    )
    return translator


def search_settings(
    translator: TranslationEngine, args: argparse.Namespace, nbest: int = 1
) -> DecodeConfig:
    """The command line's search options over the model's decode settings, checked once.

    Raises:
        ConfigError: an invalid option (e.g. ``--beam-size 0``), named.
    """
    return translator.settings(
        beam_size=args.beam_size,
        nbest=nbest,
        length_penalty=args.length_penalty,
        max_len_a=args.max_len_a,
        max_len_b=args.max_len_b,
        early_stopping=getattr(args, "early_stopping", None),
        no_repeat_ngram_size=getattr(args, "no_repeat_ngram_size", None),
    )


def _translate(
    translator: TranslationEngine, lines: Sequence[str], args: argparse.Namespace, nbest: int = 1
) -> list[Translation]:
    """Translate with the command line's search settings; a progress bar for files."""
    show = bool(getattr(args, "input", None) or getattr(args, "source", None))
    show = show and not getattr(args, "no_progress", False)
    from tqdm import tqdm

    settings = search_settings(translator, args, nbest)
    with tqdm(total=len(lines), unit="sent", disable=not show, file=sys.stderr) as bar:
        return translator.translate(
            lines, settings, use_cache=not args.no_cache, progress=bar.update
        )


def _translate_documents(
    translator: TranslationEngine, lines: Sequence[str], args: argparse.Namespace
) -> list[str]:
    """``--split-sentences``: each line is a document; its sentences are translated (all lines'
    in one batched pass) and put back in place, so the output keeps one line per input line."""
    from anuvad.inference.documents import translate_documents
    from anuvad.inference.engine import source_fits

    lang = translator.model_file.config.data.src_lang
    results = translate_documents(
        lines,
        lang,
        lambda sentences: _translate(translator, sentences, args),
        fits=source_fits(translator),
    )
    return [r.text for r in results]


def _write_attention(
    translator: TranslationEngine, results: Sequence[Translation], path: str
) -> None:
    views = [dataclasses.asdict(translator.attention_of(r)) for r in results]
    Path(path).write_text(json.dumps(views, ensure_ascii=False), encoding="utf-8")


def cmd_translate(args: argparse.Namespace) -> int:
    """Translate stdin or ``--input``, one sentence per line, into stdout or ``--output``."""
    if args.nbest < 1:
        print("error: --nbest must be at least 1", file=sys.stderr)
        return 2
    if args.split_sentences and (args.nbest > 1 or args.attention):
        print(
            "error: --split-sentences gives one translation per line, assembled from its "
            "sentences; --nbest and --attention need one sentence per line (drop "
            "--split-sentences)",
            file=sys.stderr,
        )
        return 2
    if args.beam_size is not None and args.beam_size < 1:
        print("error: --beam-size must be at least 1 (1 = greedy search)", file=sys.stderr)
        return 2
    lines = read_input_lines(args.input)  # before loading the model: bad input fails fast
    translator = _translator(args)
    if args.split_sentences:
        text = "".join(line + "\n" for line in _translate_documents(translator, lines, args))
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    results = _translate(translator, lines, args, nbest=args.nbest)
    if args.nbest == 1:
        text = "".join(r.text + "\n" for r in results)
    else:  # fairseq / Moses style: sentence index ||| output ||| score
        text = "".join(
            f"{i} ||| {c.text} ||| {c.score:.4f}\n" for i, r in enumerate(results) for c in r.nbest
        )
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.attention:
        _write_attention(translator, results, args.attention)
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score hypotheses (given, or translated with ``--model``) against references."""
    if args.task == "parsing":
        try:
            from anuvad.cli.parsing import run_parsing_evaluation
        except ImportError as exc:
            print(
                f"error: --task parsing needs anuvad.cli.parsing, which cannot be imported "
                f"({exc}); this installation has no parsing support",
                file=sys.stderr,
            )
            return 2
        code: int = run_parsing_evaluation(args)
        return code
    return _evaluate_translation(args)


def _evaluate_translation(args: argparse.Namespace) -> int:
    from anuvad.evaluation.metrics import default_tokenize, evaluate_translations

    if args.beam_size is not None and args.beam_size < 1:
        print("error: --beam-size must be at least 1 (1 = greedy search)", file=sys.stderr)
        return 2
    references = read_input_lines(args.references)
    settings: dict[str, Any] = {}
    tgt_lang: str | None = None
    if args.hypotheses:
        hypotheses = read_input_lines(args.hypotheses)
    elif args.model and args.source:
        translator = _translator(args)
        tgt_lang = translator.model_file.config.data.tgt_lang
        sources = read_input_lines(args.source)
        if args.split_sentences:
            hypotheses = _translate_documents(translator, sources, args)
        else:
            hypotheses = [r.text for r in _translate(translator, sources, args)]
        used = search_settings(translator, args)
        settings = {
            "model": str(args.model),
            **{
                name: getattr(used, name)
                for name in ("beam_size", "length_penalty", "max_len_a", "max_len_b")
            },
        }
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


def cmd_backtranslate(args: argparse.Namespace) -> int:
    """Translate monolingual files with a reverse model into synthetic pairs (resumable)."""
    from tqdm import tqdm

    from anuvad.inference.backtranslate import backtranslate

    if args.beam_size is not None and args.beam_size < 1:
        print("error: --beam-size must be at least 1 (1 = greedy)", file=sys.stderr)
        return 2
    translator = _translator(args)
    with tqdm(unit="line", disable=args.no_progress, file=sys.stderr) as bar:

        def show(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        result = backtranslate(
            translator,
            [Path(p) for p in args.input],
            Path(args.out_prefix),
            settings=translator.settings(
                beam_size=args.beam_size or 1,
                no_repeat_ngram_size=args.no_repeat_ngram_size,
            ),
            max_lines=args.max_lines,
            chunk_lines=args.chunk_lines,
            progress=show,
        )
    print(
        f"{result.written} synthetic pairs in {result.synthetic_path} / {result.real_path} "
        f"({result.read} lines read, {result.skipped} skipped as empty, "
        f"{result.resumed_from} done by an earlier run, {result.seconds:.0f} s)"
    )
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad translate``, ``evaluate`` and ``backtranslate`` to the command-line parser."""
    p = add(
        "backtranslate",
        "Translate monolingual target-language text with a reverse model into synthetic "
        "training pairs (resumable).",
    )
    p.add_argument("--model", required=True, help="the reverse model (e.g. Hindi->English)")
    p.add_argument(
        "--input", required=True, nargs="+", help="monolingual files, one sentence a line (.gz ok)"
    )
    p.add_argument(
        "--out-prefix",
        required=True,
        help="writes PREFIX.<reverse target lang> (synthetic) and PREFIX.<reverse source lang>",
    )
    p.add_argument("--max-lines", type=int, default=0, help="first N lines of each input file")
    p.add_argument(
        "--chunk-lines", type=int, default=2000, help="lines per saved chunk (what a kill loses)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_search_args(p)
    p.set_defaults(func=cmd_backtranslate)

    p = add("translate", "Translate sentences (one per line) from stdin or a file.")
    p.add_argument(
        "--model", required=True, help="a model file (.pt), or an exported CTranslate2 folder"
    )
    p.add_argument("--input", help="input file (default stdin)")
    p.add_argument("--output", help="output file (default stdout)")
    p.add_argument(
        "--nbest", type=int, default=1, help="outputs per sentence ('i ||| text ||| score')"
    )
    p.add_argument("--attention", metavar="FILE", help="write attention matrices as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_split_arg(p)
    _add_search_args(p)
    p.set_defaults(func=cmd_translate)

    p = add("evaluate", "Score translations (sacreBLEU BLEU, chrF++, the paper's BLEU) or parses.")
    p.add_argument("--task", choices=("translation", "parsing"), default="translation")
    p.add_argument("--hypotheses", help="system outputs, one per line")
    p.add_argument("--model", help="translate --source with this model file instead")
    p.add_argument("--source", help="source sentences for --model, one per line")
    p.add_argument("--references", required=True, help="references, one per line")
    p.add_argument(
        "--tokenize", help="sacreBLEU tokenizer: 13a, intl, ... (default intl for Hindi, else 13a)"
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
    _add_split_arg(p)
    _add_search_args(p)
    p.set_defaults(func=cmd_evaluate)
