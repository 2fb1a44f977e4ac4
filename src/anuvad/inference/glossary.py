"""Glossaries: source terms whose given translation the output must use.

A glossary is a list of (source term, target phrase) entries: from a TSV file (``term<TAB>
translation`` per line, ``#`` comments and blank lines ignored) or from an API request. When a
term occurs in a sentence, the sentence's translation must contain its target phrase exactly;
the torch engine's search guarantees it (:mod:`anuvad.decoding.terms`).

**When a term occurs** (English source side; the rule, precisely):

* letters are compared without regard to case ("Supreme Court" matches "supreme court");
* a term matches whole words only: the characters around it are not letters or digits
  ("art" does not match "party");
* each word of the term may also appear as a noun inflects, by adding ``s``, ``es``,
  ``'s``/``’s``, or replacing a final ``y`` by ``ies`` ("court" matches "courts" and "court's",
  "policy" matches "policies"); not by ``ed`` or ``ing``, which as often make another word
  ("train" → "रेलगाड़ी" turned "The training starts now." into "रेलगाड़ी अब शुरू हो गई है।" and
  "He was trained well." into "… रेलगाड़ी चलाई गई।"): a verb's forms are entries of their own
  ("vaccinated", "vaccinating");
* the words of a term may be separated by any run of spaces or hyphens;
* where matches overlap, the longest wins (then the earlier), and each source word belongs to
  one match: "Supreme Court" wins over "court" in "the Supreme Court ruled";
* a term never matches part of a link, e-mail address or file name ("court" in
  "https://example.com/court" or "court@example.com": the address is copied as written); a
  term that is a whole address matches it.

An entry whose term occurs several times is required once (one translated into another
script than the target's, below, is copied at each occurrence). The target phrase is used as given
(no inflection on the Hindi side), and only as a whole word: the search lets nothing glue onto
its end ("भारतीय रेल" is not used by "भारतीय रेलमार्ग"; issue 34, item 3), and :func:`used_in`
reports a term as used only where the output holds it so.

A glossary entry whose translation is written in another script than the target language's
("Supreme Court" → "SC", or its own term "Rohit Sharma" → "Rohit Sharma", into Hindi) reaches the
model behind a placeholder, as a marked name does, and the placeholder comes back as the
translation (:func:`anuvad.inference.required.requirements`; when a copying policy is on, as
it is by default); :class:`anuvad.inference.verbatim.Verbatim` ``keep`` does the same for exact
strings without the inflection rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from anuvad.data.tokenizer import UNK_ID, Tokenizer
from anuvad.decoding.boundaries import Boundary, holds
from anuvad.errors import DataError
from anuvad.inference.addresses import address_spans

MAX_TERM_CHARS = 200
UNSPELLABLE = "has characters this model's target vocabulary lacks (they would come out as ⁇)"
_WORD_SEPARATOR = r"[\s\-]+"


@dataclass(frozen=True)
class GlossaryEntry:
    """One term and the phrase its translation must contain."""

    source: str
    target: str


def _inflected(word: str) -> str:
    """A regex for ``word`` and its inflections (see the module docstring)."""
    forms = {word, word + "s", word + "es", word + "'s", word + "’s"}
    if word.endswith("y") and len(word) > 1:
        forms.add(word[:-1] + "ies")
    return "(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)) + ")"


def _pattern(term: str) -> re.Pattern[str]:
    words = term.split()
    body = _WORD_SEPARATOR.join(_inflected(w) for w in words)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


class Glossary:
    """Terms and their required translations.

    Args:
        entries: the terms.
        names: how messages name each entry (default "glossary entry i", from 0).

    Raises:
        DataError: an empty term or translation, a term longer than MAX_TERM_CHARS, or a term
            given twice with different translations (which one the search used was chance).
    """

    def __init__(
        self, entries: Iterable[GlossaryEntry], names: Sequence[str] | None = None
    ) -> None:
        self.entries: tuple[GlossaryEntry, ...] = tuple(entries)
        name = list(names) if names else [f"glossary entry {i}" for i in range(len(self.entries))]
        first: dict[str, int] = {}
        for i, entry in enumerate(self.entries):
            if not entry.source.strip() or not entry.target.strip():
                raise DataError(f"{name[i]}: the term and its translation may not be empty")
            if len(entry.source) > MAX_TERM_CHARS:
                raise DataError(
                    f"{name[i]}: the term has {len(entry.source)} characters; the limit is "
                    f"{MAX_TERM_CHARS}"
                )
            j = first.setdefault(entry.source.strip().casefold(), i)
            if self.entries[j].target.strip() != entry.target.strip():
                raise DataError(
                    f"{name[i]}: the term {entry.source.strip()!r} is also {name[j]}, with "
                    f"another translation ({self.entries[j].target.strip()!r}, "
                    f"{entry.target.strip()!r}); keep one"
                )
        self._patterns = [_pattern(e.source.strip()) for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]]) -> Glossary:
        """A glossary from (term, translation) pairs."""
        return cls(GlossaryEntry(source.strip(), target.strip()) for source, target in pairs)

    @classmethod
    def from_tsv(cls, path: str | Path) -> Glossary:
        """Read ``term<TAB>translation`` lines.

        Raises:
            DataError: the file cannot be read, is not UTF-8, or a line is malformed; the
                message names the file and line and says how to fix it.
        """
        path = Path(path)
        try:
            text = path.read_bytes().decode("utf-8-sig")  # a byte order mark is not a term
        except OSError as exc:
            raise DataError(f"cannot read the glossary {path}: {exc}") from exc
        except UnicodeDecodeError as exc:
            bad = text_line_of(path.read_bytes(), exc.start)
            raise DataError(f"{path}:{bad}: not valid UTF-8; save the glossary as UTF-8") from exc
        pairs: list[tuple[str, str]] = []
        lines: list[str] = []  # where each entry is, for messages
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
                raise DataError(
                    f"{path}:{number}: expected 'term<TAB>translation' (two non-empty fields "
                    f"separated by one tab), got {line[:80]!r}"
                )
            if len(fields[0].strip()) > MAX_TERM_CHARS:
                raise DataError(
                    f"{path}:{number}: the term is longer than {MAX_TERM_CHARS} characters"
                )
            pairs.append((fields[0], fields[1]))
            lines.append(f"{path}:{number}")
        return cls((GlossaryEntry(a.strip(), b.strip()) for a, b in pairs), lines)

    def merged(self, other: Glossary | None) -> Glossary:
        """This glossary and ``other``'s entries (``other`` wins for the same term)."""
        if not other:
            return self
        terms = {e.source.casefold() for e in other.entries}
        kept = [e for e in self.entries if e.source.casefold() not in terms]
        return Glossary([*kept, *other.entries])

    def matches(self, sentence: str) -> list[GlossaryEntry]:
        """The entries whose term occurs in ``sentence``, in order of first occurrence."""
        first: dict[int, int] = {}  # entry -> first start
        for start, _, index in self._spans(sentence):
            first.setdefault(index, start)
        return [self.entries[i] for i in sorted(first, key=lambda i: first[i])]

    def matched(self, sentence: str) -> list[tuple[int, int, GlossaryEntry]]:
        """Every match of a term in ``sentence``: (start, end, its entry), by start."""
        return [(start, end, self.entries[i]) for start, end, i in self._spans(sentence)]

    def match_spans(self, sentence: str) -> list[tuple[int, int]]:
        """The (start, end) character ranges of ``sentence`` that terms cover, by start."""
        return sorted((start, end) for start, end, _ in self._spans(sentence))

    def _spans(self, sentence: str) -> list[tuple[int, int, int]]:
        """(start, end, entry) of every match kept: the longest first, then the earlier, each
        source character in one match; sorted by start."""
        spans: list[tuple[int, int, int]] = []  # (start, end, entry)
        addresses = address_spans(sentence)
        for index, pattern in enumerate(self._patterns):
            spans.extend(
                (m.start(), m.end(), index)
                for m in pattern.finditer(sentence)
                if not any(  # a word of a link is the link's ("court" in example.com/court)
                    m.start() < b and a < m.end() and not (m.start() <= a and b <= m.end())
                    for a, b in addresses
                )
            )
        spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))  # longest first, then earliest
        taken: list[tuple[int, int, int]] = []
        for start, end, index in spans:
            if not any(start < b and a < end for a, b, _ in taken):
                taken.append((start, end, index))
        return sorted(taken)

    def used(self, sentence: str, translation: str) -> list[tuple[GlossaryEntry, bool]]:
        """The entries whose term occurs in ``sentence``, each with whether ``translation``
        uses its target phrase as a whole word (:func:`used_in`)."""
        return [(e, used_in(e.target, translation)) for e in self.matches(sentence)]

    def unspellable(self, tokenizer: Tokenizer) -> list[int]:
        """Indices of the entries whose translation ``tokenizer`` cannot spell without
        ``<unk>`` (it could only come out as ⁇)."""
        return [i for i, e in enumerate(self.entries) if UNK_ID in tokenizer.encode(e.target)]

    def phrases(self, sentences: Sequence[str]) -> list[list[str]]:
        """Per sentence, the target phrases its translation must contain."""
        return [[e.target for e in self.matches(s)] for s in sentences]


def used_in(target: str, translation: str) -> bool:
    """Whether ``translation`` holds ``target`` as whole words: no letter, vowel sign or digit
    glued to either end ("भारतीय रेल" is in "भारतीय रेल, ..." but not in "भारतीय रेलमार्ग").

    The rule the search enforces for glossary phrases (:class:`~anuvad.decoding.boundaries.
    Boundary` ``WORD``), so a term the torch engine required is always reported as used.
    """
    return holds(translation, target.strip(), Boundary.WORD)


def text_line_of(data: bytes, offset: int) -> int:
    """The 1-based line number of byte ``offset`` in ``data``."""
    return data.count(b"\n", 0, offset) + 1
