"""How sure the model is of a translation: word probabilities and the signals behind a
sentence's calibrated confidence.

Per output token, the model's own probability of that token (the full softmax: what search
constraints such as a glossary or repetition blocking forced shows up as improbable) and the
entropy of the distribution it came from: recorded by the search as it goes
(``signals=True``), or, when a feature needs the cross-attention of every decoder layer and
head, read from one teacher-forced pass over the chosen outputs (:func:`output_signals`; the
same numbers, within float rounding).

From them, per sentence (the names of :data:`FEATURES`):

* ``score`` — the plain ranking score (log-probability / length penalty with the paper's
  alpha 0.6: what beam search ranks by and other toolkits expose), ``mean_log_prob``,
  ``min_log_prob``, ``low_prob_share`` (tokens with p < 0.1), ``mean_entropy``;
* ``log_length_ratio`` and its absolute value — output pieces (+EOS) over source pieces (+EOS);
* ``repeated_share`` — 1 - distinct output tokens / output tokens (loops);
* from the cross-attention averaged over layers and heads (rows sum to 1): ``uncovered_share``
  (source pieces that received less than half a target token's attention in all), ``max_coverage``
  (the most attended source piece's total), ``eos_attention`` (the mean attention on the source's
  EOS, where a decoder looks when it is not translating anything), ``attention_entropy``;
* ``src_pieces_per_word`` / ``tgt_pieces_per_word`` — how much the vocabularies had to split
  the words (rare or foreign words split more), ``log_src_pieces``, ``unfinished``;
* ``nbest_agreement`` — with beam search, the mean sentence chrF++ (/100) of the beam's other
  finished candidates against the best one (a model that hesitates between different
  translations is less often right); absent for greedy search, where the confidence model
  takes the fitting data's mean instead;
* with a reverse model (target→source, e.g. the shipped Hindi→English one), how well the output
  explains its source: ``reverse_mean_log_prob`` and ``reverse_min_log_prob``, the reverse
  model's token log-probabilities of the source given the output (a translation that lost or
  invented meaning makes the source improbable; Junczys-Dowmunt 2018's dual cross-entropy).

:class:`anuvad.evaluation.confidence_model.ConfidenceModel` turns them into a probability.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from anuvad.data.batching import collate_source
from anuvad.data.download import sha256_of
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer
from anuvad.decoding.search import length_normalizer
from anuvad.errors import ConfigError
from anuvad.evaluation.confidence_model import ConfidenceModel
from anuvad.evaluation.metrics import sentence_chrf
from anuvad.inference.translation import Quality
from anuvad.inference.word_scores import word_scores
from anuvad.model.transformer import Transformer

FEATURES: tuple[str, ...] = (
    "score", "mean_log_prob", "min_log_prob", "low_prob_share", "mean_entropy",
    "log_length_ratio", "abs_log_length_ratio", "repeated_share", "uncovered_share",
    "max_coverage", "eos_attention", "attention_entropy", "src_pieces_per_word",
    "tgt_pieces_per_word", "log_src_pieces", "unfinished",
)  # fmt: skip
NBEST_FEATURES: tuple[str, ...] = ("nbest_agreement",)
REVERSE_FEATURES: tuple[str, ...] = ("reverse_mean_log_prob", "reverse_min_log_prob")
# Those that need the cross-attention (the forced pass skips it when no feature in use does).
ATTENTION_FEATURES = ("uncovered_share", "max_coverage", "eos_attention", "attention_entropy")
ALL_FEATURES = (*FEATURES, *NBEST_FEATURES, *REVERSE_FEATURES)
# How sure the model itself is of this output (forward and reverse): what ``anuvad calibrate``
# fitted by default until issue 39 (``--features certainty``). Each is a function of the source and
# the output alone, so the same output gets the same confidence whatever search found it (issue
# 34: with the beam's agreement one output got 24 % at beam 4 and 9 % at beam 12);
# ``nbest_agreement`` stays available to a fit that names it, for one fixed beam.
CERTAINTY_FEATURES = ("mean_entropy", "mean_log_prob", "reverse_mean_log_prob")
# What ``anuvad calibrate`` fits by default since issue 39: every feature of the source and the
# output alone that the search records at no extra cost (no attention, which needs a forced pass;
# no beam agreement, which depends on the search), sentence length and word splitting included.
# Fitted domain-balanced, these cues help within each domain rather than telling domains apart:
# on English->Hindi round 6's held-out halves AUROC 0.800 / 0.752 within NTREX-128 / captions
# against 0.751 / 0.692 for the certainty features (cross-validated on the fitting halves:
# 0.778 / 0.744 against 0.758 / 0.727; docs/benchmarks.md, "Sentence confidence").
OUTPUT_FEATURES = tuple(f for f in (*FEATURES, *REVERSE_FEATURES) if f not in ATTENTION_FEATURES)
SCORE_ALPHA = 0.6  # the ``score`` feature's length penalty: the paper's, whatever the search used
LOW_PROB = 0.1  # a token below this probability counts as unlikely
MAX_LOGIT_ELEMENTS = 1 << 24  # output tokens x vocabulary per forced pass (64 MiB of float32)


@dataclass
class OutputSignals:
    """What the forced pass saw for one output.

    Attributes:
        log_probs: per output token (EOS included when the output finished), its log-probability.
        entropies: per output token, the entropy (nats) of the distribution it was chosen from.
        coverage: per source piece (EOS last), the attention it received summed over output
            tokens (averaged over layers and heads); None when the pass skipped attention.
        eos_attention: mean attention on the source EOS per output token.
        attention_entropy: mean entropy (nats) of the attention rows.
    """

    log_probs: list[float]
    entropies: list[float]
    coverage: list[float] | None
    eos_attention: float = 0.0
    attention_entropy: float = 0.0


@torch.inference_mode()
def output_signals(
    model: Transformer,
    sources: Sequence[list[int]],
    outputs: Sequence[tuple[list[int], bool]],
    attention: bool = True,
    entropy: bool = True,
    tgt_prefix: Sequence[int] = (),
) -> list[OutputSignals]:
    """Teacher-force each output against its source and read off the signals.

    Args:
        model: the network (eval mode).
        sources: B source id lists without EOS (as the search got them).
        outputs: per source, (output ids without BOS/EOS, whether it finished with EOS).
        attention: also read the cross-attention (the slower attention path); False leaves
            ``coverage`` None.
        entropy: also compute each distribution's entropy (False: ``entropies`` are empty).
        tgt_prefix: tokens the search forced after BOS (a multilingual model's target-language
            token): fed to the decoder before each output, no signals read for them.

    Returns:
        One :class:`OutputSignals` per source; an output with no tokens at all (unfinished and
        empty) gets empty lists.
    """
    if len(sources) != len(outputs):
        raise ValueError(f"{len(sources)} sources for {len(outputs)} outputs")
    targets = [[*ids, EOS_ID] if finished else list(ids) for ids, finished in outputs]
    # Similar lengths together (little padding), at most MAX_LOGIT_ELEMENTS logits per pass.
    order = sorted(range(len(targets)), key=lambda i: (len(targets[i]), len(sources[i])))
    budget = max(1, MAX_LOGIT_ELEMENTS // model.config.tgt_vocab_size)  # output tokens
    result: list[OutputSignals | None] = [None] * len(targets)
    start = 0
    while start < len(order):
        end, tokens = start, 0
        while end < len(order) and (end == start or tokens + len(targets[order[end]]) <= budget):
            tokens += len(targets[order[end]])
            end += 1
        chunk = order[start:end]
        found = _signals(model, [sources[i] for i in chunk], [targets[i] for i in chunk],
                         attention, entropy, list(tgt_prefix))  # fmt: skip
        for i, signals in zip(chunk, found, strict=True):
            result[i] = signals
        start = end
    return [r for r in result if r is not None]


def _signals(
    model: Transformer,
    sources: Sequence[list[int]],
    targets: Sequence[list[int]],
    attention: bool,
    entropy: bool,
    prefix: list[int],
) -> list[OutputSignals]:
    device = next(model.parameters()).device
    forced = len(prefix)
    src_ids, src_pad_mask = collate_source(sources)  # (B, S) each
    src_ids, src_pad_mask = src_ids.to(device), src_pad_mask.to(device)
    longest = max((len(t) for t in targets), default=0)
    if longest == 0:
        return [OutputSignals([], [], [0.0] * (len(s) + 1) if attention else None) for s in sources]
    # (B, P+T): the forced prefix, then the output (P = len(prefix), usually 0)
    tgt_out = torch.full((len(targets), forced + longest), PAD_ID, dtype=torch.long)
    for i, t in enumerate(targets):
        tgt_out[i, : forced + len(t)] = torch.tensor([*prefix, *t], dtype=torch.long)
    tgt_out = tgt_out.to(device)
    tgt_in = torch.cat([torch.full_like(tgt_out[:, :1], BOS_ID), tgt_out[:, :-1]], dim=1)
    memory = model.encode(src_ids, src_pad_mask)  # (B, S, D)
    hidden, cross = model.decode_states(tgt_in, memory, src_pad_mask, need_attention=attention)
    # Only the output tokens go through the output layer, not the prefix or the padding.
    real = tgt_out != PAD_ID  # (B, P+T): each row's first P + len(target) positions
    real[:, :forced] = False
    logits = model.project(hidden[real]).float()  # (N, V), N = output tokens in all
    log_norm = torch.logsumexp(logits, dim=-1)  # (N,)
    chosen = logits.gather(-1, tgt_out[real].unsqueeze(-1)).squeeze(-1) - log_norm  # (N,)
    ends = list(itertools.accumulate(len(t) for t in targets))
    starts = [0, *ends[:-1]]
    flat_chosen = chosen.tolist()
    flat_spread: list[float] = []
    if entropy:
        log_probs = logits - log_norm.unsqueeze(-1)  # (N, V)
        flat_spread = (-(log_probs.exp() * log_probs).sum(dim=-1)).tolist()  # (N,)
    result = [
        OutputSignals(flat_chosen[a:b], flat_spread[a:b] if entropy else [], None)
        for a, b in zip(starts, ends, strict=True)
    ]
    if not attention:
        return result
    assert cross is not None
    weights = torch.stack(cross).float().mean(dim=(0, 2))[:, forced:]  # (B, T, S)
    attn_entropy = -(weights * weights.clamp_min(1e-12).log()).sum(dim=-1)  # (B, T)
    for i, (t, signals) in enumerate(zip(targets, result, strict=True)):
        n, s = len(t), len(sources[i]) + 1  # target tokens; source pieces with EOS
        rows = weights[i, :n, :s]  # (n, s)
        signals.coverage = rows.sum(dim=0).tolist() if n else [0.0] * s
        signals.eos_attention = float(rows[:, s - 1].mean()) if n else 0.0
        signals.attention_entropy = float(attn_entropy[i, :n].mean()) if n else 0.0
    return result


def reverse_features(signals: OutputSignals) -> dict[str, float]:
    """The :data:`REVERSE_FEATURES` from the reverse model's forced pass over the source."""
    lp = signals.log_probs
    return {
        "reverse_mean_log_prob": sum(lp) / len(lp) if lp else -50.0,
        "reverse_min_log_prob": max(-50.0, min(lp)) if lp else -50.0,
    }


