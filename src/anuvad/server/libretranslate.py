"""LibreTranslate's API on anuvad's models (issue 34): the apps and libraries that speak
LibreTranslate (``libretranslatepy``, translation plug-ins, browser extensions) work with anuvad
pointed at ``http://HOST:PORT/libretranslate/``. The routes are in
:mod:`anuvad.server.routes.libretranslate`; this module maps their bodies (read by
:mod:`anuvad.server.libretranslate_bodies`) onto anuvad's own requests, so a LibreTranslate
request is translated exactly as ``POST /translate`` translates it
(:mod:`anuvad.server.planning`), with the model's own search settings.

Differences from LibreTranslate, by design: languages are the served models' (``GET
/libretranslate/languages``); ``source: "auto"`` tells the language by its script
(:mod:`anuvad.server.routing`), so its ``confidence`` is the share of letters in that script
(0-100); a text in another script than ``source``'s is refused (400) instead of translated into
nonsense (for HTML, the text between its tags); ``alternatives`` for a text of several sentences
put each sentence's next candidates together. As in LibreTranslate, a text whose language is the
target (``source`` equal to ``target``, or so detected) and a blank text in a list come back as
they were. Errors keep LibreTranslate's shape and codes: ``{"error": "..."}`` with 400 (invalid
request), 403 (invalid API key), 429 (the server is busy: retry), 500 (translation failed).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from pydantic import ValidationError

from anuvad.inference.language import wrong_script
from anuvad.inference.markup import html_texts
from anuvad.server.answer_schemas import TranslateResponse
from anuvad.server.auth import bearer_token, key_matches
from anuvad.server.errors import ApiError
from anuvad.server.languages import language_name
from anuvad.server.libretranslate_bodies import LibreTranslateError, LtDetected, LtLanguage
from anuvad.server.limits import MAX_BEAM_SIZE, MAX_REQUEST_CHARS
from anuvad.server.routing import Detected, detect_served
from anuvad.server.schemas import (
    TranslateRequest,
    is_blank,
)
from anuvad.server.state import ServerState

# The name LibreTranslate's clients show for source "auto".
AUTO = "auto"


def check_key(state: ServerState, request: Request, key: str | None) -> None:
    """The API key of the body (``api_key``) or the ``Authorization: Bearer`` header, when the
    server asks for one (``anuvad serve --api-key-file``).

    Raises:
        LibreTranslateError: 400 without a key, 403 with a key the server does not know.
    """
    if not state.limits.api_key_required:
        return
    key = key or bearer_token(request.scope)
    if not key:
        raise LibreTranslateError(400, "Please contact the server operator to get an API key")
    if not key_matches(key, state.api_keys):
        raise LibreTranslateError(403, "Invalid API key")


def check_languages(
    state: ServerState,
    texts: list[str],
    sources: list[str],
    checked: list[int] | None = None,
    given: str | None = None,
) -> None:
    """Refuse a text mostly in another script than its source language, in LibreTranslate's
    terms (``source``; anuvad's own message names its ``model`` field, which LibreTranslate
    clients do not have); only the texts ``checked`` (None: all) are checked; ``given``: the
    request's own source when it differs from the texts' (``auto``).

    Raises:
        LibreTranslateError: 400 naming the text, the language found and the source to send.
    """
    for i, (text, source) in enumerate(zip(texts, sources, strict=True)):
        if (checked is not None and i not in checked) or not wrong_script(text, source):
            continue
        which = "q" if len(texts) == 1 else f"q[{i}]"
        found = detect_served(state, text).language
        if found is not None and found != source:
            problem = f"{which} is written in {language_name(found)}, not {language_name(source)}"
            fix = f"send it with source {found!r} or {AUTO!r}"
        else:
            served = ", ".join(language_name(m.info.src_lang) for m in state.models.values())
            problem = f"{which} is not written in a language this server translates from"
            fix = f"it translates from {served}"
        asked = f"source {source!r}" if given in (None, source) else f"source {given!r}"
        raise LibreTranslateError(400, f"Invalid request: {problem} ({asked}); {fix}")


# ------------------------------------------------------------------------------ answers


def languages(state: ServerState) -> list[LtLanguage]:
    """Every served language (source or target), each with the targets it translates to."""
    served = [m.info for m in state.models.values()]
    codes = dict.fromkeys(c for m in served for c in (m.src_lang, m.tgt_lang))
    return [
        LtLanguage(
            code=code,
            name=language_name(code),
            targets=sorted({m.tgt_lang for m in served if m.src_lang == code}),
        )
        for code in codes
    ]


def detections(state: ServerState, text: str) -> list[LtDetected]:
    """The served source languages, best first, with LibreTranslate's 0-100 confidence."""
    found = detect_served(state, text)
    return [
        LtDetected(confidence=round(100 * c.confidence, 1), language=c.language)
        for c in found.candidates
    ]


def check_served(state: ServerState, source: str, target: str) -> None:
    """Refuse a language no served model reads or writes.

    Raises:
        LibreTranslateError: 400 naming it, as LibreTranslate words it.
    """
    codes = {c for m in state.models.values() for c in (m.info.src_lang, m.info.tgt_lang)}
    for code in (source, target):
        if code not in codes:
            raise LibreTranslateError(400, f"{code} is not supported")


def pick_model(state: ServerState, source: str, target: str) -> str:
    """The id of the first served model translating ``source`` → ``target``.

    Raises:
        LibreTranslateError: 400 naming what is not served, as LibreTranslate words it.
    """
    check_served(state, source, target)
    for model in state.models.values():
        if (model.info.src_lang, model.info.tgt_lang) == (source, target):
            return model.id
    raise LibreTranslateError(
        400,
        f"{language_name(target)} ({target}) is not available as a target language from "
        f"{language_name(source)} ({source})",
    )


