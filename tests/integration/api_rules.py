"""schemathesis checks for ``tests/integration/test_api_fuzz.py`` (loaded by ``schemathesis
run`` as its hooks module, ``SCHEMATHESIS_HOOKS=api_rules``): what the API promises beyond its
schema.

- A schema-valid request may be refused (400 or 422) only for a rule a JSON Schema cannot state,
  one the schema's error descriptions name (:data:`UNSTATED_RULES`).
- An answered translation has every text sent, in order (none lost or reordered); a stream's
  every line is of its published schema (schemathesis cannot read NDJSON) and the last is
  "done".
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis

from anuvad.server.routes.stream import StreamLine

# What a refusal of a schema-valid request may say (the rules a JSON Schema cannot state).
UNSTATED_RULES = (
    "characters in all",  # /translate: all texts together
    "exceeds text limit",  # LibreTranslate: all texts together
    "every text is empty",  # LibreTranslate: a list may hold blank texts, but not only those
    "missing q parameter",  # the same, for a form's "q=" (to the schema, a list of one blank)
    "vocabulary lacks",  # a glossary translation the model cannot spell
    "sentences, but with split_sentences",
    "translates from",  # a text in another script than the model's (anuvad.server.routing)
    "is written in",  # the same, in LibreTranslate's terms
    "not written in a language",
    "is not available as a target language",  # LibreTranslate: no model for the pair
    "names writes English names",  # names with a model that does not translate en->hi
    "names translates some sentences twice",  # names on the stream
    "alignment is read once every sentence is translated",  # alignment on the stream
    "the server translates .txt",  # translate_file: a file's format (its name and bytes)
    "not UTF-8 text",  # translate_file: a file's encoding
    "has no text to translate",  # translate_file: a file of white space
    "(split it into several files)",  # translate_file: a file's length in characters
)


@schemathesis.check
def refused_only_by_unstated_rules(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request refused (400 or 422) names a rule the schema cannot state."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code in (400, 422):
        error = json.loads(response.content)["error"]
        if not any(rule in error for rule in UNSTATED_RULES):
            raise AssertionError(f"a schema-valid request was refused: {error}")
    return None


@schemathesis.check
def every_text_comes_back_in_order(ctx: Any, response: Any, case: Any) -> bool | None:
    """An answered translation has every text sent, in order; a stream's lines are of their
    schema and the last is "done"."""
    if response.status_code != 200 or case.path not in ("/translate", "/translate/stream"):
        return None
    if case.path == "/translate/stream":
        lines = response.content.splitlines()
        for line in lines:
            StreamLine.model_validate_json(line)  # raises naming what is wrong
        last = json.loads(lines[-1])
        if last["event"] != "done":
            raise AssertionError(f"the stream ended with {last}")
        answer = last["response"]
    else:
        answer = json.loads(response.content)
    texts = case.body["text"] if isinstance(case.body["text"], list) else [case.body["text"]]
    if [t["source"] for t in answer["translations"]] != texts:
        raise AssertionError("a text was lost or reordered")
    return None
