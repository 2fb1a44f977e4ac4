"""What a run records: a plain log file, metrics as JSON lines, TensorBoard events, run facts.

Only the main process (rank 0) writes; other ranks get a logger that does nothing.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from anuvad import __version__
from anuvad.atomic import write_atomic

logger = logging.getLogger(__name__)

LOG_FILE = "train.log"
METRICS_FILE = "metrics.jsonl"
TENSORBOARD_DIR = "tensorboard"
RUN_INFO_FILE = "run.json"


def git_commit() -> str:
    """The commit of the anuvad source tree, with ``-dirty`` if it has changes, or "unknown"."""
    source = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return "unknown"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=source,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return commit.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def read_run_history(path: Path, keep_corrupt: bool = False) -> list[dict[str, Any]]:
    """The entries of a ``run.json`` (one per start of the run); ``[]`` when it is missing.

    A file that is not a JSON list (e.g. left empty by a kill before it was written atomically)
    is not fatal: it is logged and, with ``keep_corrupt``, moved aside to
    ``run.json.corrupt-<time>`` so that nothing is lost and a new history can start.
    """
    if not path.is_file():
        return []
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        history, problem = None, f"not valid JSON ({exc})"
    else:
        problem = "not a list of run entries"
    if isinstance(history, list) and all(isinstance(entry, dict) for entry in history):
        return history
    if keep_corrupt:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(path, aside)
        logger.warning("%s is %s; moved it to %s and started a new history", path, problem, aside)
    else:
        logger.warning("%s is %s; ignoring it", path, problem)
    return []


class RunLogger:
    """Writes a run's logs under ``run_dir`` (when ``enabled``).

    Args:
        run_dir: the run folder.
        enabled: False on every rank but 0.
        tensorboard: also write TensorBoard event files (needs the ``tensorboard`` package).
    """

    def __init__(self, run_dir: Path, enabled: bool = True, tensorboard: bool = True) -> None:
        self.run_dir = run_dir
        self.enabled = enabled
        self._handler: logging.Handler | None = None
        self._writer: Any = None
        if not enabled:
            return
        self._handler = logging.FileHandler(run_dir / LOG_FILE, encoding="utf-8")
        self._handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        self._handler.setLevel(logging.INFO)
        package_logger = logging.getLogger("anuvad")
        package_logger.addHandler(self._handler)
        if package_logger.getEffectiveLevel() > logging.INFO:
            package_logger.setLevel(logging.INFO)
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._writer = SummaryWriter(str(run_dir / TENSORBOARD_DIR))
            except ImportError:  # pragma: no cover - tensorboard is a declared dependency
                logger.warning("tensorboard is not installed; no event files are written")

    def write_run_info(self, extra: dict[str, Any]) -> None:
        """Record how the run was made: command line, versions, git commit, machine."""
        if not self.enabled:
            return
        info = {
            "command": sys.argv,
            "anuvad_version": __version__,
            "git_commit": git_commit(),
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "platform": platform.platform(),
            "cpu_threads": torch.get_num_threads(),
            "cuda_devices": torch.cuda.device_count(),
            **extra,
        }
        path = self.run_dir / RUN_INFO_FILE
        history = read_run_history(path, keep_corrupt=True)
        history.append(info)  # one entry per start: the first run and every resume
        write_atomic(path, json.dumps(history, indent=2).encode("utf-8"))

    def drop_metrics_after(self, step: int) -> int:
        """Keep only the ``metrics.jsonl`` records of steps up to ``step`` (rewritten atomically).

        A resumed run replays the updates after its checkpoint and logs them again; without
        this the file would hold those steps twice. A line cut short by a kill is dropped too.

        Returns:
            The number of lines dropped.
        """
        path = self.run_dir / METRICS_FILE
        if not self.enabled or not path.is_file():
            return 0
        kept: list[str] = []
        dropped = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                keep = isinstance(record, dict) and int(record.get("step", 0)) <= step
            except (ValueError, TypeError):
                keep = False
            if keep:
                kept.append(line)
            else:
                dropped += 1
        if dropped:
            write_atomic(path, "".join(f"{line}\n" for line in kept).encode("utf-8"))
            logger.info(
                "%s: dropped %d records after step %d (replayed on resume)", path, dropped, step
            )
        return dropped

    def metrics(self, step: int, values: Mapping[str, float | int | str | bool]) -> None:
        """One JSON line ``{"step": ..., **values}`` and a TensorBoard scalar per number."""
        if not self.enabled:
            return
        with (self.run_dir / METRICS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"step": step, **values}) + "\n")
        if self._writer is not None:
            for name, value in values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self._writer.add_scalar(name, value, step)
            self._writer.flush()

    def window(self, step: int, record: dict[str, Any], bar: tqdm[Any]) -> None:
        """Record a throughput window's metrics and show them on the progress bar, or as a log
        line when the bar is off (rank > 0, ``--quiet``, tests).

        Args:
            step: the update the window ends at.
            record: at least ``loss``, ``lr`` and ``tgt_tokens_per_s``.
            bar: the training progress bar.
        """
        self.metrics(step, record)
        bar.set_postfix(
            loss=f"{record['loss']:.3f}",
            lr=f"{record['lr']:.2e}",
            tok_s=f"{record['tgt_tokens_per_s']:.0f}",
        )
        if bar.disable:
            logger.info(
                "step %d: loss %.3f, lr %.2e, %.0f target tokens/s",
                step,
                record["loss"],
                record["lr"],
                record["tgt_tokens_per_s"],
            )

    def close(self) -> None:
        """Flush and detach."""
        if self._handler is not None:
            logging.getLogger("anuvad").removeHandler(self._handler)
            self._handler.close()
            self._handler = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class ThroughputWindow:
    """Training loss and speed between two log lines."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start a new window now."""
        self.loss_sum, self.tokens, self.steps = 0.0, 0, 0
        self.started = time.monotonic()

    def add(self, loss_per_token: float, tokens: int) -> None:
        """Count one update of ``tokens`` target tokens."""
        self.loss_sum += loss_per_token * tokens
        self.tokens += tokens
        self.steps += 1

    def summary(self) -> dict[str, float]:
        """Mean loss per token, target tokens/s and seconds per step; then start anew."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        record = {
            "loss": self.loss_sum / max(self.tokens, 1),
            "tgt_tokens_per_s": self.tokens / elapsed,
            "step_seconds": elapsed / max(self.steps, 1),
        }
        self.reset()
        return record


def peak_memory_mib(device: torch.device) -> dict[str, float]:
    """Peak resident memory of this process and, on a GPU, peak tensor memory, in MiB."""
    peak = {"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device.type == "cuda":
        peak["peak_cuda_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
    return peak
