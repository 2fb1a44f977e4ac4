"""One writer per run folder: a lock file that the training process holds while it runs.

``runs/<name>/.lock`` is locked with ``flock`` by the process that writes the run (rank 0) and
holds its pid. The operating system releases the lock when that process ends in any way, a
SIGKILL included, so a crashed run leaves no stale lock; but a run folder that a live process
still writes (e.g. an orphaned worker of a killed launcher, or a second ``anuvad train`` started
by mistake) cannot be resumed or started again until that process is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from anuvad.errors import TrainingError

LOCK_FILE = ".lock"


@contextlib.contextmanager
def hold_run_folder(run_dir: Path) -> Iterator[Path]:
    """Hold ``run_dir``'s lock for the duration of the ``with`` block.

    Raises:
        TrainingError: another live process holds it (its pid is named).
    """
    path = run_dir / LOCK_FILE
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise TrainingError(
            f"run directory {run_dir} is not writable ({exc}); choose another with --run-dir"
        ) from exc
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, 64, 0).decode("ascii", "replace").strip() or "unknown"
            raise TrainingError(
                f"{run_dir} is in use by another training process (pid {holder}); wait for it "
                f"to finish or stop it (kill {holder}), or train into another --run-dir"
            ) from None
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()}\n".encode("ascii"), 0)
        yield path
    finally:
        os.close(handle)  # closing releases the lock
