"""A data pack: every file a set of recipes reads, in one checksummed archive that can travel
where the data folder cannot (a lent GPU machine gets the working tree only; issue 32).

    anuvad data pack --config configs/enhi_general_ft_d256_L3.yaml --out enhi.pack.tar.xz
    anuvad data unpack enhi.pack.tar.xz --to /tmp/data
    ANUVAD_DATA=/tmp/data anuvad train --config configs/enhi_general_ft_d256_L3.yaml

The archive is a tar compressed with xz (text corpora shrink several times). Its first member,
``MANIFEST.json``, lists every file with its SHA-256 and size. Files are stored under
``root/`` with their path relative to the data root, so the same recipe reads them from the
unpacked folder through ``ANUVAD_DATA``; a file a recipe names from the working directory
(``./data/synthetic/...``) is stored under ``cwd/`` and unpacked beside the checkout.

Unpacking checks everything before anything is in place: member names (no absolute paths, no
``..``, only regular files the manifest lists), sizes and SHA-256; a file lands under its name
only once its bytes were verified, so an interrupted or corrupted pack never leaves a
half-written corpus behind.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import lzma
import os
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from anuvad.config import CorpusConfig, ExperimentConfig
from anuvad.data.corpora import resolve_path
from anuvad.errors import DataError

MANIFEST = "MANIFEST.json"
FORMAT = "anuvad-data-pack"
FORMAT_VERSION = 1
CHUNK = 1 << 20


@dataclass(frozen=True)
class PackedFile:
    """One file of a pack: where it was read from, its name in the pack, its checksum."""

    source: Path
    name: str  # "root/<path under the data root>" or "cwd/<path under the working directory>"
    sha256: str
    size: int


def corpus_paths(corpus: CorpusConfig, root: Path) -> list[Path]:
    """The files ``corpus`` reads (both sides of an aligned pair, a TSV, every tree file)."""
    if corpus.format == "aligned":
        return [resolve_path(corpus.src, root), resolve_path(corpus.tgt, root)]
    path = resolve_path(corpus.path, root)
    if corpus.format == "ptb" and path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    if corpus.format == "ptb" and glob.has_magic(str(path)):
        return sorted(Path(p) for p in glob.glob(str(path)) if Path(p).is_file())
    return [path]


def recipe_files(configs: Iterable[ExperimentConfig]) -> list[tuple[Path, Path]]:
    """(file, the data root it is relative to) for every corpus the configs read: training
    corpora with a weight above 0, dev sets and the cleaning's excluded sets, each once."""
    found: dict[Path, Path] = {}
    for config in configs:
        data = config.data
        root = data.resolve_root()
        used = [c for c in data.train if c.weight > 0]
        for corpus in [*used, *data.valid, *data.clean.exclude]:
            for path in corpus_paths(corpus, root):
                found.setdefault(path, root)
    return list(found.items())


def _pack_name(path: Path, root: Path) -> str:
    """``root/<relative path>`` for a file under ``root``, else ``cwd/<relative path>``.

    Raises:
        DataError: the file is under neither (an absolute path elsewhere cannot be recreated).
    """
    for prefix, base in (("root", root), ("cwd", Path.cwd())):
        try:
            relative = path.resolve().relative_to(base.resolve())
        except ValueError:
            continue
        return f"{prefix}/{relative.as_posix()}"
    raise DataError(
        f"{path} is outside the data root ({root}) and the working directory; copy it under "
        "one of them (or set data.data_root / ANUVAD_DATA) so a pack can recreate its path"
    )


def _checksum(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def plan_pack(files: Iterable[tuple[Path, Path]]) -> list[PackedFile]:
    """Name and checksum every (file, data root) pair, in a stable order.

    Raises:
        DataError: a file is missing (named, with the fix) or outside both bases.
    """
    missing = [str(path) for path, _ in files if not path.is_file()]
    if missing:
        raise DataError(
            f"cannot pack: {len(missing)} file(s) the recipes read do not exist: "
            f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}; download them "
            "(anuvad data download NAME), generate them (make synthetic writes data/synthetic/), "
            "or fix the config's paths"
        )
    planned = [PackedFile(path, _pack_name(path, root), *_checksum(path)) for path, root in files]
    return sorted(planned, key=lambda f: f.name)


