"""Sentence ends and quotation marks come out consistent."""

from __future__ import annotations

import pytest

from anuvad.inference.punctuation import punctuate


@pytest.mark.parametrize(
    ("text", "source", "want"),
    [
        ("कप्तान ने 85 रन बनाए.", "The captain scored 85 runs.", "कप्तान ने 85 रन बनाए।"),
        ("वर्ष 2024.", "In 2024.", "वर्ष 2024।"),
        ("वह आया|", "He came.", "वह आया।"),
        ("वह आया |", "He came.", "वह आया।"),
        ("हाँ | नहीं", "Yes. No", "हाँ। नहीं"),
        ("देखें www.nic.in पर 3.5 किलो।", "See www.nic.in for 3.5 kg.", "देखें www.nic.in पर 3.5 किलो।"),
        ('उसने कहा, "मैं आऊँगा."', 'He said, "I will come."', 'उसने कहा, "मैं आऊँगा।"'),
        ("क्या वह आया?", "Did he come?", "क्या वह आया?"),
        ('उसने कहा "मैं आऊँगा।', 'He said "I will come."', 'उसने कहा "मैं आऊँगा"।'),
        ('ट्रेन " देर से है।', "The train is late.", "ट्रेन देर से है।"),
        ("“ट्रेन देर से है।", "“The train is late.”", "“ट्रेन देर से है”।"),
        ("ट्रेन देर से है” ।", "The train is late.", "ट्रेन देर से है।"),
        (" लागत है. 5 ", "It costs 5 a unit", "लागत है. 5"),  # a final "▁" piece's space
        ("धन्यवाद .", "Thank you.", "धन्यवाद।"),  # a lone final "." (an n-best candidate)
        ("3 . 5 है", "It is 3.5", "3 . 5 है"),  # not at the end: left alone
        # one danda at the end, none after a space (n-best candidates: "आएगा।।", "है ।")
        ("यह आएगा।।", "It will come.", "यह आएगा।"),
        ("यह आएगा।.", "It will come.", "यह आएगा।"),
        ("यह आएगा .।", "It will come.", "यह आएगा।"),
        ("होती है ।", "It is.", "होती है।"),
        ("राम आया ।सीता गई ।", "Ram came. Sita went.", "राम आया।सीता गई।"),
        # single quotes after the final mark (n-best candidates) go unless the source quotes
        ("होटल में €30 खर्च हो गया।'।'", "The hotel charges €30 a night.", "होटल में €30 खर्च हो गया।"),
        ("वह आया।' ", "He came.", "वह आया।"),
        ("उसने कहा 'रुको।'", "He said 'stop.'", "उसने कहा 'रुको।'"),
        ("राम का 'घर' है।", "It is Ram's 'home'.", "राम का 'घर' है।"),
        # the source's run of "?" and "!" ends the translation too
        ("तुम कहाँ जा रहे हो।", "Where are you going???", "तुम कहाँ जा रहे हो???"),
        ("क्या!", "What?!", "क्या?!"),
        ("क्या", "What??", "क्या"),  # no final mark to replace
        # a symbol standing alone that the source lacks goes, with a space
        ("* ग्रुप पंडित और लाल राज्य।", "Gateway Pundit and RedState.", "ग्रुप पंडित और लाल राज्य।"),
        ("प्रारंभिक * * शुरुआती 3.6 $.", "initial 3.6.", "प्रारंभिक शुरुआती 3.6।"),
        ("कीमत $5 है * ।", "It costs $5 *.", "कीमत $5 है *।"),  # the source has them
        ("यह 5 * 3 है।", "It is 5 x 3.", "यह 5 * 3 है।"),  # between numbers: arithmetic
        ("*", "Yes.", "*"),  # nothing else would be left
        ("५ * ३ = १५", "5 x 3 = 15", "५ * ३ = १५"),  # between numbers in any script
        ("कीमत $ 25 है।", "It costs USD 25.", "कीमत $ 25 है।"),  # a currency sign before a number
        ("x = 5 और a + b", "x is 5 and a plus b", "x = 5 और a + b"),  # operators are no junk
        # a run of "?" inside a quote or bracket is the quote's
        ("वह आया (क्यों?)।", "He came (why??).", "वह आया (क्यों?)।"),
        ('उसने पूछा, "क्या?"।', 'He asked, "What??"', 'उसने पूछा, "क्या?"।'),
        ("वह 150'6\" ऊंचा है।", "It is 150'6\" high.", "वह 150'6\" ऊंचा है।"),  # three-digit feet
        # an inch mark is no quotation mark
        ("वह 5'8\" लंबा है।", "He is 5'8\" tall.", "वह 5'8\" लंबा है।"),
        ('उसने कहा "वह 5\'8" है।', 'He said "he is 5\'8" tall".', 'उसने कहा "वह 5\'8" है"।'),
        # each language its own quotation marks (NTREX-128: curly in Hindi, straight in English)
        ('उसने कहा: "कल आना"', "He said: “Come tomorrow”", 'उसने कहा: "कल आना"'),
    ],
)
def test_hindi_punctuation_is_made_consistent(text: str, source: str, want: str) -> None:
    assert punctuate(text, source, "hi") == want


def test_other_languages_keep_their_full_stop_but_get_paired_quotes() -> None:
    assert punctuate("He came.", "वह आया।", "en") == "He came."
    assert punctuate('He said "yes.', 'उसने कहा "हाँ।', "en") == 'He said "yes".'


