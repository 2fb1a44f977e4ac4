"""Option groups that several commands share, declared once, and the typed values they become.

A command turns its ``argparse.Namespace`` into these values once (``from_args``) and hands
them, typed, to the library; nothing below the command reads ``args``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anuvad.decode_config import EARLY_STOPPING, DecodeConfig

if TYPE_CHECKING:
    from anuvad.inference.glossary import Glossary


def add_device_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--device``, ``--engine``, ``--compute-type``."""
    add_device_option(p)
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


def add_search_options(p: argparse.ArgumentParser) -> None:
    """Every search setting of :class:`~anuvad.decode_config.DecodeConfig`; unset ones keep
    the model's own."""
    p.add_argument("--beam-size", type=int, help="beam size K; 1 = greedy (default: the model's)")
    p.add_argument(
        "--length-penalty", type=float, help="alpha of ((5+|Y|)/6)^alpha (default: the model's)"
    )
    p.add_argument("--max-len-a", type=float, help="output limit a*source_length + b: a")
    p.add_argument("--max-len-b", type=int, help="output limit a*source_length + b: b")
    p.add_argument("--batch-size", type=int, help="sentences per batch (default: the model's)")
    p.add_argument("--batch-tokens", type=int, help="batch by source tokens instead of sentences")
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
        choices=EARLY_STOPPING,
        help="finished (default): a beam stops once K hypotheses have ended; bound: it goes on "
        "while an unfinished one could still win (the paper code's rule; torch engine)",
    )


@dataclass(frozen=True)
class EngineOptions:
    """Which engine runs the model, and where."""

    device: str
    engine: str
    compute_type: str

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EngineOptions:
        return cls(args.device, args.engine, args.compute_type)


@dataclass(frozen=True)
class SearchOptions:
    """The command line's search options; None means "the model's own setting"."""

    beam_size: int | None
    length_penalty: float | None
    max_len_a: float | None
    max_len_b: int | None
    batch_size: int | None
    batch_tokens: int | None
    no_repeat_ngram_size: int | None
    early_stopping: str | None
    use_cache: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SearchOptions:
        return cls(
            beam_size=args.beam_size,
            length_penalty=args.length_penalty,
            max_len_a=args.max_len_a,
            max_len_b=args.max_len_b,
            batch_size=args.batch_size,
            batch_tokens=args.batch_tokens,
            no_repeat_ngram_size=args.no_repeat_ngram_size,
            early_stopping=args.early_stopping,
            use_cache=not args.no_cache,
        )

    def settings(self, decode: DecodeConfig, nbest: int = 1) -> DecodeConfig:
        """These options over the model's ``decode`` settings, checked.

        Raises:
            ConfigError: an invalid option (e.g. ``--beam-size 0``), named.
        """
        return decode.with_overrides(
            beam_size=self.beam_size,
            nbest=nbest,
            length_penalty=self.length_penalty,
            max_len_a=self.max_len_a,
            max_len_b=self.max_len_b,
            batch_size=self.batch_size,
            max_tokens=self.batch_tokens,
            no_repeat_ngram_size=self.no_repeat_ngram_size,
            early_stopping=self.early_stopping,
        )


def add_glossary_option(p: argparse.ArgumentParser) -> None:
    """``--glossary FILE``: terms the translation must use (torch engine)."""
    p.add_argument(
        "--glossary",
        type=Path,
        metavar="TSV",
        help="terms the translation must use, one 'term<TAB>translation' per line: where a term "
        "occurs (any case, inflected: courts, court's), its translation appears in the output "
        "(torch engine)",
    )


def read_glossary(path: Path | None) -> Glossary | None:
    """The glossary at ``path`` (None: none).

    Raises:
        DataError: the file is unreadable or a line is malformed (file and line named).
    """
    from anuvad.inference.glossary import Glossary

    return Glossary.from_tsv(path) if path is not None else None
