"""``anuvad translate``: a thin adapter over a translation engine
(:mod:`anuvad.inference.engine`: the PyTorch :class:`Translator` or CTranslate2).

Every input line gives one output line. A line is a document by default: it is split into
sentences, which are translated and put back in place (a model translates one sentence and
stops: a line of three sentences given whole came back as one, issue 40). Translated whole
(``--no-split-sentences``, ``--nbest``, ``--attention``), a line must be one sentence that fits
the model, or the command refuses it, as the server answers 422.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anuvad.atomic import write_atomic
from anuvad.cli.html_file import (
    html_hint,
    is_html,
    translate_html_file,
    write_output,
)
from anuvad.cli.input_checks import (
    input_name,
    refuse_long_words,
    refuse_unsplit,
    refuse_wrong_script,
    warn_kept,
    warn_short,
)
from anuvad.cli.job import (
    TranslationJob,
    load_translator,
    name_spellers,
    read_input,
    torch_threads_restored,
)
from anuvad.cli.model_choice import choose_model
from anuvad.cli.office_file import (
    copy_unchanged,
    is_office_input,
    read_office_input,
    translate_office_file,
)
from anuvad.cli.options import (
    EngineOptions,
    SearchOptions,
    add_engine_options,
    add_glossary_option,
    add_search_options,
    add_verbatim_options,
    join_workers,
    load_in_turn,
    read_glossary,
    read_verbatim,
)
from anuvad.cli.translate_checks import usage_error
from anuvad.data.text_files import InputText

if TYPE_CHECKING:
    from collections.abc import Callable

    from anuvad.inference.documents import DocumentTranslation
    from anuvad.inference.engine import TranslationEngine
    from anuvad.inference.glossary import Glossary
    from anuvad.inference.office import OfficeDocument
    from anuvad.inference.subtitles import Subtitles
    from anuvad.inference.translation import Translation


def splits_lines(args: argparse.Namespace) -> bool:
    """Whether each line is split into sentences: ``--split-sentences`` / ``--no-split-sentences``
    when given, else yes unless ``--nbest`` or ``--attention`` asks for one sentence per line."""
    if args.split_sentences is not None:
        return bool(args.split_sentences)
    return args.nbest == 1 and not args.attention


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


def _render(
    job: TranslationJob, args: argparse.Namespace, offset: int, lines: Sequence[str]
) -> list[tuple[str, dict[str, Any] | None]]:
    """Translate ``lines`` (input lines ``offset``, ``offset + 1``, ...) into what the command
    writes for each: its output text (newline included) and its attention view (``--attention``,
    else None)."""
    translator = job.translator
    if splits_lines(args):
        name = input_name(args.input)
        documents = job.documents(lines, lambda i: f"{name}, line {offset + i + 1}")
        for i, document in enumerate(documents):
            warn_short(offset + i, document.sentences)
            warn_kept(offset + i, document)
        if args.scores:
            return [
                (_scores_lines(translator, [line], [d], job.glossary), None)
                for line, d in zip(lines, documents, strict=True)
            ]
        return [(d.text + "\n", None) for d in documents]
    # A list item's or heading's marker is layout, as in a split line ("- Buy rice." lost its
    # "- " with --nbest): the model gets the item, each output gets the marker back.
    from anuvad.inference.documents import line_marker

    markers = [line_marker(line) for line in lines]
    results = job.sentences([line[len(m) :] for m, line in zip(markers, lines, strict=True)])
    for i, result in enumerate(results):
        warn_short(offset + i, [result])
    views = [
        dataclasses.asdict(translator.attention_of(r)) if args.attention else None for r in results
    ]
    if args.scores:
        texts = [
            _scores_lines(translator, [line], [r], job.glossary)
            for line, r in zip(lines, results, strict=True)
        ]
    elif args.nbest == 1:
        texts = [m + r.text + "\n" for m, r in zip(markers, results, strict=True)]
    else:  # fairseq / Moses style: sentence index ||| output ||| score
        texts = [
            "".join(f"{offset + i} ||| {m}{c.text} ||| {c.score:.4f}\n" for c in r.nbest)
            for i, (m, r) in enumerate(zip(markers, results, strict=True))
        ]
    return list(zip(texts, views, strict=True))


def _whole_because(args: argparse.Namespace) -> str:
    """The option that makes lines be translated whole, as the user wrote it."""
    if args.split_sentences is False:
        return "--no-split-sentences"
    return "--nbest" if args.nbest > 1 else "--attention"


def cmd_translate(args: argparse.Namespace) -> int:
    """Translate stdin or ``--input``, one output line per input line, into stdout or
    ``--output``; in chunks of ``--chunk-lines`` lines, shared among the workers when started by
    ``torchrun`` (rank 0 writes every line's output in input order). An HTML document is
    translated whole instead (:mod:`anuvad.cli.html_file`), and an office document paragraph
    by paragraph (:mod:`anuvad.cli.office_file`)."""
    from anuvad.inference.cpu import choose_threads

    if args.output == "-":  # as --input -: the standard stream, not a file named "-"
        args.output = None
    problem = usage_error(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    threads = choose_threads(args.threads)  # before reading: a negative value fails fast
    # the input read before the model is loaded: bad input fails fast
    office = read_office_input(args.input) if is_office_input(args) else None
    html = office is None and is_html(args)
    document: str | OfficeDocument | Subtitles | None = office
    if office is not None:
        lines = office.texts()
        source = InputText(lines, "\n")
    else:
        source = read_input(args.input, whole=html)
        lines = source.lines
        if not html and args.format == "auto" and (hint := html_hint(lines)):
            print(f"anuvad: {hint}", file=sys.stderr)
        if html:
            from anuvad.inference.markup import html_texts

            document = source.text
            lines = html_texts(source.text.removeprefix("\ufeff"))
    if document is not None and not lines:  # nothing to translate: the document as it is
        if office is not None:
            copy_unchanged(args)
        else:
            write_output(args, source.text)
        return 0
    choice = choose_model(args.model, lines)
    if choice.chosen_for is not None:
        from anuvad.server.languages import language_name

        print(
            f"anuvad: {language_name(choice.chosen_for)} input: translating with "
            f"{choice.model} (--model to choose another)",
            file=sys.stderr,
        )
    with torch_threads_restored():
        return _translate(args, lines, choice.model, threads, source, document)


def _translate(
    args: argparse.Namespace,
    lines: list[str],
    model: str,
    threads: int,
    layout: InputText,
    document: str | OfficeDocument | Subtitles | None = None,
) -> int:
    """:func:`cmd_translate` once the input is read and the model and threads are chosen; the
    output is laid out as the input (``layout``: a file saved on Windows stays CRLF, a byte
    order mark and a last line without a newline stay so); an HTML ``document`` (whose text
    runs are ``lines``) is written whole."""
    from tqdm import tqdm

    from anuvad.distributed import shutdown_distributed
    from anuvad.inference.sharding import map_chunks

    glossary = read_glossary(args.glossary)
    verbatim = read_verbatim(args)
    search = SearchOptions.from_args(args)
    split = splits_lines(args)
    context, options = join_workers(EngineOptions.from_args(args))
    translator = load_in_turn(
        context, lambda: load_translator(options, model, confidence=args.scores, threads=threads)
    )
    settings = search.settings(translator.decode, nbest=args.nbest)
    refuse_wrong_script(translator, lines, model)
    if document is not None:
        names = name_spellers(args.names, translator)
        job = TranslationJob(
            translator, settings, search.use_cache, None, glossary, False, verbatim, names
        )
        if isinstance(document, str):
            translate_html_file(args, job, document)
        else:
            translate_office_file(args, job, document)
        shutdown_distributed(context, wait_for_all=True)
        return 0
    if not split:
        refuse_unsplit(translator, lines, args.input, _whole_because(args))
    else:
        refuse_long_words(translator, lines, args.input)
    names = name_spellers(args.names, translator)
    show_bar = bool(args.input) and not args.no_progress and context.is_main
    texts: list[str] = []
    views: list[dict[str, Any] | None] = []
    with tqdm(total=len(lines), unit="line", disable=not show_bar, file=sys.stderr) as bar:
        # Sentence by sentence within rank 0's own chunk; whole rounds for the others' and for
        # documents (whose sentences are not lines).
        per_batch = None if split else bar.update
        job = TranslationJob(
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
            lambda offset, chunk: _render(job, args, offset, chunk),
            context,
            chunk_size=args.chunk_lines,
        ):
            for text, view in finished.results:
                if not args.scores:  # as the input: its byte order mark, its last line's end
                    if not texts and layout.bom:
                        text = "\ufeff" + text
                    if len(texts) == len(lines) - 1 and not layout.final_newline:
                        text = text.removesuffix("\n")
                ended = text.replace("\n", layout.newline)
                texts.append(ended)
                views.append(view)
                if not args.output:  # a Windows console's text stream adds its own \r
                    sys.stdout.write(ended if os.linesep == "\n" else text)
            if not args.output:
                sys.stdout.flush()
            bar.update(finished.done - bar.n)
    shutdown_distributed(context, wait_for_all=True)
    if not context.is_main:
        return 0
    if args.output:
        write_atomic(Path(args.output), "".join(texts).encode("utf-8"))
    if args.attention:
        Path(args.attention).write_text(json.dumps(views, ensure_ascii=False), encoding="utf-8")
    return 0


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad translate`` to the command-line parser."""
    p = add(
        "translate",
        "Translate text from stdin or a file, one output line per input line (each line split "
        "into sentences); under torchrun the workers share the lines (rank 0 writes them in "
        "order). An HTML page (.html, .htm or --format html) is translated whole, its markup "
        "kept.",
    )
    p.add_argument(
        "--model",
        help="a model file (.pt), an exported CTranslate2 folder, or a pair (enhi, hien: its "
        "newest model in data/trained_models/); default: the newest shipped model that "
        "translates from the input's language (by script)",
    )
    p.add_argument("--input", help="input file (default stdin)")
    p.add_argument(
        "--format",
        choices=("auto", "text", "html"),
        default="auto",
        help="text: one output line per input line; html: the document's text between its tags "
        "translated, its markup kept byte for byte (as the server's format html); auto (the "
        "default): html for an --input named .html or .htm, a document of the same format for "
        ".docx, .pptx, .xlsx, .odt, .odp and .epub (with --output) and .srt and .vtt subtitles, "
        "else text",
    )
    p.add_argument("--output", help="output file (default, or -: stdout)")
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
    p.add_argument(
        "--split-sentences",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="split each line into sentences, translate them and put the translations back in "
        "place (the default, except with --nbest or --attention); --no-split-sentences "
        "translates each line as one sentence and refuses a line of several",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads (default 0: the cores the machine's load leaves free, at least 1; "
        "OMP_NUM_THREADS when set)",
    )
    add_engine_options(p)
    add_search_options(p)
    add_glossary_option(p)
    add_verbatim_options(p)
    p.add_argument(
        "--names",
        choices=("off", "model", "xlit"),
        default="off",
        help="English->Hindi: a name the first translation misses (a run of capitalised words) "
        "is required in Devanagari and its sentence translated again: spelled as the model "
        "spells the name alone (model) or by AI4Bharat's IndicXlit (xlit: pip install "
        "'anuvad[names]'; on NTREX-128 dev sentences with names chrF++ 20.1 -> 23.5, model "
        "21.2); torch engine",
    )
    p.set_defaults(func=cmd_translate)
