"""What the tests' offline Hugging Face model folders share (:mod:`marian_folders`,
:mod:`m2m100_folders`): the shape fields every family has, SentencePiece models trained on the
tests' own sentences, and the search for an EOS strength that ends a random model's greedy
outputs on their own at varied lengths."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sentencepiece as spm
import torch


@dataclass(frozen=True)
class ModelShape:
    """The shape fields of every family's model to build (a family's ``Shape`` adds its own)."""

    layers: tuple[int, int] = (2, 2)  # encoder, decoder
    d_model: int = 32
    heads: int = 4
    ffn: int = 64
    seed: int = 0  # torch's seed for the random weights


def train_spm(lines: list[str], vocab_size: int, model_type: str, **options: Any) -> bytes:
    """A SentencePiece model (``model_type`` "bpe" or "unigram") trained on ``lines`` (four
    times over), its bytes; ``options`` go to the trainer as well."""
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.Train(
        sentence_iterator=iter(lines * 4),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type=model_type,
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
        **options,
    )
    return buffer.getvalue()


def tune_eos(
    set_strength: Callable[[float], object],
    greedy_rows: Callable[[], list[list[int]]],
    eos: int,
    grid: Iterable[float],
) -> None:
    """Leave the model at the EOS strength of ``grid`` whose greedy outputs most often end on
    their own after 2 to 20 tokens, the most distinct lengths next (the first such on ties).

    Args:
        set_strength: sets the strength in the model (run without gradients).
        greedy_rows: the model's greedy outputs of the test sentences, each row from its first
            generated token.
        eos: EOS's id.
        grid: the strengths to try.
    """
    best: tuple[int, int, float] = (-1, -1, 0.0)
    with torch.no_grad():
        for strength in grid:
            set_strength(strength)
            rows = greedy_rows()
            ended = [row.index(eos) for row in rows if eos in row and 2 <= row.index(eos) <= 20]
            best = max(best, (len(ended), len(set(ended)), -strength))
        set_strength(-best[2])
