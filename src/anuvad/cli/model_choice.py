"""Which model ``anuvad translate`` uses: the one ``--model`` names, a shipped pair's newest
(``--model hien``), or, when none is named, the shipped model that reads the text's language.

``anuvad serve`` picks the shipped models by itself; ``anuvad translate`` used to demand the
file's long name (issue 40, item 8). The language is found as the server finds it, by script
(:mod:`anuvad.inference.language`): English and Hindi never share one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from anuvad.cli.serve import SHIPPED_MODELS, shipped_model

DEFAULT_PAIR = "enhi"  # for a text without letters, as ``anuvad serve``'s first model
# Shipped files are named <pair>_...pt, the pair two ISO 639-1 codes run together ("enhi").
PAIR_NAME = re.compile(r"[a-z]{2}[a-z]{2}")
DETECTION_CHARS = 20_000  # the script of the input's start decides; a long file is not read twice


@dataclass(frozen=True)
class ModelChoice:
    """The model to translate with, and why.

    Attributes:
        model: a model file, or (ctranslate2) an exported folder, as given.
        chosen_for: the language it was chosen for (None: named by the user).
    """

    model: str
    chosen_for: str | None = None


def shipped_pairs(folder: str | Path = SHIPPED_MODELS) -> list[str]:
    """The pairs with a shipped model in ``folder`` (``enhi`` first, then by name)."""
    pairs = {
        path.name.split("_", 1)[0]
        for path in Path(folder).glob("*_*.pt")
        if PAIR_NAME.fullmatch(path.name.split("_", 1)[0])
    }
    return sorted(pairs, key=lambda pair: (pair != DEFAULT_PAIR, pair))


def choose_model(
    given: str | None, lines: Sequence[str], folder: str | Path = SHIPPED_MODELS
) -> ModelChoice:
    """The model that translates ``lines``.

    Args:
        given: ``--model``: a path (used as it is), or a pair name such as ``hien`` where no
            such path exists (that pair's newest shipped model); None: the newest shipped model
            whose source language is the script of most of the text's letters (English→Hindi
            for a text without letters).
        lines: the input.
        folder: where the shipped models are.

    Raises:
        CheckpointError: no shipped model of the pair (the folder and what it holds named).
    """
    from anuvad.inference.language import detect

    if given is not None:
        if PAIR_NAME.fullmatch(given) and not Path(given).exists():
            return ModelChoice(str(shipped_model(folder, given)))
        return ModelChoice(given)
    pairs = shipped_pairs(folder) or [DEFAULT_PAIR]
    sources = {pair[:2]: pair for pair in reversed(pairs)}  # the first pair of a source wins
    text = "\n".join(lines)[:DETECTION_CHARS]
    found = detect(text, [pair[:2] for pair in pairs])
    best = found[0].language if found and found[0].confidence > 0 else pairs[0][:2]
    return ModelChoice(str(shipped_model(folder, sources[best])), chosen_for=best)
