"""What the browser runtime must know of a model (``model.json``), and what it cannot run.

The JavaScript runtime (``static/``) reproduces the torch engine's text side and search rules,
so every rule it follows comes from here, generated from the Python definitions rather than
written twice: the search settings of the model's :class:`~anuvad.decode_config.DecodeConfig`,
the special ids of :mod:`anuvad.data.tokenizer`, the pieces that may repeat three times in a
row (digits, :class:`~anuvad.decoding.constraints.NoRepeatNGram`), the recasing thresholds of
:mod:`anuvad.inference.casing` and the source normaliser's substitutions, read from sacremoses'
``MosesPunctNormalizer`` itself and rewritten as JavaScript regular expressions, or, for an
Indic source language, the Indic NLP library's normaliser probed character by character
(:mod:`anuvad.web.indic_rules`).

:func:`web_problems` names every model option the runtime does not support, all at once, before
anything is written.
"""

from __future__ import annotations

import re
from typing import Any

from anuvad import __version__
from anuvad.checkpoint import ModelFile
from anuvad.data.cleaning import LATIN_DIGIT_RULES, SCRIPTS, moses_punct_normalizer
from anuvad.data.language_tokens import METADATA_KEY
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID, Tokenizer
from anuvad.web.indic_rules import indic_normalization, space_ranges
from anuvad.web.onnx_export import graph_shapes
from anuvad.web.text_rules import text_rules

WEB_FORMAT = "anuvad-web"
WEB_FORMAT_VERSION = 1
# The languages whose source normaliser the runtime has: sacremoses' Moses punctuation rules,
# and the Indic NLP library's Devanagari normaliser (indic_rules; the library's other scripts
# have rules this module does not describe yet).
_MOSES_LANGUAGES = frozenset({"en", "de", "fr", "es", "cs", "cz"})
INDIC_LANGUAGES = frozenset({"hi", "mr", "ne"})

# Recasing thresholds: the values of anuvad.inference.casing, which the web package may not
# import (it is on the same layer); tests/unit/web checks that they agree.
RECASE = {"shouted_share": 0.7, "title_share": 0.8, "min_words": 2, "unknown_cost": 10}


# The most weight bytes (float32) an export may hold. A browser's onnxruntime has one WASM memory
# of at most 4 GiB for both graphs; while a graph loads, it holds the file's bytes and the
# session's float32 weights at once, besides the activations and key/value cache of a search
# (and each graph is a protobuf of at most 2 GiB): 1 GiB of weights leaves that room.
MAX_WEIGHT_BYTES = 1024**3


def web_problems(loaded: ModelFile) -> list[str]:
    """Every option of ``loaded`` the web runtime cannot run, one line each (empty: none)."""
    problems: list[str] = []
    weight_bytes = 4 * sum(p.numel() for p in loaded.model.parameters())
    if weight_bytes > MAX_WEIGHT_BYTES:
        problems.append(
            f"a model this large ({weight_bytes / 1024**3:.2f} GiB of float32 weights; a "
            f"browser's onnxruntime runs at most {MAX_WEIGHT_BYTES / 1024**3:.2f} GiB: its WASM "
            "memory of 4 GiB holds a graph's file and its weights at once while loading, and "
            "the search besides); export a smaller model"
        )
    if METADATA_KEY in loaded.metadata:
        problems.append(
            f"{METADATA_KEY} (a multilingual model's language tokens and forced target prefix)"
        )
    for side, tokenizer in (("source", loaded.src_tokenizer), ("target", loaded.tgt_tokenizer)):
        if tokenizer.vocab is not None:
            problems.append(
                f"a {side} tokenizer with its own vocabulary (an imported model's vocab.json)"
            )
        if tokenizer.word_level:
            problems.append(f"a word-level {side} vocabulary (a parsing model)")
    data = loaded.config.data
    if data.clean.normalize and data.src_lang not in _MOSES_LANGUAGES | INDIC_LANGUAGES:
        problems.append(
            f"data.clean.normalize for source language {data.src_lang!r} (the web runtime "
            f"has the normalisers of {', '.join(sorted(_MOSES_LANGUAGES | INDIC_LANGUAGES))})"
        )
    return problems


def _js_pattern(pattern: str) -> str:
    """A Python ``re`` pattern as the same JavaScript pattern (used with the ``u`` flag):
    Python's ``\\d`` is any Unicode decimal digit, JavaScript's only 0-9; JavaScript's ``u``
    mode refuses escaped characters that need no escape (``\\!``)."""
    return re.sub(r"\\([!%:;,\"'<>=@#&~`])", r"\1", pattern.replace("\\d", "\\p{Nd}"))


