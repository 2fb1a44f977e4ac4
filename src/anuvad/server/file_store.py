"""Translated files waiting to be downloaded (LibreTranslate's ``/translate_file`` answers with
a URL, ``/download_file/<name>`` serves it).

The files live in memory, never on disk: a download names a random token, not a path, so no
request can reach a file the server did not make for it (the served files are fixed at start-up).
The store is bounded: a file is kept :data:`KEEP_SECONDS` (LibreTranslate deletes its own after a
while too), and beyond :data:`MAX_FILES` files or :data:`MAX_BYTES` bytes the oldest go first.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

KEEP_SECONDS = 30 * 60.0
MAX_FILES = 256
MAX_BYTES = 64 * 2**20


@dataclass(frozen=True)
class StoredFile:
    """A translated file: what the download sends."""

    name: str  # the name to save it under, e.g. "report.hi.html"
    data: bytes
    media_type: str  # e.g. "text/html; charset=utf-8"
    stored: float  # the store's clock when it was put


class TranslatedFiles:
    """Translated files by token, oldest first, within a time and a size bound."""

    def __init__(
        self,
        keep_seconds: float = KEEP_SECONDS,
        max_files: int = MAX_FILES,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keep_seconds, self.max_files, self.max_bytes = keep_seconds, max_files, max_bytes
        self.clock = clock
        self._files: OrderedDict[str, StoredFile] = OrderedDict()
        self._bytes = 0

    def put(self, name: str, data: bytes, media_type: str) -> str:
        """Keep ``data`` and return the token that fetches it (URL-safe, 128 random bits, no
        ``.``: a download path is ``<token>.<name>``)."""
        token = secrets.token_urlsafe(16)
        self._files[token] = StoredFile(name, data, media_type, self.clock())
        self._bytes += len(data)
        self._expire()
        return token

    def get(self, token: str) -> StoredFile | None:
        """The file stored under ``token``; None when there is none (never made, or gone)."""
        self._expire()
        return self._files.get(token)

    def __len__(self) -> int:
        return len(self._files)

    def _expire(self) -> None:
        """Drop the files kept too long, then the oldest while over a bound (the newest file
        stays even when it alone is over the byte bound: it was just made for a client)."""
        now = self.clock()
        while self._files:
            token, oldest = next(iter(self._files.items()))
            old = now - oldest.stored > self.keep_seconds
            over = len(self._files) > self.max_files or self._bytes > self.max_bytes
            if not (old or (over and len(self._files) > 1)):
                break
            del self._files[token]
            self._bytes -= len(oldest.data)


__all__ = ["KEEP_SECONDS", "MAX_BYTES", "MAX_FILES", "StoredFile", "TranslatedFiles"]
