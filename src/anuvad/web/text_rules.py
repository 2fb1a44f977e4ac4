"""The server's document rules as data for the offline page (``model.json``'s ``text``; issue 42).

The page (``static/sentences.js``, ``static/document.js``) splits a pasted text into sentences
and mends each output as the server does; its rules are read here from the modules the server
runs, not written twice:

* **splitting** (:mod:`anuvad.inference.sentences`, :mod:`anuvad.inference.documents`): Moses'
  non-breaking prefixes of the source language from the ``sentence-splitter`` package (with
  anuvad's extra ones), the abbreviations of the sentence-case view and the glued-sentence
  pattern, or the punctuation rule and its abbreviations for languages Moses has no rules for
  (Hindi); the list-marker pattern;
* **punctuation** (:mod:`anuvad.inference.punctuation`): the danda languages and their
  final-stop and lone-pipe patterns, the quote-pairing pattern;
* **links** (:mod:`anuvad.inference.addresses`, :mod:`anuvad.inference.links`): the source's
  URL and e-mail patterns, and what counts as link-like junk in an output: each of the
  source's links as often as the source has it, no invented one, as both of the server's
  engines do;
* **numbers** (:mod:`anuvad.inference.numbers_back`): the number pattern and the clean-up
  patterns. The page's search cannot be constrained, so numbers are put back after it, as the
  server does for its CTranslate2 engine;
* **currency** (:mod:`anuvad.inference.currency`): an amount with a currency code read with
  its sign ("USD 25" as "$25") and "₹" as the source language writes the rupee, one currency
  for each amount ("€30 डॉलर" → "€30", "$699 डॉलर"
  → "699 डॉलर");
* **number words** (:mod:`anuvad.inference.number_words`): a Hindi number written in words read
  as its digits ("ढाई सौ" as "250"): the words with their values.

The algorithms around the patterns are JavaScript (``sentences.js``, ``document.js``,
``numbers.js``);
tests/unit/web checks them equal to the Python functions on WMT24 paragraphs and crafted cases.
"""

from __future__ import annotations

from typing import Any

from anuvad.data.cleaning import SCRIPTS
from anuvad.inference import (
    addresses,
    cells,
    codes,
    currency,
    dates,
    documents,
    final_mark,
    language,
    links,
    number_words,
    numbers_back,
    ordinals,
    punctuation,
    sentences,
    symbols,
)


def js_pattern(pattern: str) -> str:
    r"""A Python ``re`` pattern as the same JavaScript pattern (``u`` flag): ``\d`` is any
    decimal digit in both only as ``\p{Nd}``; Python's ``\w`` (letters, digits, ``_``) is
    spelled out, and ``\b`` (a Unicode word boundary in Python, an ASCII one in JavaScript)
    becomes the lookarounds it means; escapes JavaScript's ``u`` mode refuses (``\!``,
    ``\"``) lose the backslash; named groups ``(?P<name>`` become ``(?<name>``; a letter,
    ``[^\W\d_]``, is ``[\p{L}\p{Nl}\p{No}]``, and a letter or digit, ``[^\W_]``,
    ``[\p{L}\p{N}]``."""
    pattern = pattern.replace("[^\\W\\d_]", "[\\p{L}\\p{Nl}\\p{No}]")
    pattern = pattern.replace("[^\\W_]", "[\\p{L}\\p{N}]")  # a letter or digit
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            if n == "d":
                out.append(r"\p{Nd}")
            elif n == "b" and not in_class:  # JavaScript's \b knows ASCII words only
                out.append(
                    r"(?:(?<=[\p{L}\p{N}_])(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}_]))"
                )
            elif n == "w":
                out.append(r"\p{L}\p{N}_" if in_class else r"[\p{L}\p{N}_]")
            elif n in "!%:;,\"'<>=@#&~`":
                out.append(n)
            else:
                out.append(c + n)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out).replace("(?P<", "(?<")


