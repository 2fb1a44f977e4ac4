"""Resumable HTTP downloads with checksum or size/format verification, and the user cache folder.

A download goes to ``<name>.part`` first; an interrupted one is resumed with an HTTP ``Range``
request (when the server honours it; otherwise it starts over), and only a verified file is
renamed to its final name, so a file under its final name is always complete.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from anuvad import __version__
from anuvad.errors import DataError

logger = logging.getLogger(__name__)

CACHE_ENV_VAR = "ANUVAD_CACHE"
CHUNK_BYTES = 1 << 20
# Magic numbers of the archive formats the catalogue uses, to catch an HTML error page or a
# truncated file when no checksum is pinned.
MAGIC = {".gz": b"\x1f\x8b", ".tgz": b"\x1f\x8b", ".zip": b"PK\x03\x04"}

Progress = Callable[[int, int | None], None]  # (bytes so far, total bytes or None)


def cache_dir() -> Path:
    """The user cache folder: ``$ANUVAD_CACHE``, else ``$XDG_CACHE_HOME/anuvad``, else
    ``~/.cache/anuvad``."""
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "anuvad"


@dataclass(frozen=True)
class RemoteFile:
    """One file to download.

    Attributes:
        url: where it is published.
        name: its file name in the download cache.
        sha256: the pinned checksum, or None when none is pinned (then ``min_bytes`` and the
            archive format are checked instead, and the catalogue says so).
        min_bytes: the smallest plausible size (an error page is far smaller).
    """

    url: str
    name: str
    sha256: str | None = None
    min_bytes: int = 0


# (resolved path, size, modification time in ns) -> SHA-256: a served 2.4 GB model file is
# checked by each of its pairs' confidence models, and read once.
_HASHED: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of a file (remembered while its size and modification time stay)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(CHUNK_BYTES), b""):
                digest.update(block)
        _HASHED[key] = digest.hexdigest()
    return _HASHED[key]


def verify(path: Path, remote: RemoteFile) -> None:
    """Check a downloaded file against its checksum, or its size and format when none is pinned.

    Raises:
        DataError: naming the file, what was expected and what was found.
    """
    if remote.sha256 is not None:
        found = sha256_of(path)
        if found != remote.sha256.lower():
            raise DataError(
                f"{remote.name} from {remote.url} has SHA-256 {found}, expected {remote.sha256}: "
                f"the download is corrupt or the file changed upstream. It was deleted; run the "
                f"command again to download it afresh."
            )
        return
    size = path.stat().st_size
    if size < remote.min_bytes:
        raise DataError(
            f"{remote.name} from {remote.url} has only {size:,} bytes, expected at least "
            f"{remote.min_bytes:,}: probably an error page or a truncated download. It was "
            f"deleted; run the command again, or download it by hand (see `anuvad data list`)."
        )
    with path.open("rb") as handle:
        head = handle.read(16)
    for suffix, magic in MAGIC.items():
        if remote.name.endswith(suffix) and not head.startswith(magic):
            looks = " (it looks like an HTML page)" if head.lstrip().startswith(b"<") else ""
            raise DataError(
                f"{remote.name} from {remote.url} is not a {suffix} file{looks}; the host may "
                f"have moved it. It was deleted; check the URL in `anuvad data list`."
            )


def download(
    remote: RemoteFile, folder: Path, progress: Progress | None = None, timeout: float = 60.0
) -> Path:
    """Download ``remote`` into ``folder`` (resuming a ``.part`` file) and verify it.

    A file already in ``folder`` under its final name is verified and reused.

    Returns:
        The path of the verified file.

    Raises:
        DataError: the server cannot be reached or answers an error (the partial file is kept,
            so the next call resumes), or the file fails verification (it is deleted).
    """
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / remote.name
    if final.is_file():
        _verify_or_delete(final, remote)
        logger.info("%s: already downloaded", remote.name)
        return final
    part = folder / (remote.name + ".part")
    offset = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": f"anuvad/{__version__} (dataset download)"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(remote.url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            resumed = offset > 0 and response.status == 206
            if offset and not resumed:
                logger.info("%s: the server ignored the range request; starting over", remote.name)
                offset = 0
            length = response.headers.get("Content-Length")
            total = offset + int(length) if length is not None else None
            written = offset
            with part.open("ab" if resumed else "wb") as handle:
                for block in iter(lambda: response.read(CHUNK_BYTES), b""):
                    handle.write(block)
                    written += len(block)
                    if progress is not None:
                        progress(written, total)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:  # the .part already holds the whole file
            logger.info("%s: the partial file is already complete", remote.name)
        else:
            raise DataError(
                f"downloading {remote.url} failed: HTTP {exc.code} {exc.reason}. Check the URL "
                f"(`anuvad data list`) or download the file by hand into {folder}."
            ) from exc
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        kept = f"; {part.stat().st_size:,} bytes kept in {part}" if part.is_file() else ""
        raise DataError(
            f"downloading {remote.url} failed: {exc}{kept}. Check your connection and run the "
            f"command again: it resumes where it stopped."
        ) from exc
    else:
        if total is not None and written != total:
            raise DataError(
                f"downloading {remote.url} stopped after {written:,} of {total:,} bytes; run the "
                f"command again: it resumes from {part}."
            )
    _verify_or_delete(part, remote)
    os.replace(part, final)
    return final


def copy_local(remote: RemoteFile, source_dir: Path, folder: Path) -> Path | None:
    """Use ``source_dir/<name>`` (a file the user downloaded by hand) when it exists.

    Returns:
        The verified copy in ``folder``, or None when ``source_dir`` does not have the file.
    """
    source = source_dir / remote.name
    if not source.is_file():
        return None
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / remote.name
    if source.resolve() != target.resolve():
        shutil.copyfile(source, target)
    _verify_or_delete(target, remote)
    return target


def _verify_or_delete(path: Path, remote: RemoteFile) -> None:
    try:
        verify(path, remote)
    except DataError:
        path.unlink(missing_ok=True)
        raise