def _js_replacement(replacement: str) -> str:
    r"""A Python replacement (``\g<1>`` groups) as a JavaScript one (``$1``)."""
    return re.sub(r"\\g<(\d+)>", r"$\1", replacement.replace("$", "$$"))


def normalization(loaded: ModelFile) -> dict[str, Any]:
    """How a source sentence is normalised before tokenisation, as the runtime applies it:
    NFC, the substitutions in order, control characters removed, NFC again, spaces collapsed and
    trimmed (:class:`anuvad.data.cleaning.TextNormalizer`); for an Indic language the character
    map and context rules of :func:`~anuvad.web.indic_rules.indic_normalization`; or only
    stripped of Python's whitespace (``str.strip``)."""
    data = loaded.config.data
    if not data.clean.normalize:
        # Python's str.strip: its whitespace, not JavaScript's trim() (which strips U+FEFF and
        # keeps U+001C-U+001F and U+0085).
        return {"kind": "strip", "space_ranges": space_ranges()}
    if data.src_lang in INDIC_LANGUAGES:
        return indic_normalization(data.src_lang)
    normalizer = moses_punct_normalizer()(
        lang=data.src_lang, pre_replace_unicode_punct=True, post_remove_control_chars=True
    )
    rules = [*normalizer.REPLACE_UNICODE_PUNCTUATION, *normalizer.substitutions]
    if SCRIPTS.get(data.src_lang) is SCRIPTS["en"]:
        rules += LATIN_DIGIT_RULES  # after Moses' rules, as TextNormalizer applies them
    return {
        "kind": "moses_punct",
        "language": data.src_lang,
        "rules": [[_js_pattern(p), _js_replacement(r)] for p, r in rules],
        "remove_control_chars": True,
    }


def _may_run(tokenizer: Tokenizer) -> list[int]:
    """Target ids whose piece holds a digit: they may come three times in a row ("1000")."""
    pieces = tokenizer.id_to_piece(list(range(tokenizer.vocab_size)))
    return [i for i, piece in enumerate(pieces) if any(c.isdigit() for c in piece)]


def model_settings(
    loaded: ModelFile, dtype: str, files: dict[str, str], source_name: str
) -> dict[str, Any]:
    """The content of ``model.json``: everything the runtime reads besides the files."""
    c = loaded.config
    shapes = graph_shapes(loaded.model)
    d = c.decode
    return {
        "format": WEB_FORMAT,
        "format_version": WEB_FORMAT_VERSION,
        "anuvad_version": __version__,
        "name": c.name,
        "source_model": source_name,
        "languages": {"source": c.data.src_lang, "target": c.data.tgt_lang},
        "direction": f"{c.data.src_lang}-{c.data.tgt_lang}",
        "dtype": dtype,
        "files": files,
        "special_ids": {"pad": PAD_ID, "unk": UNK_ID, "bos": BOS_ID, "eos": EOS_ID},
        "shapes": {
            "decoder_layers": shapes.layers,
            "heads": shapes.heads,
            "head_size": shapes.head_size,
            "src_vocab_size": c.model.src_vocab_size,
            "tgt_vocab_size": shapes.vocab_size,
            "max_positions": c.model.max_positions,
        },
        # Source pieces kept: one position is EOS's (Translator.max_src_tokens).
        "max_src_tokens": c.model.max_positions - 1,
        "search": {
            "beam_size": d.beam_size,
            "nbest": d.nbest,
            "length_penalty": d.length_penalty,
            "length_normalization": d.length_normalization,
            "early_stopping": d.early_stopping,
            # The output limit: floor(max_len_a * source tokens with EOS) + max_len_b.
            "max_len_a": d.max_len_a,
            "max_len_b": d.max_len_b,
            "max_output_tokens": d.max_output_tokens,
            "no_repeat_ngram_size": d.no_repeat_ngram_size,
            "batch_size": d.batch_size,
        },
        "may_run": _may_run(loaded.tgt_tokenizer),
        "normalization": normalization(loaded),
        "recase": RECASE,
        "text": text_rules(c.data.src_lang, c.data.tgt_lang),
    }


__all__ = [
    "INDIC_LANGUAGES",
    "MAX_WEIGHT_BYTES",
    "RECASE",
    "WEB_FORMAT",
    "model_settings",
    "normalization",
    "web_problems",
]
