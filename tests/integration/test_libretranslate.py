"""The LibreTranslate-compatible API (issue 34): a real LibreTranslate client from the package
index (``libretranslatepy``) against ``anuvad serve``, and the API's shapes, bodies (JSON, forms),
``auto`` source, ``alternatives``, HTML, API keys and errors against the app."""

from __future__ import annotations

import dataclasses
import urllib.error
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from servers import anuvad_serve, running_server

from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

ENGLISH = "The sky is blue."
HINDI = "कप्तान ने 85 रन बनाए।"
KEY = "k" * 20


def labelled(model: Path, name: str, src: str, tgt: str) -> Translator:
    translator = Translator.from_file(model, device="cpu")
    config = translator.model_file.config
    data = dataclasses.replace(config.data, src_lang=src, tgt_lang=tgt)
    translator.model_file.config = dataclasses.replace(config, name=name, data=data)
    return translator


@pytest.fixture(scope="module")
def client(tiny_enhi_model: Path) -> Iterator[TestClient]:
    engines = [
        labelled(tiny_enhi_model, "tiny_enhi", "en", "hi"),
        labelled(tiny_enhi_model, "tiny_hien", "hi", "en"),
    ]
    with TestClient(create_app(engines)) as test_client:
        yield test_client


def ours(client: TestClient, text: Any, model: str, **fields: Any) -> dict[str, Any]:
    """anuvad's own answer for the same text and model."""
    response = client.post("/translate", json={"text": text, "model": model, **fields})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_a_libretranslate_client_works_with_anuvad_serve(tiny_enhi_model: Path) -> None:
    from libretranslatepy import LibreTranslateAPI

    with anuvad_serve(tiny_enhi_model) as url:
        lt = LibreTranslateAPI(f"{url}/libretranslate/")
        assert lt.languages() == [
            {"code": "en", "name": "English", "targets": ["hi"]},
            {"code": "hi", "name": "Hindi", "targets": []},
        ]
        translated = lt.translate(ENGLISH, "en", "hi")
        expected = Translator.from_file(tiny_enhi_model, device="cpu").translate([ENGLISH])
        assert translated == expected[0].text
        assert lt.translate(ENGLISH, "auto", "hi") == translated
        assert lt.detect(ENGLISH) == [{"confidence": 100.0, "language": "en"}]
        with pytest.raises(urllib.error.HTTPError) as refused:
            lt.translate(ENGLISH, "en", "fr")
        assert refused.value.code == 400
        assert refused.value.read() == b'{"error":"fr is not supported"}'


def test_the_api_key_travels_in_the_body_or_the_header(tiny_enhi_model: Path) -> None:
    from libretranslatepy import LibreTranslateAPI

    app = create_app(Translator.from_file(tiny_enhi_model, device="cpu"), api_keys=[KEY])
    with running_server(app) as (_, port, _thread):
        base = f"http://127.0.0.1:{port}/libretranslate/"
        assert LibreTranslateAPI(base, api_key=KEY).translate(ENGLISH, "en", "hi")
        for key, status in ((None, 400), ("x" * 20, 403)):
            with pytest.raises(urllib.error.HTTPError) as refused:
                LibreTranslateAPI(base, api_key=key).translate(ENGLISH, "en", "hi")
            assert refused.value.code == status
        assert LibreTranslateAPI(base).languages()  # open, as in LibreTranslate
    with TestClient(app) as client:
        header = {"Authorization": f"Bearer {KEY}"}
        body = {"q": ENGLISH, "source": "en", "target": "hi"}
        assert (
            client.post("/libretranslate/translate", json=body, headers=header).status_code == 200
        )
        # The body key is for these routes only: anuvad's own API takes the header.
        mine = client.post("/translate", json={"text": ENGLISH, "api_key": KEY})
        assert mine.status_code == 401


def test_json_and_form_bodies_translate_as_anuvad_does(client: TestClient) -> None:
    expected = ours(client, ENGLISH, "tiny_enhi")["translations"][0]["text"]
    body = {"q": ENGLISH, "source": "en", "target": "hi"}
    as_json = client.post("/libretranslate/translate", json=body)
    assert as_json.status_code == 200, as_json.text
    assert as_json.json() == {"translatedText": expected}
    as_form = client.post("/libretranslate/translate", data=body)
    assert as_form.json() == {"translatedText": expected}
    multipart = client.post(
        "/libretranslate/translate", data=body, files={"unused": ("a.txt", b"x")}
    )
    assert multipart.json() == {"translatedText": expected}