def text_rules(src_lang: str, tgt_lang: str) -> dict[str, Any]:
    """``model.json``'s ``text``: how the page splits ``src_lang`` documents and mends
    ``tgt_lang`` outputs."""
    prefixes = sentences.moses_prefixes(src_lang)
    split: dict[str, Any] = {
        "list_marker": js_pattern(documents._LIST_MARKER.pattern),
        # what separates a line's cells (cells.cell_separator): a table row's, else this language's
        "table_row": js_pattern(cells.TABLE_ROW.pattern),
        "table_rule": js_pattern(cells.TABLE_RULE.pattern),
        "row_cells": js_pattern(cells.ROW_CELLS.pattern),
        "cells": js_pattern(
            (cells.TAB_CELLS if cells.pipe_is_danda(src_lang) else cells.SPACED_PIPE_CELLS).pattern
        ),
        "symbol": symbols.JS_SYMBOL,
        "glue": symbols.JS_GLUE,
        "emoji": symbols.JS_EMOJI,
        "other_space": js_pattern(sentences._OTHER_SPACE.pattern),
        # a sentence in another script than the source's is kept as written (language.py)
        "script": [list(r) for r in SCRIPTS.get(src_lang, ())] or None,
        "latin": [list(r) for r in SCRIPTS["en"]],
        "script_share": language.SCRIPT_SHARE,
        "email": js_pattern(addresses.EMAIL.pattern),
        "url": js_pattern(addresses.URL.pattern),  # case-insensitive (the "i" flag)
        "file": js_pattern(addresses.FILE.pattern),
        "code": js_pattern(codes.CODE.pattern),  # format placeholders, tags: no language's
    }
    if prefixes is None:
        split |= {
            "kind": "rule",
            "rule": js_pattern(sentences._RULE.pattern),
            "rule_abbreviation": js_pattern(sentences._RULE_ABBREVIATION.pattern),  # "i" flag
            "abbreviation_window": sentences._ABBREVIATION_WINDOW,
        }
    else:
        abbreviations = sorted(sentences._abbreviations(src_lang))
        split |= {
            "kind": "moses",
            "prefixes": prefixes,
            "abbreviations": abbreviations,
            "next_start": js_pattern(sentences._NEXT_START.pattern),
            "initials": js_pattern(sentences._INITIALS.pattern),
            "glued": js_pattern(sentences._GLUED.pattern),
        }
    return {
        "split": split,
        "punctuation": {
            "danda": tgt_lang in punctuation.DANDA_LANGUAGES,
            "capitalised": tgt_lang in punctuation.CAPITALISED,
            "lower_start": js_pattern(punctuation._LOWER_START.pattern),
            "lone_x": js_pattern(punctuation._LONE_X.pattern),
            "source_x": js_pattern(punctuation._SOURCE_X.pattern),
            "danda_char": punctuation.DANDA,
            "final_stop": js_pattern(punctuation._FINAL_STOP.pattern),
            "lone_pipe": js_pattern(punctuation._LONE_PIPE.pattern),
            "space_before_danda": js_pattern(punctuation._SPACE_BEFORE_DANDA.pattern),
            "danda_run": js_pattern(punctuation._DANDA_RUN.pattern),
            "source_end": js_pattern(punctuation._SOURCE_END.pattern),
            "output_stop": js_pattern(punctuation._OUTPUT_STOP.pattern),
            "stray_quotes": js_pattern(punctuation._STRAY_QUOTES.pattern),
            "source_marks": js_pattern(punctuation._SOURCE_MARKS.pattern),
            "output_marks": js_pattern(punctuation._OUTPUT_MARKS.pattern),
            "height": js_pattern(punctuation._HEIGHT.pattern),
            "inch": punctuation._INCH,
            "lone_symbols": js_pattern(punctuation._LONE_SYMBOLS.pattern),
            "trailing": js_pattern(punctuation._TRAILING.pattern),
            "final": js_pattern(final_mark.FINAL.pattern),
        },
        "links": {
            "email": js_pattern(addresses.EMAIL.pattern),
            "url": js_pattern(addresses.URL.pattern),  # case-insensitive (the "i" flag)
            "file": js_pattern(addresses.FILE.pattern),
            "url_trailing": addresses.URL_TRAILING,  # characters an address does not end with
            "linkish": js_pattern(links._LINKISH.pattern),
            "junk_run": js_pattern(links._JUNK_RUN.pattern),
            "linkish_trailing": js_pattern(links._TRAILING.pattern),
            "space_before_end": js_pattern(links._SPACE_BEFORE_END.pattern),
        },
        "currency": {
            "signs_codes": currency.non_latin(tgt_lang),
            "code_before": js_pattern(currency._CODE_BEFORE.pattern),
            "code_after": js_pattern(currency._CODE_AFTER.pattern),
            "year": "^(?:" + js_pattern(currency._YEAR.pattern) + ")$",
            "read": currency.READ,
            "rupee_sign": js_pattern(currency._RUPEE_SIGN.pattern),
            "rupee_read": currency.RUPEE_READ.get(src_lang),
            "signed": js_pattern(currency._SIGNED.pattern),  # case-insensitive (the "i" flag)
            "echoed": js_pattern(currency._ECHOED.pattern),  # case-insensitive too
            "names": {
                sign: [n.casefold() for n in names] for sign, names in currency.NAMES.items()
            },
        },
        # From Hindi into English, no am/pm the source does not give (dates.without_invented_halves)
        "halves": {
            "clock": js_pattern(dates._HINDI_CLOCK.pattern),
            "day_words": js_pattern(dates._DAY_WORDS.pattern),
            "half": js_pattern(dates._HALF),  # case-insensitive (the "i" flag)
        }
        if (src_lang, tgt_lang) == ("hi", "en")
        else None,
        "numbers": {
            "number": js_pattern(numbers_back._NUMBER.pattern),
            # "2nd" is a word (ordinals.small_ordinals), outside a date (dates.date_spans):
            # both case-insensitive (the "i" flag); read as words from English only
            "small_ordinal": js_pattern(ordinals.SMALL_ORDINAL.pattern),
            "dates": [js_pattern(p.pattern) for p in dates._date_patterns("en")],
            "ordinal_words": list(ordinals.WORDS),
            "read_ordinals": src_lang == "en",
            "number_words": _number_words() if src_lang == "hi" else None,
            "empty": js_pattern(numbers_back._EMPTY.pattern),
            "before_mark": js_pattern(numbers_back._BEFORE_MARK.pattern),
        },
    }


def _number_words() -> dict[str, Any]:
    """numbers.js's rules: each word's kind and value (counts, wholes and shifts in quarters,
    the multipliers as they are), the patterns of a word and of the gap inside a number."""
    quarters = ("count", "whole", "shift")
    return {
        "words": {
            word: [kind, int(value * 4) if kind in quarters else int(value)]
            for word, (kind, value) in number_words._WORDS.items()
        },
        "large": number_words._LARGE,
        "kept_word": number_words._KEPT_WORD,
        "clock": list(number_words._CLOCK),
        "joiners": number_words._JOINERS,
        "word": js_pattern(number_words._WORD.pattern),
        "gap": js_pattern(number_words._GAP.pattern),
    }


__all__ = ["js_pattern", "text_rules"]
