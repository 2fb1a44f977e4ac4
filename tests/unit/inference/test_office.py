"""Office documents and e-books: every piece of prose found and translated whole, everything
else written back as it was, and a file that is not what it says refused with its name."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

import pytest

from anuvad.inference.inline import PlacedSentence, UnitTranslation
from anuvad.inference.office import FORMATS, OfficeDocument, OfficeError, read_office
from office_samples import DECL, ODF_NS, X, docx, epub, odf, paragraph, pptx, run, xlsx, zipped


def _translated(doc: OfficeDocument, change: Callable[[str], str]) -> bytes:
    return doc.translated([change(t) for t in doc.texts()])


def _part(data: bytes, name: str) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read(name).decode("utf-8")


def _shout(text: str) -> str:
    return f"«{text.upper()}»"


WORD_BODY = (
    # a sentence Word keeps in three runs (a spell-check split, then a bold word)
    paragraph(
        run("The train to Del"), run("hi was late by "), run("two", bold=True), run(" hours.")
    )
    + paragraph()  # an empty paragraph: nothing to translate, still counted
    + paragraph(run("Name:"), "<w:r><w:tab/></w:r>", run("Ravi Kumar"))
    + paragraph(
        run("Page "),
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>PAGE</w:instrText></w:r>',
        '<w:r><w:fldChar w:fldCharType="end"/></w:r>',
        "<w:del><w:r><w:delText>removed words</w:delText></w:r></w:del>",
    )
    + paragraph(run("12 &amp; 13 &lt;June&gt;"))
)


def test_a_word_sentence_in_several_runs_is_one_text_and_tabs_and_fields_cut_or_stay() -> None:
    doc = read_office(docx(WORD_BODY, header=paragraph(run("Annual report"))), "report.docx")
    assert doc.texts() == [
        "The train to Delhi was late by two hours.",
        "Name:",
        "Ravi Kumar",
        "Page",
        "12 & 13 <June>",
        "Annual report",
    ]
    assert doc.places() == [
        "word/document.xml, paragraph 1",
        "word/document.xml, paragraph 3",
        "word/document.xml, paragraph 3",
        "word/document.xml, paragraph 4",
        "word/document.xml, paragraph 5",
        "word/header1.xml, paragraph 1",
    ]


def test_every_piece_comes_back_translated_and_read_again_gives_the_translations() -> None:
    """The strongest check of the write-back: the translated file, read again, holds exactly the
    translations, in order, for every format."""
    samples = {
        ".docx": docx(WORD_BODY, header=paragraph(run("Annual report"))),
        ".pptx": pptx(
            [
                "<a:p><a:r><a:t>Fares </a:t></a:r><a:r><a:rPr b='1'/><a:t>rise</a:t></a:r>"
                "<a:br/><a:r><a:t>from Monday.</a:t></a:r></a:p>",
                "<a:p><a:fld type='slidenum'><a:t>2</a:t></a:fld>"
                "<a:r><a:t>Thanks</a:t></a:r></a:p>",
            ],
            notes="<a:p><a:r><a:t>Speak slowly.</a:t></a:r></a:p>",
        ),
        ".xlsx": xlsx(
            "<si><t>Station</t></si><si><r><t>Late </t></r><r><rPr><b/></rPr><t>trains</t></r>"
            "<rPh><t>ignored</t></rPh></si><si><t>42</t></si>"
        ),
        ".odt": odf(
            '<text:h text:outline-level="1">Monsoon</text:h><text:p>The rain <text:span>came'
            '</text:span><text:s text:c="2"/>early.<text:note><text:note-citation>1</text:note-'
            "citation><text:note-body><text:p>Three days.</text:p></text:note-body></text:note>"
            "</text:p><text:p>Line one<text:line-break/>line two</text:p>"
        ),
        ".odp": odf(
            "<draw:page><draw:frame><draw:text-box><text:p>Welcome</text:p></draw:text-box>"
            "</draw:frame></draw:page>",
            kind="presentation",
        ),
        ".epub": epub(
            {"one.xhtml": "<h1>Chapter <em>one</em></h1><p>The train left.</p><pre>x = 1</pre>"},
            ["Chapter one"],
        ),
    }
    assert set(samples) == set(FORMATS)
    for suffix, data in samples.items():
        doc = read_office(data, f"sample{suffix}")
        texts = doc.texts()
        assert texts and all(t == t.strip() and t for t in texts), (suffix, texts)
        out = read_office(_translated(doc, _shout), f"sample{suffix}")
        assert out.texts() == [_shout(t) for t in texts], suffix
        assert out.places() == doc.places(), suffix


def test_the_sample_texts_are_those_a_reader_sees() -> None:
    assert read_office(
        pptx(["<a:p><a:r><a:t>Fares </a:t></a:r><a:r><a:t>rise</a:t></a:r><a:br/>"
              "<a:r><a:t>from Monday.</a:t></a:r></a:p>"], notes="<a:p><a:r><a:t>Speak."
              "</a:t></a:r></a:p>"),
        "s.pptx",
    ).texts() == ["Fares rise", "from Monday.", "Speak."]  # fmt: skip
    assert read_office(
        xlsx("<si><r><t>Late </t></r><r><t>trains</t></r><rPh><t>x</t></rPh></si>"), "s.xlsx"
    ).texts() == ["Late trains"]
    odt = read_office(
        odf("<text:p>The rain <text:span>came</text:span><text:s text:c='2'/>early.<text:note>"
            "<text:note-citation>1</text:note-citation><text:note-body><text:p>Three days."
            "</text:p></text:note-body></text:note></text:p><text:p><office:annotation>"
            "<dc:creator>Asha</dc:creator><text:p>check this</text:p></office:annotation>"
            "Line one<text:line-break/>line two</text:p>"),
        "s.odt",
    )  # fmt: skip
    # the note's text is its own paragraph; the spaces collapse; a comment stays as written
    assert odt.texts() == ["The rain came early.", "Three days.", "Line one", "line two"]
    book = read_office(epub({"c.xhtml": "<p>The <b>train</b> left.</p>"}, ["Start"]), "b.epub")
    # HTML's units: the chapter's title, then the paragraph (its bold word inline)
    assert book.texts() == ["Start", "c.xhtml", "The train left."]
    assert book.places() == ["OEBPS/toc.ncx, paragraph 1", *["OEBPS/c.xhtml, line 2"] * 2]


def test_the_translation_goes_into_the_run_with_most_letters_the_others_emptied() -> None:
    doc = read_office(docx(WORD_BODY), "r.docx")
    part = _part(doc.translated(["ट्रेन देर से आई।", "नाम:", "रवि कुमार", "पृष्ठ", "१२ & १३"]),
                 "word/document.xml")  # fmt: skip
    first = part.split("</w:p>")[0]
    assert "<w:t>ट्रेन देर से आई।</w:t>" in first  # where "The train to Del" was
    assert (
        first.count("<w:t") == 4
        and first.count("<w:t></w:t>") + first.count('<w:t xml:space="preserve"></w:t>') == 3
    )  # the other runs stay, empty, their formatting with them
    assert "<w:rPr><w:b/></w:rPr>" in first
    assert "<w:instrText>PAGE</w:instrText>" in part and "removed words" in part
    assert "१२ &amp; १३" in part


def test_untouched_entries_and_the_order_and_compression_of_every_entry_stay() -> None:
    for data, name in (
        (docx(WORD_BODY), "a.docx"),
        (odf("<text:p>Hello there</text:p>"), "a.odt"),
        (epub({"c.xhtml": "<p>Hi</p>"}, ["Start"]), "a.epub"),
    ):
        out = _translated(read_office(data, name), str.upper)
        with zipfile.ZipFile(io.BytesIO(data)) as a, zipfile.ZipFile(io.BytesIO(out)) as b:
            before, after = a.infolist(), b.infolist()
            assert [i.filename for i in before] == [i.filename for i in after]
            assert [i.compress_type for i in before] == [i.compress_type for i in after]
            assert [i.date_time for i in before] == [i.date_time for i in after]
            assert b.testzip() is None
            for info in before:
                if not info.filename.endswith(("document.xml", "content.xml", ".xhtml", ".ncx")):
                    assert a.read(info) == b.read(info.filename), info.filename
        if name != "a.docx":  # readers find the format in an uncompressed mimetype, first
            assert out[30:38] == b"mimetype" and after[0].compress_type == zipfile.ZIP_STORED


def test_the_same_text_back_leaves_a_part_of_single_runs_byte_for_byte() -> None:
    body = paragraph(run("One sentence here.")) + paragraph(run(" Spaced  text "))
    data = docx(body)
    doc = read_office(data, "same.docx")
    assert doc.texts() == ["One sentence here.", "Spaced  text"]
    assert _part(doc.translated(doc.texts()), "word/document.xml") == _part(
        data, "word/document.xml"
    )


def test_other_prefixes_for_the_same_namespaces_are_read_alike() -> None:
    body = paragraph(run("Good ", prefix="ns0"), run("morning", prefix="ns0"), prefix="ns0")
    doc = read_office(docx(body, prefix="ns0"), "ns.docx")
    assert doc.texts() == ["Good morning"]
    out = read_office(doc.translated(["सुप्रभात"]), "ns.docx")
    assert out.texts() == ["सुप्रभात"]


def test_a_part_with_a_byte_order_mark_is_translated_and_keeps_it() -> None:
    document = f'\ufeff{DECL}<w:document xmlns:w="{W_NS}"><w:body>{paragraph(run("Hi there"))}'
    data = zipped([("word/document.xml", document + "</w:body></w:document>")])
    doc = read_office(data, "bom.docx")
    assert doc.texts() == ["Hi there"]
    assert _part(doc.translated(["नमस्ते"]), "word/document.xml").startswith("\ufeff<?xml")


W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


NOT_A_ZIP = "not a Word document: the file is not a ZIP"
REFUSED = [
    (b"PK\x03\x04 not really", "broken.docx", f"broken.docx: {NOT_A_ZIP}"),
    (b"plain text", "notes.odt", "notes.odt: not an OpenDocument text: the file is not a ZIP"),
    (
        zipped([("word/document.xml", "<x/>")]),
        "deck.pptx",
        "deck.pptx: not a PowerPoint presentation: it has no ppt/presentation.xml",
    ),
    (zipped([("mimetype", "x")]), "book.epub", "it has no META-INF/container.xml"),
    (
        zipped([("word/document.xml", b"<w:t>\xff</w:t>")]),
        "bad.docx",
        "bad.docx: word/document.xml is not UTF-8 (byte 6, line 1)",
    ),
]


@pytest.mark.parametrize(("data", "name", "says"), REFUSED)
def test_a_file_that_is_not_its_format_is_refused_naming_it(
    data: bytes, name: str, says: str
) -> None:
    with pytest.raises(OfficeError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_office(data, name)


def test_an_encrypted_or_oversized_archive_is_refused_before_unpacking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = bytearray(docx(paragraph(run("Secret plans"))))
    data[6] |= 0x1  # the first local header's "encrypted" flag
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(b"PK\x05\x06"))
    for offset in range(len(data) - 4):  # every central directory entry says so too
        if data[offset : offset + 4] == b"PK\x01\x02" and offset <= central:
            data[offset + 8] |= 0x1
    with pytest.raises(OfficeError, match=r"locked\.docx: the file is password-protected"):
        read_office(bytes(data), "locked.docx")
    monkeypatch.setattr("anuvad.inference.office.MAX_UNPACKED_BYTES", 1000)
    with pytest.raises(OfficeError, match=r"big.docx: 4 entries of \d+ bytes unpacked; at most"):
        read_office(docx(paragraph(run("x"))), "big.docx")


def _aligned(text: str, translation: str, alignment: list[int]) -> UnitTranslation:
    return UnitTranslation(translation, [PlacedSentence(0, len(text), translation, alignment)])


def test_a_bold_word_keeps_its_formatting_where_its_translation_goes() -> None:
    body = paragraph(run("The train to "), run("Delhi", bold=True), run(" was late."))
    doc = read_office(docx(body), "b.docx")
    assert doc.texts() == ["The train to Delhi was late."] and doc.inline() == [True]
    # ट्रेन(train) दिल्ली(Delhi) देर(late) से(late) आई(was)
    given = _aligned(doc.texts()[0], "ट्रेन दिल्ली देर से आई।", [1, 3, 5, 5, 4])
    part = _part(doc.translated([given]), "word/document.xml")
    # bold for Devanagari too: Word formats complex-script text by <w:bCs/>
    assert '<w:r><w:rPr><w:b/><w:bCs/></w:rPr><w:t xml:space="preserve">दिल्ली</w:t></w:r>' in part
    assert read_office(doc.translated([given]), "b.docx").texts() == ["ट्रेन दिल्ली देर से आई।"]
    # without an alignment (a plain string), the whole translation goes into one run, as before
    assert _part(doc.translated(["ट्रेन दिल्ली देर से आई।"]), "word/document.xml").count("<w:r>") == 3


def test_links_bookmarks_and_proofing_marks_between_runs() -> None:
    body = (
        '<w:p><w:bookmarkStart w:id="0" w:name="top"/><w:r><w:t xml:space="preserve">Read </w:t>'
        '</w:r><w:proofErr w:type="spellStart"/><w:hyperlink r:id="rId9"><w:r><w:rPr>'
        '<w:rStyle w:val="Hyperlink"/></w:rPr><w:t>the report</w:t></w:r></w:hyperlink>'
        '<w:proofErr w:type="spellEnd"/><w:r><w:t xml:space="preserve"> now.</w:t></w:r>'
        '<w:bookmarkEnd w:id="0"/></w:p>'
    )
    doc = read_office(docx(body), "l.docx")
    assert doc.texts() == ["Read the report now."] and doc.inline() == [True]
    given = _aligned(doc.texts()[0], "रिपोर्ट अभी पढ़ें।", [2, 3, 0])
    part = _part(doc.translated([given]), "word/document.xml")
    assert part.count('<w:hyperlink r:id="rId9">') == 1 and "proofErr" not in part
    assert (
        '<w:bookmarkStart w:id="0" w:name="top"/>' in part and '<w:bookmarkEnd w:id="0"/>' in part
    )
    assert '<w:hyperlink r:id="rId9"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr><w:t ' in part
    link = part.split('<w:hyperlink r:id="rId9">')[1].split("</w:hyperlink>")[0]
    assert "रिपोर्ट" in link and "पढ़ें" not in link
    assert read_office(doc.translated([given]), "l.docx").texts() == ["रिपोर्ट अभी पढ़ें।"]


def test_runs_that_look_alike_or_hold_more_than_text_keep_the_simple_rule() -> None:
    alike = paragraph(run("The train to Del"), run("hi was late."))  # a spell-check split
    field = paragraph(
        run("Page "),
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>PAGE</w:instrText></w:r>',
        '<w:r><w:fldChar w:fldCharType="end"/></w:r>',
        run(" of the report", bold=True),
    )
    # the field cuts its paragraph: "Page" and "of the report", each of one run
    assert read_office(docx(alike + field), "s.docx").inline() == [False, False, False]
    slide = pptx(["<a:p><a:r><a:rPr b='1'/><a:t>Fares</a:t></a:r><a:r><a:rPr/>"
                  "<a:t> rise today.</a:t></a:r></a:p>"])  # fmt: skip
    deck = read_office(slide, "s.pptx")
    assert deck.inline() == [True]
    given = _aligned(deck.texts()[0], "आज किराया बढ़ा", [3, 0, 1])
    out = _part(deck.translated([given]), "ppt/slides/slide1.xml")
    assert "<a:r><a:rPr b='1'/><a:t>किराया</a:t></a:r>" in out  # the space in the plain run


def test_every_translated_word_stays_inside_a_run_and_bold_reaches_devanagari() -> None:
    body = paragraph(run("Prices of "), run("tomatoes", bold=True), run(" rose sharply in Delhi."))
    doc = read_office(docx(body), "t.docx")
    translation = "दिल्ली में टमाटर की कीमत तेजी से बढ़ गई।"
    # "दिल्ली" (Delhi) is a stray word of the last run, far from its other words
    given = _aligned(doc.texts()[0], translation, [6, 2, 2, 2, 0, 4, 4, 3, 3])
    out = doc.translated([given])
    assert read_office(out, "t.docx").texts() == [translation]  # no word outside a run
    sized = (
        '<w:p><w:r><w:rPr><w:b/><w:bCs w:val="0"/><w:sz w:val="28"/></w:rPr><w:t>Hi</w:t>'
        "</w:r></w:p>"
    )
    part = _part(read_office(docx(sized), "s.docx").translated(["नमस्ते"]), "word/document.xml")
    # the carrier's run: a twin added where it lacks one, none where it has one
    assert '<w:b/><w:bCs w:val="0"/><w:sz w:val="28"/><w:szCs w:val="28"/>' in part


def test_fields_cut_their_paragraph_and_keep_their_values() -> None:
    field = (
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>{}</w:instrText></w:r>'
        '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>{}</w:t></w:r>'
        '<w:r><w:fldChar w:fldCharType="end"/></w:r>'
    )
    body = paragraph(
        run("Page "), field.format("PAGE", "3"), run(" of "), field.format("NUMPAGES", "10")
    )
    doc = read_office(docx(body), "f.docx")
    assert doc.texts() == ["Page", "of"]
    part = _part(doc.translated(["पृष्ठ", "में से"]), "word/document.xml")
    assert "<w:t>3</w:t>" in part and "<w:t>10</w:t>" in part and "पृष्ठ" in part
    odt = read_office(
        odf("<text:p>Page <text:page-number>3</text:page-number> of "
            "<text:page-count>10</text:page-count></text:p>"),
        "f.odt",
    )  # fmt: skip
    assert odt.texts() == ["Page", "of"]
    out = _part(odt.translated(["पृष्ठ", "में से"]), "content.xml")
    assert "<text:page-number>3</text:page-number> में से <text:page-count>10" in out


def test_tracked_changes_links_and_ruby_are_read_as_a_reviewer_would() -> None:
    body = (
        '<w:p><w:moveFrom w:id="1"><w:r><w:t>Moved away text.</w:t></w:r></w:moveFrom></w:p>'
        '<w:p><w:ins w:id="2"><w:r><w:t>Inserted long words here</w:t></w:r></w:ins>'
        '<w:r><w:t xml:space="preserve"> and the rest.</w:t></w:r></w:p>'
    )
    doc = read_office(docx(body), "t.docx")
    assert doc.texts() == ["Inserted long words here and the rest."]  # moved-from: not text
    part = _part(doc.translated(["अनुवाद"]), "word/document.xml")
    inserted = part.split("<w:ins")[1].split("</w:ins>")[0]
    assert "अनुवाद" not in inserted  # a reviewer's "reject" would take the translation away


def test_what_office_files_hold_that_xml_does_not_allow_or_that_breaks_is_handled() -> None:
    cell = read_office(xlsx("<si><t>Line one\nline two</t></si>"), "c.xlsx")
    assert cell.texts() == ["Line one line two"]  # Alt+Enter in a cell: a space
    out = cell.translated(["पहली\x0bपंक्ति\x00"])  # no character XML 1.0 refuses
    assert "<t>पहलीपंक्ति</t>" in _part(out, "xl/sharedStrings.xml")
    online = zipped([("word/document2.xml", f'{DECL}<w:document xmlns:w="{W_NS}"><w:body>'
                      f'{paragraph(run("Hello there"))}</w:body></w:document>')])  # fmt: skip
    assert read_office(online, "online.docx").texts() == ["Hello there"]  # Word Online's name
    named = io.BytesIO()
    with zipfile.ZipFile(named, "w") as archive:
        archive.writestr("word/document.xml", f'<w:document xmlns:w="{W_NS}"/>')
        archive.writestr("word/media/café.png", b"png")  # UTF-8, flagged as such
    raw = bytearray(named.getvalue())
    for magic, flags in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # as old tools write it
        at = raw.find(magic)
        while at >= 0:
            raw[at + flags + 1] &= ~0x08 & 0xFF  # bit 11 of the flags: names are UTF-8
            at = raw.find(magic, at + 4)
    assert "word/media/café.png" not in zipfile.ZipFile(io.BytesIO(bytes(raw))).namelist()
    out = read_office(bytes(raw), "n.docx").translated([])
    assert "word/media/café.png" in zipfile.ZipFile(io.BytesIO(out)).namelist()


ENCRYPTED_ODF = zipped(
    [("content.xml", "<x/>"), ("META-INF/manifest.xml", "<manifest:encryption-data/>")]
)


@pytest.mark.parametrize(
    ("data", "name"),
    [(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500), "x.docx"), (ENCRYPTED_ODF, "x.odt")],
)
def test_password_protected_files_say_so(data: bytes, name: str) -> None:
    """An encrypted Word file is no ZIP (an OLE container); an encrypted OpenDocument is one,
    its manifest saying so: both are named as what they are, not as damaged."""
    with pytest.raises(OfficeError, match=rf"{name}: the file is password-protected"):
        read_office(data, name)


def test_a_damaged_stream_or_an_oversized_text_part_is_refused_naming_the_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = bytearray(docx(paragraph(run("Hello there, a longer text to compress " * 20))))
    start = data.find(b"word/document.xml") + len("word/document.xml")
    data[start + 5 : start + 25] = bytes(20)  # the deflate stream of the body, broken
    with pytest.raises(OfficeError, match=r"word/document\.xml cannot be unpacked"):
        read_office(bytes(data), "broken.docx")
    monkeypatch.setattr("anuvad.inference.office.MAX_TEXT_PART_BYTES", 100)
    with pytest.raises(OfficeError, match=r"big.docx: word/document.xml unpacks to \d+ bytes"):
        read_office(docx(paragraph(run("text " * 50))), "big.docx")


def test_an_opendocument_span_or_link_follows_its_word_as_in_html() -> None:
    body = (
        '<text:p text:style-name="P1">The train to <text:span text:style-name="T1">Delhi'
        '</text:span> was<text:s/> late. <text:a xlink:href="https://x.in" '
        'xmlns:xlink="http://www.w3.org/1999/xlink">Read more</text:a></text:p>'
        "<text:p>Plain <text:span>words</text:span><text:note><text:note-citation>1"
        "</text:note-citation><text:note-body><text:p>A note.</text:p></text:note-body>"
        "</text:note></text:p>"
    )
    doc = read_office(odf(body), "s.odt")
    assert doc.texts() == ["The train to Delhi was late. Read more", "Plain words", "A note."]
    assert doc.inline() == [True, False, False]  # a note in the paragraph: the simple rule
    translation = "दिल्ली की ट्रेन देर से आई। और पढ़ें"
    given = UnitTranslation(
        translation,
        [
            PlacedSentence(0, 28, "दिल्ली की ट्रेन देर से आई।", [3, 3, 1, 5, 5, 4]),
            PlacedSentence(29, 38, "और पढ़ें", [1, 0]),
        ],
    )
    out = doc.translated([given, "सादे शब्द", "एक टिप्पणी।"])
    content = _part(out, "content.xml")
    assert '<text:span text:style-name="T1">दिल्ली की</text:span>' in content
    link = '<text:a xlink:href="https://x.in" xmlns:xlink="http://www.w3.org/1999/xlink">'
    assert f"{link}और पढ़ें</text:a>" in content
    assert read_office(out, "s.odt").texts()[0] == translation


def test_styles_make_hindi_bold_italic_and_sized_as_they_make_english() -> None:
    from anuvad.inference.office_xml import with_complex_styles

    odf_styles = (
        '<style:style style:name="T1"><style:text-properties fo:font-weight="bold" '
        'fo:font-size="14pt"/></style:style><style:style style:name="T2"><style:text-properties '
        'fo:font-style="italic" style:font-style-complex="normal"/></style:style>'
    )
    assert with_complex_styles(odf_styles, word=False) == (
        '<style:style style:name="T1"><style:text-properties fo:font-weight="bold" '
        'fo:font-size="14pt" style:font-weight-complex="bold" style:font-size-complex="14pt"/>'
        '</style:style><style:style style:name="T2"><style:text-properties '
        'fo:font-style="italic" style:font-style-complex="normal"/></style:style>'
    )  # a twin the style has already stays as it is
    word_styles = (
        f'<w:styles xmlns:w="{W_NS}"><w:style w:styleId="Strong"><w:rPr><w:b/></w:rPr>'
        '</w:style><w:style w:styleId="Big"><w:rPr><w:i/><w:iCs/><w:sz w:val="32"/></w:rPr>'
        "</w:style></w:styles>"
    )
    out = with_complex_styles(word_styles, word=True)
    assert "<w:rPr><w:b/><w:bCs/></w:rPr>" in out
    assert '<w:rPr><w:i/><w:iCs/><w:sz w:val="32"/><w:szCs w:val="32"/></w:rPr>' in out


def test_an_excel_cell_of_rich_text_keeps_its_bold_word() -> None:
    book = read_office(
        xlsx("<si><r><t xml:space='preserve'>Trains are </t></r><r><rPr><b/></rPr>"
             "<t>late</t></r></si>"),
        "b.xlsx",
    )  # fmt: skip
    assert book.texts() == ["Trains are late"] and book.inline() == [True]
    given = _aligned("Trains are late", "ट्रेनें देर से हैं", [0, 2, 2, 1])
    out = _part(book.translated([given]), "xl/sharedStrings.xml")
    assert '<r><rPr><b/></rPr><t xml:space="preserve">देर से</t></r>' in out
    assert read_office(book.translated([given]), "b.xlsx").texts() == ["ट्रेनें देर से हैं"]


LINK = (
    '<w:hyperlink r:id="rId9"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr>'
    "<w:t>our website</w:t></w:r></w:hyperlink>"
)


def test_a_link_at_either_end_of_a_paragraph_is_carried_too() -> None:
    for body, translation, alignment in (
        (paragraph(run("Visit "), LINK), "हमारी वेबसाइट देखें", [1, 2, 0]),
        (paragraph(LINK, run(" has news.")), "हमारी वेबसाइट पर खबर है।", [0, 1, 3, 3, 2]),
    ):
        doc = read_office(docx(body), "l.docx")
        assert doc.inline() == [True], body
        out = doc.translated([_aligned(doc.texts()[0], translation, alignment)])
        part = _part(out, "word/document.xml")
        link = part.split('<w:hyperlink r:id="rId9">')[1].split("</w:hyperlink>")[0]
        assert "वेबसाइट" in link and part.count("<w:hyperlink") == 1
        assert read_office(out, "l.docx").texts() == [translation]


def test_two_sentences_written_without_a_space_are_read_back_with_one() -> None:
    doc = read_office(
        docx(paragraph(run("Ram came."), run("Sita went home.", bold=True))), "s.docx"
    )
    assert doc.texts() == ["Ram came.Sita went home."]
    given = UnitTranslation(
        "राम आया। सीता घर गई।",
        [PlacedSentence(0, 9, "राम आया।", [0, 1]), PlacedSentence(9, 24, "सीता घर गई।", [0, 2, 1])],
    )
    assert read_office(doc.translated([given]), "s.docx").texts() == ["राम आया। सीता घर गई।"]


def test_a_tracked_formatting_change_is_left_to_the_simple_rule_and_its_record_alone() -> None:
    change = (
        '<w:r><w:rPr><w:b/><w:rPrChange w:id="5" w:author="A"><w:rPr><w:bCs/></w:rPr>'
        "</w:rPrChange></w:rPr><w:t>Changed</w:t></w:r>"
    )
    doc = read_office(docx(paragraph(run("Plain "), change)), "c.docx")
    assert doc.inline() == [False]  # its w:id must stay unique: not copied into several runs
    part = _part(doc.translated(["बदला"]), "word/document.xml")
    assert '<w:rPr><w:b/><w:bCs/><w:rPrChange w:id="5" w:author="A"><w:rPr><w:bCs/></w:rPr>' in part


def test_an_attribute_value_holding_a_closing_angle_bracket_stays_markup() -> None:
    """XML lets an attribute value hold ">" unescaped: the tag ends at the ">" after its
    quotes, so the value is neither read as text nor cut."""
    styled = '<w:r><w:rPr><w:rStyle w:val="a>b"/></w:rPr><w:t x:note="1>0">is late.</w:t></w:r>'
    body = paragraph(run("The train "), styled) + paragraph(
        "<w:hyperlink w:tooltip='x > y' r:id=\"rId9\">", run("Read more"), "</w:hyperlink>"
    )
    doc = read_office(docx(body), "t.docx")
    assert doc.texts() == ["The train is late.", "Read more"]
    part = _part(_translated(doc, _shout), "word/document.xml")
    assert '<w:rStyle w:val="a>b"/>' in part and '<w:t x:note="1>0"' in part
    assert "<w:hyperlink w:tooltip='x > y' r:id=" in part
    assert read_office(_translated(doc, _shout), "t.docx").texts() == [
        "«THE TRAIN IS LATE.»",
        "«READ MORE»",
    ]


def _with_parts(data: bytes, parts: list[tuple[str, str]]) -> bytes:
    """``data``'s entries, then ``parts`` (a graphic Office keeps in parts of its own)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries: list[tuple[str, str | bytes]] = [
            (info.filename, archive.read(info)) for info in archive.infolist()
        ]
    stored_first = entries[0][0] == "mimetype"
    joined: bytes = zipped(entries + list(parts), stored_first=stored_first)
    return joined


