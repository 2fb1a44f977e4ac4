"""Marian release zips fetched by URL: ``anuvad import https://object.pouta.csc.fi/Tatoeba-MT-
models/eng-hin/opus+bt-2021-04-10.zip`` downloads the zip into the user cache, then imports it
as a local one (:mod:`anuvad.interop.marian_release`).

The download is the dataset downloader's (:func:`anuvad.data.download.download`): the bytes go to
``<name>.part``, an interrupted download resumes with an HTTP ``Range`` request, and only a file
that starts as a zip does is renamed to its final name, so a zip in the cache is always whole and
a second import of the same URL reads it without the network. Its errors are said again here in a
release's words (the URL, and what to do: connect and run again, or download by hand and import
the path).
"""

from __future__ import annotations

import http.client
import logging
import re
import urllib.error
import urllib.parse
import zipfile
from pathlib import Path

from anuvad.data.download import Progress, RemoteFile, cache_dir, download
from anuvad.errors import DataError

logger = logging.getLogger(__name__)

RELEASES_FOLDER = "marian-releases"  # under the user cache folder
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")  # characters a cached path component may not keep


def is_release_url(source: str) -> bool:
    """Whether ``source`` is an http(s) URL (of a release zip) rather than a path or a hub id."""
    return urllib.parse.urlsplit(source).scheme in ("http", "https")


def cached_release(url: str) -> Path:
    """Where the zip of ``url`` is kept: ``<cache>/marian-releases/<host>/<the URL's path>``, so
    ``.../object.pouta.csc.fi/Tatoeba-MT-models/eng-hin/opus+bt-2021-04-10.zip``: one file per
    URL, under a folder (``eng-hin``) that still names the languages; always ending ``.zip``,
    which makes the downloader check the zip's magic number."""
    parts = urllib.parse.urlsplit(url)
    segments = urllib.parse.unquote(parts.path).split("/")
    folders = [_UNSAFE.sub("_", s) for s in segments if s not in ("", ".", "..")]
    name = folders.pop() if folders else "release"
    if not name.lower().endswith(".zip"):
        name += ".zip"
    return cache_dir() / RELEASES_FOLDER / _UNSAFE.sub("_", parts.netloc) / Path(*folders) / name


def download_release(url: str, progress: Progress | None = None, timeout: float = 60.0) -> Path:
    """Download the release zip at ``url`` into the cache (reusing a whole one already there).

    Args:
        url: an http(s) URL of a release ``.zip``.
        progress: told (bytes so far, total bytes or None) as the bytes arrive.
        timeout: seconds to wait for the server at each step.

    Returns:
        The cached zip.

    Raises:
        DataError: one line naming the URL and what to do: the server cannot be reached (the
            partial file is kept; the next call resumes it), answers an HTTP error, stops early,
            or sends something that is not a zip (deleted).
    """
    path = cached_release(url)
    part = path.with_name(path.name + ".part")
    by_hand = f"or download the zip by hand and import its path: anuvad import {path.name}"
    try:
        zipped = download(RemoteFile(url=url, name=path.name), path.parent, progress, timeout)
    except DataError as exc:
        cause = exc.__cause__
        if isinstance(cause, urllib.error.HTTPError):
            raise DataError(
                f"cannot download {url}: the server answers HTTP {cause.code} {cause.reason}; "
                f"check the URL (Tatoeba-MT lists its releases in Helsinki-NLP/Tatoeba-Challenge, "
                f"models/<src>-<tgt>/README.md), {by_hand}"
            ) from exc
        if isinstance(cause, urllib.error.URLError | http.client.HTTPException | OSError):
            reason = cause.reason if isinstance(cause, urllib.error.URLError) else cause
            kept = ""
            if part.is_file():
                kept = f" (it resumes from the {part.stat().st_size:,} bytes kept)"
            raise DataError(
                f"cannot download {url} ({reason}): importing a release URL needs the internet "
                f"once; connect and run the command again{kept}, {by_hand}"
            ) from exc
        if part.is_file():  # stopped early: the downloader's message says it resumes
            raise
        raise DataError(  # it failed verification and was deleted
            f"{url} did not send a zip file (nothing was kept); check that the URL is a "
            f"release's .zip, {by_hand}"
        ) from exc
    problem = unreadable_zip(zipped)
    if problem:  # cut short without a length to tell (a chunked answer), or a damaged cache
        zipped.unlink()
        raise DataError(
            f"{url} arrived incomplete or damaged ({problem}; the cached copy was deleted); run "
            f"the command again, {by_hand}"
        )
    return zipped


def unreadable_zip(path: Path) -> str:
    """What is wrong with the zip at ``path`` ("": it reads whole, every member's CRC checked)."""
    try:
        with zipfile.ZipFile(path) as archive:
            broken = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        return f"not a readable zip: {exc}"
    return f"member {broken} is damaged" if broken else ""
