"""``anuvad calibrate``: fit a model's sentence confidence on dev sets and report how it ranks."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from anuvad.cli.options import SearchOptions, add_device_option, add_search_options
from anuvad.errors import DataError


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Translate the dev sets (or read ``--rows``), fit on their first halves, report on the
    second halves, write the confidence model beside the model file."""
    from anuvad.data.download import sha256_of
    from anuvad.data.language_tokens import parse_pairs
    from anuvad.decode_config import DecodeConfig
    from anuvad.evaluation.calibration import calibrate, report_table
    from anuvad.inference.confidence import calibration_path
    from anuvad.inference.confidence_fit import (
        calibration_rows,
        choose_features,
        load_rows,
        read_dev_set,
        save_rows,
    )

    if not args.dev and not args.rows:
        print("error: give dev sets (--dev DOMAIN=SRC,REF) or --rows FILE", file=sys.stderr)
        return 2
    dev_sets = [read_dev_set(spec) for spec in args.dev]  # bad input fails before the model loads
    pair = parse_pairs(args.pair)[0] if args.pair else None
    # The beam the rows were translated with (--rows: as --beam-size says, else the default).
    beam = SearchOptions.from_args(args).get("beam_size") or DecodeConfig().beam_size
    if args.rows:
        rows = load_rows(args.rows)
        pair_name = rows_pair_name(args.model, pair)
    else:
        from tqdm import tqdm

        from anuvad.inference.translator import Translator

        translator = Translator.from_file(
            args.model, device=args.device, confidence=False, pair=pair
        )
        translator.all_features = True
        # A multilingual file's pair (also its default) writes STEM.en-hi.confidence.json,
        # the file a translator of that pair loads.
        pair_name = translator.pair_name
        if args.reverse_model:
            translator.use_reverse(args.reverse_model)
        search = SearchOptions.from_args(args)
        settings = search.settings(translator.decode)
        beam = settings.beam_size
        rows = []
        for dev in dev_sets:
            with tqdm(
                total=len(dev.sources), unit="sent", desc=f"{dev.domain}: {dev.name}",
                disable=args.no_progress, file=sys.stderr,
            ) as bar:  # fmt: skip
                rows.extend(
                    calibration_rows(translator, dev, settings, bar.update, search.use_cache)
                )
        if args.save_rows:
            save_rows(rows, args.save_rows)
    features = choose_features(rows, args.features)
    try:
        model = calibrate(
            rows, features, args.good_chrf, args.l2, args.threshold, balance=not args.no_balance
        )
    except ValueError as exc:  # too few sentences, or only good (or only bad) ones
        raise DataError(
            f"cannot fit the confidence on these dev sets: {exc}. Give more dev sentences, with "
            f"both good and bad translations (sentence chrF++ on either side of --good-chrf "
            f"{args.good_chrf:g}); the rows are kept with --save-rows"
        ) from exc
    model.agreement_candidates = max(0, beam - 1)  # the beam's other candidates, when fitting
    model.model_sha256 = sha256_of(Path(args.model))
    if args.reverse_model:
        model.reverse_model = os.path.relpath(args.reverse_model, Path(args.model).parent)
        model.reverse_sha256 = sha256_of(Path(args.reverse_model))
    out = Path(args.out) if args.out else calibration_path(args.model, pair_name)
    model.save(out)
    if args.json:
        print(json.dumps(model.report, indent=1))
    else:
        print(report_table(model))
        print(f"\nwrote {out}")
    return 0


def rows_pair_name(model: str, pair: tuple[str, str] | None) -> str | None:
    """The pair name (``"en-hi"``; None: a one-pair model) of ``model``'s pair ``pair`` (None:
    its default), as its translator would name it, read from the file without building it.

    Raises:
        ConfigError: ``pair`` is not one the file offers.
        CheckpointError: the file cannot be read.
    """
    from anuvad.checkpoint import model_info
    from anuvad.data.language_tokens import choose_pair, language_tokens_of

    info = model_info(model)
    data = info["config"]["data"]
    chosen = choose_pair(info["metadata"], (data["src_lang"], data["tgt_lang"]), pair)
    languages = language_tokens_of(info["metadata"])
    return None if chosen is None or languages is None else languages.pair_name(chosen)


def register(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``anuvad calibrate`` to the command-line parser."""
    p = add(
        "calibrate",
        "Fit a model's sentence confidence (P(chrF++ >= 30)) on dev sets: first halves fit, "
        "second halves report.",
    )
    p.add_argument("--model", required=True, help="the model file (.pt) to calibrate")
    p.add_argument(
        "--dev",
        action="append",
        default=[],
        metavar="DOMAIN=SRC,REF",
        help="a dev set of one domain: two aligned files, or FILE.tsv@I,J (source column I, "
        "reference column J); repeat for more sets and domains",
    )
    p.add_argument(
        "--reverse-model",
        metavar="PT",
        help="a target->source model (e.g. the shipped Hindi->English one): how well each output "
        "explains its source becomes a feature; the server then loads it beside the model",
    )
    p.add_argument(
        "--pair",
        metavar="SRC-TGT",
        help="which pair of a multilingual model file (an imported NLLB / M2M100 model; e.g. en-hi "
        "or eng_Latn-hin_Deva) to calibrate; written to STEM.en-hi.confidence.json, which that "
        "pair loads when served. --reverse-model may be the same file: its reverse pair then "
        "gives the reverse features without a second copy in memory",
    )
    p.add_argument("--out", help="where to write (default: beside the model: STEM.confidence.json)")
    p.add_argument("--save-rows", metavar="FILE", help="also write each sentence's features here")
    p.add_argument("--rows", metavar="FILE", help="fit on rows --save-rows wrote (no translating)")
    p.add_argument(
        "--good-chrf", type=float, default=30.0, help="sentence chrF++ that counts as good (30)"
    )
    p.add_argument(
        "--threshold", type=float, default=0.5, help="confidence below this flags 'likely wrong'"
    )
    p.add_argument(
        "--features",
        default="output",
        help="output (default: every signal of the source and the output alone that the "
        "search records: the model's token log-probabilities and entropies, lengths and word "
        "splitting, the reverse model's log-probabilities; the same output then gets the same "
        "confidence at any beam size), certainty (only mean entropy, mean token "
        "log-probability and the reverse model's), all (also the cross-attention's coverage, "
        "which costs a forced pass, and the beam's agreement, which depends on the beam), or "
        "a comma list",
    )
    p.add_argument(
        "--no-balance",
        action="store_true",
        help="fit with every sentence weighing 1 (default: each domain's good and bad sentences "
        "weigh the same, then the probabilities are rescaled to the real rates)",
    )
    p.add_argument("--l2", type=float, default=1e-2, help="weight penalty of the logistic model")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_device_option(p)
    add_search_options(p)
    p.set_defaults(func=cmd_calibrate)