CHART = (
    f'{DECL}<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart><c:title><c:tx>'
    "<c:rich><a:bodyPr/><a:p><a:r><a:t>Trains per day</a:t></a:r></a:p></c:rich></c:tx>"
    "</c:title><c:plotArea><c:barChart><c:ser><c:cat><c:strRef><c:f>Sheet1!$A$2</c:f>"
    '<c:strCache><c:pt idx="0"><c:v>Delhi</c:v></c:pt></c:strCache></c:strRef></c:cat>'
    "</c:ser></c:barChart></c:plotArea></c:chart></c:chartSpace>"
)
SMARTART = (
    f'{DECL}<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst><dgm:pt '
    'modelId="1"><dgm:t><a:bodyPr/><a:p><a:r><a:t>Buy a ticket</a:t></a:r></a:p></dgm:t>'
    "</dgm:pt></dgm:ptLst></dgm:dataModel>"
)
SMARTART_SHOWN = (  # the drawing Office shows until it lays the graphic out again
    f'{DECL}<dsp:drawing xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dsp:spTree><dsp:sp>'
    "<dsp:txBody><a:bodyPr/><a:p><a:r><a:t>Buy a ticket</a:t></a:r></a:p></dsp:txBody>"
    "</dsp:sp></dsp:spTree></dsp:drawing>"
)


