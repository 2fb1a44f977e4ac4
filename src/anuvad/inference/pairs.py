"""One translator per language pair of a multilingual model file (issue 41, item 4).

An imported NLLB-200 / M2M100 file offers the pairs it was imported for
(:mod:`anuvad.data.language_tokens`). A server serves each as a model of its own, so that
``GET /models``, the page's direction choice, ``POST /translate`` and the LibreTranslate-compatible
routes list and route them like any other model; the translators share one network in memory.
"""

from __future__ import annotations

import dataclasses

from anuvad.data.language_tokens import language_tokens_of
from anuvad.inference.engine import TranslationEngine
from anuvad.inference.translator import Translator


def pair_translators(translator: Translator, confidence: bool = True) -> list[Translator]:
    """A translator for every pair of ``translator``'s model file, the file's default first;
    ``[translator]`` itself for a one-pair model.

    Each shares ``translator``'s network (no second copy in memory) and its search settings;
    its config name gets the pair's codes (``import of facebook/nllb-200-distilled-600M-en-hi``),
    which a server uses as the model's id. With ``confidence`` each new one loads its pair's
    confidence model (``<stem>.hi-en.confidence.json``, ``anuvad calibrate --pair``) when the
    file has one beside it.

    Raises:
        CheckpointError: the file's language tokens are malformed.
        ConfigError: a pair's confidence model is malformed or belongs to another file.
    """
    languages = language_tokens_of(translator.model_file.metadata)
    if languages is None or len(languages.pairs) < 2:
        return [translator]
    original = translator.model_file
    default = translator.pair
    name = original.config.name
    translators = []
    for pair in languages.pairs:
        if pair == default:
            one = translator
        else:
            one = Translator(original, decode=translator.decode, pair=pair)
            one.model_path = translator.model_path
            one.lock = translator.lock  # one network: one model call at a time
            if confidence:
                one.load_confidence()
        suffix = languages.pair_name(pair)
        config = dataclasses.replace(one.model_file.config, name=f"{name}-{suffix}")
        one.model_file = dataclasses.replace(one.model_file, config=config)
        translators.append(one)
    return translators


def pairs_of(engine: TranslationEngine, confidence: bool = True) -> list[TranslationEngine]:
    """What a server serves for ``engine``: a multilingual model as one engine per pair (the
    torch engine's :func:`pair_translators`, ``confidence`` passed on; the CTranslate2
    engine's :func:`~anuvad.inference.ct2.pairs.ct2_pair_translators`), anything else as
    itself.

    The pairs of one network take turns: a call of one pair waits for another pair's call to
    end (each has its own batcher; a long call of one delays the other's requests)."""
    if isinstance(engine, Translator):
        return list(pair_translators(engine, confidence))
    if engine.engine == "ctranslate2":  # imported here: ctranslate2 is an optional dependency
        from anuvad.inference.ct2.engine import CT2Translator
        from anuvad.inference.ct2.pairs import ct2_pair_translators

        if isinstance(engine, CT2Translator):
            return list(ct2_pair_translators(engine))
    return [engine]


__all__ = ["pair_translators", "pairs_of"]
