"""Encoded parallel data on disk: token ids of sentence pairs as flat int32 tensors plus offsets
(:class:`EncodedCorpus`), written atomically. :mod:`anuvad.data.prepare` builds them from raw text.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from anuvad.atomic import write_atomic
from anuvad.errors import DataError

__all__ = ["FORMAT_VERSION", "REDO", "EncodedCorpus"]

FORMAT_VERSION = 1  # of the prepared folder's files (report.json and the encoded corpora)
REDO = "run `anuvad prepare --config <your config>` to (re)create it"


def _flatten(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(N_tokens,) int32 ids and (N + 1,) int64 offsets: sequence i is ``ids[off[i]:off[i+1]]``."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.int32, count=int(offsets[-1]))
    return torch.from_numpy(flat), torch.from_numpy(offsets)


def _unflatten(flat: torch.Tensor, offsets: torch.Tensor) -> list[list[int]]:
    ids: list[int] = flat.tolist()
    off: list[int] = offsets.tolist()
    return [ids[off[i] : off[i + 1]] for i in range(len(off) - 1)]


@dataclass
class EncodedCorpus:
    """Token ids of sentence pairs, without BOS/EOS (collation adds them).

    Attributes:
        src: per pair, the source token ids.
        tgt: per pair, the target token ids.
    """

    src: list[list[int]]
    tgt: list[list[int]]

    def __post_init__(self) -> None:
        if len(self.src) != len(self.tgt):
            raise ValueError(f"{len(self.src)} source but {len(self.tgt)} target sequences")

    def __len__(self) -> int:
        return len(self.src)

    def save(self, path: Path) -> None:
        """Write atomically as flat int32 ids plus int64 offsets per side (``weights_only`` safe).

        Args:
            path: the ``.pt`` file to write.
        """
        src_ids, src_offsets = _flatten(self.src)
        tgt_ids, tgt_offsets = _flatten(self.tgt)
        state = {
            "format_version": FORMAT_VERSION,
            "src_ids": src_ids,
            "src_offsets": src_offsets,
            "tgt_ids": tgt_ids,
            "tgt_offsets": tgt_offsets,
        }
        buffer = io.BytesIO()
        torch.save(state, buffer)
        write_atomic(Path(path), buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> EncodedCorpus:
        """Read a file written by :meth:`save`.

        Args:
            path: the ``.pt`` file.

        Returns:
            The corpus.

        Raises:
            DataError: the file is missing, unreadable or not in this format.
        """
        path = Path(path)
        if not path.is_file():
            raise DataError(f"encoded corpus {path} does not exist; {REDO}")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many types for a truncated or foreign file
            raise DataError(f"{path} is not a readable encoded corpus ({exc}); {REDO}") from exc
        keys = ("src_ids", "src_offsets", "tgt_ids", "tgt_offsets")
        if (
            not isinstance(state, dict)
            or state.get("format_version") != FORMAT_VERSION
            or not all(isinstance(state.get(k), torch.Tensor) for k in keys)
        ):
            raise DataError(
                f"{path} is not an anuvad encoded corpus of format {FORMAT_VERSION}; {REDO}"
            )
        for side in ("src", "tgt"):
            ids, offsets = state[f"{side}_ids"], state[f"{side}_offsets"]
            if offsets.numel() < 1 or int(offsets[-1]) != ids.numel():
                raise DataError(f"{path}: {side} offsets do not match its ids (truncated?); {REDO}")
        return cls(
            src=_unflatten(state["src_ids"], state["src_offsets"]),
            tgt=_unflatten(state["tgt_ids"], state["tgt_offsets"]),
        )
