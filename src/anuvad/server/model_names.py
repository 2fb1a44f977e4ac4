"""Served models named in words (issue 34, item 10): ``GET /models`` gives each a ``title``
("English → Hindi, general text") and a ``summary`` of its training data in plain words, for
the page and for people; ``name`` (the config name) and ``trained_on`` (corpus codes) stay for
scripts.

Where they come from, first found:

1. the model file's metadata: ``title`` and ``summary`` strings (``anuvad export`` keeps the
   metadata a training run recorded; add them there for a new model);
2. :data:`SHIPPED`, by config name: the models in data/trained_models/ (their model cards,
   data/trained_models/README.md, give the figures summed up here);
3. else the title is the direction ("English → Hindi") and the summary the corpus line
   (:meth:`DataConfig.training_summary`).

Two served models with the same title get their ids added in brackets, so that a choice between
them is never between two equal names.
"""

from __future__ import annotations

from typing import Any

from anuvad.server.languages import language_name

# Config name → (what the model is for, its training data in plain words).
SHIPPED: dict[str, tuple[str, str]] = {
    "enhi_d256_L3": (
        "captions",
        "trained on 39,000 sentence pairs of image captions, everyday phrases, software "
        "strings and TED talks",
    ),
    "enhi_general_ft5_d256_L3": (
        "general text",
        "trained on 154,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 48,000 Hindi news sentences "
        "translated back into English",
    ),
    "enhi_bt_d256_L3": (
        "general text",
        "trained on 125,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 131,000 Hindi sentences "
        "translated back into English (a third round, by a better Hindi → English model)",
    ),
    "enhi_bt2_d256_L3": (
        "general text",
        "trained on 125,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 131,000 Hindi sentences "
        "translated back into English (a second round, by a better Hindi → English model)",
    ),
    "enhi_r7": (
        "general text",
        "trained on 125,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 131,000 Hindi sentences "
        "translated back into English (a fourth round; the model then averaged with the third "
        "round's)",
    ),
    "enhi_r8h": (  # round 8: a soup whose last ingredient (its config) is the captions-twice arm
        "general text",
        "trained on 125,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 131,000 Hindi sentences "
        "translated back into English (a fifth round; the model then averaged with the fourth "
        "round's and with a twin that saw the captions twice)",
    ),
    "enhi_r9g": (  # round 9, on a lent GPU: round 8 continued, the captions counted twice
        "general text",
        "trained on 125,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 131,000 Hindi sentences "
        "translated back into English (a sixth round, by a better Hindi → English model)",
    ),
    "enhi_r11": (  # round 11, on the CPU: round 9 continued twice, everyday phrases weighted up
        "general text",
        "trained on 125,000 sentence pairs of image captions, everyday phrases, news, Wikipedia, "
        "government and legal text, TED talks, speeches and dictionaries, and 131,000 Hindi "
        "sentences translated back into English (a seventh round)",
    ),
    "hien_bt_d256_L3": (
        "general text",
        "trained on 112,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 112,000 English news sentences "
        "translated into Hindi",
    ),
    "hien_r7h": (  # Hindi -> English round 7: the arm that saw the captions at full weight
        "general text",
        "trained on 112,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 112,000 English news sentences "
        "translated into Hindi (afresh, by the fifth-round English → Hindi model)",
    ),
    "hien_r8g": (  # Hindi -> English round 8, on a lent GPU: round 7 continued on its data
        "general text",
        "trained on 112,000 sentence pairs of image captions, news, Wikipedia, government and "
        "legal text, TED talks, speeches and dictionaries, and 112,000 English news sentences "
        "translated into Hindi (by the fifth-round English → Hindi model)",
    ),
    "hien_r9": (  # Hindi -> English round 9, on the CPU: round 8 continued, everyday phrases up
        "general text",
        "trained on 112,000 sentence pairs of image captions, everyday phrases, news, Wikipedia, "
        "government and legal text, TED talks, speeches and dictionaries, and 112,000 English "
        "news sentences translated into Hindi (afresh, by the ninth-round English → Hindi model)",
    ),
    "hien_d256_L3": (
        "",
        "trained on 93,000 sentence pairs of image captions, everyday phrases, Wikipedia, news, "
        "government speeches, legal text, TED talks and dictionaries",
    ),
}


def model_title(name: str, src_lang: str, tgt_lang: str, metadata: dict[str, Any]) -> str:
    """The model in words: its direction, and what it is for where that is known."""
    own = metadata.get("title")
    if isinstance(own, str) and own.strip():
        return own.strip()
    direction = f"{language_name(src_lang)} → {language_name(tgt_lang)}"
    purpose = SHIPPED.get(name, ("", ""))[0]
    return f"{direction}, {purpose}" if purpose else direction


def model_summary(name: str, trained_on: str, metadata: dict[str, Any]) -> str:
    """The model's training data in plain words (``trained_on``, the corpus line, when no
    better one is known)."""
    own = metadata.get("summary")
    if isinstance(own, str) and own.strip():
        return own.strip()
    return SHIPPED.get(name, ("", ""))[1] or trained_on


__all__ = ["SHIPPED", "model_summary", "model_title"]
