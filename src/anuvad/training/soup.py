"""Averaging model files: a "model soup" (Wortsman et al. 2022).

Checkpoint averaging (section 6.1, :func:`anuvad.training.state.average_weights`) takes the last
checkpoints of one run. Model files fine-tuned from one parent, or the parent and its
continuation, can be averaged the same way when they share the architecture and the tokenizers:
the weights stay in one basin, and the mean often keeps what each learned (issue 39: English→Hindi
round 6 and its news continuation, round 7, averaged, kept round 6's captions and most of round
7's gain on news).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from anuvad.checkpoint import MODEL_FORMAT, model_from_payload, read_model_payload, save_model
from anuvad.data.download import sha256_of
from anuvad.errors import CheckpointError
from anuvad.training.warm_start import architecture_differences


def is_model_file(path: Path) -> bool:
    """Whether ``path`` is an anuvad model file (not a training checkpoint). Memory-mapped:
    only the top-level keys are read, not gigabytes of weights."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # not a PyTorch file: neither kind, and the loader that follows says so
        return False
    return isinstance(payload, dict) and payload.get("format") == MODEL_FORMAT


def _stored_dtype(payload: dict[str, object]) -> torch.dtype:
    """The dtype a model file stores its floating-point weights in (float16 for releases)."""
    state = payload["state_dict"]
    assert isinstance(state, dict)
    return next((t.dtype for t in state.values() if t.is_floating_point()), torch.float32)


# Metadata that one file's training or export recorded: not true of the mean.
_ONE_FILE_KEYS = frozenset({
    "created", "anuvad_version", "storage_dtype", "exported_from", "steps", "epochs",
    "train_seconds", "averaged_checkpoints", "averaged_model_files", "num_parameters",
})  # fmt: skip


def _describes_one_file(key: str) -> bool:
    return key in _ONE_FILE_KEYS or key.startswith(("valid_", "last_valid_"))


def average_model_files(paths: Sequence[Path], out: Path) -> Path:
    """Write the element-wise mean of model files' weights (accumulated in float64) as a model
    file: the last file's config, search settings and tokenizers, and its storage dtype when all
    files store the same one (float32 otherwise).

    Raises:
        CheckpointError: fewer than two files, an unreadable file, or files of another
            architecture or other tokenizers than the first (named with the field).
    """
    if len(paths) < 2:
        raise CheckpointError("give at least two model files to average")
    payloads = [read_model_payload(path) for path in paths]  # each file read once
    files = [model_from_payload(data, path) for data, path in zip(payloads, paths, strict=True)]
    first = files[0]
    for path, other in zip(paths[1:], files[1:], strict=True):
        differ = architecture_differences(first.config.model, other.config.model)
        if differ:
            raise CheckpointError(
                f"{path} has another architecture than {paths[0]} "
                f"({', '.join(f'model.{name}' for name in differ)}); only models of one shape "
                "and vocabulary can be averaged"
            )
        for side in ("src_tokenizer", "tgt_tokenizer"):
            if getattr(other, side).state() != getattr(first, side).state():
                raise CheckpointError(
                    f"{path} has another {side.split('_')[0]} tokenizer than {paths[0]}; only "
                    "models that share their tokenizers (one parent) can be averaged"
                )
    states = [f.model.state_dict() for f in files]
    last = files[-1]
    # Every mean first, then written: a tied matrix (the shared embedding and output layer) is
    # one tensor under two names, and writing it before its second name is read would average
    # it twice.
    means = {
        name: sum(s[name].double() for s in states) / len(states)
        for name, tensor in states[-1].items()
        if tensor.is_floating_point()
    }
    with torch.no_grad():
        for name, tensor in last.model.state_dict().items():
            if name in means:
                tensor.copy_(means[name].to(tensor.dtype))
    dtypes = {_stored_dtype(payload) for payload in payloads}
    metadata = {
        key: value for key, value in last.metadata.items() if not _describes_one_file(key)
    }  # what the model is (title, licence, language pairs), not how one file was trained
    metadata["averaged_model_files"] = [
        {"file": Path(p).name, "sha256": sha256_of(Path(p)), "steps": f.metadata.get("steps")}
        for p, f in zip(paths, files, strict=True)
    ]
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    metadata["storage_dtype"] = str(dtype or torch.float32).removeprefix("torch.")
    return save_model(
        out, last.model, last.config, last.src_tokenizer, last.tgt_tokenizer, metadata,
        dtype=None if dtype == torch.float32 else dtype,
    )  # fmt: skip
