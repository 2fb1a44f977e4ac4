"""Which served model a text goes to, by the script it is written in (issue 34, item 5).

A model given text in another script than its source language's writes nonsense with
confidence ("कप्तान ने 85 रन बनाए" sent to English→Hindi came back as "Tayayay + 4."). So the
server never translates a text that is mostly in another script than the chosen model's source
(:func:`anuvad.inference.language.wrong_script`): a request that names no model goes to a
served model that translates from the text's language (the response's ``model`` and
``detected_language`` say so); a request that names a model, or a text no served model reads,
gets a 422 naming the language found and the model that takes it. ``POST /detect`` tells a
client the same thing before it asks (:func:`detect_served`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from anuvad.inference.language import SCRIPT_SHARE, Detection, detect, wrong_script
from anuvad.inference.romanized import ROMANIZED_FIX, romanized_hindi
from anuvad.server.errors import WrongLanguageError
from anuvad.server.languages import SCRIPT_NAMES, language_name
from anuvad.server.state import ServedModel, ServerState


def source_languages(state: ServerState) -> list[str]:
    """The languages the served models translate from, the default model's first."""
    return list(dict.fromkeys(m.info.src_lang for m in state.models.values()))


def reader_of(state: ServerState, language: str) -> ServedModel | None:
    """The first served model that translates from ``language`` (None: none does)."""
    return next((m for m in state.models.values() if m.info.src_lang == language), None)


@dataclass(frozen=True)
class Detected:
    """A text's language among the served source languages (:func:`detect_served`).

    Attributes:
        language: the best candidate; None when the text has no letters.
        candidates: every served source language with the share of letters in its script.
        model: the first served model that translates from ``language`` (None: none).
    """

    language: str | None
    candidates: list[Detection]
    model: ServedModel | None


def detect_served(state: ServerState, text: str) -> Detected:
    """Which of the served source languages ``text`` is written in, by script."""
    candidates = detect(text, source_languages(state))
    best = candidates[0] if candidates and candidates[0].confidence > 0 else None
    language = best.language if best else None
    return Detected(language, candidates, reader_of(state, language) if language else None)


def choose_model(
    state: ServerState, model_id: str | None, texts: Sequence[str]
) -> tuple[ServedModel, str | None]:
    """The model that translates ``texts`` (the text a request sends, for HTML its text runs)
    and the language they were found in (None: no letters).

    With ``model_id`` None the default model translates them, unless they are mostly in
    another script and another served model translates from their language: then that one.

    Raises:
        UnknownModelError: ``model_id`` is not served.
        WrongLanguageError: a text is mostly in another script than the chosen model's source
            language (422 naming the text, the language found and a model that takes it), or
            is Hindi in Latin letters (:mod:`anuvad.inference.romanized`).
    """
    model = state.pick(model_id)
    for i, text in enumerate(texts):
        if romanized_hindi(text):  # no model reads it: English nonsense, or refused as Latin
            which = "the text" if len(texts) == 1 else f"text[{i}]"
            alone = "" if len(texts) == 1 else "; send the other texts in a request of their own"
            raise WrongLanguageError(f"{which} {ROMANIZED_FIX}{alone}")
    found = detect_served(state, "\n".join(texts))
    if (
        model_id is None
        and found.model is not None
        and wrong_script("\n".join(texts), model.info.src_lang)
    ):
        model = found.model
    wrong = [wrong_script(text, model.info.src_lang) for text in texts]
    for i, text in enumerate(texts):
        if wrong[i]:
            message = wrong_language(state, model, text, i, len(texts), model_id)
            if not all(wrong):  # other texts of the request are in the model's language
                message += (
                    "; one request goes to one model: send the texts of each language in "
                    "a request of their own"
                )
            raise WrongLanguageError(message)
    return model, found.language


def wrong_language(
    state: ServerState, model: ServedModel, text: str, index: int, count: int, model_id: str | None
) -> str:
    """The message for ``text`` (number ``index`` of ``count``) that ``model`` cannot read."""
    which = "the text" if count == 1 else f"text[{index}]"
    source = model.info.src_lang
    found = detect_served(state, text)
    scripts = detect(text, list(SCRIPT_NAMES))  # any script we can name, served or not
    if found.model is not None and found.language != source:
        written = f"is written in {language_name(found.language or '')}"
    elif scripts and scripts[0].confidence >= SCRIPT_SHARE:
        written = f"is written in the {SCRIPT_NAMES[scripts[0].language]} script"
    else:
        written = f"is not written in the {SCRIPT_NAMES.get(source, source)} script"
    problem = f"{which} {written}, but model {model.id!r} translates from {language_name(source)}"
    if found.model is not None and found.model is not model:
        other = found.model.info
        takes = f"{language_name(other.src_lang)} → {language_name(other.tgt_lang)}"
        fix = f"send it with model {found.model.id!r} ({takes})"
        if model_id is not None:
            fix += ", or leave `model` out to have the server choose"
    else:
        served = ", ".join(language_name(lang) for lang in source_languages(state))
        fix = f"no served model translates from its language (they translate from {served})"
    return f"{problem}; {fix}"


__all__ = [
    "Detected",
    "choose_model",
    "detect_served",
    "reader_of",
    "source_languages",
]
