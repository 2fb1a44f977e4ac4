"""Identifiers: words of Latin letters and digits that name one thing and are copied as written
(:mod:`anuvad.inference.verbatim`, behind a placeholder like a marked name).

"Flight AI302 leaves from gate 4B." came back as "… गे302 पत्ते … 4।", "Your order ID is
XK47Q9." as "आपका आदेश ID47Q9 है।" and "Use the coupon SAVE50 today." as "… एस एसोसिएशन … 50।":
only the digits were copied and the letters went to the model, which has never seen such a
word. An identifier here is a run of ASCII letters and digits, with single "-" or "/" between
parts ("AB12-345X"), holding at least one letter and one digit, standing as a word: flight and
train numbers, gates and seats, order IDs, coupon codes, product models ("S24", "MP3", "G20"),
hashes. A token is one when one of its parts (between "-" and "/") mixes letters and digits
and is none of these, which are the model's to translate:

* a number with a lower-case word or a unit glued to it, an ordinal, a plural ("12th", "1990s",
  "9am", "7days", "60fps", "5km", "2GB", "3x"), or a currency before it ("Rs50", "INR500");
* and no token with a part of three letters or more is one: a compound of words and numbers
  ("2nd-floor", "5-star", "2-year-old", "12-Jan-2024", "COVID-19", "COVID-19-related": the
  model knows "कोविड-19" and "5-स्टार").
"""

from __future__ import annotations

import re

__all__ = ["find_identifiers"]

_TOKEN = re.compile(r"(?<![\w@./\\+%$₹#-])[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*(?![\w@]|[-/.]\w)")
_MIXED = re.compile(r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])")  # at the start: letters and digits
# A number with a unit or suffix (lower-case letters, or a unit in any case), or a currency
# before a number: the model's to translate.
_UNITS = (
    "km|kg|gm|mg|ml|cm|mm|ft|gb|mb|kb|tb|mah|mp|mbps|gbps|ghz|mhz|hz|kw|kwh|mw|kv|k|x|g|m|l|w|v|h"
)
_MEASURE = re.compile(rf"[0-9]+(?:[.,][0-9]+)?(?:[a-z]+|(?i:{_UNITS}))")
_CURRENCY = re.compile(r"(?i:rs|re|inr|usd|eur|gbp)\.?[0-9]+(?:[.,][0-9]+)*")
_WORD = re.compile(r"[A-Za-z]{3,}")


def find_identifiers(text: str) -> list[tuple[int, int]]:
    """(start, end) of each identifier in ``text`` (see the module docstring), in order."""
    found = []
    for match in _TOKEN.finditer(text):
        parts = re.split(r"[-/]", match.group())
        if any(_WORD.fullmatch(p) for p in parts):
            continue  # "5-star", "2nd-floor", "COVID-19"
        if any(
            _MIXED.match(p) and not (_MEASURE.fullmatch(p) or _CURRENCY.fullmatch(p)) for p in parts
        ):
            found.append((match.start(), match.end()))
    return found
