"""LibreTranslate's file translation (``POST /libretranslate/translate_file``, ``GET
download_file``): a .txt or .html document comes back translated exactly as ``translate``
translates its text, under the page's name for it, in UTF-8 with its byte-order mark and line
endings; what is refused is named with the file and what to send instead."""

from __future__ import annotations

import io
import urllib.parse
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from anuvad.inference.office import read_office
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim
from anuvad.server.app import create_app
from office_samples import docx, epub, odf, paragraph, run, translated_as_served

pytestmark = pytest.mark.usefixtures("one_thread")

KEY = "k" * 20
TEXT = "The sky is blue.\r\nA man is riding a horse. The dog runs.\r\n\r\nTwo women sit.\r\n"
HTML = '<p>The sky is <b>blue</b>.</p>\n<pre>kept as written</pre>\n<p title="a man">A man.</p>\n'


@pytest.fixture(scope="module")
def client(tiny_enhi_model: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Translator.from_file(tiny_enhi_model, device="cpu"))) as test:
        yield test


def send(client: TestClient, name: str, data: bytes, **fields: str) -> Any:
    form = {"source": "en", "target": "hi", **fields}
    return client.post("/libretranslate/translate_file", data=form, files={"file": (name, data)})


def fetched(client: TestClient, answer: Any) -> tuple[bytes, str, str]:
    """The translated file's bytes, media type and the name it is saved under."""
    assert answer.status_code == 200, answer.text
    url = answer.json()["translatedFileUrl"]
    assert url.startswith("http://testserver/libretranslate/download_file/")
    assert got_name_in(url)
    got = client.get(url)
    assert got.status_code == 200, got.text
    disposition = got.headers["content-disposition"]
    name = urllib.parse.unquote(disposition.split("filename*=UTF-8''")[1])
    return got.content, got.headers["content-type"], name


def got_name_in(url: str) -> str:
    """The name a client that names the saved file from the URL gives it (as LibreTranslate's
    own URLs: ``<token>.<name>``)."""
    name = urllib.parse.unquote(url.rsplit("/", 1)[1]).split(".", 1)[1]
    assert "." in name
    return name


def translated(client: TestClient, text: str, format_: str) -> str:
    body = {"q": text, "source": "en", "target": "hi", "format": format_}
    answer = client.post("/libretranslate/translate", json=body)
    assert answer.status_code == 200, answer.text
    result: str = answer.json()["translatedText"]
    return result


def test_a_text_file_comes_back_as_translate_translates_its_text(client: TestClient) -> None:
    answer = send(client, "notes.txt", TEXT.encode())
    data, media, name = fetched(client, answer)
    assert media == "text/plain; charset=utf-8" and name == "notes.hi.txt"
    assert got_name_in(answer.json()["translatedFileUrl"]) == "notes.hi.txt"
    assert data.decode("utf-8") == translated(client, TEXT, "text")
    out = data.decode("utf-8")
    assert out.count("\r\n") == TEXT.count("\r\n") and "\n" not in out.replace("\r\n", "")
    assert not any(c.isascii() and c.isalpha() for c in out)  # every sentence translated


def test_an_html_file_keeps_its_markup_and_a_bom_and_its_name_in_any_script(
    client: TestClient,
) -> None:
    raw = "\ufeff".encode() + HTML.encode()
    answer = send(client, "docs\\रिपोर्ट.HTML", raw)
    data, media, name = fetched(client, answer)
    assert media == "text/html; charset=utf-8" and name == "रिपोर्ट.hi.HTML"
    assert got_name_in(answer.json()["translatedFileUrl"]) == name
    assert data.startswith("\ufeff".encode())
    out = data.decode("utf-8").removeprefix("\ufeff")
    assert out == translated(client, HTML, "html")
    assert "<pre>kept as written</pre>" in out and '<p title="a man">' in out


def test_an_office_file_comes_back_in_its_format_each_paragraph_translated_as_text_is(
    client: TestClient, tiny_enhi_model: Path
) -> None:
    """Each piece of a Word file (a sentence in three runs, a tab, a header) comes back
    translated as ``translate`` translates it alone, everything else in the file as it was."""
    sentence = [run("The sky "), run("is", bold=True), run(" blue. A man is riding a horse.")]
    body = paragraph(*sentence) + paragraph(run("Name:"), "<w:r><w:tab/></w:r>", run("The dog"))
    original = docx(body, header=paragraph(run("Two women sit.")))
    data, media, name = fetched(client, send(client, "report.docx", original))
    assert name == "report.hi.docx"
    assert media == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    texts = read_office(original, "report.docx").texts()
    assert texts == [
        "The sky is blue. A man is riding a horse.",
        "Name:",
        "The dog",
        "Two women sit.",
    ]
    document = read_office(original, "report.docx")
    assert document.inline() == [True, False, False, False]  # "is" is bold
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    assert data == translated_as_served(translator, document)
    assert b"<w:rPr><w:b/><w:bCs/></w:rPr>" in _part(data, "word/document.xml")  # bold stays
    assert _part(data, "word/media/image1.png") == _part(original, "word/media/image1.png")
    book = epub({"c.xhtml": "<p>The sky is blue.</p>"}, ["Two women sit."])
    data, media, name = fetched(client, send(client, "book.epub", book))
    assert (media, name) == ("application/epub+zip", "book.hi.epub")
    document = read_office(book, "b.epub")
    assert data == document.translated([translated(client, t, "text") for t in document.texts()])


