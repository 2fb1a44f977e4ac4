"""Inline markup in HTML translated whole (``format: "html"``, ``anuvad translate`` of a page):
the sentence around a bold word or a link reaches the model as one sentence, and the element
comes back around the word the model's attention says it came from."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from anuvad.cli.main import main
from anuvad.inference.alignment import word_alignment
from anuvad.inference.documents import translate_documents
from anuvad.inference.markup import html_units, translate_html, unit_translations
from anuvad.inference.translator import Translator
from anuvad.server.app import create_app

pytestmark = pytest.mark.usefixtures("one_thread")

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "trained_models"
ENHI = sorted(SHIPPED.glob("enhi_*.pt"))
PAGE = (
    "<h1>The sky</h1>\n<p>I am going <b>home</b>. What is <a href='/n'>your <i>name</i></a>?</p>"
    "\n<p>The dog <span class=x>runs</span>.</p>"
)


@pytest.fixture(scope="module")
def translator(tiny_enhi_model: Path) -> Translator:
    return Translator.from_file(tiny_enhi_model, device="cpu")


@pytest.fixture(scope="module")
def client(translator: Translator) -> Iterator[TestClient]:
    with TestClient(create_app(translator)) as test_client:
        yield test_client


def _expected(translator: Translator, page: str) -> str:
    """The page placed by the translator's own attention, sentence by sentence, as the server
    and the CLI are to place it."""
    units = html_units(page)
    settings = translator.decode
    documents = translate_documents(
        [u.text for u in units], "en", lambda s: translator.translate(s, settings)
    )
    placed = unit_translations(
        [u.block is not None for u in units],
        documents,
        lambda r: word_alignment(translator.attention_of(r)),
    )
    return translate_html(page, lambda _: placed)


def test_the_server_and_the_cli_place_inline_tags_by_the_models_alignment(
    client: TestClient, translator: Translator, tiny_enhi_model: Path, tmp_path: Path
) -> None:
    assert [u.text for u in html_units(PAGE)] == [
        "The sky",
        "I am going home. What is your name?",
        "The dog runs.",
    ]
    expected = _expected(translator, PAGE)
    answer = client.post("/translate", json={"text": PAGE, "format": "html"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["translations"][0]["text"] == expected
    (source := tmp_path / "page.html").write_text(PAGE)
    out = tmp_path / "page.hi.html"
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--input", str(source), "--output", str(out)]) == 0
    assert out.read_text() == expected
    lt = client.post("/libretranslate/translate", json={"q": PAGE, "source": "en", "target": "hi",
                                                       "format": "html"})  # fmt: skip
    assert lt.json()["translatedText"] == expected
    for tag in ("<b>", "</b>", "<a href='/n'>", "</a>", "<i>", "</i>", "<span class=x>", "</span>"):
        assert expected.count(tag) >= 1, tag


@pytest.mark.skipif(not ENHI, reason="the shipped models are not in this checkout")
def test_with_the_shipped_model_the_bold_goes_around_the_word_it_was_on() -> None:
    translator = Translator.from_file(ENHI[-1], device="cpu", confidence=False)
    with TestClient(create_app(translator)) as client:
        for page, inside in (
            ("<p>The train to <b>Delhi</b> was late by two hours.</p>", "दिल्ली"),
            ("<p>Prices of <em>tomatoes</em> rose sharply in Delhi.</p>", "टमाटर"),
            ("<p>Captain <a href='/p'>Rohit Sharma</a> scored 85 runs.</p>", "रोहित शर्मा"),
        ):
            body = {"text": page, "format": "html", "decoding": "greedy"}
            text = client.post("/translate", json=body).json()["translations"][0]["text"]
            element = re.search(r"<(b|em|a)\b[^>]*>(.*?)</\1>", text)
            assert element is not None, text
            # the word, and at most a particle on either side ("टमाटर की": of tomatoes; the
            # attention of a particle is spread: bench/alignment.py measures how often)
            wrapped = element.group(2)
            assert inside in wrapped and len(wrapped.split()) <= len(inside.split()) + 2, text


def test_alignment_asked_for_comes_with_every_sentence_as_the_attention_gives_it(
    client: TestClient, translator: Translator
) -> None:
    text = "The sky is blue. I am going home."
    body = {"text": [text, "The dog runs."], "alignment": True, "decoding": "greedy"}
    answer = client.post("/translate", json=body)
    assert answer.status_code == 200, answer.text
    sentences = [s for t in answer.json()["translations"] for s in t["sentences"]]
    assert len(sentences) == 3
    settings = translator.settings(beam_size=1)
    for sentence in sentences:
        (result,) = translator.translate([sentence["source"]], settings)
        assert sentence["text"] == result.text
        expected = word_alignment(translator.attention_of(result))
        assert expected is not None and sentence["alignment"] == expected
        assert len(expected) == len(result.text.split())
        assert all(0 <= i < len(sentence["source"].split()) for i in expected)
    plain = client.post("/translate", json={**body, "alignment": False}).json()
    assert all(s["alignment"] is None for t in plain["translations"] for s in t["sentences"])
    page = client.post("/translate", json={"text": PAGE, "format": "html", "alignment": True})
    assert all(s["alignment"] is not None for s in page.json()["translations"][0]["sentences"])
    stream = client.post("/translate/stream", json=body)
    assert stream.status_code == 422 and "alignment" in stream.text


def test_a_sentence_the_attention_fails_on_is_placed_in_word_order_not_refused(
    client: TestClient, translator: Translator, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(result: object) -> object:
        raise RuntimeError("attention unavailable")

    monkeypatch.setattr(translator, "attention_of", broken)
    page = "<p>I am going <b>home</b>.</p>"
    answer = client.post("/translate", json={"text": page, "format": "html", "alignment": True})
    assert answer.status_code == 200, answer.text
    out = answer.json()["translations"][0]
    assert out["text"].count("<b>") == 1 and out["sentences"][0]["alignment"] is None