@pytest.mark.parametrize("folder", ["word", "ppt", "xl"])
def test_chart_titles_and_smartart_texts_are_translated_cached_chart_data_is_not(
    folder: str,
) -> None:
    base = {
        "word": docx(paragraph(run("The report."))),
        "ppt": pptx(["<a:p><a:r><a:t>The slide.</a:t></a:r></a:p>"]),
        "xl": xlsx("<si><t>The cell.</t></si>"),
    }[folder]
    name = {"word": "r.docx", "ppt": "r.pptx", "xl": "r.xlsx"}[folder]
    data = _with_parts(
        base,
        [
            (f"{folder}/charts/chart1.xml", CHART),
            (f"{folder}/diagrams/data1.xml", SMARTART),
            (f"{folder}/diagrams/drawing1.xml", SMARTART_SHOWN),
        ],
    )
    doc = read_office(data, name)
    assert doc.texts()[1:] == ["Trains per day", "Buy a ticket", "Buy a ticket"]
    assert doc.places()[1:] == [
        f"{folder}/charts/chart1.xml, paragraph 1",
        f"{folder}/diagrams/data1.xml, paragraph 1",
        f"{folder}/diagrams/drawing1.xml, paragraph 1",
    ]
    out = _translated(doc, _shout)
    chart = _part(out, f"{folder}/charts/chart1.xml")
    assert "<a:t>«TRAINS PER DAY»</a:t>" in chart and "<c:v>Delhi</c:v>" in chart
    assert "<a:t>«BUY A TICKET»</a:t>" in _part(out, f"{folder}/diagrams/drawing1.xml")


