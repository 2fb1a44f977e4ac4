"""API keys: the key file's rules (errors name file and line) and the bearer check on a tiny
ASGI app (protected paths need a valid key; the page, docs and /health stay open)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from anuvad.errors import ConfigError
from anuvad.server.auth import ApiKeyMiddleware, is_protected, key_matches, load_api_keys

KEY = "k" * 16 + "-first"
OTHER = "o" * 20


def test_keys_are_read_one_per_line_without_comments_or_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "keys.txt"
    path.write_text(f"# operators\n{KEY}\n\n  {OTHER}  \n{KEY}\n", encoding="utf-8")
    assert load_api_keys(path) == frozenset({KEY, OTHER})


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("", "holds no API key"),
        ("# only a comment\n\n", "holds no API key"),
        (f"{KEY}\nshort\n", ":2: an API key needs at least 16 characters"),
        (f"{KEY} {OTHER}\n", ":1: an API key has no spaces"),
    ],
)
def test_a_bad_key_file_names_the_line(tmp_path: Path, text: str, mentions: str) -> None:
    path = tmp_path / "keys.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=mentions) as caught:
        load_api_keys(path)
    assert str(path) in str(caught.value)


def test_a_missing_or_binary_key_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the API key file"):
        load_api_keys(tmp_path / "missing.txt")
    binary = tmp_path / "keys.bin"
    binary.write_bytes(b"\xff\xfe" * 20)
    with pytest.raises(ConfigError, match="cannot read the API key file"):
        load_api_keys(binary)


def test_key_matches_only_an_exact_key() -> None:
    keys = {KEY, OTHER}
    assert key_matches(KEY, keys) and key_matches(OTHER, keys)
    assert not key_matches(KEY[:-1], keys) and not key_matches(KEY + "x", keys)
    assert not key_matches("", keys)


@pytest.fixture
def client() -> TestClient:
    app = FastAPI()

    @app.post("/translate")
    async def translate() -> dict[str, str]:
        return {"ok": "translated"}

    @app.get("/models")
    async def models() -> dict[str, str]:
        return {"ok": "models"}

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"ok": "health"}

    @app.get("/")
    async def page() -> dict[str, str]:
        return {"ok": "page"}

    app.add_middleware(ApiKeyMiddleware, keys={KEY, OTHER})
    return TestClient(app)


def test_the_api_needs_a_valid_bearer_key(client: TestClient) -> None:
    missing = client.post("/translate")
    assert missing.status_code == 401
    assert "Authorization: Bearer" in missing.json()["error"]
    assert missing.headers["www-authenticate"].startswith("Bearer")
    wrong = client.get("/models", headers={"Authorization": "Bearer " + "x" * 20})
    assert wrong.status_code == 401 and "not valid" in wrong.json()["error"]
    basic = client.get("/models", headers={"Authorization": f"Basic {KEY}"})
    assert basic.status_code == 401
    for key in (KEY, OTHER):
        ok = client.post("/translate", headers={"Authorization": f"Bearer {key}"})
        assert ok.status_code == 200 and ok.json() == {"ok": "translated"}
    assert client.get("/models", headers={"authorization": f"bearer {KEY}"}).status_code == 200


def test_the_page_and_health_stay_open(client: TestClient) -> None:
    assert client.get("/").json() == {"ok": "page"}
    assert client.get("/health").json() == {"ok": "health"}


@pytest.mark.parametrize(
    ("path", "protected"),
    [
        ("/translate", True),
        ("/web/enhi/model.json", True),
        ("/web/enhi/encoder.onnx.gz", True),
        ("/web/enhi/vendor/onnxruntime-web/ort-wasm-simd-threaded.wasm.gz", True),
        ("/web/enhi/ENCODER.ONNX.GZ", True),
        ("/web/enhi/model.json/", True),  # a name a route might normalise
        ("/web/enhi/encoder.onnx", True),  # an older export's layout
        ("/web/enhi/source.model", True),
        ("/web/enhi/anuvad.js", False),  # code a browser imports without headers
        ("/web/enhi/worker.js", False),
        ("/web/enhi/README.md", False),
        ("/", False),
        ("/static/app.js", False),
        ("/health", False),
    ],
)
def test_the_web_exports_model_files_are_protected_and_their_code_is_not(
    path: str, protected: bool
) -> None:
    assert is_protected(path) is protected
