"""Currency amounts: how the source names a currency next to an amount, and one currency for
each amount in an output.

A small model knows the signs ("$25" is copied) but not the codes: "The ticket costs USD 25."
came out "टिकट लागत अमरीकी 25।" (American 25), "EUR 30 a night" as "30 बजे" (30 o'clock) and
"INR 500" as "500 में" (in 500). Around a sign it adds a currency of its own: "€30" came out
"€30 डॉलर" (dollars), "£40" as "£40 रुपये" (rupees). So:

* :func:`find_amounts`: an amount with Hindi's abbreviation of the rupee ("रु. 500") is written
  "₹500" in another language, and into a language not written in Latin letters an amount with
  a currency code before or after it ("USD 25", "25 USD", "US$25", "EUR 30", "INR 500") is
  copied as the code's sign and the amount ("$25", "€30", "₹500"), and the model reads it so
  (:func:`read_amounts`: "$25", "Rs 500"; "₹", which the models' source vocabularies lack, as
  "Rs " or "रु. ");
* :func:`named_after`: no sign is written back before an amount whose currency the model named
  in words after it (``post_search.write_signs``: "500 rupees", "30 यूरो"; Hindi news writes
  amounts about as often with words as with signs);
* :func:`write_currency`: one currency for each amount: a currency word right after an amount
  written with its sign goes where it names another currency ("€30 डॉलर" → "€30"), the sign
  where it names the same ("$699 डॉलर" → "699 डॉलर").

On the 70 dev sentences with an amount (``bench/currency_amounts.py``), shipped English→Hindi,
served copying: BLEU / chrF++ 8.88 / 29.12 → 9.05 / 29.14 at beam 4, 8.42 / 29.25 → 8.45 /
29.24 greedy. Requiring amounts without their sign (the sign written back) wrote amounts more
freely but cost 1.2 BLEU at beam 4 in a scratch run; forbidding currency signs outside the
required phrases moved greedy search's junk around "€30" elsewhere ("$ $$ , $," became "Qups
Ksplice"); neither is done.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from anuvad.data.cleaning import SCRIPTS
from anuvad.inference.dates import CURRENCY_SIGNS, Date
from anuvad.inference.translation import CopiedSpan, Translation, rewrite

# A code's sign; "US$" is the dollar's own code-and-sign, written "$".
CODES: dict[str, str] = {"USD": "$", "US$": "$", "EUR": "€", "GBP": "£", "INR": "₹", "JPY": "¥"}
# How the model reads a code before its amount: a sign its English vocabulary knows, the rupee
# as "Rs" ("₹" and "¥" are unknown to it: "JPY" is read as written).
READ: dict[str, str] = {"USD": "$", "US$": "$", "EUR": "€", "GBP": "£", "INR": "Rs "}
# How the model reads "₹" before an amount, by source language: as the language writes the rupee
# before an amount in words.
RUPEE_READ: dict[str, str] = {"en": "Rs ", "hi": "रु. "}
# The words each currency is named by, in the languages anuvad's models write.
NAMES: dict[str, tuple[str, ...]] = {
    "$": ("डॉलर", "डालर", "dollars", "dollar", "USD"),
    "₹": ("रुपये", "रुपए", "रुपया", "रुपयों", "रु", "रू", "rupees", "rupee", "Rs", "INR"),
    "€": ("यूरो", "euros", "euro", "EUR"),
    "£": ("पाउंड", "पौंड", "pounds", "pound", "GBP"),
    "¥": ("येन", "yen", "JPY"),
}
_FOLDED = {sign: {name.casefold() for name in names} for sign, names in NAMES.items()}
# The scale words between an amount and its currency ("2 बिलियन डॉलर", "$2 billion").
_SCALES = "|".join(
    (
        "मिलियन", "बिलियन", "ट्रिलियन", "करोड़", "लाख", "हज़ार", "हजार", "अरब", "खरब",
        "million", "billion", "trillion", "thousand", "crore", "lakh",
    )
)  # fmt: skip

_SIGN = f"[{re.escape(CURRENCY_SIGNS)}]"
_DIGIT = r"[0-9\u0966-\u096f]"
_LETTER = r"\w\u0900-\u0963\u0966-\u097f"  # a Devanagari vowel sign is not \w; a danda is no letter
_SPACE = r"[ \u00a0]{0,2}"  # as typed: none, one or two, a no-break space
# Hindi's abbreviations of the rupee before an amount ("रु. 500", "रू 20"): into another
# language the amount is written with the sign ("₹500"; "उसने रु. 500 दिए।" came out "He gave a
# 500 offer.", the rupees lost).
_RUPEE_WORD = re.compile(rf"(?<![{_LETTER}])(?:रु|रू)\.?\s*(?={_DIGIT})")
_RUPEE_SIGN = re.compile(rf"(?<![{_LETTER}])₹ ?(?={_DIGIT})")  # as dates.number_extent reads it
_RUPEE_AMOUNT = re.compile(rf"{_DIGIT}+(?:[.,:/-]{_DIGIT}+)*")  # a range too ("रु. 500-600")
# An amount beside a code: "25", "1,500.50", a range "3-4"; not a date, a time or a version
# ("5/10/2024", "10:30", "v1.5"), nor a year before a code ("2015 USD terms").
_CODE = "|".join(re.escape(code) for code in sorted(CODES, key=len, reverse=True))
_CODE_AMOUNT = rf"{_DIGIT}+(?:[.,]{_DIGIT}+)*(?:[–-]{_DIGIT}+(?:[.,]{_DIGIT}+)*)?"
_AMOUNT_END = rf"(?![{_LETTER}]|[.,:/–-]?{_DIGIT})"
_CODE_BEFORE = re.compile(rf"(?<![{_LETTER}$/])({_CODE}){_SPACE}({_CODE_AMOUNT}){_AMOUNT_END}")
_CODE_AFTER = re.compile(
    rf"(?<![{_LETTER}.,:/–-])({_CODE_AMOUNT}){_SPACE}({_CODE})(?![{_LETTER}/])"
)
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
_WORDS = "|".join(re.escape(name) for names in NAMES.values() for name in names)
# An amount written with its sign (a stray sign before it: "$ $25"; not "US$5", whose sign
# belongs to a word), its scale word and a currency word after them ("$2 बिलियन डॉलर", "€30
# डॉलर"): not one glued to letters ("£2.8बर्ग"), nor a word's first part ("yen-denominated")
# or the next amount's code ("$20 Rs. 500").
_SIGNED = re.compile(
    rf"(?<![{_LETTER}])(?P<extra>(?:{_SIGN} ?)*?)(?P<sign>{_SIGN}) ?"
    rf"(?P<amount>{_DIGIT}+(?:[.,–-]{_DIGIT}+)*)(?![{_LETTER}]|[.,–-]?{_DIGIT})"
    rf"(?P<scale>\s+(?:{_SCALES})(?![{_LETTER}-]))?"
    rf"(?:\s+(?P<word>{_WORDS})(?![{_LETTER}-])(?!\.?{_SPACE}{_DIGIT}))?",
    re.IGNORECASE,
)


# A currency named right before its own sign, which says it again ("R. ₹500": the model's
# transliteration of "रु." before the required "₹500"; "Rs ₹500", "USD $25"): the name goes.
_ECHOES = {sign: (*names, "R") if sign == "₹" else names for sign, names in NAMES.items()}
_ECHOED = re.compile(
    "|".join(
        rf"(?<![{_LETTER}])(?:{'|'.join(re.escape(n) for n in names)})"
        rf"\.?[ \u00a0]*(?={re.escape(sign)} ?{_DIGIT})"
        for sign, names in _ECHOES.items()
    ),
    re.IGNORECASE,
)


@functools.cache
def _names(sign: str) -> str:
    """The alternation of ``sign``'s currency names, as a pattern."""
    return "|".join(re.escape(name) for name in NAMES[sign])


