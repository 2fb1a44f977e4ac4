"""The language tokens of a multilingual model (NLLB-200, M2M100, a multilingual-target Marian
release): which token names each language, which pairs a model file was imported for, and the ids
one pair's translation needs.

NLLB-200 and M2M100 read ``[source-language token] + pieces + </s>`` and their decoder is forced
to begin with the target-language token (NLLB's non-legacy layout; M2M100's), which is part of no
output. A multilingual-target Marian model (OPUS-MT / Tatoeba-MT, ``>>hin<<``) reads
``[target-language token] + pieces + </s>`` and nothing is forced: its tokens name target
languages only (``target_in_source``), as ``MarianTokenizer`` reads ``>>hin<< text``.
A model file keeps this under its metadata's ``language_tokens`` (:meth:`LanguageTokens.
to_metadata`)::

    {"tokens": {"eng_Latn": "eng_Latn", "hin_Deva": "hin_Deva", ...},   # every language
     "pairs": [["eng_Latn", "hin_Deva"], ["hin_Deva", "eng_Latn"]]}       # imported for
    {"tokens": {"hin": ">>hin<<", "mar": ">>mar<<"}, "pairs": [["eng", "hin"]],
     "target_in_source": true}                                             # Marian's layout

Its config's ``data.src_lang`` / ``data.tgt_lang`` is the first pair, which every command uses;
another pair is picked by name (``Translator(..., pair=...)``), and a server can list ``pairs``
and route each request to a translator of its pair.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anuvad.data.tokenizer import Tokenizer
from anuvad.data_config import DataConfig
from anuvad.errors import CheckpointError, ConfigError

METADATA_KEY = "language_tokens"

# ISO 639-3 (the first part of an NLLB-200 / FLORES-200 code) -> ISO 639-1, for the languages
# anuvad names, detects or treats specially and those near them; a server, LibreTranslate's
# clients and the sentence rules speak the two-letter codes.
TWO_LETTER = {
    "eng": "en", "hin": "hi", "deu": "de", "fra": "fr", "spa": "es", "mar": "mr", "npi": "ne",
    "ben": "bn", "guj": "gu", "pan": "pa", "ory": "or", "tam": "ta", "tel": "te", "kan": "kn",
    "mal": "ml", "asm": "as", "san": "sa", "urd": "ur", "por": "pt", "ita": "it", "nld": "nl",
    "rus": "ru", "ukr": "uk", "pol": "pl", "ces": "cs", "tur": "tr", "arb": "ar", "pes": "fa",
    "zho": "zh", "jpn": "ja", "kor": "ko", "vie": "vi", "tha": "th", "ind": "id", "swh": "sw",
}  # fmt: skip


@dataclass(frozen=True)
class LanguageTokens:
    """A multilingual model's language tokens and the pairs its file was imported for.

    Attributes:
        tokens: (language code, its token) for every language the vocabulary has.
        pairs: the (source, target) language codes the file offers, the default first.
        target_in_source: Marian's layout: the target language's token starts the source and
            no target token is forced (then ``tokens`` are the target languages only, and a
            pair's source may be any language).
    """

    tokens: tuple[tuple[str, str], ...]
    pairs: tuple[tuple[str, str], ...]
    target_in_source: bool = False

    @property
    def codes(self) -> list[str]:
        """Every language code, in vocabulary order."""
        return [code for code, _ in self.tokens]

    def token(self, code: str) -> str:
        """The token of language ``code``.

        Raises:
            ConfigError: the model has no such language (its codes listed).
        """
        found = dict(self.tokens).get(code)
        if found is None:
            raise ConfigError(
                f"the model has no language {code!r}; its language codes are "
                f"{', '.join(self.codes)}"
            )
        return found

    def check_pairs(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Refuse pairs with a language the model lacks, or a language paired with itself.

        Raises:
            ConfigError: naming every such pair and listing the model's language codes.
        """
        known = set(self.codes)
        sources = None if self.target_in_source else known  # None: any source language
        bad = [
            f"{s}-{t}"
            for s, t in pairs
            if t not in known or s == t or (sources is not None and s not in sources)
        ]
        if bad:
            codes = ", ".join(self.codes)
            wanted = (
                f"languages, TGT one of the model's target languages, which are {codes}"
                if self.target_in_source
                else f"language codes of the model, which are {codes}"
            )
            raise ConfigError(
                f"unknown language pair {', '.join(bad)}: give pairs as SRC-TGT of two different "
                f"{wanted}"
            )

    def prefixes(
        self, pair: tuple[str, str], src_tokenizer: Tokenizer, tgt_tokenizer: Tokenizer
    ) -> tuple[list[int], list[int]]:
        """The source prefix and the forced target prefix (ids) of ``pair``: NLLB's source- and
        target-language tokens, or Marian's target-language token and nothing
        (:attr:`target_in_source`).

        Raises:
            ConfigError: the file was not imported for ``pair`` (its pairs listed).
            CheckpointError: a tokenizer lacks the language's token.
        """
        self.check_offered(pair)
        if self.target_in_source:
            return [_id_of(src_tokenizer, self.token(pair[1]))], []
        return [_id_of(src_tokenizer, self.token(pair[0]))], [
            _id_of(tgt_tokenizer, self.token(pair[1]))
        ]

    def check_offered(self, pair: tuple[str, str]) -> None:
        """Raises ConfigError when the file was not imported for ``pair`` (its pairs listed)."""
        if pair not in self.pairs:
            offered = ", ".join(f"{s}-{t}" for s, t in self.pairs)
            raise ConfigError(
                f"this model file offers {offered}, not {pair[0]}-{pair[1]}; import the model "
                f"again with --pairs {pair[0]}-{pair[1]}"
            )

    def spoken(self, code: str) -> str:
        """``code`` as a translator of the file speaks it: its two-letter code (``eng_Latn`` →
        ``en``) unless another language of the file has the same one (``zho_Hans`` and
        ``zho_Hant`` are both ``zh``: kept whole)."""
        short = common_code(code)
        everyone = {*self.codes, *(c for pair in self.pairs for c in pair)}
        if any(other != code and common_code(other) == short for other in everyone):
            return code
        return short

    def pair_name(self, pair: tuple[str, str]) -> str:
        """``"en-hi"``: the pair in spoken codes (:meth:`spoken`), for ids and file names."""
        return f"{self.spoken(pair[0])}-{self.spoken(pair[1])}"

    def named(self, pair: tuple[str, str]) -> tuple[str, str] | None:
        """The offered pair ``pair`` names, in the model's codes or in spoken codes
        (``("en", "hi")`` → ``("eng_Latn", "hin_Deva")``); None: no offered pair."""
        for offered in self.pairs:
            if pair in (offered, (self.spoken(offered[0]), self.spoken(offered[1]))):
                return offered
        return None

    def to_metadata(self) -> dict[str, Any]:
        """Plain data for a model file's metadata (read back by :func:`language_tokens_of`)."""
        entry: dict[str, Any] = {
            "tokens": dict(self.tokens),
            "pairs": [list(p) for p in self.pairs],
        }
        if self.target_in_source:
            entry["target_in_source"] = True
        return entry


def common_code(code: str) -> str:
    """The two-letter ISO 639-1 code of a model's language code where there is one
    (``eng_Latn`` → ``en``; M2M100's ``hi`` stays ``hi``); any other code as it is."""
    stem = code.split("_", 1)[0]
    if len(stem) == 2:
        return stem
    return TWO_LETTER.get(stem, code)


@dataclass(frozen=True)
class ResolvedPair:
    """Which pair a translator of a model file translates, and what that takes.

    Attributes:
        pair: the pair in the model's own codes (``eng_Latn``, ``hin_Deva``); None: a one-pair
            model.
        data: the model's data settings with the pair's languages, two-letter codes where there
            is one (the sentence rules, dates, script checks and a server's clients speak those).
        src_prefix: source ids before the pieces (the source-language token; empty: none).
        tgt_prefix: target ids forced after the decoder start (the target-language token).
    """

    pair: tuple[str, str] | None
    data: DataConfig
    src_prefix: list[int]
    tgt_prefix: list[int]

    @property
    def name(self) -> str | None:
        """``"en-hi"`` (the data's spoken codes) for a pair of a multilingual file; else None."""
        return None if self.pair is None else f"{self.data.src_lang}-{self.data.tgt_lang}"


def choose_pair(
    metadata: Mapping[str, Any], default: tuple[str, str], pair: tuple[str, str] | None = None
) -> tuple[str, str] | None:
    """The offered pair a model file (its ``metadata``; ``default`` its config's languages)
    translates when asked for ``pair`` (the model's codes or spoken ones; None: the default),
    in the model's codes; None for a one-pair model.

    Raises:
        ConfigError: ``pair`` is not one the model offers (its pairs named).
        CheckpointError: the language tokens are malformed.
    """
    languages = language_tokens_of(metadata)
    if languages is None:
        if pair is not None and pair != default:
            raise ConfigError(
                f"this model translates {default[0]}-{default[1]} only, not {pair[0]}-{pair[1]}"
            )
        return None
    if pair is None:
        return languages.named(default) or languages.pairs[0]
    chosen = languages.named(pair) or pair
    languages.check_offered(chosen)
    return chosen


def resolve_pair(
    metadata: Mapping[str, Any],
    data: DataConfig,
    src_tokenizer: Tokenizer,
    tgt_tokenizer: Tokenizer,
    pair: tuple[str, str] | None = None,
) -> ResolvedPair:
    """The pair a model file (its ``metadata`` and ``data`` settings, its tokenizers) translates
    when asked for ``pair`` (the model's codes or two-letter ones; None: the file's default).
    Both engines resolve pairs with it.

    Raises:
        ConfigError: ``pair`` is not one the model offers (or the model has one pair only).
        CheckpointError: the language tokens are malformed or missing from a tokenizer.
    """
    chosen = choose_pair(metadata, (data.src_lang, data.tgt_lang), pair)
    languages = language_tokens_of(metadata)
    if chosen is None or languages is None:
        return ResolvedPair(None, data, [], [])
    src_prefix, tgt_prefix = languages.prefixes(chosen, src_tokenizer, tgt_tokenizer)
    spoken = dataclasses.replace(
        data, src_lang=languages.spoken(chosen[0]), tgt_lang=languages.spoken(chosen[1])
    )
    return ResolvedPair(chosen, spoken, src_prefix, tgt_prefix)


def _id_of(tokenizer: Tokenizer, piece: str) -> int:
    if tokenizer.vocab is None or piece not in tokenizer.vocab:
        raise CheckpointError(f"the model file's tokenizer has no language token {piece!r}")
    return tokenizer.vocab.index(piece)


def language_tokens_of(metadata: Mapping[str, Any]) -> LanguageTokens | None:
    """The language tokens a model file's metadata holds (None: not a multilingual model).

    Raises:
        CheckpointError: the entry is malformed.
    """
    entry = metadata.get(METADATA_KEY)
    if entry is None:
        return None
    try:
        tokens = tuple((str(c), str(t)) for c, t in dict(entry["tokens"]).items())
        pairs = tuple((str(s), str(t)) for s, t in entry["pairs"])
        # Absent in NLLB / M2M100 files, which were written before Marian's layout came.
        target_in_source = entry.get("target_in_source", False) is True
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"the model file's {METADATA_KEY} metadata is malformed") from exc
    if not pairs:
        raise CheckpointError(f"the model file's {METADATA_KEY} metadata lists no pair")
    return LanguageTokens(tokens, pairs, target_in_source)


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """``"eng_Latn-hin_Deva,hin_Deva-eng_Latn"`` → [(eng_Latn, hin_Deva), (hin_Deva, eng_Latn)].

    Raises:
        ConfigError: an item is not SRC-TGT.
    """
    pairs = []
    for item in (part.strip() for part in text.split(",")):
        source, dash, target = item.partition("-")
        if not dash or not source or not target or "-" in target:
            raise ConfigError(
                f"--pairs: {item!r} is not SRC-TGT (e.g. eng_Latn-hin_Deva or en-hi); separate "
                "pairs with commas"
            )
        pairs.append((source, target))
    return pairs
