"""Turning results into the API's answer: a glossary term counts as used only as whole words."""

from __future__ import annotations

from anuvad.inference.glossary import Glossary
from anuvad.server.responses import terms_out


def test_a_term_glued_into_a_longer_word_is_not_used() -> None:
    """Issue 34, item 3: "भारतीय रेलमार्ग" was reported as using the term "भारतीय रेल"."""
    glossary = Glossary.from_pairs([("Indian Railways", "भारतीय रेल")])
    source = "Indian Railways runs many trains."
    (glued,) = terms_out(glossary, source, "भारतीय रेलमार्ग कई गाते हैं।")
    assert (glued.source, glued.target, glued.used) == ("Indian Railways", "भारतीय रेल", False)
    (used,) = terms_out(glossary, source, "भारतीय रेल कई ट्रेनें चलाती है।")
    assert used.used
    assert terms_out(None, source, "x") == [] and terms_out(glossary, "Nothing here.", "x") == []
