"""``anuvad serve --web DIR``: an export is matched to the served model it was exported from
by the model file's SHA-256, and a folder that is no export, an export without the hash, or
one matching no served model is refused in one line before the server starts (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anuvad.cli.main import main
from anuvad.data.download import sha256_of
from anuvad.errors import CheckpointError
from anuvad.server.routes.web import export_file
from anuvad.web.served import match_exports, read_export


def _export(folder: Path, model: Path, **changes: object) -> Path:
    folder.mkdir()
    settings = {"format": "anuvad-web", "direction": "en-hi", "source_model": model.name,
                "source_sha256": sha256_of(model), "download_bytes": 1234, **changes}  # fmt: skip
    (folder / "model.json").write_text(json.dumps(settings))
    return folder


@pytest.fixture
def models(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "a.pt").write_bytes(b"model a")
    (tmp_path / "b.pt").write_bytes(b"model b")
    return {"enhi": tmp_path / "a.pt", "hien": tmp_path / "b.pt"}


def test_an_export_goes_to_the_model_it_was_made_from(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    export = read_export(_export(tmp_path / "web-b", models["hien"]))
    assert export.download_bytes == 1234 and export.folder.is_absolute()
    assert match_exports([export], {**models, "ct2": None}) == {"hien": export}


def test_an_export_of_no_served_model_is_named_with_the_served_ones(
    tmp_path: Path, models: dict[str, Path]
) -> None:
    (tmp_path / "c.pt").write_bytes(b"model c")
    export = read_export(_export(tmp_path / "web-c", tmp_path / "c.pt"))
    with pytest.raises(CheckpointError) as caught:
        match_exports([export], models)
    message = str(caught.value)
    assert "web-c" in message and "c.pt" in message and "enhi, hien" in message
    assert "\n" not in message


def test_two_exports_of_one_model_are_refused(tmp_path: Path, models: dict[str, Path]) -> None:
    one = read_export(_export(tmp_path / "one", models["enhi"]))
    two = read_export(_export(tmp_path / "two", models["enhi"]))
    with pytest.raises(CheckpointError, match="both exports of model enhi"):
        match_exports([one, two], models)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda d, m: d / "missing", "not a folder"),
        (lambda d, m: (d / "empty").mkdir() or d / "empty", "no readable model.json"),
        (lambda d, m: _export(d / "other", m, format="something"), "not an anuvad web export"),
        (lambda d, m: _export(d / "old", m, source_sha256=None), "export it again"),
    ],
)
def test_a_folder_that_is_no_usable_export_is_named(
    tmp_path: Path, models: dict[str, Path], make: object, says: str
) -> None:
    folder = make(tmp_path, models["enhi"])  # type: ignore[operator]
    with pytest.raises(CheckpointError, match=says):
        read_export(folder)


def test_only_files_inside_the_export_are_answered(tmp_path: Path) -> None:
    folder = tmp_path / "web"
    (folder / "vendor").mkdir(parents=True)
    (folder / "model.json").write_text("{}")
    (folder / "vendor" / "ort.wasm").write_bytes(b"\0asm")
    (folder / ".hidden").write_text("x")
    (tmp_path / "secret.txt").write_text("secret")
    (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    root = folder.resolve()
    assert export_file(root, "model.json") == root / "model.json"
    assert export_file(root, "vendor/ort.wasm") == root / "vendor" / "ort.wasm"
    outside = ("../secret.txt", "vendor/../../secret.txt", "/etc/passwd", "vendor\\..\\x.txt")
    other_spellings = ("model.json/", "model.json/.", "vendor//ort.wasm", "./model.json")
    for bad in (
        *outside,
        *other_spellings,
        "",
        "vendor",
        ".hidden",
        "link.txt",
        "missing.js",
        "a\0b",
    ):
        assert export_file(root, bad) is None, bad


def test_serve_refuses_a_bad_web_folder_in_one_line_before_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model.pt"
    model.write_bytes(b"not even a model: --web is checked first")
    assert main(["serve", "--model", str(model), "--web", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--web" in err and "not a folder" in err and len(err.splitlines()) == 1


def test_serve_refuses_an_export_of_another_model(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "other.pt").write_bytes(b"another model")
    web = _export(tmp_path / "web", tmp_path / "other.pt")
    assert main(["serve", "--model", str(tiny_enhi_model), "--web", str(web)]) == 2
    err = capsys.readouterr().err.strip()
    assert "matches no served model" in err and len(err.splitlines()) == 1
