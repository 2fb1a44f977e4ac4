"""The search settings: one frozen value that carries every decoding option from a config file,
the command line or an HTTP request to both engines and the searches."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from anuvad.errors import ConfigError

EARLY_STOPPING = ("finished", "bound")


@dataclass(frozen=True)
class DecodeConfig:
    """Every search setting, carried as one value from the config, CLI options or request to
    the engines and the searches (section 6.1: beam 4, alpha 0.6, max length input + 50).

    ``early_stopping``: "finished" (the default) stops a sentence's beam search once K
    hypotheses have ended, as fairseq and CTranslate2 do; "bound" goes on while an unfinished
    hypothesis could still overtake the best finished one under the length penalty (the
    tensor2tensor rule of the paper's code; slower, rarely a different output).
    """

    beam_size: int = 4
    length_penalty: float = 0.6
    max_len_a: float = 1.0
    max_len_b: int = 50
    nbest: int = 1  # outputs per sentence, best first; at most beam_size
    early_stopping: str = "finished"  # or "bound"
    no_repeat_ngram_size: int = 0  # > 0: no n-gram of this size twice in one output
    max_output_tokens: int = 0  # > 0: no output longer than this (a server's work budget)
    batch_size: int = 64  # sentences per batch (similar lengths together)
    max_tokens: int = 0  # > 0: batch by source tokens instead (padded, before the beam)

    def problems(self) -> list[str]:
        """What is invalid, one message per field (empty when all is well)."""
        found = []
        if self.beam_size < 1:
            found.append(f"decode.beam_size must be at least 1, got {self.beam_size}")
        if not 1 <= self.nbest <= max(1, self.beam_size):
            found.append(
                f"decode.nbest must be between 1 and beam_size ({self.beam_size}), got {self.nbest}"
            )
        if self.max_len_a < 0 or self.max_len_b < 0:
            found.append("decode.max_len_a/b must be >= 0")
        if self.early_stopping not in EARLY_STOPPING:
            found.append(
                f"decode.early_stopping must be finished or bound, got {self.early_stopping!r}"
            )
        if self.no_repeat_ngram_size < 0:
            found.append(
                f"decode.no_repeat_ngram_size must be >= 0, got {self.no_repeat_ngram_size}"
            )
        if self.max_output_tokens < 0:
            found.append(f"decode.max_output_tokens must be >= 0, got {self.max_output_tokens}")
        if self.batch_size < 1:
            found.append(f"decode.batch_size must be at least 1, got {self.batch_size}")
        if self.max_tokens < 0:
            found.append(f"decode.max_tokens must be >= 0, got {self.max_tokens}")
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


__all__ = ["EARLY_STOPPING", "DecodeConfig"]
