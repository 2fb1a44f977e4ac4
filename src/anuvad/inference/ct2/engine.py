"""Translate with an exported CTranslate2 model folder behind anuvad's Translator interface.

:class:`CT2Translator` offers what :class:`anuvad.inference.translator.Translator` offers to the CLI
and the server (``translate``, ``translate_text``, ``attention``, ``attention_of``, ``decode``,
``model_file.config``), with results in the same :class:`~anuvad.inference.translation.Translation`
form.

How anuvad's search settings map onto CTranslate2's ``translate_batch`` and where they differ:
:mod:`anuvad.inference.ct2.search`. What this engine gives differently:

* **Attention.** CTranslate2 returns one matrix: the last decoder layer's cross-attention
  averaged over all heads (the export sets ``alignment_heads`` to all heads), without the
  column of the source EOS that ``add_source_eos`` appended; that column is restored as
  ``1 - row sum``. There are no decoder states, so ``cosine_similarity`` is empty. The view's
  ``note`` says so.
* ``use_cache`` is ignored (CTranslate2 always caches keys and values).
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from anuvad.data.tokenizer import EOS_ID, UNK_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.constraints import OutputConstraint
from anuvad.decoding.search import BetweenSteps
from anuvad.errors import CheckpointError, ConfigError
from anuvad.evaluation.confidence_model import ConfidenceModel
from anuvad.inference.carrying import readable_and_spelled
from anuvad.inference.ct2 import missing_ctranslate2
from anuvad.inference.ct2.folder import (
    ExportedModel,
    load_exported_model,
    pair_view,
    resolve_ct2_device,
)
from anuvad.inference.ct2.search import CT2Search
from anuvad.inference.currency import read_amounts
from anuvad.inference.frontend import encode_sources, translate_encoded
from anuvad.inference.glossary import Glossary
from anuvad.inference.number_words import read_sources, restore_sources
from anuvad.inference.numbers_back import put_numbers_back
from anuvad.inference.ordinals import read_ordinals
from anuvad.inference.placeholders import Hidden, addresses_alone, reveal_candidates
from anuvad.inference.post_search import finish, report_unrequired
from anuvad.inference.punctuation import punctuate_candidates
from anuvad.inference.translation import AttentionView, Candidate, Capabilities, Translation
from anuvad.inference.verbatim import (
    UNCONSTRAINED_ENGINE,
    Verbatim,
    search_policies,
)

try:
    import ctranslate2
except ImportError as exc:  # an optional dependency
    raise missing_ctranslate2(exc) from exc

logger = logging.getLogger(__name__)

ATTENTION_NOTE = (
    "CTranslate2 engine: cross-attention of the last decoder layer averaged over its heads "
    "(shown as one layer with one head); no cosine similarities (no decoder states)"
)


class CT2Translator:
    """Translate with a CTranslate2 model folder (``anuvad export --format ctranslate2``).

    Args:
        folder: the exported folder.
        device: "auto", "cpu", "cuda" or "cuda:N".
        compute_type: CTranslate2's computation type; "default" keeps the exported one.
        threads: CPU threads for one translation (0: as many as PyTorch uses, i.e. the cores this
            process may run on; CTranslate2's own default of 4 oversubscribes smaller machines).
        replicas: model replicas (CTranslate2's ``inter_threads``) that translate batches given
            from different Python threads in parallel; the weights are shared.
        decode: search settings; defaults to the ones stored with the model.
        pair: (source, target) language codes of a multilingual model (an imported NLLB /
            M2M100 model): which of its pairs to translate, as for
            :class:`~anuvad.inference.translator.Translator`; None: the model's default.
            :meth:`with_pair` gives another pair's engine on the same loaded model.

    Raises:
        CheckpointError: ``folder`` is not an exported model CTranslate2 can load.
        ConfigError: ``pair`` is not one the model offers.
    """

    engine = "ctranslate2"
    # CTranslate2's own search: no output constraints, no bound stopping, no per-step stop;
    # its attention is one averaged head (confidence needs the torch engine's signals). Numbers
    # and links are not required either: each result's ``copied`` says whether they arrived.
    capabilities = Capabilities(
        glossary=False,
        constraints=False,
        bound_stopping=False,
        quality=False,
        full_attention=False,
        stops_between_steps=False,
        verbatim=False,
    )

    def __init__(
        self,
        folder: str | Path,
        *,
        device: str = "auto",
        compute_type: str = "default",
        threads: int = 0,
        replicas: int = 1,
        decode: DecodeConfig | None = None,
        pair: tuple[str, str] | None = None,
    ) -> None:
        self.exported = load_exported_model(folder)  # every pair's languages
        kind, index = resolve_ct2_device(device)
        self.threads = threads if threads > 0 else torch.get_num_threads()
        self.parallel_calls = replicas
        try:
            self.ct2 = ctranslate2.Translator(
                str(folder),
                device=kind,
                device_index=index,
                compute_type=compute_type,
                intra_threads=self.threads,
                inter_threads=replicas,
            )
        except (RuntimeError, ValueError) as exc:
            raise CheckpointError(f"CTranslate2 cannot load {folder}: {exc}") from exc
        self.device = torch.device(kind, index) if kind == "cuda" else torch.device("cpu")
        self.compute_type = str(self.ct2.compute_type)
        tgt_pieces = self.exported.tgt_tokenizer.id_to_piece(
            range(self.exported.tgt_tokenizer.vocab_size)
        )
        self._tgt_ids = {piece: i for i, piece in enumerate(tgt_pieces)}
        self._use_pair(pair)
        self.decode = decode or self.model_file.config.decode
        if self.decode.early_stopping != "finished":
            # CTranslate2 has one stopping rule: a model whose own is another (an imported
            # Marian model keeps generate's heuristic) gets CTranslate2's as its default here;
            # asking for another in a request is still refused.
            logger.info(
                "early_stopping %r is not CTranslate2's; this engine uses 'finished'",
                self.decode.early_stopping,
            )
            self.decode = self.decode.with_overrides(early_stopping="finished")
        self.model_path: Path | None = Path(folder)
        self.calibration: ConfidenceModel | None = None  # confidence needs the torch engine

    def _use_pair(self, pair: tuple[str, str] | None) -> None:
        """Translate ``pair`` of :attr:`exported` from now on (see :func:`pair_view`)."""
        view = pair_view(self.exported, pair)
        self.model_file = view.model
        self.pair = view.pair  # the model's own codes; None: a one-pair model
        self.src_prefix, self.tgt_prefix = view.src_prefix, view.tgt_prefix  # ids
        self.src_tokenizer = self.model_file.src_tokenizer
        self.tgt_tokenizer = self.model_file.tgt_tokenizer
        # Room for the source-language token and EOS around the source pieces.
        max_positions = self.model_file.config.model.max_positions
        self.max_src_tokens = max_positions - 1 - len(self.src_prefix)
        self.search = CT2Search(
            self.ct2, self.src_tokenizer, self.tgt_tokenizer, self._tgt_ids, self.tgt_prefix,
            max_positions,
        )  # fmt: skip

    def with_pair(self, pair: tuple[str, str]) -> CT2Translator:
        """An engine for another pair of this multilingual model, sharing the loaded
        CTranslate2 model (one copy of the weights, one pool of replicas) and the settings.

        Raises:
            ConfigError: the model does not offer ``pair``.
        """
        other = copy.copy(self)
        other._use_pair(pair)
        return other

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        return self.tgt_tokenizer.id_to_piece(ids)

    @property
    def num_parameters(self) -> int:
        """Parameters of the exported model (as counted when it was trained)."""
        count = self.model_file.metadata.get("num_parameters")
        return int(count) if isinstance(count, int) else 0

    # -- translation -----------------------------------------------------------------------------

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Source ids per text as the search gets them (after a multilingual model's
        source-language token; no EOS), as :meth:`Translator.encode` gives them."""
        data = self.model_file.config.data
        return encode_sources(texts, data, self.src_tokenizer, self.max_src_tokens, self.src_prefix)

    def settings(self, **changes: Any) -> DecodeConfig:
        """This engine's decode settings with ``changes`` (None values ignored).

        Raises:
            ConfigError: a resulting setting is invalid (each one named).
        """
        return self.decode.with_overrides(**changes)

    def translate(
        self,
        texts: Sequence[str],
        settings: DecodeConfig | None = None,
        *,
        use_cache: bool = True,
        progress: Callable[[int], object] | None = None,
        constraint: OutputConstraint | None = None,
        stop: BetweenSteps | None = None,
        glossary: Glossary | Sequence[Glossary | None] | None = None,
        quality: bool = False,
        verbatim: Verbatim | Sequence[Verbatim | None] | None = None,
    ) -> list[Translation]:
        """Translate ``texts``; the arguments mean what they mean for
        :meth:`anuvad.inference.translator.Translator.translate` (``use_cache`` is ignored;
        ``stop`` is asked between batches only: a CTranslate2 call cannot be interrupted;
        ``quality`` is ignored: word probabilities and confidence come from the torch
        engine's forced pass over the PyTorch model, which an exported folder lacks, so
        every result's ``quality`` is None; ``verbatim``: nothing is required, each
        result's ``copied`` reports what was found and whether it arrived anyway).

        Raises:
            ConfigError: an invalid setting, an output constraint, a glossary or
                ``early_stopping="bound"`` (anuvad's own search only).
        """
        d = settings or self.decode
        found = d.problems()
        if found:
            raise ConfigError("; ".join(found))
        if constraint is not None:
            raise ConfigError(
                "output constraints (parsing's tree constraint) need the torch engine "
                "(--engine torch)"
            )
        if glossary is not None and (
            bool(glossary) if isinstance(glossary, Glossary) else any(glossary)
        ):
            raise ConfigError(
                "a glossary (terms the translation must use) needs the torch engine "
                "(--engine torch): CTranslate2 cannot guarantee them"
            )
        if d.early_stopping != "finished":
            raise ConfigError(
                f"early_stopping={d.early_stopping!r} needs the torch engine (--engine torch); "
                "CTranslate2 stops a beam once its hypotheses have finished"
            )
        data = self.model_file.config.data
        tgt_lang = data.tgt_lang
        readings = read_sources(texts, verbatim, data.src_lang)
        texts = [reading.text for reading in readings]  # "ढाई सौ" read as "250"
        policies = None
        hidden: list[Hidden | None] = [None] * len(texts)  # for sentences of addresses alone
        if verbatim is not None:
            policies = search_policies(verbatim, len(texts), (data.src_lang, data.tgt_lang))
            # The addresses are read as written: this search cannot require a placeholder, and
            # left free the model wrote one as a Hindi word ("ज़ी") in 44 of bench/addresses.py's
            # 80 sentences, where the addresses themselves, mended by the link check, left junk
            # in 3. Only a sentence of addresses alone comes back as written (reveal).
            hidden = addresses_alone(texts, policies)

        def search(
            sources: list[list[int]], d: DecodeConfig, indices: list[int]
        ) -> list[list[Candidate]]:
            found = self.search.search_batch(sources, d)
            reveal_candidates(found, [hidden[i] for i in indices])
            return punctuate_candidates(found, [texts[i] for i in indices], tgt_lang)

        # "USD 25" is read as "$25" (inference.currency), "2nd" as "second" (inference.ordinals),
        # as the torch engine reads them.
        read = [
            read_ordinals(read_amounts(text, data.src_lang, tgt_lang), data.src_lang)
            if policy is not None and policy.numbers
            else text
            for text, policy in zip(texts, policies or [None] * len(texts), strict=True)
        ]
        results = translate_encoded(
            texts,
            self._encode(read),
            d,
            search,
            progress,
            engine_splits_tokens=True,
            stop=stop,
        )
        for result, seen in zip(results, read, strict=True):
            result.read = seen if seen != result.source else ""
        if policies is not None:
            put_numbers_back(results, policies)
            report_unrequired(results, policies, UNCONSTRAINED_ENGINE, self.spellable)
        spellable = readable_and_spelled(self.src_tokenizer, self.spellable)
        finish(results, verbatim, self.model_file.config.data.src_lang, tgt_lang, spellable)
        restore_sources(results, readings)
        return results

    def spellable(self, text: str) -> bool:
        """Whether the target vocabulary can write ``text`` (no unknown piece)."""
        return UNK_ID not in self.tgt_tokenizer.encode(text)

    def translate_text(self, texts: Sequence[str]) -> list[str]:
        """Like :meth:`translate` with the model's settings, returning only the output strings."""
        return [t.text for t in self.translate(texts)]

    # -- attention -------------------------------------------------------------------------------

    def attention(self, text: str, settings: DecodeConfig | None = None) -> AttentionView:
        """Translate one sentence (``settings`` as in :meth:`translate`) and return the
        attention of its best hypothesis."""
        (result,) = self.translate([text], settings)
        return self.attention_of(result)

    def attention_of(self, result: Translation) -> AttentionView:
        """The attention view of a translation :meth:`translate` returned, by forced decoding
        of its tokens (CTranslate2 recomputes exactly the states the search saw)."""
        src = self._encode([result.read or result.source])[0]  # as the search read it
        tgt = result.token_ids + ([EOS_ID] if result.finished else [])
        rows: list[list[float]] = []
        forced = len(self.tgt_prefix)
        if tgt:
            (out,) = self.ct2.translate_batch(
                [self.src_tokenizer.id_to_piece(src)],
                target_prefix=[self._pieces([*self.tgt_prefix, *result.token_ids])],
                beam_size=1,
                max_decoding_length=forced + len(result.token_ids) + 1,
                max_input_length=0,
                return_attention=True,
                return_end_token=True,
            )
            # The rows of a forced target-language token are no output's (left out, as the
            # torch engine leaves them out). The source EOS column is left out by CTranslate2:
            # it holds the rest of each row.
            matrix = out.attention[0][forced : forced + len(tgt)]
            rows = [[*row, max(0.0, 1.0 - math.fsum(row))] for row in matrix]
        return AttentionView(
            source=result.source,
            text=result.text,
            src_tokens=self.src_tokenizer.id_to_piece([*src, EOS_ID]),
            tgt_tokens=self._pieces(tgt),
            cross_attention=[[rows]],
            cosine_similarity=[],
            num_layers=1,
            num_heads=1,
            score=result.score,
            note=ATTENTION_NOTE,
        )


__all__ = ["CT2Translator", "ExportedModel", "load_exported_model", "resolve_ct2_device"]
