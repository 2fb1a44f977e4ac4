"""A data pack holds exactly what the recipes read, and unpacks only verified bytes."""

from __future__ import annotations

import io
import json
import lzma
import os
import tarfile
from pathlib import Path

import pytest

from anuvad.cli.main import main
from anuvad.config import config_from_dict, config_to_dict
from anuvad.data.pack import plan_pack, recipe_files, unpack, write_pack
from anuvad.errors import DataError


def write_root(root: Path) -> dict[str, bytes]:
    """A data root with an aligned pair, a TSV, a dev pair, an unused corpus and a stray file."""
    files = {
        "en-hi/a.en": b"one\ntwo\n",
        "en-hi/a.hi": "एक\nदो\n".encode(),
        "en-hi/b.tsv": "three\tतीन\n".encode(),
        "en-hi/dev.en": b"four\n",
        "en-hi/dev.hi": "चार\n".encode(),
        "en-hi/unused.en": b"never read\n",
        "en-hi/unused.hi": b"never read\n",
    }
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
    return files


def recipe(root: Path) -> dict[str, object]:
    data = config_to_dict(config_from_dict({}))
    data["data"]["data_root"] = str(root)
    data["data"]["train"] = [
        {"name": "a", "src": "en-hi/a.en", "tgt": "en-hi/a.hi"},
        {"name": "b", "format": "tsv", "path": "en-hi/b.tsv"},
        {"name": "off", "src": "en-hi/unused.en", "tgt": "en-hi/unused.hi", "weight": 0},
    ]
    data["data"]["valid"] = [{"name": "dev", "src": "en-hi/dev.en", "tgt": "en-hi/dev.hi"}]
    return data


def test_a_pack_round_trips_exactly_what_the_recipe_reads(tmp_path: Path) -> None:
    files = write_root(tmp_path / "data")
    config = config_from_dict(recipe(tmp_path / "data"))
    planned = plan_pack(recipe_files([config, config]))  # a file read twice is packed once
    assert [f.name for f in planned] == [
        f"root/{n}" for n in sorted(files) if "unused" not in n
    ]  # a corpus with weight 0 is not read, so not packed
    digest = write_pack(planned, tmp_path / "p.tar.xz", preset=1)
    assert len(digest) == 64 and not (tmp_path / "p.tar.xz.partial").exists()
    out = unpack(tmp_path / "p.tar.xz", tmp_path / "copy")
    assert len(out) == len(planned)
    for name, body in files.items():
        copied = tmp_path / "copy" / name
        assert copied.read_bytes() == body if "unused" not in name else not copied.exists()
    again = unpack(tmp_path / "p.tar.xz", tmp_path / "copy")  # verified files are kept
    assert again == out


def write_tampered(path: Path, members: dict[str, bytes], manifest: dict[str, object]) -> None:
    with lzma.open(path, "wb") as packed, tarfile.open(fileobj=packed, mode="w") as tar:
        for name, body in [("MANIFEST.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


def test_a_damaged_pack_is_refused_and_leaves_nothing_half_written(tmp_path: Path) -> None:
    files = write_root(tmp_path / "data")
    config = config_from_dict(recipe(tmp_path / "data"))
    write_pack(plan_pack(recipe_files([config])), tmp_path / "p.tar.xz", preset=1)
    good = (tmp_path / "p.tar.xz").read_bytes()
    with tarfile.open(tmp_path / "p.tar.xz") as tar:
        handle = tar.extractfile("MANIFEST.json")
        assert handle is not None
        manifest = json.loads(handle.read())
    body = files["en-hi/a.en"]
    changed = {"root/en-hi/a.en": body.replace(b"one", b"ONE")}  # same size, other bytes
    write_tampered(tmp_path / "bad.tar.xz", changed, manifest)
    with pytest.raises(DataError, match=r"root/en-hi/a\.en does not match its checksum"):
        unpack(tmp_path / "bad.tar.xz", tmp_path / "out")
    assert not any(p.is_file() for p in (tmp_path / "out").rglob("*"))
    write_tampered(tmp_path / "evil.tar.xz", {"root/../../escape": b"x"}, manifest)
    with pytest.raises(DataError, match="unsafe name"):
        unpack(tmp_path / "evil.tar.xz", tmp_path / "out")
    assert not (tmp_path / "escape").exists()
    (tmp_path / "cut.tar.xz").write_bytes(good[: len(good) // 2])
    with pytest.raises(DataError, match="not a readable, complete data pack"):
        unpack(tmp_path / "cut.tar.xz", tmp_path / "out2")
    write_tampered(tmp_path / "short.tar.xz", {}, manifest)
    with pytest.raises(DataError, match=r"lacks 5 listed file\(s\)"):
        unpack(tmp_path / "short.tar.xz", tmp_path / "out3")


def test_the_cli_packs_unpacks_and_names_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    monkeypatch.chdir(tmp_path)
    write_root(tmp_path / "data")
    (tmp_path / "data" / "en-hi" / "mono.hi").write_text("पाँच\n", encoding="utf-8")
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(recipe(tmp_path / "data")), encoding="utf-8")
    pack = ["data", "pack", "--config", "r.yaml", "--file", "en-hi/mono.hi", "--out", "p.tar.xz"]
    assert main([*pack, "--level", "1"]) == 0
    printed = capsys.readouterr().out
    assert "p.tar.xz: 6 files" in printed
    digest = printed.split("sha256 ")[1].split()[0]
    assert main(["data", "unpack", "p.tar.xz", "--to", "copy", "--sha256", digest]) == 0
    assert (tmp_path / "copy" / "en-hi" / "mono.hi").read_text(encoding="utf-8") == "पाँच\n"
    assert main(["data", "unpack", "p.tar.xz", "--to", "copy", "--sha256", "0" * 64]) == 2
    assert "is not the pack --sha256 names" in capsys.readouterr().err
    os.remove(tmp_path / "data" / "en-hi" / "a.hi")
    assert main(["data", "pack", "--config", "r.yaml", "--out", "q.tar.xz"]) == 2
    err = capsys.readouterr().err
    assert "a.hi" in err and "do not exist" in err and not (tmp_path / "q.tar.xz").exists()


def test_data_root_only_leaves_out_what_the_unpacking_machine_makes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recipe reading ./data/synthetic/ (back-translations not made yet): --data-root-only
    packs the corpora without it instead of refusing the missing file."""
    import yaml

    monkeypatch.chdir(tmp_path)
    write_root(tmp_path / "data-root")
    config = recipe(tmp_path / "data-root")
    synthetic = {"name": "bt", "src": "./data/synthetic/bt.en", "tgt": "./data/synthetic/bt.hi"}
    config["data"]["train"].append(synthetic)  # type: ignore[index]
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    pack = ["data", "pack", "--config", "r.yaml", "--out", "p.tar.xz", "--level", "1"]
    assert main(pack) == 2
    assert "bt.en" in capsys.readouterr().err
    assert main([*pack, "--data-root-only"]) == 0
    assert "p.tar.xz: 5 files" in capsys.readouterr().out
    assert main(["data", "unpack", "p.tar.xz", "--to", "copy"]) == 0
    assert sorted(p.name for p in (tmp_path / "copy" / "en-hi").iterdir()) == [
        "a.en", "a.hi", "b.tsv", "dev.en", "dev.hi",
    ]  # fmt: skip
