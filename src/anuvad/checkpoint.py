"""Self-contained model files: weights, resolved config, tokenizers, version and metadata.

A model file is a plain ``torch.save`` of tensors, strings, numbers, bytes, lists and dicts, so it
loads with ``torch.load(..., weights_only=True)``: loading never unpickles arbitrary objects.
Every write is atomic (a temporary file in the same folder, then a rename).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from anuvad import __version__
from anuvad.atomic import write_atomic_with
from anuvad.config import ExperimentConfig, config_from_dict, config_to_dict
from anuvad.data.tokenizer import Tokenizer
from anuvad.dataclass_io import apply_overrides, from_plain
from anuvad.decode_config import DecodeConfig
from anuvad.errors import CheckpointError, ConfigError
from anuvad.model.transformer import Transformer, build_model, count_parameters

MODEL_FORMAT = "anuvad-model"
MODEL_FORMAT_VERSION = 1
DEFAULT_MODEL_DIR = Path("data/trained_models")


@dataclass
class ModelFile:
    """A model loaded from (or about to be written to) a model file."""

    model: Transformer
    config: ExperimentConfig
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    metadata: dict[str, Any] = field(default_factory=dict)


def atomic_save(obj: Any, path: str | Path) -> Path:
    """``torch.save`` to a temporary file beside ``path``, fsync, then rename over ``path``
    (:func:`anuvad.atomic.write_atomic_with`: the one atomic writer, usual file permissions).

    A process killed mid-write leaves any previous file at ``path`` intact.

    Raises:
        CheckpointError: the folder cannot be written (permissions, full disk).
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_with(path, lambda handle: torch.save(obj, handle))
    except OSError as exc:
        raise CheckpointError(f"cannot write {path}: {exc}") from exc
    except RuntimeError as exc:  # how torch's zip writer reports a failed write (a full disk)
        if not any(mark in str(exc) for mark in _TORCH_WRITE_FAILURES):
            raise
        free = shutil.disk_usage(path.parent).free / 2**20
        raise CheckpointError(
            f"cannot write {path}: the write failed with {free:,.0f} MB left on that disk "
            "(a full disk is the usual cause); free some space (a training run keeps "
            "train.keep_last checkpoints) and run again: anuvad train --resume RUN_DIR "
            f"continues a run from its last whole checkpoint. torch said: {exc}"
        ) from exc
    return path


# What torch's zip writer says when a write fails midway ("unexpected pos 64332672 vs
# 64332560" on a full disk, 2026-11-28), where Python's own writes raise OSError.
_TORCH_WRITE_FAILURES = ("inline_container", "PytorchStreamWriter")


def default_model_path(
    config: ExperimentConfig,
    directory: str | Path = DEFAULT_MODEL_DIR,
    timestamp: _dt.datetime | None = None,
) -> Path:
    """``<dir>/<pair>_d<d_model>_L<layers>_V<vocab>_<timestamp>.pt``, e.g.
    ``data/trained_models/enhi_d256_L3_V8000_20261122-0930.pt``."""
    m = config.model
    layers = (
        str(m.num_encoder_layers)
        if m.num_encoder_layers == m.num_decoder_layers
        else f"{m.num_encoder_layers}-{m.num_decoder_layers}"
    )
    stamp = (timestamp or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    pair = f"{config.data.src_lang}{config.data.tgt_lang}"
    return Path(directory) / f"{pair}_d{m.d_model}_L{layers}_V{m.tgt_vocab_size}_{stamp}.pt"


def save_model(
    path: str | Path,
    model: Transformer,
    config: ExperimentConfig,
    src_tokenizer: Tokenizer,
    tgt_tokenizer: Tokenizer,
    metadata: dict[str, Any] | None = None,
    dtype: torch.dtype | None = None,
) -> Path:
    """Write one self-contained model file, atomically.

    Args:
        path: where to write (folders are created).
        model: the network; its weights are copied to the CPU.
        config: the resolved experiment config the model was built from.
        src_tokenizer: source SentencePiece model.
        tgt_tokenizer: target SentencePiece model (the same object for a joint vocabulary).
        metadata: training facts to keep (steps, data, scores); plain data only.
        dtype: store floating-point weights in this dtype (e.g. ``torch.float16``) to save space;
            they are restored to float32 on load.

    Returns:
        The path written.
    """
    state: dict[str, torch.Tensor] = {}
    converted: dict[int, torch.Tensor] = {}  # storage address → converted tensor
    for name, tensor in model.state_dict().items():
        tensor = tensor.detach().cpu()
        if dtype is not None and tensor.is_floating_point():
            # Tied weights share one storage: convert it once so that it is saved once.
            key = tensor.untyped_storage().data_ptr()
            if key not in converted:
                converted[key] = tensor.to(dtype)
            tensor = converted[key]
        state[name] = tensor
    payload = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "anuvad_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "config": config_to_dict(config),
        "state_dict": state,
        "tokenizers": {"src": src_tokenizer.state(), "tgt": tgt_tokenizer.state()},
        "metadata": {"num_parameters": count_parameters(model), **(metadata or {})},
    }
    return atomic_save(payload, path)