def _part(data: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read(name)


@pytest.mark.parametrize(
    ("name", "data", "fields", "says"),
    [
        (
            "report.pdf",
            b"%PDF-1.7",
            {},
            "report.pdf: the server translates .txt, .html, .htm, .docx",
        ),
        (
            "report.docx",
            b"PK\x03\x04",
            {},
            "report.docx: not a Word document: the file is not a ZIP",
        ),
        ("noext", b"hello", {}, "noext: the server translates"),
        ("latin1.txt", b"line one\ncaf\xe9\n", {}, "latin1.txt: not UTF-8 text (byte 13, line 2)"),
        ("blank.txt", b" \n\t\n", {}, "blank.txt has no text to translate"),
        ("long.txt", b"word. " * 40000, {}, "long.txt has 240000 characters of text; the limit"),
        ("long.odt", odf("<text:p>word.</text:p>" * 40000), {}, "long.odt has 239999 characters"),
        ("page.html", b"<p>word.</p>" * 2000, {}, "page.html has 24000 characters of text; the"),
        ("line.txt", b"ok\n" + b"word " * 5000, {}, "file: line.txt: line 2 has 25000 characters"),
        ("empty.docx", docx(paragraph(run("12.5"))), {}, "empty.docx has no text to translate"),
        (
            "w.docx",
            docx(
                paragraph(run("Hello.")) + paragraph() + paragraph(run("Fine " + "skyblue" * 150))
            ),
            {},
            "file: w.docx: word/document.xml, paragraph 3: 'skyblue",
        ),
        ("ok.txt", b"The sky.", {"target": "de"}, "de is not supported"),
        ("", b"", {}, "missing file parameter"),  # a browser's file input left empty
        ("", b"The sky.", {}, "missing file parameter (send the document as a multipart file"),
        ("C:\\docs\\", b"The sky.", {}, "file has no name: send it with its name and extension"),
        ("ok.txt", b"The sky.", {"source": ""}, "missing source parameter"),
    ],
)
def test_what_cannot_be_translated_is_refused_naming_the_file_and_the_fix(
    client: TestClient, name: str, data: bytes, fields: dict[str, str], says: str
) -> None:
    answer = send(client, name, data, **fields)
    assert answer.status_code == 400, answer.text
    assert says in answer.json()["error"]


def test_a_form_without_a_file_and_a_json_body_are_refused(client: TestClient) -> None:
    form = client.post("/libretranslate/translate_file", data={"source": "en", "target": "hi"})
    assert form.status_code == 400 and "missing file parameter" in form.json()["error"]
    body = {"q": "The sky.", "source": "en", "target": "hi"}
    json_body = client.post("/libretranslate/translate_file", json=body)
    assert json_body.status_code == 400 and "multipart/form-data" in json_body.json()["error"]


def test_an_unknown_or_forgotten_download_is_a_404_that_says_what_to_do(
    client: TestClient,
) -> None:
    for name in ("nothing.hi.txt", "x", "a.b.c", "%2E%2E"):
        answer = client.get(f"/libretranslate/download_file/{name}")
        assert answer.status_code == 404 and "translate_file again" in answer.json()["error"]


def test_errors_met_translating_name_the_file_and_a_latin1_page_gets_a_bom(
    client: TestClient,
) -> None:
    hindi = send(client, "hindi.txt", "यह हिंदी में लिखा है। यह भी।".encode())
    assert hindi.status_code == 400 and "file: hindi.txt is not written in" in hindi.json()["error"]
    page = b'<html><head><meta charset="iso-8859-1"></head><body><p>The sky.</p></body></html>'
    data, _, _ = fetched(client, send(client, "old.html", page))
    assert data.startswith("\ufeff".encode())  # a BOM overrides the page's latin-1
    got = client.get(send(client, "x.html", page).json()["translatedFileUrl"])
    assert got.headers["content-security-policy"] == "sandbox"
    assert got.headers["x-content-type-options"] == "nosniff"


def test_the_settings_offer_files_and_the_key_guards_the_upload(tiny_enhi_model: Path) -> None:
    app = create_app(Translator.from_file(tiny_enhi_model, device="cpu"), api_keys=[KEY])
    with TestClient(app) as keyed:
        settings = keyed.get("/libretranslate/frontend/settings").json()
        assert settings["filesTranslation"] is True
        assert settings["supportedFilesFormat"] == [
            ".txt", ".html", ".htm", ".docx", ".pptx", ".xlsx", ".odt", ".odp", ".epub",
            ".srt", ".vtt",
        ]  # fmt: skip
        refused = send(keyed, "a.txt", b"The sky is blue.", api_key="wrong" * 4)
        assert refused.status_code == 403
        data, _, _ = fetched(keyed, send(keyed, "a.txt", b"The sky is blue.", api_key=KEY))
        assert (
            data.decode()
            == keyed.post(
                "/libretranslate/translate",
                json={"q": "The sky is blue.", "source": "en", "target": "hi", "api_key": KEY},
            ).json()["translatedText"]
        )
    paths = keyed.get("/openapi.json").json()["paths"]
    assert (
        "multipart/form-data"
        in paths["/libretranslate/translate_file"]["post"]["requestBody"]["content"]
    )


def test_a_file_over_the_body_limit_is_a_413_that_says_to_split_it(client: TestClient) -> None:
    answer = send(client, "huge.txt", b"The sky is blue. " * 1_000_000)  # 17 MB
    assert answer.status_code == 413
    error = answer.json()["error"]
    assert "the limit is 16000000" in error and "200000 characters of text" in error
    # a document with its images may be larger than a JSON request: its text is what counts
    pictured = send(client, "big.docx", docx(paragraph(run("12.5")), image=b"\x00" * 2_000_000))
    assert pictured.status_code == 400 and "big.docx has no text" in pictured.json()["error"]
    plain = client.post(  # other paths: no such advice
        "/translate", content=b"x" * 1_100_000, headers={"content-type": "application/json"}
    )
    assert plain.status_code == 413 and "split it" not in plain.json()["error"]


def test_an_epub_paragraph_with_inline_elements_is_placed_by_the_models_alignment(
    client: TestClient, tiny_enhi_model: Path
) -> None:
    """A book's paragraph "The sky is <b>blue</b>. The dog runs." reaches the model as two
    whole sentences; the bold goes where the attention puts "blue"."""
    from anuvad.inference.alignment import word_alignment
    from anuvad.inference.documents import translate_documents
    from anuvad.inference.inline import PlacedSentence
    from anuvad.inference.markup import UnitTranslation

    book = epub({"c.xhtml": "<p>The sky is <b>blue</b>. The dog runs.</p>"}, ["Two women sit."])
    document = read_office(book, "book.epub")
    assert document.texts() == ["Two women sit.", "c.xhtml", "The sky is blue. The dog runs."]
    assert document.inline() == [False, False, True]
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    translated = translate_documents(  # as the server: numbers and links copied ("c.xhtml")
        document.texts(),
        "en",
        lambda s: translator.translate(s, translator.decode, verbatim=Verbatim()),
    )
    expected = document.translated(
        [
            UnitTranslation(
                d.text,
                [
                    PlacedSentence(
                        seg.start, seg.end, r.text, word_alignment(translator.attention_of(r))
                    )
                    for seg, r in zip(d.segments, d.sentences, strict=True)
                ],
            )
            for d in translated
        ]
    )
    data, _, _ = fetched(client, send(client, "book.epub", book))
    assert data == expected
    assert b"<b>" in _part(data, "OEBPS/c.xhtml")


def test_subtitles_come_back_with_their_timing_each_sentence_translated_as_text_is(
    client: TestClient,
) -> None:
    from anuvad.inference.subtitles import read_subtitles

    srt = (
        "\ufeff1\r\n00:00:01,000 --> 00:00:03,000\r\nThe sky is\r\n\r\n"
        "2\r\n00:00:03,500 --> 00:00:05,000\r\nblue.\r\n\r\n"
        "3\r\n00:00:06,000 --> 00:00:08,000\r\n<i>The dog runs.</i>\r\n"
    )
    data, media, name = fetched(client, send(client, "film.srt", srt.encode()))
    assert (media, name) == ("application/x-subrip; charset=utf-8", "film.hi.srt")
    subs = read_subtitles(srt, "film.srt")
    assert subs.texts() == ["The sky is blue.", "The dog runs."]
    expected = subs.translated([translated(client, t, "text") for t in subs.texts()])
    assert data.decode("utf-8") == "\ufeff" + expected
    bad = send(client, "notes.srt", b"Hello\nworld\n")
    assert bad.status_code == 400
    assert "file: notes.srt: line 1: a SubRip cue is its number" in bad.json()["error"]


def test_a_long_text_file_is_translated_part_by_part_every_line_in_its_place(
    client: TestClient,
) -> None:
    """A document longer than one translation takes (20,000 characters) goes through in
    parts cut at line ends; every line comes back translated, in its place."""
    lines = [
        f"The sky is blue. {i} dogs run." if i % 2 else "A man is riding a horse."
        for i in range(1500)
    ]
    text = "\r\n".join(lines) + "\r\n"
    assert len(text) > 30_000
    data, _, _ = fetched(client, send(client, "long.txt", text.encode()))
    out = data.decode("utf-8").split("\r\n")
    assert len(out) == len(lines) + 1 and out[-1] == ""
    for i in (0, 1, 700, 1498, 1499):  # both sides of a part's end, and the ends
        assert out[i] == translated(client, lines[i], "text"), i
