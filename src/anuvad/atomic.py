"""Crash-safe file writes: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    Args:
        path: the file to (re)place.
        data: its new contents.
    """
    # A unique name in the same folder (os.replace is atomic within one file system); plain
    # open() so the file gets the usual umask permissions, unlike tempfile's private 0600.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