def _load_failure(message: str) -> str:
    """torch.load's failure in one line. Its safe loader's refusal suggests loading with
    ``weights_only=False`` (which can run code from the file); that advice is not repeated."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return "no detail"
    if lines[0].startswith("Weights only load failed"):
        reasons = [line for line in lines[1:] if not line.startswith(("Please file", "Check the"))]
        return "refused by the safe loader" + (f": {reasons[0]}" if reasons else "")
    return lines[0]


def read_payload(
    path: str | Path, expected_format: str, max_version: int, what: str, fix: str
) -> dict[str, Any]:
    """Load a file written by anuvad with ``torch.load(weights_only=True)`` and check its kind.

    Args:
        path: the file.
        expected_format: the ``format`` tag it must carry.
        max_version: the newest ``format_version`` this anuvad reads.
        what: how messages name it ("model file", "training checkpoint").
        fix: what to do when it is truncated or unreadable.

    Raises:
        CheckpointError: missing, truncated, not a PyTorch file, of another kind, or newer.
    """
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(
            f"{path} is a folder, not a {what}; give the .pt file inside it (or, for an exported "
            "CTranslate2 folder, --engine ctranslate2)"
        )
    if not path.is_file():
        raise CheckpointError(f"{what} {path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, UnpicklingError, EOFError, ...
        detail = _load_failure(str(exc))
        raise CheckpointError(
            f"{path} is truncated or not a PyTorch {what} ({type(exc).__name__}: {detail}); {fix}"
        ) from exc
    if not isinstance(payload, dict) or payload.get("format") != expected_format:
        found = sorted(payload)[:8] if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(f"{path} is not an anuvad {what} (found {found})")
    version = payload.get("format_version")
    if not isinstance(version, int) or version > max_version:
        raise CheckpointError(
            f"{path} has {what} format version {version}; this anuvad ({__version__}) reads up "
            f"to {max_version}: upgrade anuvad"
        )
    return dict(payload)


def read_model_payload(path: str | Path) -> dict[str, Any]:
    """Read and check a model file without building the model (``anuvad info`` uses it).

    Raises:
        CheckpointError: missing, truncated, not a PyTorch file, or not an anuvad model file.
    """
    payload = read_payload(
        path,
        MODEL_FORMAT,
        MODEL_FORMAT_VERSION,
        "model file",
        "re-copy or re-export it; a training checkpoint becomes a model file with `anuvad average`",
    )
    missing = [k for k in ("config", "state_dict", "tokenizers", "metadata") if k not in payload]
    if missing:
        raise CheckpointError(f"{path} is damaged: it lacks {', '.join(missing)}")
    return payload


def load_model(path: str | Path, device: str | torch.device = "cpu") -> ModelFile:
    """Load a model file written by :func:`save_model`, ready for inference (eval mode).

    Raises:
        CheckpointError: the file is missing, truncated, foreign, or its weights do not fit
            its own config.
    """
    return model_from_payload(read_model_payload(path), path, device)


def model_from_payload(
    payload: dict[str, Any], path: str | Path, device: str | torch.device = "cpu"
) -> ModelFile:
    """The model :func:`read_model_payload` read from ``path`` (named in errors), built.

    Raises:
        CheckpointError: its config is invalid or its weights do not fit it.
    """
    try:
        config = config_from_dict(payload["config"])
        config.validate(training=False)
    except ConfigError as exc:
        raise CheckpointError(f"{path}: its stored config is invalid: {exc}") from exc
    # Built on the meta device and given the stored tensors themselves: no random
    # initialisation the weights would overwrite, no second copy of them (a 600M model: 16.9 s
    # and 5.0 GiB at the peak before, docs/benchmarks.md).
    with torch.device("meta"):
        model = build_model(config.model)
    state = {
        name: tensor.float() if tensor.is_floating_point() else tensor
        for name, tensor in payload["state_dict"].items()
    }
    try:
        model.load_state_dict(state, strict=True, assign=True)
    except RuntimeError as exc:
        raise CheckpointError(f"{path}: weights do not match its config: {exc}") from exc
    model.restore_derived(torch.device("cpu"))
    tokenizers = payload["tokenizers"]
    try:
        src_tokenizer = Tokenizer.from_state(tokenizers["src"])
        tgt_tokenizer = Tokenizer.from_state(tokenizers["tgt"])
    except (KeyError, CheckpointError) as exc:
        raise CheckpointError(f"{path}: stored tokenizer is unusable: {exc}") from exc
    model.to(device).eval()
    metadata = dict(payload["metadata"])
    metadata.setdefault("anuvad_version", payload.get("anuvad_version"))
    metadata.setdefault("created", payload.get("created"))
    return ModelFile(model, config, src_tokenizer, tgt_tokenizer, metadata)


def model_info(path: str | Path) -> dict[str, Any]:
    """What ``anuvad info`` shows: config, parameter count, vocabulary sizes, metadata.

    Raises:
        CheckpointError: as :func:`read_model_payload`.
    """
    payload = read_model_payload(path)
    model_config = payload["config"]["model"]
    metadata = dict(payload["metadata"])
    return {
        "config": payload["config"],
        "num_parameters": metadata.pop("num_parameters", None),
        "src_vocab_size": model_config["src_vocab_size"],
        "tgt_vocab_size": model_config["tgt_vocab_size"],
        "anuvad_version": payload.get("anuvad_version"),
        "created": payload.get("created"),
        "format_version": payload["format_version"],
        "metadata": metadata,
    }


STORAGE_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def with_decode_overrides(config: ExperimentConfig, overrides: list[str]) -> ExperimentConfig:
    """``config`` with ``decode.<setting>=<value>`` overrides applied (values read as YAML),
    checked as a search setting is; nothing else may change (the weights depend on it).

    Raises:
        ConfigError: an override outside ``decode.``, an unknown setting or an invalid value,
            each named.
    """
    if not overrides:
        return config
    others = [o for o in overrides if not o.startswith("decode.")]
    if others:
        raise ConfigError(
            f"only the search settings of a model file can change on export, not {others}; "
            "write them as decode.<setting>=<value>, e.g. decode.length_penalty=1.5"
        )
    plain = {"decode": dataclasses.asdict(config.decode)}
    apply_overrides(plain, overrides)
    decode = from_plain(DecodeConfig, plain["decode"], "decode")
    found = decode.problems()
    if found:
        raise ConfigError("; ".join(found))
    return dataclasses.replace(config, decode=decode)


def export_model_file(
    path: str | Path,
    out: str | Path,
    dtype: str | None = "float16",
    metadata: dict[str, Any] | None = None,
    decode: list[str] | None = None,
) -> Path:
    """Rewrite a model file with its weights stored in ``dtype`` (a release file).

    The shipped English→Hindi model is stored in float16 (issue 5: under 25 MB); weights are
    restored to float32 on load, so only their rounding changes.

    Args:
        path: an existing model file.
        out: the file to write, or a folder: then the name is
            :func:`default_model_path` (``<pair>_d<D>_L<layers>_V<vocab>_<timestamp>.pt``).
        dtype: "float16", "bfloat16" or "float32"; None keeps the file's own (float32 for a
            file that does not say), so that changing only the search settings rounds nothing.
        metadata: facts added to the file's metadata (e.g. dev scores for the model card).
        decode: ``decode.<setting>=<value>`` overrides of the search settings the file carries
            (what ``anuvad translate`` and the server use unless told otherwise), e.g.
            ``decode.length_penalty=1.5``; the weights are unchanged.

    Returns:
        The path written.

    Raises:
        CheckpointError: ``path`` is not a usable model file, or ``dtype`` is unknown.
        ConfigError: an override is not ``decode.<setting>=<value>`` or its value is invalid.
    """
    if dtype is not None and dtype not in STORAGE_DTYPES:
        raise CheckpointError(
            f"unknown storage dtype {dtype!r}; choose one of {', '.join(STORAGE_DTYPES)}"
        )
    loaded = load_model(path, device="cpu")
    if dtype is None:
        dtype = str(loaded.metadata.get("storage_dtype", "float32"))
    config = with_decode_overrides(loaded.config, decode or [])
    target = Path(out)
    if target.is_dir() or target.suffix != ".pt":
        target = default_model_path(config, target)
    in_place = target.resolve() == Path(path).resolve()
    if in_place:
        target = target.resolve()  # through a link: the file it names changes
    facts = {k: v for k, v in loaded.metadata.items() if k not in ("anuvad_version", "created")}
    facts.update(metadata or {})
    if not in_place:  # rewritten in place: where it came from stays
        facts["exported_from"] = Path(path).name
    facts["storage_dtype"] = dtype
    return save_model(
        target,
        loaded.model,
        config,
        loaded.src_tokenizer,
        loaded.tgt_tokenizer,
        metadata=facts,
        dtype=STORAGE_DTYPES[dtype],
    )