def word_count(pieces: Sequence[str]) -> int:
    """Words in a SentencePiece piece sequence: pieces that start one ("▁...") or the first."""
    return sum(1 for i, p in enumerate(pieces) if i == 0 or p.startswith("▁"))


def sentence_features(
    signals: OutputSignals,
    finished: bool,
    src_pieces: Sequence[str],
    tgt_pieces: Sequence[str],
) -> dict[str, float]:
    """The :data:`FEATURES` of one translation (without :data:`ATTENTION_FEATURES` when the
    forced pass skipped attention).

    Args:
        signals: from :func:`output_signals`.
        finished: whether it ended with EOS.
        src_pieces: the source pieces (without EOS).
        tgt_pieces: the output pieces (without EOS).
    """
    lp = signals.log_probs
    n = len(lp)
    tokens = len(tgt_pieces)
    ratio = math.log((n + 1) / (len(src_pieces) + 1))
    features = {
        "score": sum(lp) / length_normalizer(n, SCORE_ALPHA) if n else -50.0,
        "mean_log_prob": sum(lp) / n if n else -50.0,
        "min_log_prob": max(-50.0, min(lp)) if n else -50.0,
        "low_prob_share": sum(1 for x in lp if x < math.log(LOW_PROB)) / n if n else 1.0,
        "mean_entropy": sum(signals.entropies) / n if n else 0.0,
        "log_length_ratio": ratio,
        "abs_log_length_ratio": abs(ratio),
        "repeated_share": 1.0 - len(set(tgt_pieces)) / tokens if tokens else 0.0,
        "src_pieces_per_word": len(src_pieces) / max(1, word_count(src_pieces)),
        "tgt_pieces_per_word": tokens / max(1, word_count(tgt_pieces)),
        "log_src_pieces": math.log(len(src_pieces) + 1),
        "unfinished": 0.0 if finished else 1.0,
    }
    if signals.coverage is not None:
        coverage = signals.coverage[:-1] or [0.0]  # the source pieces, without EOS
        features["uncovered_share"] = sum(1 for c in coverage if c < 0.5) / len(coverage)
        features["max_coverage"] = max(coverage)
        features["eos_attention"] = signals.eos_attention
        features["attention_entropy"] = signals.attention_entropy
    return features