def write_pack(files: list[PackedFile], out: Path, preset: int = 6) -> str:
    """Write the pack to ``out`` (a temporary name, renamed when complete) and return its own
    SHA-256, to check after copying it elsewhere."""
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "files": {f.name: {"sha256": f.sha256, "bytes": f.size} for f in files},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with (
        lzma.open(partial, "wb", preset=preset) as packed,
        tarfile.open(fileobj=packed, mode="w") as tar,
    ):
        body = json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8")
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        for f in files:
            member = tarfile.TarInfo(f.name)
            member.size = f.size
            with f.source.open("rb") as handle:
                tar.addfile(member, handle)
    os.replace(partial, out)
    return _checksum(out)[0]


def _safe_name(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or path.parts[:1] not in (("root",), ("cwd",)):
        raise DataError(f"pack member {name!r} has an unsafe name; the pack is not anuvad's")
    return path


def unpack(pack: Path, to: Path, cwd: Path | None = None) -> list[Path]:
    """Unpack ``pack``: ``root/`` files under ``to``, ``cwd/`` files under ``cwd`` (default:
    the working directory), each verified against the manifest before it is renamed into place;
    a file already there with the right checksum is kept.

    Returns:
        The paths of every file of the pack.

    Raises:
        DataError: not a pack, an unsafe or unlisted member, a size or checksum mismatch, or a
            listed file missing from the archive (each named; nothing unverified is left).
    """
    bases = {"root": to, "cwd": cwd or Path.cwd()}
    written: list[Path] = []
    seen: set[str] = set()
    try:
        with tarfile.open(pack, mode="r:*") as tar:
            first = tar.next()
            handle = tar.extractfile(first) if first is not None else None
            if first is None or first.name != MANIFEST or handle is None:
                raise DataError(f"{pack} does not start with {MANIFEST}; not an anuvad data pack")
            manifest = json.loads(handle.read())
            if manifest.get("format") != FORMAT or manifest.get("format_version") != 1:
                raise DataError(f"{pack}: unknown pack format {manifest.get('format')!r}")
            listed: dict[str, dict[str, int | str]] = manifest["files"]
            for member in tar:
                if member is first:  # iteration starts again from the first member
                    continue
                written.append(_unpack_member(tar, member, listed, bases, pack))
                seen.add(member.name)
    except (tarfile.TarError, EOFError, OSError, ValueError, KeyError) as exc:
        raise DataError(f"{pack} is not a readable, complete data pack ({exc})") from exc
    missing = sorted(set(listed) - seen)
    if missing:
        raise DataError(f"{pack} lacks {len(missing)} listed file(s), e.g. {missing[0]}")
    return written


def _unpack_member(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    listed: dict[str, dict[str, int | str]],
    bases: dict[str, Path],
    pack: Path,
) -> Path:
    """Verify one member against the manifest and put it in place (see :func:`unpack`)."""
    name = _safe_name(member.name)
    if not member.isfile() or member.name not in listed:
        raise DataError(f"{pack}: member {member.name!r} is not a file the manifest lists")
    expected = listed[member.name]
    target = bases[name.parts[0]].joinpath(*name.parts[1:])
    if target.is_file() and _checksum(target) == (expected["sha256"], expected["bytes"]):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest, size = hashlib.sha256(), 0
    source = tar.extractfile(member)
    assert source is not None  # a regular file, checked above
    try:
        with partial.open("wb") as out:
            while chunk := source.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        if (digest.hexdigest(), size) != (expected["sha256"], expected["bytes"]):
            raise DataError(
                f"{pack}: {member.name} does not match its checksum (damaged in transit); "
                "copy the pack again"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


__all__ = ["PackedFile", "corpus_paths", "plan_pack", "recipe_files", "unpack", "write_pack"]
