"""One CTranslate2 engine per language pair of a multilingual model (issue 41, items 4 and 5).

The CTranslate2 counterpart of :func:`anuvad.inference.pairs.pair_translators`: an exported
NLLB-200 / M2M100 folder serves every pair its model file was imported for, each engine a view of
the one loaded ``ctranslate2.Translator`` (:meth:`CT2Translator.with_pair`), so the weights are
in memory once and the replicas serve every pair's requests.
"""

from __future__ import annotations

import dataclasses

from anuvad.data.language_tokens import language_tokens_of
from anuvad.inference.ct2.engine import CT2Translator


def ct2_pair_translators(engine: CT2Translator) -> list[CT2Translator]:
    """An engine for every pair of ``engine``'s model in the model file's order (its default
    first; ``engine`` itself for its own pair); ``[engine]`` for a one-pair model.

    Each engine's config name gets the pair's codes
    (``import of facebook/nllb-200-distilled-600M-en-hi``), which a server uses as the model's id,
    as for the torch engine's pairs.

    Raises:
        CheckpointError: the model's language tokens are malformed.
    """
    languages = language_tokens_of(engine.exported.metadata)
    if languages is None or len(languages.pairs) < 2:
        return [engine]
    name = engine.exported.config.name
    engines = []
    for pair in languages.pairs:
        one = engine if pair == engine.pair else engine.with_pair(pair)
        suffix = languages.pair_name(pair)
        config = dataclasses.replace(one.model_file.config, name=f"{name}-{suffix}")
        one.model_file = dataclasses.replace(one.model_file, config=config)
        engines.append(one)
    return engines


__all__ = ["ct2_pair_translators"]
