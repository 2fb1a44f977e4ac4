"""anuvad.inference.engine.server_layout: how a server splits the CPU between replicas and
threads."""

from __future__ import annotations

import pytest
import torch

from anuvad.errors import ConfigError
from anuvad.inference.engine import server_layout


def test_a_ctranslate2_server_on_a_cpu_gets_one_single_threaded_replica_per_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch, "get_num_threads", lambda: 6)
    assert server_layout("ctranslate2", "cpu", threads=0, replicas=0) == (1, 6)


@pytest.mark.parametrize(
    ("engine", "device", "threads", "replicas", "layout"),
    [
        ("ctranslate2", "cpu", 3, 0, (3, 1)),  # threads given: one replica of them
        ("ctranslate2", "cpu", 0, 2, (0, 2)),  # replicas given: kept
        ("ctranslate2", "cuda", 0, 0, (0, 1)),  # a GPU: one replica
        ("torch", "cpu", 0, 0, (0, 1)),  # the torch engine runs one call at a time
        ("torch", "cpu", 2, 0, (2, 1)),
    ],
)
def test_other_settings_keep_one_replica_or_what_was_asked(
    engine: str, device: str, threads: int, replicas: int, layout: tuple[int, int]
) -> None:
    assert server_layout(engine, device, threads, replicas) == layout


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"replicas \(-1\) must be >= 0"):
        server_layout("ctranslate2", "cpu", threads=0, replicas=-1)