def test_auto_tells_each_text_s_language_and_lists_answer_lists(client: TestClient) -> None:
    body = {"q": [ENGLISH, HINDI], "source": "auto", "target": "hi"}
    english = ours(client, ENGLISH, "tiny_enhi")["translations"][0]["text"]
    hindi = ours(client, HINDI, "tiny_hien")["translations"][0]["text"]
    # A text already in the target language comes back as it was (LibreTranslate does the same).
    assert client.post("/libretranslate/translate", json=body).json() == {
        "translatedText": [english, HINDI],
        "detectedLanguage": [
            {"confidence": 100.0, "language": "en"},
            {"confidence": 100.0, "language": "hi"},
        ],
    }
    one = client.post("/libretranslate/translate", json={**body, "q": HINDI, "target": "en"})
    assert one.json() == {
        "translatedText": hindi,
        "detectedLanguage": {"confidence": 100.0, "language": "hi"},
    }
    both = client.post(
        "/libretranslate/translate", json={"q": [ENGLISH], "source": "auto", "target": "hi"}
    )
    assert both.json() == {
        "translatedText": [english],
        "detectedLanguage": [{"confidence": 100.0, "language": "en"}],
    }


def test_alternatives_are_the_search_s_other_candidates(client: TestClient) -> None:
    body = {"q": ENGLISH, "source": "en", "target": "hi", "alternatives": 2}
    answer = client.post("/libretranslate/translate", json=body).json()
    beam = client.get("/models").json()["models"][0]["defaults"]["beam_size"]
    mine = ours(client, ENGLISH, "tiny_enhi", nbest=3, beam_size=max(beam, 3))["translations"][0]
    assert answer["translatedText"] == mine["text"]
    # The candidates in order, but none empty, none the translation itself, no repeats.
    distinct = list(dict.fromkeys(c["text"] for c in mine["nbest"][1:3]))
    assert answer["alternatives"] == [t for t in distinct if t.strip() and t != mine["text"]]
    two = f"{ENGLISH} {ENGLISH}"
    listed = client.post("/libretranslate/translate", json={**body, "q": [two]}).json()
    assert len(listed["alternatives"]) == 1 and len(listed["alternatives"][0]) <= 2
    many = client.post("/libretranslate/translate", json={**body, "alternatives": 8}).json()
    others = many["alternatives"]
    assert len(set(others)) == len(others) and all(t.strip() for t in others)
    assert many["translatedText"] not in others


def test_blank_texts_and_the_target_language_come_back_as_they_were(client: TestClient) -> None:
    english = ours(client, ENGLISH, "tiny_enhi")["translations"][0]["text"]
    body = {"q": ["", ENGLISH, "  ", ENGLISH], "source": "en", "target": "hi"}
    answer = client.post("/libretranslate/translate", json=body).json()
    assert answer == {"translatedText": ["", english, "  ", english]}
    same = {"q": [ENGLISH, "Two.\nLines.", HINDI], "source": "en", "target": "en"}
    assert client.post("/libretranslate/translate", json=same).json() == {
        "translatedText": [ENGLISH, "Two.\nLines.", HINDI]  # nothing translated, nothing checked
    }
    every = client.post("/libretranslate/translate", json={**body, "q": ["", " "]})
    assert every.json() == {
        "error": "Invalid request: q: every text is empty; give at least one non-space character"
    }


@pytest.mark.parametrize("given", [{"format": ""}, {}])
def test_an_empty_format_is_text(client: TestClient, given: dict[str, Any]) -> None:
    body = {"q": "<b>" + ENGLISH, "source": "en", "target": "hi", **given}
    answer = client.post("/libretranslate/translate", json=body).json()
    assert answer == {
        "translatedText": ours(client, body["q"], "tiny_enhi")["translations"][0]["text"]
    }
    form = client.post("/libretranslate/translate", data={**body, "format": ""})
    assert form.json() == answer


