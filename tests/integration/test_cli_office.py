"""``anuvad translate`` of an office document: the same file back, each paragraph translated as
the command translates a line of text, and what it cannot do refused before a model loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.cli.main import main
from anuvad.inference.office import read_office
from anuvad.inference.translator import Translator
from office_samples import docx, epub, odf, paragraph, run, translated_as_served


def test_a_word_file_comes_back_each_paragraph_translated_as_a_line_of_text_is(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = paragraph(
        run("The sky "), run("is", bold=True), run(" blue. A man is riding a horse.")
    ) + paragraph(run("Name:"), "<w:r><w:tab/></w:r>", run("The dog runs."))
    original = docx(body, header=paragraph(run("Two women sit.")))
    (source := tmp_path / "report.DOCX").write_bytes(original)
    out = tmp_path / "report.hi.docx"
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--input", str(source), "--output", str(out)]) == 0
    document = read_office(original, "report.docx")
    (lines := tmp_path / "lines.txt").write_text("\n".join(document.texts()) + "\n")
    capsys.readouterr()
    assert main([*base, "--input", str(lines)]) == 0
    as_text = capsys.readouterr().out.splitlines()
    assert len(as_text) == 4  # each piece translated as a line of text is
    translator = Translator.from_file(tiny_enhi_model, device="cpu")
    expected = translated_as_served(translator, document)  # the bold run placed by alignment
    assert out.read_bytes() == expected
    plain = read_office(original, "x.docx")  # the pieces without formatting to carry: as text
    assert _part(expected).endswith(
        _part(plain.translated([*plain.texts()[:1], *as_text[1:]])).split("</w:p>", 1)[1]
    )


def test_what_an_office_file_cannot_be_translated_with_is_refused_naming_the_fix(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (source := tmp_path / "notes.odt").write_bytes(odf("<text:p>The sky is blue.</text:p>"))
    base = ["translate", "--model", str(tmp_path / "no-model.pt"), "--device", "cpu"]
    assert main([*base, "--input", str(source)]) == 2  # no model needed to say so
    assert (
        "a .odt translation is a .odt file, not text: give --output (for example --output "
        "notes.hi.odt)" in capsys.readouterr().err
    )
    out = ["--output", str(tmp_path / "out.odt")]
    assert main([*base, "--input", str(source), *out, "--nbest", "2"]) == 2
    assert "paragraph by paragraph into a .odt file, and --nbest needs plain text" in (
        capsys.readouterr().err
    )
    out = ["--output", str(tmp_path / "out.docx")]
    (broken := tmp_path / "broken.docx").write_bytes(b"not a zip")
    assert main([*base, "--input", str(broken), *out]) != 0
    err = capsys.readouterr().err
    assert f"{broken}: not a Word document: the file is not a ZIP archive" in err
    (bare := tmp_path / "numbers.docx").write_bytes(docx(paragraph(run("12.5"))))
    model = ["--model", str(tiny_enhi_model)]
    assert main(["translate", *model, "--input", str(bare), *out]) == 0  # nothing to translate
    assert (tmp_path / "out.docx").read_bytes() == bare.read_bytes()
    # a document is written in its own format: a .docx into "out.odt" made a broken .odt
    assert main(["translate", *model, "--input", str(bare), "--output", "x.odt"]) == 2
    assert "a .odt file is written only from a .odt input" in capsys.readouterr().err


def test_an_epub_comes_back_from_the_cli_as_the_server_translates_it(
    tiny_enhi_model: Path, tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from anuvad.inference.translator import Translator
    from anuvad.server.app import create_app

    book = epub(
        {"c.xhtml": "<p>The sky is <b>blue</b>. The dog runs.</p>\n<p>Two women sit.</p>"},
        ["The sky"],
    )
    (source := tmp_path / "book.epub").write_bytes(book)
    out = tmp_path / "book.hi.epub"
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--input", str(source), "--output", str(out)]) == 0
    with TestClient(create_app(Translator.from_file(tiny_enhi_model, device="cpu"))) as client:
        answer = client.post(
            "/libretranslate/translate_file",
            data={"source": "en", "target": "hi"},
            files={"file": ("book.epub", book)},
        )
        served = client.get(answer.json()["translatedFileUrl"]).content
    assert out.read_bytes() == served


def _part(data: bytes) -> str:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read("word/document.xml").decode("utf-8")


def test_subtitles_go_to_stdout_as_the_server_translates_them(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.inference.subtitles import read_subtitles

    vtt = "WEBVTT\n\n00:01.000 --> 00:03.000\nThe sky is\n\n00:03.500 --> 00:05.000\nblue.\n"
    (source := tmp_path / "film.vtt").write_text(vtt, encoding="utf-8")
    base = ["translate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    assert main([*base, "--input", str(source)]) == 0
    out = capsys.readouterr().out
    (lines := tmp_path / "lines.txt").write_text("The sky is blue.\n")
    assert main([*base, "--input", str(lines)]) == 0
    (sentence,) = capsys.readouterr().out.splitlines()
    assert out == read_subtitles(vtt, "film.vtt").translated([sentence])
    assert out.startswith("WEBVTT\n\n00:01.000 --> 00:03.000\n")
