"""Text in, text out: the one object the CLI and the server translate with.

It tokenizes, batches sentences of similar length together, runs the search and detokenizes,
returning results in input order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from anuvad.batching import collate_source
from anuvad.checkpoint import ModelFile, load_model
from anuvad.config import DecodeConfig
from anuvad.search import greedy_search

logger = logging.getLogger(__name__)


def resolve_device(name: str) -> torch.device:
    """``"auto"`` → the first CUDA device when there is one, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


@dataclass
class Translation:
    """One translated sentence."""

    source: str
    text: str
    token_ids: list[int]
    score: float
    finished: bool


class Translator:
    """Translate sentences with a loaded model file.

    Args:
        model_file: the model, its config and tokenizers (see :func:`anuvad.checkpoint.load_model`).
        decode: search settings; defaults to the ones stored with the model.
    """

    def __init__(self, model_file: ModelFile, decode: DecodeConfig | None = None) -> None:
        self.model_file = model_file
        self.model = model_file.model.eval()
        self.src_tokenizer = model_file.src_tokenizer
        self.tgt_tokenizer = model_file.tgt_tokenizer
        self.decode = decode or model_file.config.decode
        self.device = next(self.model.parameters()).device
        # Room for EOS after the source tokens.
        self.max_src_tokens = model_file.config.model.max_positions - 1

    @classmethod
    def from_file(cls, path: str | Path, device: str = "auto") -> Translator:
        """Load ``path`` (a model file) onto ``device`` ("auto", "cpu", "cuda", ...)."""
        return cls(load_model(path, device=resolve_device(device)))

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        encoded = self.src_tokenizer.encode_batch([t.strip() for t in texts])
        for i, ids in enumerate(encoded):
            if len(ids) > self.max_src_tokens:
                logger.warning(
                    "sentence %d has %d tokens; truncated to the model's %d",
                    i + 1,
                    len(ids),
                    self.max_src_tokens,
                )
                encoded[i] = ids[: self.max_src_tokens]
        return encoded

    def _length_sorted_batches(self, lengths: Sequence[int]) -> Iterator[list[int]]:
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        size = max(1, self.decode.batch_size)
        for start in range(0, len(order), size):
            yield order[start : start + size]

    def translate(self, texts: Sequence[str]) -> list[Translation]:
        """Translate ``texts`` greedily, batching similar lengths; results in input order."""
        encoded = self._encode(texts)
        results: list[Translation | None] = [None] * len(texts)
        for indices in self._length_sorted_batches([len(ids) for ids in encoded]):
            src_ids, src_pad_mask = collate_source([encoded[i] for i in indices])
            hypotheses = greedy_search(
                self.model,
                src_ids.to(self.device),
                src_pad_mask.to(self.device),
                self.decode.max_len_a,
                self.decode.max_len_b,
            )
            for index, hyp in zip(indices, hypotheses, strict=True):
                results[index] = Translation(
                    source=texts[index],
                    text=self.tgt_tokenizer.decode(hyp.token_ids),
                    token_ids=hyp.token_ids,
                    score=hyp.score,
                    finished=hyp.finished,
                )
        return [r for r in results if r is not None]

    def translate_text(self, texts: Sequence[str]) -> list[str]:
        """Like :meth:`translate`, returning only the output strings."""
        return [t.text for t in self.translate(texts)]