@pytest.mark.parametrize(
    ("text", "source", "want"),
    [
        ("ram", "राम", "Ram"),  # a word or cell in Hindi has no case to copy
        ("rain in Delhi", "दिल्ली में बारिश", "Rain in Delhi"),
        ('"yes," he said.', '"हाँ," उसने कहा।', '"Yes," he said.'),
        ("iPhone is new.", "iPhone नया है।", "iPhone is new."),  # a source's own case
        ("iPhone is new.", "यह iPhone नया है।", "iPhone is new."),  # capitals of its own
        ("e-mail it.", "ईमेल करें।", "E-mail it."),
        ("ram", "ram", "ram"),  # a cased source keeps the model's case
        # a lone "X" the source lacks goes (second audit: "(RBI)" came out "(X RBI)")
        ("Indian Bank (X RBI) rose.", "भारतीय बैंक (RBI) बढ़ा।", "Indian Bank (RBI) rose."),
        ("X-rays and Malcolm X.", "एक्स-रे और मैल्कम एक्स।", "X-rays and Malcolm X."),
        ("Twitter X is new.", "Twitter X नया है।", "Twitter X is new."),
        ("He passed Class X.", "उसने दसवीं कक्षा पास की।", "He passed Class X."),  # a numeral
        ("3 X 4 = 12", "3 गुणा 4 = 12", "3 X 4 = 12"),
        # a part of a long sentence cut at its clauses keeps the model's first word
        (
            "rain fell in the hills",
            "पहाड़ों में भारी बारिश हुई और नदियों में पानी का स्तर बढ़ गया,",
            "rain fell in the hills",
        ),
    ],
)
def test_a_translation_from_an_uncased_script_begins_with_a_capital(
    text: str, source: str, want: str
) -> None:
    """Second newcomer audit: "राम" came back "ram", a heading "rain in Delhi"."""
    assert punctuate(text, source, "en") == want


@pytest.mark.parametrize("text", ["", "।", "कुछ नहीं", '"उद्धरण" ठीक है।', "a.b"])
def test_consistent_text_is_left_alone(text: str) -> None:
    assert punctuate(text, "Whatever it is.", "hi") == text


@pytest.mark.parametrize(
    ("output", "source", "expected"),
    [
        # the parts of a long sentence cut at commas or spaces (newcomer review: a danda in the
        # middle of the assembled translation)
        ("सोमवार को समिति मिली।", "When the committee met on Monday,", "सोमवार को समिति मिली,"),
        ("और योजना पर चर्चा हुई।", "and discussed the plan to hire", "और योजना पर चर्चा हुई"),
        ("दूध खरीदें।", "buy milk", "दूध खरीदें"),  # a list item
        ("Ram came.", "राम आया;", "Ram came;"),
        # a question or exclamation stays; a source that ends a sentence keeps the stop
        ("क्या वह आया?", "did he come", "क्या वह आया?"),
        ("वह आया।", "He came.", "वह आया।"),
        ('उसने कहा "आओ।"', 'He said "come"', 'उसने कहा "आओ"'),
        # a Hindi word ends in a vowel sign (no word character); a colon is not doubled
        ("India won the match.", "भारत ने मैच जीता", "India won the match"),
        ("उसने कहा: ।", "He said:", "उसने कहा:"),
    ],
)
def test_no_full_stop_where_the_source_ends_no_sentence(
    output: str, source: str, expected: str
) -> None:
    tgt = "hi" if source.isascii() else "en"
    assert punctuate(output, source, tgt) == expected


@pytest.mark.parametrize(
    ("text", "phrases", "expected"),
    [
        ("वह घायल हो गया था. 13", ["13"], "वह घायल हो गया था 13."),
        ('उसने कहा "चलो." 13', ["13"], 'उसने कहा "चलो." 13'),  # not into the quotation
        ("वह गया था। 13।", ["13"], "वह गया था 13।"),  # its own mark: one
        ("it was late. 13", ["13"], "it was late 13."),
        # an abbreviation's full stop ends no sentence
        ("He lives in house No. 13", ["13"], "He lives in house No. 13"),
        ("The price is Rs. 500", ["500"], "The price is Rs. 500"),
        ("Born in Jan. 2024", ["2024"], "Born in Jan. 2024"),
        ("See fig. 3", ["3"], "See fig. 3"),
        ("मूल्य: रु. 500", ["500"], "मूल्य: रु. 500"),
        ("वह गया था. 13)", ["13"], "वह गया था 13)."),  # the mark is not lost
        ("संपर्क करें. www.a.in b@c.in", ["www.a.in", "b@c.in"], "संपर्क करें www.a.in b@c.in."),
        ("गया था. 30 मई 2005", ["30 मई 2005", "2005"], "गया था 30 मई 2005."),
        ("गया था. 13 लोग", ["13"], "गया था. 13 लोग"),  # words after it: not only phrases
        ("देखें www.a.in", ["www.a.in"], "देखें www.a.in"),  # no mark: as it was
        ("यह 3.5 है", ["3.5"], "यह 3.5 है"),  # a decimal point is no sentence's end
        ("रूम 101 फर्श पर है . 1", ["101", "1"], "रूम 101 फर्श पर है 1."),  # a stop alone
    ],
)
def test_phrases_written_after_the_final_mark_go_before_it(
    text: str, phrases: list[str], expected: str
) -> None:
    from anuvad.inference.punctuation import phrases_before_mark

    assert phrases_before_mark(text, phrases) == expected
