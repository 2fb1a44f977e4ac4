"""``anuvad <command>``: parse the arguments, hand them to the command's module, turn a named
error into one line on stderr and exit status 2.

Only the ``cli`` package prints and chooses exit codes (this module and one module per command
group: translate, evaluate, serve, data, calibrate, export, parsing); the library logs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from anuvad import __version__
from anuvad.cli import backtranslate as cli_backtranslate
from anuvad.cli import calibrate as cli_calibrate
from anuvad.cli import data as cli_data
from anuvad.cli import evaluate as cli_evaluate
from anuvad.cli import export as cli_export
from anuvad.cli import interop as cli_interop
from anuvad.cli import parsing as cli_parsing
from anuvad.cli import serve as cli_serve
from anuvad.cli import translate as cli_translate
from anuvad.errors import AnuvadError

logger = logging.getLogger("anuvad")

EXAMPLES = {
    "prepare": "anuvad prepare --config configs/multi30k_en_de.yaml",
    "train": "anuvad train --config configs/multi30k_en_de.yaml train.max_minutes=30",
    "average": "anuvad average --run-dir runs/wmt14_en_de_base --last 5 --out base_avg5.pt",
    "translate": (
        "echo 'The train is late. It will come at 8 pm.' | anuvad translate  (the shipped "
        "model of the text's language)\n  anuvad translate --model runs/multi30k_en_de/model.pt "
        "--input val.en --output val.hyp --beam-size 4"
    ),
    "evaluate": (
        "anuvad evaluate --model runs/multi30k_en_de/model.pt --source val.en --references val.de"
    ),
    "info": "anuvad info runs/multi30k_en_de/model.pt",
    "demo": "anuvad demo --steps 800",
    "serve": "anuvad serve --port 8000  (the shipped models)\n  anuvad serve --model MODEL.pt",
    "data": "anuvad data download hvg  (or: anuvad data list; anuvad data pack --config C --out P)",
    "export": "anuvad export runs/enhi_d256_L3/model.pt --dtype float16 --out data/trained_models/"
    "\n  anuvad export MODEL.pt --out MODEL.pt decode.length_penalty=1.5"
    "\n  anuvad export MODEL.pt --format huggingface --out enhi-marian/",
    "import": "anuvad import Helsinki-NLP/opus-mt-en-hi --out data/opus/opus-mt-en-hi.pt",
    "backtranslate": (
        "anuvad backtranslate --model HI_EN_MODEL.pt "
        "--input mono.hi.gz --out-prefix data/synthetic/bt"
    ),
    "calibrate": (
        "anuvad calibrate --model MODEL.pt --dev captions=dev.en,dev.hi "
        "--dev general=news.en,news.hi"
    ),
    "parse": "echo 'The dog barks .' | anuvad parse --model runs/ptb_parsing_cpu/model.pt",
}


def _add_config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="a YAML config, e.g. configs/tiny.yaml")
    parser.add_argument(
        "overrides", nargs="*", help="key.sub=value settings applied after the file"
    )


def cmd_prepare(args: argparse.Namespace) -> int:
    from anuvad.config import load_config
    from anuvad.data.prepare import prepare_data
    from anuvad.training.launch import default_data_dir
    from anuvad.training.warm_start import init_tokenizers

    config = load_config(args.config, args.overrides)
    out = Path(args.out) if args.out else default_data_dir(config)
    given = init_tokenizers(config.train.init_from) if config.train.init_from else None
    prepared = prepare_data(config, out, given)
    print(
        f"prepared {len(prepared.train)} training and {len(prepared.valid)} dev pairs in {out} "
        f"(vocabularies: source {prepared.src_tokenizer.vocab_size}, "
        f"target {prepared.tgt_tokenizer.vocab_size})"
    )
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from anuvad.config import load_config
    from anuvad.training.launch import (
        default_data_dir,
        default_run_dir,
        resume_settings,
        run_training,
    )

    if args.resume:
        run_dir = Path(args.resume)
        config, stored_data_dir = resume_settings(run_dir, args.overrides)
        data_dir = Path(args.data) if args.data else stored_data_dir or default_data_dir(config)
    else:
        if not args.config:
            print("error: give --config FILE (or --resume RUN_DIR)", file=sys.stderr)
            return 2
        config = load_config(args.config, args.overrides)
        data_dir = Path(args.data) if args.data else default_data_dir(config)
        run_dir = Path(args.run_dir) if args.run_dir else default_run_dir(config)
    result = run_training(
        config, data_dir, run_dir, resume=bool(args.resume), show_progress=not args.no_progress
    )
    if result.model_path is None:  # not rank 0 of a DDP job
        return 0
    scores = ", ".join(f"{k} {v:.2f}" for k, v in result.valid.items())
    print(
        f"trained {result.steps} steps in {result.seconds / 60:.1f} min; final train loss "
        f"{result.train_loss:.3f}; {scores or 'no dev set'}\nmodel: {result.model_path}"
    )
    return 0


def cmd_average(args: argparse.Namespace) -> int:
    from anuvad.training.soup import average_model_files, is_model_file
    from anuvad.training.state import average_into_model_file, list_checkpoints

    if args.checkpoints:
        paths = [Path(p) for p in args.checkpoints]
    elif not args.run_dir:
        print("error: give checkpoint files or --run-dir RUN_DIR", file=sys.stderr)
        return 2
    elif args.last < 1:
        print(f"error: --last must be at least 1, got {args.last}", file=sys.stderr)
        return 2
    else:
        paths = list_checkpoints(Path(args.run_dir))[-args.last :]
        if not paths:
            print(f"error: {args.run_dir} has no checkpoints", file=sys.stderr)
            return 2
    found = {p: is_model_file(p) for p in paths if p.is_file()} if args.checkpoints else {}
    kinds = set(found.values()) if args.checkpoints else {False}
    if len(kinds) > 1:
        models = ", ".join(str(p) for p, model in found.items() if model)
        others = ", ".join(str(p) for p, model in found.items() if not model)
        print(
            f"error: {models} are model files but {others} not (training checkpoints, or not "
            "complete PyTorch files: truncated?); give model files (a model soup) or "
            "checkpoints of one run, not both",
            file=sys.stderr,
        )
        return 2
    if kinds == {True}:  # model files: a model soup
        out = average_model_files(paths, Path(args.out))
        print(f"averaged {len(paths)} model files ({', '.join(p.name for p in paths)}) into {out}")
        return 0
    out = average_into_model_file(paths, Path(args.out))
    print(f"averaged {len(paths)} checkpoints ({paths[0].name} .. {paths[-1].name}) into {out}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from anuvad.checkpoint import model_info

    info = model_info(args.model)
    if args.json:
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    m = info["config"]["model"]
    print(f"model file:   {args.model}")
    print(f"name:         {info['config']['name']}")
    data = info["config"]["data"]
    print(f"pair:         {data['src_lang']} -> {data['tgt_lang']}")
    print(
        f"architecture: d_model {m['d_model']}, {m['num_heads']} heads, d_ff {m['d_ff']}, "
        f"{m['num_encoder_layers']}+{m['num_decoder_layers']} layers, {m['norm_position']}-LN, "
        f"{m['positional_encoding']} positions"
    )
    print(f"parameters:   {info['num_parameters']:,}")
    print(
        f"vocabulary:   source {info['src_vocab_size']}, target {info['tgt_vocab_size']}"
        f"{' (joint, shared embeddings)' if m['share_source_embedding'] else ''}"
    )
    print(f"anuvad:       {info['anuvad_version']} (written {info['created']})")
    for key, value in info["metadata"].items():
        print(f"  {key}: {value}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from anuvad.config import load_config
    from anuvad.data.prepare import prepare_data
    from anuvad.data.synthetic import reversal_config, reversal_pairs
    from anuvad.inference.translator import Translator
    from anuvad.training.trainer import Trainer

    # A fixed number of updates (about 45 s on 2 idle cores) so that the result does not depend
    # on what else the machine is doing; the time limit is only a safety net.
    config = load_config(
        args.config, [f"train.max_steps={args.steps}", f"train.max_minutes={args.minutes}"]
    )
    work = Path(args.work_dir)
    config = reversal_config(config, work / "corpus")
    print(f"anuvad {__version__} demo: a tiny Transformer learns to reverse digit strings.")
    prepared = prepare_data(config, work / "prepared")
    run_dir = work / "run"
    if run_dir.is_dir():  # the demo's own scratch run: each demo starts over
        print(f"replacing the previous demo run in {run_dir}")
        shutil.rmtree(run_dir)
    result = Trainer(config, prepared, run_dir).train(show_progress=True)

    assert result.model_path is not None  # a single process is rank 0
    translator = Translator.from_file(result.model_path, device="cpu")
    examples = [src for src, _ in reversal_pairs(8, seed=2026)]
    outputs = translator.translate_text(examples)
    print(f"\ntrained {result.steps} steps in {result.seconds:.0f} s; model: {result.model_path}")
    correct = 0
    for src, out in zip(examples, outputs, strict=True):
        ok = out == src[::-1]
        correct += ok
        print(f"  {src:>12} -> {out:<12} {'ok' if ok else 'expected ' + src[::-1]}")
    print(f"{correct}/{len(examples)} reversed exactly; dev {result.valid}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``anuvad`` argument parser with one sub-command per job."""
    parser = argparse.ArgumentParser(
        prog="anuvad", description="Transformer machine translation (Vaswani et al., 2017)."
    )
    parser.add_argument("--version", action="version", version=f"anuvad {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            description=f"{help_text}\n\nexample:\n  {EXAMPLES[name]}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = add("prepare", "Train the SentencePiece tokenizers, clean and encode the data, cache it.")
    _add_config_args(p)
    p.add_argument("--out", help="output folder (default data/prepared/<config name>)")
    p.set_defaults(func=cmd_prepare)

    p = add("train", "Train a model from a config (prepares the data first when needed).")
    p.add_argument("--config", help="a YAML config, e.g. configs/tiny.yaml")
    p.add_argument("overrides", nargs="*", help="key.sub=value settings applied after the file")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last checkpoint")
    p.add_argument("--data", help="prepared data folder (default data/prepared/<config name>)")
    p.add_argument("--run-dir", help="run folder (default runs/<config name>)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train)

    p = add(
        "average",
        "Average training checkpoints into one model file (section 6.1), or model files of one "
        "shape and tokenizers (a model soup: a model and its continuation, say).",
    )
    p.add_argument(
        "checkpoints",
        nargs="*",
        help="checkpoint files (default: the run's last N), or two or more model files",
    )
    p.add_argument("--run-dir", help="run folder whose last N checkpoints to average")
    p.add_argument("--last", type=int, default=5, help="how many to average (5 base, 20 big)")
    p.add_argument("--out", required=True, help="the model file to write")
    p.set_defaults(func=cmd_average)

    p = add("info", "Show a model file's config, parameter count, vocabulary and metadata.")
    p.add_argument("model", help="a model file (.pt)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_info)

    p = add("demo", "Train the tiny preset on a built-in digit-reversal task and translate.")
    p.add_argument("--steps", type=int, default=800, help="training updates (default 800)")
    p.add_argument("--minutes", type=float, default=5.0, help="time limit (default 5)")
    p.add_argument("--config", default="configs/tiny.yaml", help="preset (default: tiny)")
    p.add_argument("--work-dir", default="data/demo", help="where data and the run go")
    p.set_defaults(func=cmd_demo)

    cli_export.register(add)
    cli_interop.register(add)
    cli_serve.register(add)
    cli_data.register(add)
    cli_translate.register(add)
    cli_evaluate.register(add)
    cli_backtranslate.register(add)
    cli_parsing.register(add)
    cli_calibrate.register(add)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``anuvad`` console script."""
    parser = build_parser()
    # key=value overrides may come anywhere, also after options (argparse alone would only
    # take them before the first option).
    args, extra = parser.parse_known_args(argv)
    overrides = [item for item in extra if "=" in item and not item.startswith("-")]
    unknown = [item for item in extra if item not in overrides]
    if unknown or (overrides and not hasattr(args, "overrides")):
        parser.error(f"unrecognized arguments: {' '.join(unknown or overrides)}")
    if overrides:
        args.overrides = [*args.overrides, *overrides]
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    return _end_worker(_run(args))


def _run(args: argparse.Namespace) -> int:
    """The command's exit status, errors reported on stderr."""
    started = time.monotonic()
    try:
        code: int = args.func(args)
    except AnuvadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `anuvad data list | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the final flush at exit cannot fail
        return 141  # 128 + SIGPIPE, as a shell reports it
    logger.debug("%s took %.1f s", args.command, time.monotonic() - started)
    return code


def _end_worker(code: int) -> int:
    """``code``, or the end of a process that joined torchrun's group
    (:func:`anuvad.distributed.end_worker`). Only commands that may join a group import that
    module (it imports torch, slow to load), so a command that did not is not slowed."""
    distributed = sys.modules.get("anuvad.distributed")
    if distributed is None:
        return code
    end: Callable[[int], int] = distributed.end_worker
    return end(code)


if __name__ == "__main__":
    raise SystemExit(main())
