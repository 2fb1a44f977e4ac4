"""Under what terms a served model may be used, for ``GET /models`` and the page's notice (issue
40 item 10: the page never said the shipped models are for non-commercial use).

First found:

1. the model card's licence, which an imported model keeps in its metadata (``license``, from
   the card's front matter; :func:`anuvad.interop.importer.card_license`);
2. for a model trained with anuvad, its training corpora's licences as the data catalogue
   (:mod:`anuvad.data.catalogue`) records them: any corpus for non-commercial or research use
   only makes the model so (the shipped models' cards, data/trained_models/README.md, say the
   same of the same data);
3. else nothing: a licence the server cannot know is not guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from anuvad.data.catalogue import CATALOGUE

# A corpus licence that rules out commercial use (CC BY-NC, "research use", "treat as
# non-commercial").
RESTRICTED = re.compile(r"\bNC\b|non-commercial|research", re.IGNORECASE)
NAMED = 2  # restricted corpora named in the note; the rest are counted


@dataclass(frozen=True)
class Licence:
    """A model's terms of use.

    Attributes:
        terms: in a few words, e.g. "non-commercial research use only" or the card's
            identifier ("apache-2.0").
        why: where that comes from, e.g. the training corpora that impose it.
    """

    terms: str
    why: str


def model_licence(corpora: Sequence[str], metadata: Mapping[str, Any]) -> Licence | None:
    """The terms of a model trained on ``corpora`` (the config's corpus names) with
    ``metadata`` (its model file's); None when neither says.

    Args:
        corpora: the names of the corpora it was trained on, as its config lists them.
        metadata: the model file's metadata (an imported model's ``license``).
    """
    card = metadata.get("license")
    if isinstance(card, str) and card.strip():
        if RESTRICTED.search(card):  # "cc-by-nc-4.0" (NLLB-200): say it in words
            return Licence(
                f"non-commercial use only ({card.strip()})", "the licence its model card states"
            )
        return Licence(card.strip(), "the licence its model card states")
    restricted = [
        f"{name} ({CATALOGUE[name].licence})"
        for name in dict.fromkeys(corpora)
        if name in CATALOGUE and RESTRICTED.search(CATALOGUE[name].licence)
    ]
    if not restricted:
        return None
    more = len(restricted) - NAMED
    named = ", ".join(restricted[:NAMED]) + (f" and {more} more" if more > 0 else "")
    return Licence(
        "non-commercial research use only",
        f"trained on data licensed for non-commercial or research use: {named}",
    )


__all__ = ["Licence", "model_licence"]