def test_a_text_box_on_a_sheet_and_an_opendocument_chart_are_translated() -> None:
    box = (
        f'{DECL}<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/'
        'spreadsheetDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
        "<xdr:twoCellAnchor><xdr:sp><xdr:txBody><a:bodyPr/><a:p><a:r><a:t>Figures are in "
        "crore.</a:t></a:r></a:p></xdr:txBody></xdr:sp></xdr:twoCellAnchor></xdr:wsDr>"
    )
    book = read_office(
        _with_parts(xlsx("<si><t>Total</t></si>"), [("xl/drawings/drawing1.xml", box)]), "b.xlsx"
    )
    assert book.texts() == ["Total", "Figures are in crore."]
    chart = (
        f'{DECL}<office:document-content {ODF_NS} xmlns:chart="urn:oasis:names:tc:opendocument:'
        'xmlns:chart:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0">'
        "<office:body><office:chart><chart:chart><chart:title><text:p>Rainfall by month</text:p>"
        "</chart:title></chart:chart><table:table><table:table-row><table:table-cell>"
        '<text:p>June</text:p></table:table-cell><table:table-cell office:value-type="float">'
        "<text:p>165</text:p></table:table-cell></table:table-row></table:table>"
        "</office:chart></office:body></office:document-content>"
    )
    text = odf("<text:p>The monsoon came early.</text:p>")
    doc = read_office(_with_parts(text, [("Object 1/content.xml", chart)]), "r.odt")
    # the chart's own table names its categories: translated with its title; numbers are not
    assert doc.texts() == ["The monsoon came early.", "Rainfall by month", "June"]
    out = _part(_translated(doc, _shout), "Object 1/content.xml")
    assert "<text:p>«RAINFALL BY MONTH»</text:p>" in out and "<text:p>165</text:p>" in out


