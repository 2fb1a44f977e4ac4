"""Month names next to a number, and what the number's sign or unit is, for copied numbers.

Also: a number's per cent or degree sign after it ("5.4%", "-5 °C") and its plus or minus sign
(:func:`number_extent`); an amount whose currency is named otherwise is
:mod:`anuvad.inference.currency`'s.

A small model keeps the digits the search requires but drops what belongs to them: "₹80" came
out as "80", "5.4%" as "5.4", and "12 June 2024" as "12 2024" (issue 40 item 3). So a number is
copied with its currency sign or per cent sign (:func:`number_extent`), and a date, a number
next to a month name, is copied whole with the month written in the target language
(:func:`find_dates`: "12 June 2024" → "12 जून 2024", "June 12, 2024" → "12 जून 2024", "मार्च
2023" → "March 2023", a range of days "10–15 June" → "10-15 जून").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass

from anuvad.decoding.boundaries import is_word_char

# Month names by language, January first; the first spelling is the one written.
MONTHS: dict[str, list[tuple[str, ...]]] = {
    "en": [
        ("January", "Jan"), ("February", "Feb"), ("March", "Mar"), ("April", "Apr"),
        ("May",), ("June", "Jun"), ("July", "Jul"), ("August", "Aug"),
        ("September", "Sept", "Sep"), ("October", "Oct"), ("November", "Nov"),
        ("December", "Dec"),
    ],
    "hi": [
        ("जनवरी",), ("फरवरी", "फ़रवरी"), ("मार्च",), ("अप्रैल", "अप्रेल"), ("मई",), ("जून",),
        ("जुलाई",), ("अगस्त",), ("सितंबर", "सितम्बर"), ("अक्टूबर", "अक्तूबर"),
        ("नवंबर", "नवम्बर"), ("दिसंबर", "दिसम्बर"),
    ],
}  # fmt: skip
CURRENCY_SIGNS = "₹$€£¥"
NUMBER_SIGNS = "+-−"  # plus, hyphen-minus, minus
# What belongs to a number after it: a per cent sign, a degree sign with its scale.
# (not the "%" of a printf code after it: "5 %d" keeps its number and its code).
# A comparison right before a number ("< 10", ">= 18"; not an arrow "->", "=>", or a tag's
# end): "5 < 10 and 20 > 15." came out "10 और 20 15 5।", the meaning lost.
# Not after a word, a quote or "/" ("x>5", "<b> 5", '<a href="x"> 5', "<br/> 5": a tag's end).
# An operator or section sign before a number belongs to it too ("≥ 5", "5 × 3", "§ 12": "The
# room is 5 × 3 metres." came out "कमरा 5 3 मीटर है।") after a space or at the start (not
# "1920×1080", one number as the report reads it); it keeps its space.
OPERATORS = "≤≥≠≈±×÷§"
_COMPARISON = re.compile(rf"(?:(?<![\w<>=\-/\"'])[<>]=?|(?<!\S)[{OPERATORS}])$")
_AFTER_NUMBER = re.compile(
    r"%(?![-+#0-9.*(]*[sdifuxXeEgGc](?![A-Za-z]))|°[CF]?(?![A-Za-z])|[℃℉]"
    r"|'[0-9]{1,2}(?:\.[0-9]+)?\"(?![A-Za-z0-9])"  # feet and inches: 5'8"
)


@dataclass(frozen=True)
class Date:
    """A date of a source sentence: ``text[start:end]``, and how the target writes it (and a
    word written before it after the search: a time's part of the day, "रात ")."""

    start: int
    end: int
    target: str
    before: str = ""


@functools.lru_cache(maxsize=8)
def _date_patterns(lang: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Day first ("12 June 2024", "5th Sept.") and month first ("June 12, 2024", "March
    2023"); an abbreviation may take its full stop, a full name never (it ends the sentence)."""
    full = [month[0] for month in MONTHS[lang]]
    short = [n for month in MONTHS[lang] for n in month[1:]]
    names = "|".join(re.escape(n) for n in sorted(full, key=len, reverse=True))
    abbreviations = "|".join(re.escape(n) for n in sorted(short, key=len, reverse=True))
    month = rf"(?P<month>{names}|(?:{abbreviations})\.?)" if short else rf"(?P<month>{names})"
    ordinal = r"(?:st|nd|rd|th)?"
    # a range of days ("10-15 June", "June 10–15, 2024") is one date: the model kept one end
    day = rf"(?P<day>\d{{1,2}}){ordinal}(?:\s?[-–]\s?(?P<last>\d{{1,2}}){ordinal})?"
    year = r"(?P<year>\d{4})"
    of = r"(?:of\s+)?" if lang == "en" else ""  # "5th of June"
    flags = re.IGNORECASE if lang == "en" else 0
    return (
        re.compile(rf"(?<![\w.,]){day}\s+{of}{month}(?:,?\s+{year})?(?!\w)", flags),
        re.compile(
            rf"(?<![\w.]){month}\s+(?:{day}(?:,?\s+{year})?|(?P<lone>\d{{4}}))(?!\w|[.,]\d)",
            flags,
        ),
    )


def date_spans(text: str, lang: str) -> list[tuple[int, int]]:
    """(start, end) of every match of ``lang``'s date patterns in ``text`` (its month names
    next to a day or year, whatever their case), in order; [] for a language without them."""
    if lang not in MONTHS:
        return []
    found = [m.span() for pattern in _date_patterns(lang) for m in pattern.finditer(text)]
    return sorted(found)


def _month_number(name: str, lang: str) -> int:
    for number, spellings in enumerate(MONTHS[lang]):
        if any(name.lower() == s.lower() for s in spellings):
            return number
    raise KeyError(name)


# A time of day in English ("8 pm", "9am", "10:30 a.m."), written in Hindi with the part of
# the day the hour falls in ("रात 8 बजे"): the model wrote "9म और 5प" for "9am and 5pm", and
# "at 8 pm" as "८ मई को" (8 May). The search requires "8 बजे" and the part of the day goes
# before it afterwards: required whole, greedy search wrote junk where it wanted the number
# ("प्रधानमंत्री * * देश को संबोधित करेंगे रात 8 बजे।").
_TIME = re.compile(
    r"(?<![\w.:\-–])(?P<hour>1[0-2]|0?[1-9])(?::(?P<minute>[0-5][0-9]))?\s?"
    r"(?P<half>[ap](?:\.m\.|m)|[AP](?:\.M\.|M))(?![A-Za-z])"
)
# "AM" and "PM" in capitals are a time after one of these words or in a shouted text ("at 8
# PM", "AT 8 PM"), not in "the 3 PM candidates" (Prime Ministers); a range's second hour
# ("10-11 am") is not taken alone (the range stays one number).
_TIME_BEFORE = re.compile(
    r"(?:at|by|from|to|till|until|before|after|around|about|between|and|or|since)\s+$",
    re.IGNORECASE,
)
PARTS_OF_DAY = ("सुबह", "दोपहर", "शाम", "रात")


def _part_of_day(hour: int, afternoon: bool) -> str:
    """Hindi's word for the part of the day an hour of a 12-hour clock falls in."""
    morning, noon, evening, night = PARTS_OF_DAY
    if not afternoon:
        return morning if 4 <= hour <= 11 else night
    return noon if hour == 12 or hour <= 3 else evening if hour <= 7 else night


# A Hindi time of day with its part of the day ("सुबह १०:३० बजे", "रात को 8 बजे"): into English
# the clock with "am" or "pm" ("… will be 10:30 pm on morning." for "सुबह १०:३० बजे").
_HINDI_TIME = re.compile(
    rf"(?<![\w\u0900-\u097f])(?P<part>{'|'.join(PARTS_OF_DAY)})(?:\s+(?:को|के))?\s+"
    r"(?P<hour>[0-9०-९]{1,2})(?::(?P<minute>[0-5०-५][0-9०-९]))?\s+बजे(?![\w\u0900-\u097f])"
)


def _hindi_time(match: re.Match[str]) -> Date | None:
    """A Hindi time of day in English ("सुबह 10:30 बजे" → "10:30 am", "रात 2 बजे" → "2 am");
    None for an hour a 12-hour clock lacks."""
    hour = int("".join(str(unicodedata.digit(c)) for c in match["hour"]))
    if not 1 <= hour <= 12:
        return None
    morning, noon, _, night = PARTS_OF_DAY
    part = match["part"]
    late = part != morning and not (
        (part == noon and 9 <= hour <= 11) or (part == night and (hour == 12 or hour <= 5))
    )
    minute = "".join(str(unicodedata.digit(c)) for c in match["minute"] or "")
    clock = f"{hour}:{minute}" if minute else str(hour)
    return Date(match.start(), match.end(), f"{clock} {'pm' if late else 'am'}")


# A Hindi clock ("8 बजे", "९:३० बजे"), and an English half of the day after a number.
_HINDI_CLOCK = re.compile(
    r"(?<![\w.:])([0-9०-९]{1,2}(?:[:.][0-9०-९]{2})?)\s+बजे(?![\w\u0900-\u097f])"
)
_HALF = r"\s?(?:[ap]\.m\.|[ap]m(?![A-Za-z]))"
# Any word for a part of the day, the formal ones too: a source with one gives the half.
_DAY_WORDS = re.compile(
    rf"(?:{'|'.join(PARTS_OF_DAY)}|सायं|सांय|संध्या|अपराह्न|पूर्वाह्न|प्रातः|प्रात|सवेरे|भोर|रात्रि|मध्याह्न)"
)


def without_invented_halves(text: str, source: str) -> str:
    """``text`` (English, translated from the Hindi ``source``) without "am" or "pm" after a
    clock of the source, where the source names no part of the day anywhere ("वह 8 बजे आएगा।"
    came out "He will come at 8 pm."): the model guessed the half of the day. A "p.m." that
    ended the sentence leaves its full stop."""
    if _DAY_WORDS.search(source):
        return text
    for clock in {to_latin(m[1]) for m in _HINDI_CLOCK.finditer(source)}:
        pattern = rf"(?<![\d.:]){re.escape(clock)}{_HALF}"

        def bare(match: re.Match[str], clock: str = clock, whole: str = text) -> str:
            ended = match.group().endswith(".") and not whole[match.end() :].strip()
            return clock + ("." if ended else "")

        text = re.sub(pattern, bare, text, flags=re.IGNORECASE)
    return text


def to_latin(number: str) -> str:
    """``number`` in Latin digits."""
    return "".join(str(unicodedata.digit(c)) if c.isdigit() else c for c in number)


def read_times(text: str, src_lang: str, tgt_lang: str, required: Collection[str]) -> str:
    """``text`` as the model reads it where its times are required (:func:`find_times`): a
    Hindi time into English whose form is among ``required`` without its part of the day
    ("सुबह १०:३० बजे" → "१०:३० बजे"), which the required "10:30 am" says (read, it came out
    "… 10:30 am on morning.")."""
    if src_lang != "hi" or tgt_lang != "en":
        return text

    def read(match: re.Match[str]) -> str:
        time = _hindi_time(match)
        wanted = time is not None and time.target in required
        return match[0][match.start("hour") - match.start() :] if wanted else match[0]

    return _HINDI_TIME.sub(read, text)


def find_times(text: str, src_lang: str, tgt_lang: str) -> list[Date]:
    """The times of day of an English ``text`` with their Hindi form ("8 pm" → "रात 8 बजे",
    "10:30 a.m." → "सुबह 10:30 बजे"), and of a Hindi one with their English form ("सुबह
    10:30 बजे" → "10:30 am"); [] for other pairs."""
    if src_lang == "hi" and tgt_lang == "en":
        return [t for t in map(_hindi_time, _HINDI_TIME.finditer(text)) if t is not None]
    if src_lang != "en" or tgt_lang != "hi":
        return []
    found = []
    shouted = sum(c.isupper() for c in text) > sum(c.islower() for c in text)
    for match in _TIME.finditer(text):
        if match.group("half").isupper() and not (
            shouted or _TIME_BEFORE.search(text, 0, match.start())
        ):
            continue  # "the 3 PM candidates"
        hour, minute = int(match.group("hour")), match.group("minute")
        clock = str(hour) + (f":{minute}" if minute else "")
        when = _part_of_day(hour, match.group("half")[0].lower() == "p")
        found.append(Date(match.start(), match.end(), f"{clock} बजे", f"{when} "))
    return found


def find_dates(text: str, src_lang: str, tgt_lang: str) -> list[Date]:
    """The dates of ``text`` (a day and/or year next to a month name) with their target form
    "day month year" (the parts the source has), and its times of day (:func:`find_times`);
    [] when either language has no month names here. In English the month must be written with
    a capital ("March 3") unless a year makes it a date ("march 3, 2024"): "farmers will march
    30 km", "you may 2 ..." are verbs."""
    if src_lang not in MONTHS or tgt_lang not in MONTHS or src_lang == tgt_lang:
        return []
    dates: list[Date] = list(find_times(text, src_lang, tgt_lang))
    for pattern in _date_patterns(src_lang):
        for match in pattern.finditer(text):
            name = match.group("month").rstrip(".")
            groups = match.groupdict()
            year = groups.get("year") or groups.get("lone")
            if any(match.start() < d.end and d.start < match.end() for d in dates):
                continue
            if src_lang == "en" and not (name[:1].isupper() and not name.isupper()) and not year:
                continue  # "will march 30 km", "MAY 2" without a year: a verb, not a month
            month = MONTHS[tgt_lang][_month_number(name, src_lang)][0]
            day = groups.get("day")
            if day and groups.get("last"):
                day = f"{day}-{groups['last']}"  # a plain hyphen: "3 -7" read as minus seven
            parts = (day, month, year)
            dates.append(Date(match.start(), match.end(), " ".join(p for p in parts if p)))
    return sorted(dates, key=lambda d: d.start)


def _signs(text: str, at: int) -> bool:
    """Whether the "+" or "-" at ``text[at]`` is a number's sign: nothing of a word touches it
    ("धारा-370", "COVID-19": a vowel sign is a word's too) and no number comes before it across
    spaces ("10 -15", "pages 10 - 15": a range)."""
    if at and (is_word_char(text[at - 1]) or text[at - 1] == "_"):
        return False
    before = text[:at].rstrip()
    return not (before and before[-1].isdigit())


def number_extent(text: str, start: int, end: int) -> tuple[int, int]:
    """The number ``text[start:end]`` with the currency sign right before it ("₹80", "₹ 80"),
    the plus or minus sign right before that ("-5", "−3.5", "+2%", "-₹80": not the hyphen of a
    range or a code, "10-15", "COVID-19"), a comparison or operator before those ("< 10", ">= 18",
    "× 3", "§ 12"), and the
    per cent or degree sign right after it
    ("5.4%", "5.4 %", "30°C", "-5 °C", "100 ℃": "It was -5 °C at night." came out "… -5 बजे
    था।"), or the inches of a height in feet ("5'8\"": "He is 5'8\" tall." came out "… 5 8
    …")."""
    before = text[:start].rstrip(" ")
    if before and before[-1] in CURRENCY_SIGNS and start - len(before) <= 1:
        start = len(before) - 1
    if start and text[start - 1] in NUMBER_SIGNS and _signs(text, start - 1):
        start -= 1
    before = text[:start].rstrip(" ")
    comparison = _COMPARISON.search(before)
    if comparison is not None and start - len(before) <= 1:
        start = comparison.start()
    after = text[end:]
    stripped = after.lstrip(" ")
    unit = _AFTER_NUMBER.match(stripped)
    if unit is not None and len(after) - len(stripped) <= 1:
        end += len(after) - len(stripped) + unit.end()
    return start, end


__all__ = [
    "CURRENCY_SIGNS",
    "MONTHS",
    "NUMBER_SIGNS",
    "OPERATORS",
    "PARTS_OF_DAY",
    "Date",
    "date_spans",
    "find_dates",
    "find_times",
    "number_extent",
    "read_times",
    "to_latin",
    "without_invented_halves",
]
