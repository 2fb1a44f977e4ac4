"""Crash-safe file writes: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["remove_stale_temp_files", "write_atomic", "write_atomic_with"]


def write_atomic_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Let ``write`` fill a temporary file beside ``path``, fsync it, then rename it over
    ``path``: readers see the old file or the new one, never half, and a kill leaves at most a
    ``.<name>.<pid>.<random>.tmp`` file (never taken for the real one).

    The file gets the usual umask permissions (e.g. 0644), like any file the user writes, not
    tempfile's private 0600.

    Args:
        path: the file to (re)place.
        write: writes the contents to the open binary file it is given.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("xb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`write_atomic_with`)."""
    write_atomic_with(path, lambda handle: handle.write(data))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete the temporary files that killed writers left in ``folder``.

    Only ``.<name>.<pid>.<random>.tmp`` files (:func:`write_atomic_with`'s) whose writing
    process no longer exists on this machine are removed; a live writer's file is left alone.

    Returns:
        The files removed.
    """
    removed = []
    for path in sorted(Path(folder).glob(".*.tmp")):
        parts = path.name.split(".")
        pid = parts[-3] if len(parts) >= 5 else ""
        if pid.isdigit() and not _alive(int(pid)):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