def test_html_keeps_its_markup(client: TestClient) -> None:
    page = f"<p>{ENGLISH}</p><code>x = 1</code>"
    answer = client.post(
        "/libretranslate/translate",
        json={"q": page, "source": "en", "target": "hi", "format": "html"},
    ).json()
    assert answer == {
        "translatedText": ours(client, page, "tiny_enhi", format="html")["translations"][0]["text"]
    }
    assert answer["translatedText"].startswith("<p>")
    assert answer["translatedText"].endswith("</p><code>x = 1</code>")
    # The language is read from the text between the tags, not from the (Latin) markup.
    hindi_page = f'<div class="container"><p style="color:red">{HINDI}</p></div>'
    expected = ours(client, hindi_page, "tiny_hien", format="html")["translations"][0]["text"]
    for source in ("hi", "auto"):
        body = {"q": hindi_page, "source": source, "target": "en", "format": "html"}
        got = client.post("/libretranslate/translate", json=body).json()
        assert got["translatedText"] == expected, got


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"source": "en", "target": "hi"}, 400, "Invalid request: missing q parameter"),
        ({"q": "x", "target": "hi"}, 400, "Invalid request: missing source parameter"),
        ({"q": "x", "source": "en", "target": "de"}, 400, "de is not supported"),
        ({"q": "x", "source": "xx", "target": "xx"}, 400, "xx is not supported"),
        ({"q": "x", "source": "en", "target": "hi", "format": "pdf"}, 400,
         "pdf format is not supported"),
        ({"q": "x", "source": "en", "target": "hi", "alternatives": "many"}, 400,
         "Invalid request: alternatives must be a whole number >= 0"),
        ({"q": "x", "source": "en", "target": "hi", "format": None}, 400,
         "Invalid request: format is null; leave it out or give a value"),
        ({"q": [1], "source": "en", "target": "hi"}, 400,
         "Invalid request: q must be a string or a list of strings"),
        # In LibreTranslate's terms: anuvad's own message names its `model` field (issue 40).
        ({"q": HINDI, "source": "en", "target": "hi"}, 400,
         "Invalid request: q is written in Hindi, not English (source 'en'); send it with source "
         "'hi' or 'auto'"),
        ({"q": ["x", HINDI], "source": "en", "target": "hi"}, 400,
         "Invalid request: q[1] is written in Hindi, not English (source 'en'); send it with "
         "source 'hi' or 'auto'"),
        ({"q": " ", "source": "en", "target": "hi"}, 400,
         "Invalid request: q: text is empty; give at least one non-space character"),
        # Types as the schema says (issue 40: an object as target was a 500, a number as key
        # was taken)
        ({"q": "x", "source": "en", "target": {}}, 400,
         "Invalid request: target: Input should be a valid string"),
        ({"q": "x", "source": "en", "target": "hi", "api_key": 7}, 400,
         "Invalid request: api_key: Input should be a valid string"),
    ],
)  # fmt: skip
def test_errors_are_libretranslate_s(
    client: TestClient, body: Any, status: int, error: str
) -> None:
    response = client.post("/libretranslate/translate", json=body)
    assert (response.status_code, response.json()) == (status, {"error": error})


def test_libretranslate_clients_read_as_libretranslate_reads(client: TestClient) -> None:
    """A repeated form field q is a list (only the last was translated), ``alternatives`` a
    numeric string (LibreTranslate reads it with int()); the advertised charLimit is what one
    text may hold (a text over the old 50,000 was refused at 20,000)."""
    base = {"source": "en", "target": "hi"}
    one = client.post("/libretranslate/translate", json={**base, "q": ENGLISH}).json()
    two = client.post("/libretranslate/translate", data={**base, "q": [ENGLISH, "Two."]})
    assert two.json()["translatedText"][0] == one["translatedText"]
    assert len(two.json()["translatedText"]) == 2
    counted = {**base, "q": ENGLISH, "alternatives": "2"}
    assert client.post("/libretranslate/translate", json=counted).json() == (
        client.post("/libretranslate/translate", json={**counted, "alternatives": 2}).json()
    )
    limit = client.get("/libretranslate/frontend/settings").json()["charLimit"]
    refused = client.post("/libretranslate/translate", json={**base, "q": "a" * (limit + 1)})
    assert refused.status_code == 400


