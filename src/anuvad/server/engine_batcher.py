"""One served engine's view of a micro-batcher shared by the engines of one network: the pairs
of a multilingual model (:mod:`anuvad.inference.pairs`) share one model thread, so that a short
request of one pair runs between the decoding steps of another pair's long call
(:mod:`anuvad.server.batcher`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from anuvad.decode_config import DecodeConfig
from anuvad.inference.engine import TranslationEngine
from anuvad.inference.glossary import Glossary
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import Verbatim
from anuvad.server.batcher import MicroBatcher
from anuvad.server.jobs import Progress

T = TypeVar("T")


class EngineBatcher:
    """One served engine's view of a :class:`MicroBatcher` it shares with other engines of one
    network (the pairs of a multilingual model): its requests name it, and their model calls
    report to its metrics; starting and stopping act on the shared batcher.

    Args:
        shared: the batcher of the network.
        engine: the engine this view's requests are translated by.
        on_call: this engine's model-call metrics (as :class:`MicroBatcher`'s).
    """

    def __init__(
        self,
        shared: MicroBatcher,
        engine: TranslationEngine,
        on_call: Callable[[int, int, float], None] | None = None,
    ) -> None:
        self.shared = shared
        self.engine = engine
        self.on_call = on_call

    @property
    def model_calls(self) -> int:
        """Model calls of the shared batcher (all engines of the network)."""
        return self.shared.model_calls

    def start(self) -> None:
        """Start the shared batcher (idempotent)."""
        self.shared.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the shared batcher (a second stop finds nothing to stop)."""
        self.shared.stop(timeout)

    def pending(self) -> int:
        """Requests waiting for the network (all of its engines)."""
        return self.shared.pending()

    async def translate(
        self,
        texts: Sequence[str],
        key: DecodeConfig,
        timeout: float | None = None,
        glossary: Glossary | None = None,
        quality: bool = True,
        progress: Progress | None = None,
        verbatim: Verbatim | None = None,
    ) -> list[Translation]:
        """:meth:`MicroBatcher.translate` by this view's engine."""
        return await self.shared.translate(
            texts, key, timeout, glossary, quality, progress, verbatim, self.engine, self.on_call
        )

    async def call(self, function: Callable[[], T]) -> T:
        """:meth:`MicroBatcher.call` on the shared model thread."""
        return await self.shared.call(function)


__all__ = ["EngineBatcher"]
