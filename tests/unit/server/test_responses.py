"""Turning results into the API's answer: a glossary term counts as used only as whole words."""

from __future__ import annotations

from anuvad.inference.documents import Segment
from anuvad.inference.glossary import Glossary
from anuvad.inference.length_check import flag_short
from anuvad.inference.translation import Candidate, Translation
from anuvad.server.responses import sentence_out, terms_out, text_out

LONG = (
    "the farmers of the village planted rice in the fields near the river and the women "
    "carried water from the well while the children played"
)


def test_a_term_glued_into_a_longer_word_is_not_used() -> None:
    """Issue 34, item 3: "भारतीय रेलमार्ग" was reported as using the term "भारतीय रेल"."""
    glossary = Glossary.from_pairs([("Indian Railways", "भारतीय रेल")])
    source = "Indian Railways runs many trains."
    (glued,) = terms_out(glossary, source, "भारतीय रेलमार्ग कई गाते हैं।")
    assert (glued.source, glued.target, glued.used) == ("Indian Railways", "भारतीय रेल", False)
    (used,) = terms_out(glossary, source, "भारतीय रेल कई ट्रेनें चलाती है।")
    assert used.used
    assert terms_out(None, source, "x") == [] and terms_out(glossary, "Nothing here.", "x") == []


def _translation(source: str, text: str) -> Translation:
    return Translation(source, text, [5], -1.0, True, [Candidate(text, [5], -1.0, -1.0, True)])


def test_the_answer_says_likely_wrong_without_a_calibration() -> None:
    results = [_translation(LONG, "किसानों ने धान लगाया।"), _translation("Hello.", "नमस्ते।")]
    flag_short(results, "en", "hi")
    assert [r.short for r in results] == [True, False]
    sentences = [sentence_out(Segment(0, len(r.source), r.source, 0), r) for r in results]
    assert [(s.short, s.likely_wrong) for s in sentences] == [(True, True), (False, None)]
    whole = text_out(LONG, "x", sentences, keep_nbest=False)
    assert whole.likely_wrong is True and whole.confidence is None
    fine = text_out("Hello.", "नमस्ते।", sentences[1:], keep_nbest=False)
    assert fine.likely_wrong is None
