"""Option groups that several commands share, declared once, and the typed values they become.

A command turns its ``argparse.Namespace`` into these values once (``from_args``) and hands
them, typed, to the library; nothing below the command reads ``args``.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from anuvad.decode_config import DecodeConfig, settings_spec
from anuvad.decode_config import setting as setting_of
from anuvad.errors import ConfigError

T = TypeVar("T")

if TYPE_CHECKING:
    from anuvad.distributed import DistributedContext
    from anuvad.inference.glossary import Glossary
    from anuvad.inference.verbatim import Verbatim


# anuvad.inference.verbatim.DIGITS (a test keeps them equal): importing it here would load torch
# for every ``anuvad --help``.
DIGITS = ("latin", "devanagari")


def add_verbatim_options(p: argparse.ArgumentParser) -> None:
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
        "them) or devanagari (०-९; into a language of another script, Latin digits stay)",
    )
    p.add_argument(
        "--no-verbatim",
        action="store_true",
        help="do not copy numbers, links (URLs), e-mail addresses and emoji exactly: the model "
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
    return Verbatim(
        numbers=copy, links=copy, symbols=copy, digits=args.digits, keep=tuple(args.keep)
    )


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
    """Every search setting of :class:`~anuvad.decode_config.DecodeConfig` shown on the command
    line (``beam_size`` → ``--beam-size``), made from the settings' declarations; unset ones
    keep the model's own. Also ``--no-cache``."""
    for f, setting in settings_spec():
        if not setting.flag:
            continue
        kind = {"int": int, "float": float}.get(str(f.type), str)
        p.add_argument(
            "--" + f.name.replace("_", "-"),
            type=kind,
            choices=setting.choices or None,
            metavar=None if setting.choices else f.name.split("_")[-1].upper(),
            help=f"{setting.help} (default: the model's; {f.default} unless its config says)",
        )
    p.add_argument("--no-cache", action="store_true", help="decode without the key/value cache")


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
    """The search settings given on the command line (the others stay the model's own)."""

    given: tuple[tuple[str, Any], ...]  # (setting name, value) in declaration order
    use_cache: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SearchOptions:
        """The options :func:`add_search_options` added, each checked against its range.

        Raises:
            ConfigError: a value out of its setting's range, named (e.g. ``--beam-size 0``).
        """
        given = tuple(
            (f.name, getattr(args, f.name))
            for f, setting in settings_spec()
            if setting.flag and getattr(args, f.name, None) is not None
        )
        found = [p for name, value in given if (p := setting_of(name).problem(name, value))]
        if found:
            raise ConfigError(_as_options("; ".join(found)))
        return cls(given, use_cache=not getattr(args, "no_cache", False))

    def get(self, name: str) -> Any:
        """The value given for the setting ``name`` (None: not given)."""
        return dict(self.given).get(name)

    def settings(self, decode: DecodeConfig, **more: Any) -> DecodeConfig:
        """These options (then ``more``) over the model's ``decode`` settings, checked.

        Raises:
            ConfigError: an invalid combination (e.g. ``--nbest`` above the beam size), named
                by its options.
        """
        try:
            return decode.with_overrides(**{**dict(self.given), **more})
        except ConfigError as exc:
            raise ConfigError(_as_options(str(exc))) from None


def _as_options(message: str) -> str:
    """A message about ``decode.<setting>`` values in the command line's words (``--nbest``):
    "decode.nbest must be between 1 and beam_size (4), got 8" -> "--nbest must be between 1
    and --beam-size (4), got 8"."""
    message = re.sub(r"decode\.([a-z_]+)", lambda m: "--" + m.group(1).replace("_", "-"), message)
    names = "|".join(f.name for f in dataclasses.fields(DecodeConfig))
    return re.sub(rf"(?<![-\w])({names})\b", lambda m: "--" + m.group(1).replace("_", "-"), message)


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


def join_workers(options: EngineOptions) -> tuple[DistributedContext, EngineOptions]:
    """This process' place among the workers ``torchrun`` started (one process without it),
    and the engine options with each worker on its own device (a GPU per local rank)."""
    from anuvad.distributed import init_distributed

    context = init_distributed(options.device)
    if context.enabled:
        options = dataclasses.replace(options, device=str(context.device))
    return context, options


def load_in_turn(context: DistributedContext, load: Callable[[], T]) -> T:
    """``load()`` on rank 0 first, then on the other ranks: the first load fills what they share
    (the CTranslate2 export a ``.pt`` gets in the user cache): no two workers write it at once."""
    from anuvad.distributed import barrier

    loaded = load() if context.is_main else None
    barrier(context)
    return loaded if loaded is not None else load()