def _sheet(cells: str) -> str:
    return (
        f'{DECL}<worksheet xmlns="{X}"><sheetData><row r="1">{cells}</row></sheetData></worksheet>'
    )


def test_cell_texts_a_worksheet_holds_itself_are_translated_numbers_and_formulas_are_not() -> None:
    """openpyxl (so pandas' to_excel) writes cell texts into the worksheet (inline strings),
    not the shared strings: they are translated too, a rich one keeping its bold word."""
    cells = (
        '<c r="A1" t="inlineStr"><is><t>Month</t></is></c><c r="B1"><v>165</v></c>'
        '<c r="C1"><f>SUM(B1:B2)</f><v>445</v></c><c r="D1" t="s"><v>0</v></c>'
        '<c r="E1" t="inlineStr"><is><r><t xml:space=\'preserve\'>Trains are </t></r>'
        "<r><rPr><b/></rPr><t>late</t></r></is></c>"
    )
    data = _replaced(xlsx("<si><t>Total</t></si>"), "xl/worksheets/sheet1.xml", _sheet(cells))
    book = read_office(data, "pandas.xlsx")
    assert book.texts() == ["Total", "Month", "Trains are late"]
    assert book.inline() == [False, False, True]
    assert book.places()[1:] == [
        "xl/worksheets/sheet1.xml, paragraph 1",
        "xl/worksheets/sheet1.xml, paragraph 2",
    ]
    given = _aligned("Trains are late", "ट्रेनें देर से हैं", [0, 2, 2, 1])
    out = book.translated(["कुल", "महीना", given])
    sheet = _part(out, "xl/worksheets/sheet1.xml")
    assert '<c r="A1" t="inlineStr"><is><t>महीना</t></is></c><c r="B1"><v>165</v></c>' in sheet
    assert "<f>SUM(B1:B2)</f><v>445</v>" in sheet and '<c r="D1" t="s"><v>0</v></c>' in sheet
    assert '<r><rPr><b/></rPr><t xml:space="preserve">देर से</t></r>' in sheet
    assert read_office(out, "pandas.xlsx").texts() == ["कुल", "महीना", "ट्रेनें देर से हैं"]