@dataclass(frozen=True)
class Routed:
    """Where each text of a request goes.

    Attributes:
        sources: each text's source language (as given, or detected with ``auto``).
        found: with ``auto``, each text's detection (else empty).
        groups: model id → the indices of the texts it translates; texts in none come back as
            they were (blank, or already in the target language).
    """

    sources: list[str]
    found: list[Detected]
    groups: dict[str, list[int]]


def route_texts(
    state: ServerState, texts: list[str], source: str, target: str, html: bool
) -> Routed:
    """Each text's language (told by its script with ``auto``; for HTML from the text between
    its tags) and the model that translates it.

    Raises:
        LibreTranslateError: 400 for all texts together over the request limit, a language
            not served, a pair no model translates, a text in another script than its source.
    """
    chars = sum(len(t) for t in texts)
    if chars > MAX_REQUEST_CHARS:
        raise LibreTranslateError(
            400, f"Invalid request: request ({chars}) exceeds text limit ({MAX_REQUEST_CHARS})"
        )
    readable = ["\n".join(html_texts(t)) for t in texts] if html else texts
    found = [detect_served(state, text) for text in readable] if source == AUTO else []
    if found:  # a text without letters: the request's language, else a source of `target`
        readers = [m.info.src_lang for m in state.models.values() if m.info.tgt_lang == target]
        fallback = detect_served(state, "\n".join(readable)).language or next(
            iter(readers), state.default.info.src_lang
        )
        sources = [f.language or fallback for f in found]
    else:
        sources = [source] * len(texts)
    groups: dict[str, list[int]] = {}
    unchanged: list[int] = []  # told to be in the target language already: must be so
    for i, language in enumerate(sources):
        if is_blank(texts[i]) or language == target:  # comes back as it was
            check_served(state, language, target)
            unchanged += [] if is_blank(texts[i]) or source != AUTO else [i]
        else:
            groups.setdefault(pick_model(state, language, target), []).append(i)
    # A Hindi text to English on a server of English->Hindi alone was "detected" as English
    # and came back untranslated with a 200; it is refused, naming what the server reads.
    checked = sorted([*unchanged, *(i for g in groups.values() for i in g)])
    check_languages(state, readable, sources, checked, source)
    return Routed(sources, found, groups)


def anuvad_request(
    state: ServerState,
    model_id: str,
    texts: str | list[str],
    text_format: str,
    alternatives: int,
    align: bool = False,
) -> TranslateRequest:
    """The ``POST /translate`` request that translates ``texts`` (one or a list) as asked: the
    model's own search, wide enough for ``alternatives`` more candidates; no scores (not in the
    answer); word alignments with ``align``.

    Raises:
        LibreTranslateError: 400 for what anuvad's limits refuse (the message names it).
    """
    nbest = min(alternatives + 1, MAX_BEAM_SIZE)
    beam = state.models[model_id].engine.decode.beam_size
    try:
        return TranslateRequest.model_validate(
            {"text": texts, "model": model_id, "format": text_format, "nbest": nbest,
             "beam_size": max(beam, nbest) if nbest > beam else None, "scores": False,
             "alignment": align}
        )  # fmt: skip
    except ValidationError as exc:
        problems = "; ".join(
            str(e.get("msg", "invalid")).removeprefix("Value error, ") for e in exc.errors()
        )
        raise LibreTranslateError(400, f"Invalid request: {problems}") from None


def alternatives_of(response: TranslateResponse, index: int, count: int) -> list[str]:
    """Up to ``count`` other translations of text ``index``, each different from the
    translation and from the others, none empty (as LibreTranslate gives them): a one-sentence
    text's next candidates; for several sentences, the text with each sentence's k-th candidate
    (its best where it has fewer); none for HTML."""
    out = response.translations[index]
    if len(out.sentences) == 1:
        candidates = [c.text for c in out.nbest[1:]]
    elif any(s.run is not None for s in out.sentences):
        candidates = []
    else:
        deepest = max((len(s.nbest) for s in out.sentences), default=1)
        candidates = []
        for k in range(1, deepest):
            text, position = "", 0
            for s in out.sentences:
                text += out.source[position : s.start] + s.nbest[min(k, len(s.nbest) - 1)].text
                position = s.end
            candidates.append(text + out.source[position:])
    seen = {out.text.strip()}
    found: list[str] = []
    for text in candidates:
        if text.strip() and text.strip() not in seen and len(found) < count:
            seen.add(text.strip())
            found.append(text)
    return found


def from_api_error(exc: ApiError) -> LibreTranslateError:
    """anuvad's error as LibreTranslate answers it: 400 for a request it refuses, 429 when the
    server is busy (LibreTranslate's "slow down"), 500 when translating failed."""
    field = "q" if exc.field == "text" else exc.field  # LibreTranslate's name for the text
    message = str(exc) if field is None else f"{field}: {exc}"
    if exc.status in (400, 413, 422):
        return LibreTranslateError(400, f"Invalid request: {message}")
    if exc.status == 503:
        return LibreTranslateError(429, f"Slowdown: {message}")
    return LibreTranslateError(500, f"Cannot translate text: {message}")


__all__ = [
    "AUTO",
    "Routed",
    "alternatives_of",
    "anuvad_request",
    "check_key",
    "check_languages",
    "check_served",
    "detections",
    "from_api_error",
    "languages",
    "pick_model",
    "route_texts",
]