def document_confidence(
    confidences: Sequence[float | None], lengths: Sequence[int]
) -> float | None:
    """A text's confidence from its sentences': their mean weighted by each sentence's length
    (in source characters, at least 1), sentences without one left out; None when none has one.

    The text's chrF++ pools the character n-grams of all its sentences, so a long sentence
    weighs more than a short one. On the WMT24 dev paragraphs (general model, 997 texts) this
    finds the texts below chrF++ 30 with AUROC 0.81 (ECE 0.03); the lowest sentence
    confidence, used before, 0.64 (ECE 0.08).

    Raises:
        ValueError: the two lists differ in length.
    """
    if len(confidences) != len(lengths):
        raise ValueError(f"{len(confidences)} confidences for {len(lengths)} lengths")
    known = [(c, max(1, n)) for c, n in zip(confidences, lengths, strict=True) if c is not None]
    if not known:
        return None
    return sum(c * n for c, n in known) / sum(n for _, n in known)


def calibration_path(model_path: str | Path, pair: str | None = None) -> Path:
    """Where a model file's confidence model lives: beside it, ``<stem>.confidence.json``; for
    one pair of a multilingual file (``pair`` "en-hi"), ``<stem>.en-hi.confidence.json``."""
    path = Path(model_path)
    return path.with_name(path.stem + (f".{pair}" if pair else "") + ".confidence.json")


