"""A 422 the translator raised names its fields in ``details``, one entry per field."""

from __future__ import annotations

from anuvad.server.errors import ModelFailedError, error_message


def test_each_field_a_message_names_gets_its_own_detail() -> None:
    two = ModelFailedError("keep.0: an empty string; leave it out; keep.1: 1000 characters", 422)
    assert two.details() == [
        {"field": "keep.0", "message": "an empty string; leave it out"},
        {"field": "keep.1", "message": "1000 characters"},
    ]
    assert error_message(two) == "keep.0: an empty string; leave it out; keep.1: 1000 characters"
    one = ModelFailedError("glossary.1: the term 'hi' is also glossary.0; use one", 422)
    assert one.details() == [
        {"field": "glossary.1", "message": "the term 'hi' is also glossary.0; use one"}
    ]
    # no field first, or not a 422: the request as a whole
    assert ModelFailedError("cannot translate this request: x", 400).details() == []
    assert ModelFailedError("the model failed; see: the log", 422).details() == []
