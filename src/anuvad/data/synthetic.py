"""A built-in toy task (reversing digit strings) for the demo and the system tests.

It needs no downloaded data, so ``make demo`` works on any fresh machine, and it exercises the
real pipeline end to end: files on disk → prepare → train → model file → translate.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

from anuvad.config import CorpusConfig, ExperimentConfig


def reversal_pairs(
    count: int, seed: int, min_len: int = 3, max_len: int = 10
) -> list[tuple[str, str]]:
    """``count`` random digit strings and their reversals, e.g. ("30517", "71503")."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(min_len, max_len)))
        pairs.append((digits, digits[::-1]))
    return pairs


def write_reversal_corpus(
    out_dir: str | Path, train_size: int = 20000, valid_size: int = 200, seed: int = 1
) -> tuple[CorpusConfig, CorpusConfig]:
    """Write aligned train/valid files for the reversal task.

    Returns:
        Corpus entries for ``data.train`` and ``data.valid`` (absolute paths).
    """
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    corpora = []
    for split, size, split_seed in (("train", train_size, seed), ("valid", valid_size, seed + 1)):
        pairs = reversal_pairs(size, split_seed)
        (out / f"{split}.src").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
        (out / f"{split}.tgt").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
        corpora.append(
            CorpusConfig(
                name=f"reverse-{split}",
                src=str(out / f"{split}.src"),
                tgt=str(out / f"{split}.tgt"),
            )
        )
    return corpora[0], corpora[1]


def reversal_config(
    config: ExperimentConfig, out_dir: str | Path, seed: int = 1
) -> ExperimentConfig:
    """``config`` (e.g. the tiny preset) pointed at a freshly written reversal corpus."""
    train, valid = write_reversal_corpus(out_dir, seed=seed)
    data = dataclasses.replace(config.data, train=[train], valid=[valid])
    return dataclasses.replace(config, name=f"{config.name}_reverse", data=data)
