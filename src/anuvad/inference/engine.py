"""The two translation engines and the interface they share.

* ``torch``: :class:`anuvad.inference.translator.Translator`, anuvad's own search over the PyTorch
  model (a ``.pt`` model file).
* ``ctranslate2``: :class:`anuvad.inference.ct2.engine.CT2Translator` over a folder written by
  ``anuvad export MODEL --format ctranslate2``. Given a ``.pt`` file instead, it is exported
  once (float32 weights) into the user cache and the cached folder is used from then on.

The CLI and the server only use what :class:`TranslationEngine` declares; what an engine can do
beyond plain translation it says in :attr:`TranslationEngine.capabilities`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import torch

from anuvad.config import ExperimentConfig
from anuvad.data.tokenizer import Tokenizer
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.constraints import OutputConstraint
from anuvad.decoding.search import BetweenSteps
from anuvad.device import resolve_device
from anuvad.errors import ConfigError
from anuvad.evaluation.confidence_model import ConfidenceModel
from anuvad.inference.glossary import Glossary
from anuvad.inference.translation import AttentionView, Capabilities, Translation
from anuvad.inference.verbatim import Verbatim

ENGINES = ("torch", "ctranslate2")


class ModelDescription(Protocol):
    """What the engines tell about their model (a :class:`~anuvad.checkpoint.ModelFile`, or
    the description stored in an exported folder)."""

    @property
    def config(self) -> ExperimentConfig: ...

    @property
    def metadata(self) -> dict[str, Any]: ...


class TranslationEngine(Protocol):
    """The translator interface the CLI and the server code against (see
    ``docs``/the translator contract): results in input order, beam 1 = greedy search."""

    decode: DecodeConfig
    model_path: Path | None
    engine: str  # "torch" or "ctranslate2", for display
    capabilities: Capabilities  # what it can do beyond plain translation
    parallel_calls: int  # model calls that may run at once from different threads
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    max_src_tokens: int  # the longest source (in pieces) the model takes
    calibration: ConfidenceModel | None  # the confidence model (None: no confidence)

    @property
    def model_file(self) -> ModelDescription: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def num_parameters(self) -> int: ...

    def settings(self, **changes: Any) -> DecodeConfig:
        """:attr:`decode` with ``changes`` (None values ignored), checked (ConfigError)."""
        ...

    def translate(
        self,
        texts: Sequence[str],
        settings: DecodeConfig | None = None,
        *,
        use_cache: bool = True,
        progress: Callable[[int], object] | None = None,
        constraint: OutputConstraint | None = None,
        stop: BetweenSteps | None = None,
        glossary: Glossary | Sequence[Glossary | None] | None = None,
        quality: bool = False,
        verbatim: Verbatim | Sequence[Verbatim | None] | None = None,
    ) -> list[Translation]: ...

    def translate_text(self, texts: Sequence[str]) -> list[str]: ...

    def attention(self, text: str, settings: DecodeConfig | None = None) -> AttentionView: ...

    def attention_of(self, result: Translation) -> AttentionView: ...


def ct2_cache_folder(model_path: str | Path, quantization: str = "float32") -> Path:
    """Where a model file's CTranslate2 export is cached: ``<cache>/ctranslate2/<name>-<sha256
    prefix of the file>-<quantization>`` (a changed file gets a new folder)."""
    from anuvad.data.download import cache_dir, sha256_of

    path = Path(model_path)
    return cache_dir() / "ctranslate2" / f"{path.stem}-{sha256_of(path)[:12]}-{quantization}"


def ct2_folder_for(model: str | Path) -> Path:
    """``model`` itself when it is a folder, else its cached export (written when missing).

    Raises:
        CheckpointError: the model file is missing or cannot be exported.
    """
    from anuvad.errors import CheckpointError
    from anuvad.inference.ct2.export import export_ctranslate2, read_ct2_metadata

    path = Path(model)
    if path.is_dir():
        return path
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist (give a model file or an exported folder)")
    folder = ct2_cache_folder(path)
    try:
        read_ct2_metadata(folder)
    except CheckpointError:
        export_ctranslate2(path, folder, force=True, metadata={"cached_export": True})
    return folder


def server_layout(engine: str, device: str, threads: int, replicas: int) -> tuple[int, int]:
    """(threads per model call, replicas) for a server; ``replicas`` 0 means "choose".

    A CTranslate2 server on a CPU with neither set gets one single-threaded replica per core:
    measured on 2 cores (docs/benchmark-history.md, "Serving the shipped Hindi model after
    the change"), 2 replicas x 1 thread served int8 beam 4 at 321.9 sentences/s batched and 236.5
    one call per request, 1 replica x 2 threads at 251.3 and 27.8. Everything else: 1 replica.

    Raises:
        ConfigError: negative threads or replicas.
    """
    if threads < 0 or replicas < 0:
        raise ConfigError(f"threads ({threads}) and replicas ({replicas}) must be >= 0")
    if replicas:
        return threads, replicas
    if engine == "ctranslate2" and resolve_device(device).type == "cpu" and threads == 0:
        return 1, max(1, torch.get_num_threads())
    return threads, 1


def load_engine(
    model: str | Path,
    engine: str = "torch",
    device: str = "auto",
    threads: int = 0,
    replicas: int = 1,
    compute_type: str = "default",
    confidence: bool = True,
) -> TranslationEngine:
    """Load ``model`` for translation with ``engine``.

    Args:
        model: a ``.pt`` model file; for ``ctranslate2`` also an exported folder.
        engine: "torch" or "ctranslate2".
        device: "auto", "cpu", "cuda", "cuda:N".
        threads: CPU threads per model call (0: PyTorch's default, the cores this process may
            use); for ``torch`` this sets PyTorch's thread count for the whole process.
        replicas: ``ctranslate2`` only: model replicas that translate batches in parallel, each
            with ``threads`` threads (on 2 cores: ``replicas=2, threads=1`` or ``1, 2``).
        compute_type: ``ctranslate2`` only: its computation type, e.g. ``int8`` (weights
            quantized when the model loads); "default" keeps the exported one.
        confidence: ``torch`` only: also load the model's confidence model and the reverse
            model it needs (False: translations must be asked for without ``quality``).

    Raises:
        ConfigError: unknown engine.
        CheckpointError: the model cannot be loaded (or exported).
        AnuvadError: ``ctranslate2`` is asked for but not installed.
    """
    if threads < 0 or replicas < 1:
        raise ConfigError(f"threads ({threads}) must be >= 0 and replicas ({replicas}) >= 1")
    if engine == "torch":
        from anuvad.inference.translator import Translator

        if compute_type != "default":
            raise ConfigError(
                f"compute type {compute_type!r} is for the ctranslate2 engine; the torch engine "
                "runs the model as trained (use --engine ctranslate2, or leave it at default)"
            )
        if replicas != 1:
            raise ConfigError(
                "replicas is for the ctranslate2 engine; the torch engine runs one model call at "
                "a time (use --engine ctranslate2, or leave --replicas at 1)"
            )
        if threads:
            torch.set_num_threads(threads)
        return Translator.from_file(model, device=device, confidence=confidence)
    if engine == "ctranslate2":
        from anuvad.inference.ct2.engine import CT2Translator

        return CT2Translator(
            ct2_folder_for(model),
            device=device,
            threads=threads,
            replicas=replicas,
            compute_type=compute_type,
        )
    raise ConfigError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")


# The longest sentence (in source pieces) that anuvad's own small models translate whole; a
# longer one is cut at its clauses (:func:`anuvad.inference.documents.fit_segment`). Measured on
# the 120 first NTREX-128 dev sentences longer than the limit, shipped English->Hindi model,
# greedy: chrF++ whole / cut 20.5 / 22.3 at 32 pieces, 19.6 / 22.6 at 48, 21.2 / 23.8 at 64
# (the whole sentences' outputs were 0.78 of the references' length, the cut ones' 0.89).
COMFORTABLE_SOURCE_TOKENS = 48


def source_fits(engine: TranslationEngine, well: bool = False) -> Callable[[str], bool]:
    """Whether ``engine``'s model can take a sentence whole (its pieces within the model's
    positions) or, with ``well``, translates it well whole (for anuvad's own models also within
    :data:`COMFORTABLE_SOURCE_TOKENS`; an imported model, trained on long sentences, up to its
    positions): for :func:`anuvad.inference.documents.split_document`."""
    from anuvad.inference.frontend import source_preparer

    tokenizer, limit = engine.src_tokenizer, engine.max_src_tokens
    if well and "imported_from" not in engine.model_file.metadata:
        limit = min(limit, COMFORTABLE_SOURCE_TOKENS)
    prepare = source_preparer(engine.model_file.config.data, tokenizer)
    return lambda text: len(tokenizer.encode(prepare(text))) <= limit