def test_a_worksheet_without_texts_of_its_own_is_kept_whatever_its_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    numbers = "".join(f'<c r="A{i}"><v>{i}</v></c>' for i in range(1, 200))
    texts = '<c r="A1" t="inlineStr"><is><t>Month</t></is></c>' + numbers
    monkeypatch.setattr("anuvad.inference.office.MAX_TEXT_PART_BYTES", 1000)
    plain = _replaced(xlsx("<si><t>Total</t></si>"), "xl/worksheets/sheet1.xml", _sheet(numbers))
    book = read_office(plain, "n.xlsx")
    assert book.texts() == ["Total"]
    assert _part(book.translated(["कुल"]), "xl/worksheets/sheet1.xml") == _sheet(numbers)
    large = _replaced(plain, "xl/worksheets/sheet1.xml", _sheet(texts))
    with pytest.raises(OfficeError, match=r"n\.xlsx: xl/worksheets/sheet1\.xml unpacks to"):
        read_office(large, "n.xlsx")


def _replaced(data: bytes, name: str, text: str) -> bytes:
    """``data`` with its entry ``name`` holding ``text``."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries: list[tuple[str, str | bytes]] = [
            (info.filename, text if info.filename == name else archive.read(info))
            for info in archive.infolist()
        ]
    joined: bytes = zipped(entries)
    return joined


def test_a_self_closing_element_with_attributes_opens_nothing() -> None:
    """LibreOffice ends a comment on a range with <office:annotation-end office:name=…/>: the
    text after it is still translated; Word's empty <w:p w:rsidR=…/> holds no later paragraph."""
    body = (
        '<text:p>Before <office:annotation office:name="a1"><text:p>A note.</text:p>'
        '</office:annotation>commented<office:annotation-end office:name="a1"/> and after.</text:p>'
    )
    # (a skipped element cuts its paragraph: three pieces)
    assert read_office(odf(body), "c.odt").texts() == ["Before", "commented", "and after."]
    word = '<w:p w:rsidR="00A1"/>' + paragraph(run("Second.")) + paragraph(run("Third."))
    doc = read_office(docx(word), "e.docx")
    assert doc.texts() == ["Second.", "Third."]
    assert doc.places() == ["word/document.xml, paragraph 2", "word/document.xml, paragraph 3"]


def test_a_chart_too_large_to_read_is_kept_as_it_was_and_the_rest_translated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    points = "".join(f'<c:pt idx="{i}"><c:v>{i}</c:v></c:pt>' for i in range(100))
    chart = CHART.replace("</c:strCache>", points + "</c:strCache>")
    monkeypatch.setattr("anuvad.inference.office.MAX_TEXT_PART_BYTES", len(chart) - 1)
    data = _with_parts(pptx(["<a:p><a:r><a:t>The slide.</a:t></a:r></a:p>"]), [
        ("ppt/charts/chart1.xml", chart)
    ])  # fmt: skip
    doc = read_office(data, "big.pptx")
    assert doc.texts() == ["The slide."]
    assert _part(_translated(doc, _shout), "ppt/charts/chart1.xml") == chart
