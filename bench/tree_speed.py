"""Decoding speed of one anuvad source tree on one model: compares two versions of the code
(e.g. before and after a redesign, a ``git worktree`` of the old commit) in separate processes.

    OMP_NUM_THREADS=2 taskset -c 4,5 python3 bench/tree_speed.py OLD/src MODEL SOURCES 4
    OMP_NUM_THREADS=2 taskset -c 4,5 python3 bench/tree_speed.py src MODEL SOURCES 4

prints "<old|new> beam K: N sentences/s" for one timed pass after a 40-sentence warm-up
(trees from before the search settings became one DecodeConfig are "old").
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    src, model, sources, beam = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sys.path.insert(0, src)
    torch = importlib.import_module("torch")
    torch.set_num_threads(2)
    try:
        translator_module = importlib.import_module("anuvad.inference.translator")
        new = True
    except ImportError:
        translator_module = importlib.import_module("anuvad.translator")
        new = False
    lines = Path(sources).read_text(encoding="utf-8").splitlines()
    t = translator_module.Translator.from_file(model, device="cpu")

    def run(texts: list[str]) -> Any:
        if new:
            return t.translate(texts, t.settings(beam_size=beam))
        return t.translate(texts, beam_size=beam)

    run(lines[:40])  # warm-up (an old tree's product chooser times its products here)
    start = time.perf_counter()
    run(lines)
    seconds = time.perf_counter() - start
    rate = len(lines) / seconds
    print(f"{'new' if new else 'old'} beam {beam}: {rate:.2f} sentences/s ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