@functools.cache
def _named_after(sign: str) -> re.Pattern[str]:
    """An amount with ``sign``'s currency named after it, at most two words between and no
    comma, mark or number ("500 rupees", "30 यूरो", "500 is Rs.")."""
    return re.compile(
        rf"{_DIGIT}+(?:[.,]{_DIGIT}+)*(?:[ \u00a0]+[^\s\d,;:.!?।]+){{0,2}}?[ \u00a0]+"
        rf"(?:{_names(sign)})(?![{_LETTER}-])",
        re.IGNORECASE,
    )


@functools.cache
def _named_before(sign: str) -> re.Pattern[str]:
    """``sign``'s currency named right before the end ("Rs. ", "INR ", "रु.", "JPY ")."""
    return re.compile(rf"(?<![{_LETTER}])(?:{_names(sign)})\.?[ \u00a0]*$", re.IGNORECASE)


def named_after(tail: str, sign: str) -> bool:
    """Whether ``tail``, which starts with an amount, names ``sign``'s currency in words after
    it ("500 rupees", "500 is Rs.": a model that moved the word; at most two words between,
    no comma, mark or other number)."""
    return sign in NAMES and _named_after(sign).match(tail) is not None


def named_before(head: str, sign: str) -> bool:
    """Whether ``head``, which ends right before an amount, names ``sign``'s currency at its
    end ("Rs. ", "INR ", "रु. ", "JPY ")."""
    return sign in NAMES and _named_before(sign).search(head) is not None


