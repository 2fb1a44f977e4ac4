"""The search settings: one frozen value that carries every decoding option from a config file,
the command line or an HTTP request to both engines and the searches.

Each setting is declared once, as a field of :class:`DecodeConfig` with its :class:`Setting`
(help text, range, choices, which doors show it). Its range check (:meth:`DecodeConfig.problems`),
its command-line option (:func:`anuvad.cli.options.add_search_options`) and its field in the HTTP
API's request schema (:mod:`anuvad.server.schemas`) are all made from that declaration, so a new
search option is a field here plus the search code that reads it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from anuvad.errors import ConfigError

EARLY_STOPPING = ("finished", "bound", "heuristic")
LENGTH_NORMALIZATIONS = ("gnmt", "power")


@dataclass(frozen=True)
class Setting:
    """What the doors need to know of one search setting.

    Attributes:
        help: one line for ``--help`` and the API schema's description.
        minimum: the smallest valid value (None: no bound).
        maximum: the largest valid value (None: no bound; a server may cap lower).
        choices: the valid values of a text setting (empty: any).
        flag: an option of the search commands (``--beam-size`` for ``beam_size``).
        api: a field of the HTTP API's requests (null there means "the model's").
    """

    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    flag: bool = True
    api: bool = False

    def problem(self, name: str, value: Any) -> str | None:
        """Why ``value`` is invalid for the setting ``name`` (None when it is valid)."""
        if self.choices and value not in self.choices:
            return f"decode.{name} must be one of {', '.join(self.choices)}, got {value!r}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"decode.{name} must be a finite number, got {value}"
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            if high is None:
                return f"decode.{name} must be at least {_number(low)}, got {value}"
            return f"decode.{name} must be between {_number(low)} and {_number(high)}, got {value}"
        return None


def _number(value: float | None) -> str:
    return str(int(value)) if value is not None and float(value).is_integer() else str(value)


def _setting(default: Any, help: str, **spec: Any) -> Any:
    """A :class:`DecodeConfig` field with its :class:`Setting`."""
    return field(default=default, metadata={"setting": Setting(help, **spec)})


@dataclass(frozen=True)
class DecodeConfig:
    """Every search setting, carried as one value from the config, CLI options or request to
    the engines and the searches (section 6.1: beam 4, alpha 0.6, max length input + 50).

    ``early_stopping``: "finished" (the default) stops a sentence's beam search once K
    hypotheses have ended, as fairseq and CTranslate2 do; "bound" goes on while an unfinished
    hypothesis could still overtake the best finished one under the length penalty (the
    tensor2tensor rule of the paper's code; slower, rarely a different output); "heuristic" is
    Hugging Face generate's default rule, which imported Marian models keep.

    ``no_repeat_ngram_size`` is 3 by default for every door (CLI, server, config files): it
    costs no BLEU or chrF++ on the caption and news dev sets (docs/benchmarks.md) and stops
    loops such as "चम चम चम" on text the model does not know. The paper presets set 0.
    """

    beam_size: int = _setting(
        4, "beam size K: hypotheses kept per step (1 = greedy search)", minimum=1, api=True
    )
    length_penalty: float = _setting(
        0.6,
        "alpha of the length penalty ((5+|Y|)/6)^alpha of Wu et al. (2016); 0 = none",
        minimum=0.0,
        maximum=5.0,
        api=True,
    )
    length_normalization: str = _setting(
        "gnmt",
        "gnmt: a hypothesis scores log_prob / ((5+|Y|)/6)^alpha (Wu et al. 2016); power: log_prob "
        "/ |Y|^alpha (Marian's and Hugging Face generate's, which imported models keep)",
        choices=LENGTH_NORMALIZATIONS,
    )
    max_len_a: float = _setting(1.0, "output limit a * source_length + b tokens: a", minimum=0.0)
    max_len_b: int = _setting(50, "output limit a * source_length + b tokens: b", minimum=0)
    nbest: int = _setting(
        1, "outputs per sentence, best first (at most the beam size)", minimum=1, flag=False
    )
    early_stopping: str = _setting(
        "finished",
        "finished: a beam stops once K hypotheses have ended; bound: it goes on while an "
        "unfinished one could still win (the paper code's rule); heuristic: while the best "
        "unfinished one, scored at its current length, beats the K-th finished (Hugging Face "
        "generate's early_stopping=False)",
        choices=EARLY_STOPPING,
        api=True,
    )
    no_repeat_ngram_size: int = _setting(
        3,
        "never write the same N target pieces twice in one output (stops loops on unfamiliar "
        "input; 0 = off)",
        minimum=0,
        maximum=8,
        api=True,
    )
    sample_top_k: int = _setting(
        0,
        "0: the most probable token at each step; K > 0: a token drawn from the K most probable "
        "(back-translation by sampling, Edunov et al. 2018; beam size 1; the draws are seeded by "
        "sample_seed)",
        minimum=0,
    )
    sample_seed: int = _setting(
        1,
        "the seed of sample_top_k's draws: the same seed, input and batch give the same draws, "
        "another seed other draws (the torch engine; CTranslate2's draws are not repeatable)",
        minimum=0,
        maximum=2**63 - 1,  # torch.Generator.manual_seed's range
    )
    max_output_tokens: int = _setting(
        0, "no output longer than this many target pieces (0 = no cap)", minimum=0
    )
    batch_size: int = _setting(64, "sentences per batch (similar lengths together)", minimum=1)
    max_tokens: int = _setting(
        0, "batch by source tokens instead: at most this many per batch (0 = by sentences)",
        minimum=0,
    )  # fmt: skip

    def problems(self) -> list[str]:
        """What is invalid, one message per field (empty when all is well)."""
        found = [
            problem
            for f, setting in settings_spec()
            if (problem := setting.problem(f.name, getattr(self, f.name))) is not None
        ]
        if self.sample_top_k > 0 and self.beam_size != 1:
            found.append(
                "decode.sample_top_k needs beam_size 1 (sampling replaces the beam), got "
                f"beam_size {self.beam_size}"
            )
        if self.nbest > self.beam_size and self.beam_size >= 1:
            found.append(
                f"decode.nbest must be between 1 and beam_size ({self.beam_size}), got {self.nbest}"
            )
        return found

    def with_overrides(self, **changes: Any) -> DecodeConfig:
        """A copy with the given settings changed (None values keep this one's), checked.

        Raises:
            ConfigError: a resulting setting is invalid (each one named).
        """
        updated = dataclasses.replace(
            self, **{name: value for name, value in changes.items() if value is not None}
        )
        found = updated.problems()
        if found:
            raise ConfigError("; ".join(found))
        return updated


def settings_spec() -> list[tuple[dataclasses.Field[Any], Setting]]:
    """Every :class:`DecodeConfig` field with its :class:`Setting`, in declaration order."""
    return [(f, f.metadata["setting"]) for f in dataclasses.fields(DecodeConfig)]


def setting(name: str) -> Setting:
    """The :class:`Setting` of the field ``name``.

    Raises:
        KeyError: ``name`` is not a search setting.
    """
    for f, spec in settings_spec():
        if f.name == name:
            return spec
    raise KeyError(name)


__all__ = [
    "EARLY_STOPPING",
    "LENGTH_NORMALIZATIONS",
    "DecodeConfig",
    "Setting",
    "setting",
    "settings_spec",
]