def test_auto_refuses_a_language_no_served_model_reads() -> None:
    """Hindi to English on a server of English->Hindi alone came back untranslated, 200,
    "detected" as English."""
    from types import SimpleNamespace

    from anuvad.server.libretranslate import route_texts
    from anuvad.server.libretranslate_bodies import LibreTranslateError

    model = SimpleNamespace(info=SimpleNamespace(src_lang="en", tgt_lang="hi"), id="enhi")
    state: Any = SimpleNamespace(models={"enhi": model}, default=model)
    with pytest.raises(LibreTranslateError, match=r"q is not written in a language this server"):
        route_texts(state, [HINDI], "auto", "en", html=False)
    routed = route_texts(state, [ENGLISH], "auto", "en", html=False)  # English to English
    assert routed.groups == {} and routed.sources == ["en"]


def test_detect_languages_and_settings(client: TestClient) -> None:
    assert client.post("/libretranslate/detect", data={"q": HINDI}).json() == [
        {"confidence": 100.0, "language": "hi"},
        {"confidence": 0.0, "language": "en"},
    ]
    assert client.post("/libretranslate/detect", json={}).status_code == 400
    assert client.post("/libretranslate/translate", json=[1]).json() == {
        "error": "Invalid JSON format"
    }
    assert client.get("/libretranslate/languages").json() == [
        {"code": "en", "name": "English", "targets": ["hi"]},
        {"code": "hi", "name": "Hindi", "targets": ["en"]},
    ]
    settings = client.get("/libretranslate/frontend/settings").json()
    assert settings["language"] == {
        "source": {"code": "auto", "name": "Auto Detect"},
        "target": {"code": "hi", "name": "Hindi"},
    }
    assert settings["keyRequired"] is False and settings["charLimit"] == 20_000
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/libretranslate/translate", "/libretranslate/detect"} <= set(paths)


def test_the_schema_says_what_the_routes_take(client: TestClient) -> None:
    """Issue 40 item 12: /libretranslate/detect refused `{"q": ""}`, which its schema allowed,
    and took a number as `api_key`, which it did not; a list `q` with no text was allowed too."""
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/libretranslate/translate", "/libretranslate/detect"):
        for content in paths[path]["post"]["requestBody"]["content"].values():
            fields = content["schema"]["properties"]
            q = fields["q"].get("anyOf", [fields["q"]])
            assert all(b.get("minLength") == 1 or b.get("minItems") == 1 for b in q), q
            assert {"type": "string"} in fields["api_key"]["anyOf"]
    translate = paths["/libretranslate/translate"]["post"]["requestBody"]["content"]
    for content in translate.values():  # the served languages
        assert content["schema"]["properties"]["source"]["enum"] == ["en", "hi", "auto"]
        assert content["schema"]["properties"]["target"]["enum"] == ["hi", "en"]
    for body in ({"q": ""}, {"q": HINDI, "api_key": 1}, {"q": HINDI, "api_key": ["k"]}):
        assert client.post("/libretranslate/detect", json=body).status_code == 400, body
    form = {"q": ENGLISH, "source": "en", "target": "hi", "api_key": "null"}
    assert client.post("/libretranslate/translate", data=form).status_code == 200
    assert client.post("/libretranslate/detect", data={"q": HINDI, "api_key": "1"}).status_code == (
        200
    )


def test_a_form_or_query_in_raw_utf8_is_read_as_utf8(client: TestClient) -> None:
    """Newcomer review: ``curl -d 'q=कप्तान ने 85 रन बनाए।&…'`` (raw UTF-8, as curl sends it) was
    read as Latin-1 ("à¤à¤ª…") and detected as English; percent-escapes and raw bytes must
    read alike, and bytes that are not UTF-8 get a clear 400."""
    raw = f"q={HINDI}".encode()
    escaped = urllib.parse.urlencode({"q": HINDI}).encode()
    form = {"content-type": "application/x-www-form-urlencoded"}
    expected = [{"confidence": 100.0, "language": "hi"}, {"confidence": 0.0, "language": "en"}]
    for body in (raw, escaped):
        assert client.post("/libretranslate/detect", content=body, headers=form).json() == expected
    in_query = client.post(f"/libretranslate/detect?q={HINDI}")
    assert in_query.json() == expected
    for bad_bytes in (b"q=\xff\xfe", b"q=%E0%A4"):  # raw, or percent-escaped
        bad = client.post("/libretranslate/detect", content=bad_bytes, headers=form)
        assert bad.status_code == 400 and "not UTF-8" in bad.json()["error"], bad_bytes
