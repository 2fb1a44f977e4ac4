"""Translate with an exported CTranslate2 model folder behind anuvad's Translator interface.

:class:`CT2Translator` offers what :class:`anuvad.inference.translator.Translator` offers to the CLI
and the server (``translate``, ``translate_text``, ``attention``, ``attention_of``, ``decode``,
``model_file.config``), with results in the same :class:`~anuvad.inference.translation.Translation`
form.

How anuvad's search settings map onto CTranslate2's ``translate_batch``, and where they differ:

* **Length penalty.** CTranslate2 normalises a finished hypothesis as ``score / |Y| **
  length_penalty``; anuvad uses Wu et al.'s ``((5 + |Y|) / 6) ** length_penalty``. The penalty
  only ranks *finished* hypotheses in both beam searches (live beams are ranked by their summed
  log-probability), so the engine asks CTranslate2 for all K hypotheses with
  ``length_penalty=1`` and ``return_end_token=True`` (|Y| then counts EOS, as anuvad's does),
  recovers each log-probability as ``score * |Y|`` and re-ranks with anuvad's penalty.
  ``length_penalty=1`` (not 0) also keeps CTranslate2 from stopping as soon as its best beam
  ends: like anuvad's default ("finished") rule, a sentence stops once K hypotheses finished.
  Beam 1 is CTranslate2's greedy search with ``length_penalty=0`` (the plain log-probability).
* **Length limit.** anuvad allows ``floor(a * source tokens) + b`` output tokens per sentence
  (source tokens count EOS); CTranslate2 has one ``max_decoding_length`` per call. A batch of
  length-sorted sentences is one call with its largest limit; a sentence whose output reached
  its own, smaller limit is searched again alone with that limit (see ``_search_within``), so
  the limits are anuvad's while the common case costs one call per batch.
* **What is not identical.** (1) When more than K hypotheses finish by the last step,
  CTranslate2 keeps the K best by ``score / |Y|`` before anuvad's penalty re-ranks them;
  anuvad's beam search ranks them all. (2) At the length limit anuvad also keeps the beams that
  replaced finished ones; CTranslate2 registers only the top K candidates of that step. Both
  only change n-best lists in rare cases. (3) PAD and BOS cannot be generated in either engine,
  but CTranslate2 normalises the softmax without them (see :mod:`anuvad.inference.ct2.export`), so
  its log-probabilities are higher by -log(1 - p(PAD) - p(BOS)) per step: tiny once trained.
* **Attention.** CTranslate2 returns one matrix: the last decoder layer's cross-attention
  averaged over all heads (the export sets ``alignment_heads`` to all heads), without the
  column of the source EOS that ``add_source_eos`` appended; that column is restored as
  ``1 - row sum``. There are no decoder states, so ``cosine_similarity`` is empty. The view's
  ``note`` says so.
* ``use_cache`` is ignored (CTranslate2 always caches keys and values).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from anuvad.config import ExperimentConfig, config_from_dict
from anuvad.data.tokenizer import EOS_ID, UNK_ID, Tokenizer
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.constraints import OutputConstraint
from anuvad.decoding.search import BetweenSteps, capped_top, length_normalizer, limits_for_lengths
from anuvad.errors import CheckpointError, ConfigError
from anuvad.evaluation.confidence_model import ConfidenceModel
from anuvad.inference.ct2 import missing_ctranslate2
from anuvad.inference.ct2.export import load_ct2_tokenizers, read_ct2_metadata
from anuvad.inference.frontend import encode_sources, translate_encoded
from anuvad.inference.glossary import Glossary
from anuvad.inference.numbers_back import put_numbers_back
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


@dataclass
class ExportedModel:
    """What an exported folder says about its model (the fields of :class:`ModelFile` that
    describe it; the weights live in CTranslate2's ``model.bin``)."""

    config: ExperimentConfig
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    metadata: dict[str, Any] = field(default_factory=dict)


def load_exported_model(folder: str | Path) -> ExportedModel:
    """Read the config, tokenizers and metadata of an exported folder.

    Raises:
        CheckpointError: not an anuvad CTranslate2 folder, or its config is invalid.
    """
    info = read_ct2_metadata(folder)
    try:
        config = config_from_dict(info["config"])
        config.validate()
    except (KeyError, ConfigError) as exc:
        raise CheckpointError(f"{folder}: its stored config is invalid: {exc}") from exc
    src, tgt = load_ct2_tokenizers(folder)
    metadata = dict(info.get("metadata", {}))
    metadata["ct2_quantization"] = info.get("quantization")
    return ExportedModel(config, src, tgt, metadata)


def resolve_ct2_device(name: str) -> tuple[str, int]:
    """``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` → CTranslate2's (device, index)."""
    if name == "auto":
        return ("cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"), 0
    kind, _, index = name.partition(":")
    if kind not in ("cpu", "cuda") or (index and not index.isdigit()):
        raise ConfigError(f"unknown device {name!r}; use auto, cpu, cuda or cuda:N")
    return kind, int(index or 0)


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

    Raises:
        CheckpointError: ``folder`` is not an exported model CTranslate2 can load.
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
    ) -> None:
        self.model_file = load_exported_model(folder)
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
        self.src_tokenizer = self.model_file.src_tokenizer
        self.tgt_tokenizer = self.model_file.tgt_tokenizer
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
        self.max_src_tokens = self.model_file.config.model.max_positions - 1
        self.calibration: ConfidenceModel | None = None  # confidence needs the torch engine
        pieces = self.tgt_tokenizer.id_to_piece(range(self.tgt_tokenizer.vocab_size))
        self._tgt_ids = {piece: i for i, piece in enumerate(pieces)}
        self._eos_piece = pieces[EOS_ID]

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        return self.tgt_tokenizer.id_to_piece(ids)

    @property
    def num_parameters(self) -> int:
        """Parameters of the exported model (as counted when it was trained)."""
        count = self.model_file.metadata.get("num_parameters")
        return int(count) if isinstance(count, int) else 0

    # -- translation -----------------------------------------------------------------------------

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        return encode_sources(
            texts, self.model_file.config.data, self.src_tokenizer, self.max_src_tokens
        )

    def _limits(self, sources: list[list[int]], settings: DecodeConfig) -> list[int]:
        """anuvad's output limits (:func:`anuvad.decoding.search.limits_for_lengths`, EOS
        counted in the source), capped so that BOS + tokens fit the positions."""
        lengths = torch.tensor([len(ids) + 1 for ids in sources])  # + EOS
        limits = limits_for_lengths(lengths, settings.max_len_a, settings.max_len_b)
        top = capped_top(self.model_file.config.model.max_positions, settings.max_output_tokens)
        return [int(x) for x in limits.clamp(min=0, max=top).tolist()]

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
        tgt_lang = self.model_file.config.data.tgt_lang

        def search(
            sources: list[list[int]], d: DecodeConfig, indices: list[int]
        ) -> list[list[Candidate]]:
            found = self._search_batch(sources, d, indices)
            return punctuate_candidates(found, [texts[i] for i in indices], tgt_lang)

        results = translate_encoded(
            texts,
            self._encode(texts),
            d,
            search,
            progress,
            engine_splits_tokens=True,
            stop=stop,
        )
        if verbatim is not None:
            data = self.model_file.config.data
            policies = search_policies(verbatim, len(results), (data.src_lang, data.tgt_lang))
            vocabulary = self.tgt_tokenizer

            def spellable(text: str) -> bool:
                return UNK_ID not in vocabulary.encode(text)

            put_numbers_back(results, policies)
            report_unrequired(results, policies, UNCONSTRAINED_ENGINE, spellable)
        finish(results, verbatim, self.model_file.config.data.src_lang, tgt_lang)
        return results

    def _search_batch(
        self, sources: list[list[int]], d: DecodeConfig, indices: list[int] | None = None
    ) -> list[list[Candidate]]:
        """CTranslate2's search over one batch of source ids: candidates per source."""
        limits = self._limits(sources, d)
        pieces = [self.src_tokenizer.id_to_piece(ids) for ids in sources]
        outputs = self._search_within(pieces, limits, d.beam_size, d)
        candidates = []
        for hypotheses in outputs:
            ranked = self._rank(hypotheses, d, d.nbest)
            candidates.append(ranked or [Candidate("", [], 0.0, 0.0, False)])  # a 0-token limit
        return candidates

    def _search_within(
        self, sources: list[list[str]], limits: list[int], k: int, settings: DecodeConfig
    ) -> list[list[tuple[list[str], float]]]:
        """:meth:`_search` with a limit per sentence, in one call where the outputs allow.

        CTranslate2 has one ``max_decoding_length`` per call, so the batch is searched with its
        largest limit. A sentence whose hypotheses all stay shorter than its own limit searched
        exactly as it would have under that limit (its search ended before the limit could
        matter); any other sentence (rare once a model is trained: it reached ``a * source +
        b`` tokens) is searched again alone with its own limit.
        """
        top = max(limits)
        if top <= 0:
            return [[] for _ in sources]
        outputs = self._search(sources, k, top, settings)
        for i, (hypotheses, limit) in enumerate(zip(outputs, limits, strict=True)):
            if limit < top and any(len(pieces) >= limit for pieces, _ in hypotheses):
                outputs[i] = self._search([sources[i]], k, limit, settings)[0] if limit > 0 else []
        return outputs

    def _search(
        self, sources: list[list[str]], k: int, limit: int, settings: DecodeConfig
    ) -> list[list[tuple[list[str], float]]]:
        """CTranslate2's search: per source, its hypotheses (pieces, EOS included when produced)
        with their summed log-probabilities (repeated n-grams: CTranslate2's own block)."""
        batching: dict[str, Any] = (
            {"max_batch_size": settings.max_tokens, "batch_type": "tokens"}
            if settings.max_tokens > 0
            else {}
        )
        results = self.ct2.translate_batch(
            sources,
            beam_size=k,
            num_hypotheses=k,
            patience=1.0,
            length_penalty=0.0 if k == 1 else 1.0,
            max_decoding_length=limit,
            max_input_length=0,
            return_scores=True,
            return_end_token=True,
            no_repeat_ngram_size=settings.no_repeat_ngram_size,
            sampling_topk=settings.sample_top_k or 1,
            **batching,
        )
        outputs = []
        for result in results:
            hypotheses = []
            for pieces, score in zip(result.hypotheses, result.scores, strict=True):
                # k > 1: CTranslate2's score is log_prob / |Y| (length_penalty=1), |Y| >= 1.
                log_prob = float(score) * (len(pieces) if k > 1 else 1)
                hypotheses.append((list(pieces), log_prob))
            outputs.append(hypotheses)
        return outputs

    def _rank(
        self, hypotheses: list[tuple[list[str], float]], d: DecodeConfig, count: int
    ) -> list[Candidate]:
        """anuvad's ``count`` best candidates, best first by anuvad's score (stable for ties);
        only those are detokenized."""
        eos = self._eos_piece
        ranked = []
        for pieces, log_prob in hypotheses:
            finished = bool(pieces) and pieces[-1] == eos
            token_ids = [self._tgt_ids[p] for p in (pieces[:-1] if finished else pieces)]
            length = len(token_ids) + int(finished)
            score = (
                log_prob
                if d.beam_size == 1
                else log_prob / length_normalizer(length, d.length_penalty, d.length_normalization)
            )
            ranked.append((score, log_prob, finished, token_ids))
        ranked.sort(key=lambda c: -c[0])
        return [
            Candidate(self.tgt_tokenizer.decode(ids), ids, score, log_prob, finished)
            for score, log_prob, finished, ids in ranked[:count]
        ]

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
        src = self._encode([result.source])[0]
        tgt = result.token_ids + ([EOS_ID] if result.finished else [])
        rows: list[list[float]] = []
        if tgt:
            (out,) = self.ct2.translate_batch(
                [self.src_tokenizer.id_to_piece(src)],
                target_prefix=[self._pieces(result.token_ids)],
                beam_size=1,
                max_decoding_length=len(result.token_ids) + 1,
                max_input_length=0,
                return_attention=True,
                return_end_token=True,
            )
            # The source EOS column is left out by CTranslate2: it holds the rest of each row.
            rows = [[*row, max(0.0, 1.0 - math.fsum(row))] for row in out.attention[0][: len(tgt)]]
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