def load_calibration(model_path: str | Path, pair: str | None = None) -> ConfidenceModel | None:
    """The confidence model beside ``model_path`` (of its pair ``pair``, see
    :func:`calibration_path`; None when there is none).

    Raises:
        ConfigError: the file is malformed, names a feature this anuvad does not compute, or
            was fitted on another model file (naming both and how to fix it).
    """
    path = calibration_path(model_path, pair)
    if not path.is_file():
        return None
    calibration = ConfidenceModel.load(path)
    unknown = [f for f in calibration.features if f not in ALL_FEATURES]
    if unknown:
        raise ConfigError(
            f"{path}: field 'features' names {unknown}, which this anuvad does not compute; "
            "write it again with `anuvad calibrate`"
        )
    if any(f in REVERSE_FEATURES for f in calibration.features) and not calibration.reverse_model:
        raise ConfigError(f"{path}: it uses reverse-model features but names no reverse_model")
    if calibration.model_sha256 and calibration.model_sha256 != sha256_of(Path(model_path)):
        raise ConfigError(
            f"{path} was fitted on another model file than {Path(model_path).name} (its "
            "model_sha256 differs); run `anuvad calibrate` for this model, or delete the file "
            "to translate without confidence"
        )
    return calibration


def assess(
    signals: OutputSignals,
    finished: bool,
    text: str,
    src_ids: Sequence[int],
    tgt_ids: Sequence[int],
    src_tokenizer: Tokenizer,
    tgt_tokenizer: Tokenizer,
    calibration: ConfidenceModel | None,
    reverse: OutputSignals | None = None,
    alternatives: Sequence[str] = (),
) -> Quality:
    """The :class:`Quality` of one translation: its token and word probabilities, features
    (with the reverse model's when ``reverse`` is given, and the agreement of the search's
    other candidates ``alternatives`` when there are any) and, with ``calibration``, its
    confidence and flag."""
    features = sentence_features(
        signals,
        finished,
        src_tokenizer.id_to_piece(list(src_ids)),
        tgt_tokenizer.id_to_piece(list(tgt_ids)),
    )
    if reverse is not None:
        features.update(reverse_features(reverse))
    if calibration is not None:  # the agreement over as many candidates as when fitting
        alternatives = alternatives[: calibration.agreement_candidates]
    if alternatives:
        agreement = sentence_chrf(list(alternatives), [text] * len(alternatives))
        features["nbest_agreement"] = sum(agreement) / len(agreement) / 100.0
    quality = Quality(
        token_probs=[math.exp(x) for x in signals.log_probs],
        words=word_scores(text, tgt_ids, signals.log_probs, tgt_tokenizer),
        features=features,
    )
    if calibration is not None:
        quality.confidence = calibration.probability(features)
        quality.likely_wrong = quality.confidence < calibration.threshold
    return quality