def non_latin(lang: str) -> bool:
    """Whether ``lang`` is written in letters other than Latin (of a known script): into it an
    amount's currency code is read and copied as its sign, from it copied as written."""
    return SCRIPTS.get(lang) not in (None, SCRIPTS["en"])


def find_amounts(text: str, src_lang: str, tgt_lang: str) -> list[Date]:
    """The amounts of ``text`` whose currency the target language writes otherwise, each with
    its target form (the sign and the digits): with Hindi's abbreviation of the rupee into
    another language ("रु. 1,500" → "₹1,500"), and with a currency code into a language not
    written in Latin letters ("USD 25", "25 USD" → "$25") or, from one, as written ("USD 20":
    "टिकट USD 20 का है।" came out "ticket USD is 20."). Sorted by start."""
    found = []
    if src_lang == "hi" and tgt_lang != "hi":
        for match in _RUPEE_WORD.finditer(text):
            number = _RUPEE_AMOUNT.match(text, match.end())
            if number is not None:
                found.append(Date(match.start(), number.end(), "₹" + number.group()))
    if non_latin(tgt_lang):
        found += [Date(a.start, a.end, CODES[a.code] + a.amount) for a in _code_amounts(text)]
    elif non_latin(src_lang):  # into Latin letters from another script: as written
        found += [
            Date(a.start, a.end, " ".join(text[a.start : a.end].split()))
            for a in _code_amounts(text)
        ]
    return sorted(found, key=lambda a: a.start)


def read_amounts(text: str, src_lang: str, tgt_lang: str) -> str:
    """``text`` as the model reads it: into a language not written in Latin letters, each
    amount with a currency code written as :data:`READ` says ("USD 25", "25 USD" → "$25",
    "INR 500" → "Rs 500"; the model had read the code as a word: "American", "o'clock"); and
    in any pair "₹", which neither shipped source vocabulary knows, as :data:`RUPEE_READ` says
    ("₹500" → "Rs 500", Hindi "रु. 500": "उसने ₹500 दिए।" came out "He went on ₹500.", and
    "सरकार ने ₹2 करोड़ दिए।" as "… Rs ₹2 crore.")."""
    if non_latin(tgt_lang):
        pieces, position = [], 0
        for a in _code_amounts(text):
            if a.code in READ:
                pieces += [text[position : a.start], READ[a.code] + a.amount]
                position = a.end
        text = "".join([*pieces, text[position:]])
    word = RUPEE_READ.get(src_lang)
    return text if word is None else _RUPEE_SIGN.sub(word, text)


