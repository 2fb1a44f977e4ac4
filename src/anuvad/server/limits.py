"""The limits of the HTTP API: what one request may ask for, and what the server holds at
once. ``GET /models`` publishes them (:class:`Limits`) so that clients can check before sending;
anything beyond them is answered with a 4xx (or 503 when the queue is full) and the server goes
on serving."""

from __future__ import annotations

from pydantic import BaseModel, Field

# A document a person pastes: ~3,000 words, split into sentences by the server. One request is
# bounded by MAX_REQUEST_CHARS in all (and the body size), so it cannot ask for unbounded work.
MAX_TEXT_CHARS = 20_000  # characters per text
MAX_REQUEST_CHARS = 50_000  # characters in all texts of one /translate request
MAX_SENTENCE_CHARS = 600  # characters of the one sentence of an /attention request (~100 words)
MAX_ATTENTION_TOKENS = 160  # target pieces an /attention answer shows (its payload is bounded)
MAX_TEXTS = 64  # texts per /translate request
MAX_BEAM_SIZE = 16
MAX_BODY_BYTES = 1_000_000  # a request body larger than this is refused (413) before parsing
MAX_FILE_BYTES = 16_000_000  # ... except an uploaded document's (a .docx carries its images)
# An uploaded document's text (not HTML), translated in parts of at most MAX_TEXT_CHARS cut at
# line ends: a 30-page report, a feature film's subtitles
MAX_DOCUMENT_CHARS = 200_000
MAX_OUTPUT_TOKENS = 256  # target pieces one sentence's translation may have (a work budget)
MAX_GLOSSARY_TERMS = 200  # terms in one request's glossary
MAX_TERM_CHARS = 200  # characters of a term or its translation
MAX_PENDING_SENTENCES = 8192  # sentences waiting for a model; beyond it 503 + Retry-After
# Hypothesis rows x output steps in one model call (sentences x beam x MAX_OUTPUT_TOKENS): the
# key/value cache a call may grow. Beam 16 decodes 8 sentences per call, beam 4 32, greedy 128.
MAX_ROW_STEPS = 32_768


class Limits(BaseModel):
    """The request limits, so that clients can check before sending."""

    max_text_chars: int = MAX_TEXT_CHARS
    max_request_chars: int = MAX_REQUEST_CHARS
    max_sentence_chars: int = MAX_SENTENCE_CHARS
    max_texts: int = MAX_TEXTS
    max_beam_size: int = MAX_BEAM_SIZE
    max_body_bytes: int = MAX_BODY_BYTES
    max_file_bytes: int = Field(
        default=MAX_FILE_BYTES, description="bytes of a document sent to translate_file"
    )
    max_document_chars: int = Field(
        default=MAX_DOCUMENT_CHARS,
        description="characters of text in a document sent to translate_file (HTML: "
        "max_text_chars)",
    )
    max_output_tokens: int = MAX_OUTPUT_TOKENS
    max_pending_sentences: int = MAX_PENDING_SENTENCES
    max_row_steps: int = Field(
        default=MAX_ROW_STEPS, description="hypothesis rows x output steps in one model call"
    )
    max_attention_tokens: int = MAX_ATTENTION_TOKENS
    max_glossary_terms: int = MAX_GLOSSARY_TERMS
    request_timeout_s: float | None = Field(
        None, description="seconds a translation request may take, queue included (504 past it)"
    )
    api_key_required: bool = Field(
        False, description="the API needs 'Authorization: Bearer <key>' (401 without it)"
    )