@dataclass(frozen=True)
class _CodeAmount:
    start: int
    end: int
    code: str
    amount: str


def _code_amounts(text: str) -> list[_CodeAmount]:
    """The amounts of ``text`` with a currency code right before or after them, by start; none
    where two readings overlap ("25 USD 30 EUR": "USD 30" or "25 USD"? left as written)."""
    found = [_CodeAmount(m.start(), m.end(), m[1], m[2]) for m in _CODE_BEFORE.finditer(text)]
    found += [
        _CodeAmount(m.start(), m.end(), m[2], m[1])
        for m in _CODE_AFTER.finditer(text)
        if not _YEAR.fullmatch(m[1])
    ]
    alone = [
        a for a in found
        if not any(b is not a and b.start < a.end and a.start < b.end for b in found)
    ]  # fmt: skip
    return sorted(alone, key=lambda a: a.start)


def write_currency(text: str) -> str:
    """``text`` with one currency for each amount written with its sign: a currency word right
    after it (and its scale word) goes where it names another currency ("€30 डॉलर" → "€30",
    "$25 rupees" → "$25"), the sign where it names the same ("$699 डॉलर" → "699 डॉलर", "$5
    मिलियन डॉलर" → "5 मिलियन डॉलर"); a stray sign before it goes ("$ $25" → "$25"), and so does
    its currency's name right before it ("R. ₹500", "Rs ₹500" → "₹500")."""

    def written(m: re.Match[str]) -> str:
        scale, word = m["scale"] or "", m["word"]
        if word and word.casefold() in _FOLDED[m["sign"]]:
            return f"{m['amount']}{scale} {word}"
        return f"{m['sign']}{m['amount']}{scale}" if word or m["extra"] else m[0]

    return _SIGNED.sub(written, _ECHOED.sub("", text))


def write_currencies(results: Sequence[Translation]) -> None:
    """:func:`write_currency` on each result's text and n-best candidates, in place; the word
    scores point at their words again (a removed sign's word at -1), and a copied amount is
    reported as the text holds it ("$699" → "699 डॉलर", "₹500" → "500 रुपये")."""
    for result in results:
        rewrite(result, write_currency)
        result.copied = [_as_written(copied, result.text) for copied in result.copied]


def _as_written(copied: CopiedSpan, text: str) -> CopiedSpan:
    """``copied`` as ``text`` holds it where an amount's sign is a word there, after the
    amount and its scale or before the amount ("$26,750" → "26,750 डॉलर", "$2" → "2 बिलियन
    डॉलर", "₹500" → "500 रुपये", "₹2" → "Rs 2"); unchanged where ``text`` holds it as written
    or not at all ("1,699 डॉलर" does not hold "$699")."""
    signed = _SIGNED.fullmatch(copied.target)
    if copied.kind != "number" or signed is None or _holds_sign(text, copied.target):
        return copied
    amount, names = re.escape(signed["amount"]), _names(signed["sign"])
    after = rf"(?<![{_LETTER}.,]){amount}(?:\s+(?:{_SCALES}))?\s+(?:{names})(?![{_LETTER}-])"
    before = rf"(?<![{_LETTER}])(?:{names})\.?[ \u00a0]?{amount}(?![{_LETTER}]|[.,]?{_DIGIT})"
    now = re.search(after, text, re.IGNORECASE) or re.search(before, text, re.IGNORECASE)
    return copied if now is None else replace(copied, target=now.group(), present=True)


def _holds_sign(text: str, target: str) -> bool:
    """Whether ``text`` still holds ``target`` (an amount with its sign) as written."""
    return re.search(rf"(?<![{_LETTER}]){re.escape(target)}(?![0-9{_LETTER}])", text) is not None


__all__ = [
    "CODES",
    "NAMES",
    "READ",
    "RUPEE_READ",
    "find_amounts",
    "named_after",
    "named_before",
    "non_latin",
    "read_amounts",
    "write_currencies",
    "write_currency",
]
