"""Would another signal improve the sentence confidence? Candidates measured beside the shipped
features on the rows of ``anuvad calibrate --save-rows`` (which keep each source and output)::

    .venv/bin/python bench/confidence_signals.py --rows runs/calib-enhi.rows \\
        --model data/trained_models/enhi_d256_L3_V8000_20261129-161436.pt \\
        --lexicon ../shared/data/en-hi/dictionary/muse-en-hi.tsv

The candidates, each computed from the source and the output alone:

* ``pmi_*``: how much the output depends on the source, the mean (lowest) token log-probability
  given the source minus given an empty one (a hallucination ignores its source);
* ``dropout_*``: Monte-Carlo dropout (Fomicheva et al. 2020): the output's mean token
  log-probability under ``--dropout-passes`` teacher-forced passes with dropout on, their mean
  and standard deviation, and the mean per-token variance;
* ``lexicon_*`` (with ``--lexicon``, a TSV of source word<TAB>target translation): the share of
  the source words the lexicon knows whose translation appears in the output (recall) and of
  the output words that translate a source word (precision). Words are compared by their first
  5 characters (4 in Indic scripts, which write vowels as separate signs), words under 3
  characters skipped;
* ``roundtrip_chrf`` (with ``--reverse MODEL``, a target->source model): the output translated
  back by greedy search, its sentence chrF++ (/100) against the source (a translation that lost
  or invented meaning comes back different);
* ``rpmi_*`` (with ``--reverse``): the reverse model's PMI of the source, its token
  log-probabilities given the output minus given an empty output (mean and lowest): the
  reverse features without what the source's own predictability adds;
* ``greedy_chrf``: the output's sentence chrF++ (/100) against the model's own greedy
  translation of the source (a beam output far from greedy is one the model hesitated over;
  a greedy output scores 1); ``greedy_mean_score``, ``greedy_log_len_vs_output`` and
  ``greedy_log_len_vs_source``: the greedy translation's mean log-probability and its length in
  pieces against the served output's and the source's;
* ``rarity_*``: how rare the pieces are, from the SentencePiece models' own piece scores (unigram
  log-probabilities in the tokenizer's training text): the source's and the output's mean and
  lowest (rare words are the ones a small model gets wrong);
* ``hidden_*`` (``--hidden-components K``): what the network's states say beyond its
  probabilities: the source's encoder states and the output's final decoder states (teacher
  forced), each averaged over the sentence and reduced to its first K principal components (fitted
  on the fitting halves), as a predictor-estimator QE model reads them (Kim et al. 2017);
* ``names_*``: the share of the source's words after the first that begin with a capital
  (names, which a small model often replaces), and of its words that hold a digit;
* ``twin_*`` (with ``--twin MODEL``, another model of the same direction, e.g. the model this
  one continues or a sibling run): the output's mean and lowest token log-probability under that
  model, and the mean's difference from the model's own (two models that learnt differently
  disagree most on the outputs that are wrong: an ensemble's disagreement, Fomicheva et al. 2020,
  with a second network instead of dropout masks).
* ``sample_*`` (``--consensus K``): K translations drawn by top-10 sampling (seeds 1..K): the
  output's mean sentence chrF++ (/100) against them, and theirs against each other (the
  lexical similarity of sampled outputs, Fomicheva et al. 2020's D-Lex-Sim with sampling for
  dropout: a model that knows the translation draws similar ones).
* ``mono_*`` (``--mono-source FILES``, ``--mono-target FILES``: monolingual text of each
  language, e.g. ``../shared/data/en-hi/mono-en/*.gz`` and ``mono-hi/*.gz``): how ordinary the
  source's and the output's words are in text the model never paired (a signal from outside the
  model): the share of words never seen there, their mean and lowest log count, the share of
  word pairs never seen (the invented words of a garbled output, a fluency proxy).

Outputs are re-encoded from their text (the search's own pieces are not kept; SentencePiece
gives the same pieces for nearly every sentence). Prints, per feature set, the AUROC of the
confidence within each held-out dev set and of a 5-fold cross-validation on the fitting halves.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

import sentencepiece as spm
import torch

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import BOS_ID, PAD_ID
from anuvad.evaluation.calibration import CalibrationRow
from anuvad.evaluation.metrics import sentence_chrf
from anuvad.inference.confidence import OUTPUT_FEATURES, OutputSignals, output_signals
from anuvad.inference.confidence_fit import load_rows
from anuvad.inference.translator import Translator
from confidence_table import feature_sets, table
from confidence_words import (
    lexicon_features,
    mono_features,
    name_features,
    read_counts,
    read_lexicon,
)


def model_features(
    translator: Translator, rows: Sequence[CalibrationRow], passes: int
) -> list[dict[str, float]]:
    """The ``pmi_*`` and ``dropout_*`` candidates of each row (outputs taken as finished: the
    rows do not say)."""
    model, prefix = translator.model, list(translator.tgt_prefix)
    sources = translator.encode([r.source for r in rows])
    outputs = [(translator.tgt_tokenizer.encode(r.output), True) for r in rows]
    empty = [list(translator.src_prefix) for _ in rows]  # the source language token, if any

    def forced(srcs: Sequence[list[int]]) -> list[OutputSignals]:
        return output_signals(
            model, srcs, outputs, attention=False, entropy=False, tgt_prefix=prefix
        )

    given, unconditioned = forced(sources), forced(empty)
    dropped = []
    if passes:
        model.train()
        try:
            torch.manual_seed(0)
            dropped = [forced(sources) for _ in range(passes)]
        finally:
            model.eval()
    found = []
    for i, (g, e) in enumerate(zip(given, unconditioned, strict=True)):
        pmi = [a - b for a, b in zip(g.log_probs, e.log_probs, strict=True)]  # EOS at least
        row = {"pmi_mean": sum(pmi) / len(pmi), "pmi_min": max(-50.0, min(pmi))}
        if dropped:
            means = [sum(d[i].log_probs) / len(pmi) for d in dropped]
            per_token = [
                statistics.pvariance([d[i].log_probs[t] for d in dropped]) for t in range(len(pmi))
            ]
            row |= {
                "dropout_mean_lp": sum(means) / passes,
                "dropout_std": statistics.pstdev(means),
                "dropout_token_var": sum(per_token) / len(per_token),
            }
        found.append(row)
    return found


def agreement_features(
    translator: Translator, rows: Sequence[CalibrationRow], reverse: Translator | None
) -> list[dict[str, float]]:
    """``greedy_chrf`` of each row and, with ``reverse``, its ``roundtrip_chrf``."""
    outputs, sources = [r.output for r in rows], [r.source for r in rows]
    settings = translator.settings(beam_size=1)
    greedy_translations = translator.translate(sources, settings)
    greedy = [t.text for t in greedy_translations]
    found = [{"greedy_chrf": c / 100.0} for c in sentence_chrf(outputs, greedy)]
    for row, r, t in zip(found, rows, greedy_translations, strict=True):
        pieces = max(1, len(t.token_ids))
        output_pieces = max(1, len(translator.tgt_tokenizer.encode(r.output)))
        source_pieces = max(1, len(translator.encode([r.source])[0]))
        row["greedy_log_len_vs_output"] = math.log(pieces / output_pieces)
        row["greedy_log_len_vs_source"] = math.log(pieces / source_pieces)
        row["greedy_mean_score"] = t.score / pieces
    if reverse is not None:
        back = [t.text for t in reverse.translate(outputs, reverse.settings(beam_size=1))]
        for row, c in zip(found, sentence_chrf(back, sources), strict=True):
            row["roundtrip_chrf"] = c / 100.0
    return found


def reverse_pmi_features(
    reverse: Translator, rows: Sequence[CalibrationRow]
) -> list[dict[str, float]]:
    """The ``rpmi_*`` candidates of each row."""
    written = reverse.encode([r.output for r in rows])
    empty = [list(reverse.src_prefix) for _ in rows]
    sources = [(reverse.tgt_tokenizer.encode(r.source), True) for r in rows]
    prefix = list(reverse.tgt_prefix)

    def forced(srcs: Sequence[list[int]]) -> list[OutputSignals]:
        return output_signals(
            reverse.model, srcs, sources, attention=False, entropy=False, tgt_prefix=prefix
        )

    found = []
    for g, e in zip(forced(written), forced(empty), strict=True):
        pmi = [a - b for a, b in zip(g.log_probs, e.log_probs, strict=True)]
        found.append(
            {
                "rpmi_mean": sum(pmi) / len(pmi),
                "rpmi_min": max(-50.0, min(pmi)),
                "rpmi_prior": sum(e.log_probs) / len(pmi),
            }
        )
    return found


def rarity_features(
    translator: Translator, rows: Sequence[CalibrationRow]
) -> list[dict[str, float]]:
    """The ``rarity_*`` candidates of each row."""
    found = []
    sides = [
        (side, tokenizer, spm.SentencePieceProcessor(model_proto=tokenizer.model_proto))
        for side, tokenizer in (
            ("src", translator.src_tokenizer),
            ("tgt", translator.tgt_tokenizer),
        )
    ]
    for r in rows:
        row = {}
        for side, tokenizer, processor in sides:
            text = r.source if side == "src" else r.output
            scores = [processor.GetScore(i) for i in tokenizer.encode(text)] or [0.0]
            row[f"rarity_{side}_mean"] = sum(scores) / len(scores)
            row[f"rarity_{side}_min"] = min(scores)
        found.append(row)
    return found


def hidden_features(
    translator: Translator, rows: Sequence[CalibrationRow], components: int
) -> list[dict[str, float]]:
    """The ``hidden_*`` candidates of each row."""
    model = translator.model.eval()
    sources = translator.encode([r.source for r in rows])
    prefix = list(translator.tgt_prefix)
    pooled: dict[str, list[torch.Tensor]] = {"enc": [], "dec": []}
    with torch.inference_mode():
        for start in range(0, len(rows), 64):
            chunk = range(start, min(start + 64, len(rows)))
            src_ids, src_pad = collate_source([sources[i] for i in chunk])  # (B, S) each
            memory = model.encode(src_ids, src_pad)  # (B, S, D)
            keep = (~src_pad).unsqueeze(-1).to(memory.dtype)  # (B, S, 1)
            pooled["enc"].append((memory * keep).sum(1) / keep.sum(1))
            targets = [[BOS_ID, *prefix, *translator.tgt_tokenizer.encode(rows[i].output)]
                       for i in chunk]  # fmt: skip
            tgt_ids = torch.full((len(targets), max(map(len, targets))), PAD_ID)  # (B, T)
            for b, t in enumerate(targets):
                tgt_ids[b, : len(t)] = torch.tensor(t)
            states, _ = model.decode_states(tgt_ids, memory, src_pad)  # (B, T, D), causal
            used = (tgt_ids != PAD_ID).unsqueeze(-1).to(states.dtype)  # (B, T, 1)
            pooled["dec"].append((states * used).sum(1) / used.sum(1))
    fitting = torch.tensor([not r.held_out for r in rows])
    found: list[dict[str, float]] = [{} for _ in rows]
    for side, parts in pooled.items():
        states = torch.cat(parts).double()  # (N, D)
        mean = states[fitting].mean(0)
        _, _, vt = torch.linalg.svd(states[fitting] - mean, full_matrices=False)
        projected = (states - mean) @ vt[:components].T  # (N, K)
        for row, values in zip(found, projected.tolist(), strict=True):
            row |= {f"hidden_{side}_{k}": v for k, v in enumerate(values)}
    return found


def twin_features(
    translator: Translator, twin: Translator, rows: Sequence[CalibrationRow]
) -> list[dict[str, float]]:
    """The ``twin_*`` candidates of each row (outputs taken as finished: the rows do not say)."""

    def scored(model: Translator) -> list[OutputSignals]:
        outputs = [(model.tgt_tokenizer.encode(r.output), True) for r in rows]
        return output_signals(
            model.model, model.encode([r.source for r in rows]), outputs, attention=False,
            entropy=False, tgt_prefix=list(model.tgt_prefix),
        )  # fmt: skip

    found = []
    for own, other in zip(scored(translator), scored(twin), strict=True):
        own_mean = sum(own.log_probs) / len(own.log_probs)
        mean = sum(other.log_probs) / len(other.log_probs)
        found.append(
            {"twin_mean": mean, "twin_min": max(-50.0, min(other.log_probs)),
             "twin_gap": own_mean - mean}
        )  # fmt: skip
    return found


def consensus_features(
    translator: Translator, rows: Sequence[CalibrationRow], draws: int
) -> list[dict[str, float]]:
    """The ``sample_*`` candidates: ``draws`` sampled translations of each source, the output's
    mean chrF++ against them and their mean chrF++ against each other."""
    sources, outputs = [r.source for r in rows], [r.output for r in rows]
    drawn = [
        [t.text for t in translator.translate(
            sources, translator.settings(beam_size=1, sample_top_k=10, sample_seed=seed))]
        for seed in range(1, draws + 1)
    ]  # fmt: skip
    to_output = [sentence_chrf(outputs, d) for d in drawn]
    between = [sentence_chrf(a, b) for i, a in enumerate(drawn) for b in drawn[i + 1 :]]
    return [
        {
            "sample_consensus": statistics.mean(c[i] for c in to_output) / 100.0,
            "sample_similarity": statistics.mean(c[i] for c in between) / 100.0 if between else 1.0,
        }
        for i in range(len(rows))
    ]


def alignment_features(
    translator: Translator, rows: Sequence[CalibrationRow]
) -> list[dict[str, float]]:
    """The ``align_*`` candidates: what the word alignment of each output (the last decoder
    layer's attention, as inline markup is placed) says of omissions and repetitions: the share
    of the source's words (of 3 letters or more) no output word came from, the largest share of
    the output's words that came from one source word, and how peaked each word's attention is
    (its share on the source word it came from, averaged)."""
    from anuvad.inference.alignment import piece_words, word_alignment
    from anuvad.inference.translation import Translation

    found: list[dict[str, float]] = []
    for r in rows:
        ids = translator.tgt_tokenizer.encode(r.output)
        view = translator.attention_of(Translation(r.source, r.output, ids, 0.0, True, []))
        aligned = word_alignment(view)
        source = r.source.split()
        content = [i for i, w in enumerate(source) if sum(c.isalpha() for c in w) >= 3]
        if not aligned or not content:
            found.append({"align_uncovered": 0.0, "align_repeat": 0.0, "align_peak": 0.0})
            continue
        counts = [aligned.count(i) for i in range(len(source))]
        rows_ = view.cross_attention[-1]  # the last layer: [head][tgt][src]
        tgt_words, src_words = piece_words(view.tgt_tokens), piece_words(view.src_tokens)
        peaks = []
        for t, word in enumerate(tgt_words):
            if word < 0:
                continue
            mass = [0.0] * len(source)
            for head in rows_:
                for s_, weight in enumerate(head[t]):
                    if src_words[s_] >= 0:
                        mass[src_words[s_]] += weight
            peaks.append(max(mass) / max(1e-9, sum(mass)))
        found.append(
            {
                "align_uncovered": sum(counts[i] == 0 for i in content) / len(content),
                "align_repeat": max(counts) / len(aligned),
                "align_peak": sum(peaks) / max(1, len(peaks)),
            }
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", required=True, help="from anuvad calibrate --save-rows")
    parser.add_argument("--model", required=True, help="the model the rows were translated with")
    parser.add_argument("--lexicon", type=Path, help="TSV: source word<TAB>target translation")
    parser.add_argument(
        "--lexicon-reversed", action="store_true", help="the TSV's columns are target, source"
    )
    parser.add_argument("--reverse", help="a target->source model: the roundtrip_chrf candidate")
    parser.add_argument(
        "--no-agreement", action="store_true", help="skip the greedy_* and roundtrip_* candidates"
    )
    parser.add_argument("--dropout-passes", type=int, default=8, help="0: no dropout_* candidates")
    parser.add_argument(
        "--hidden-components", type=int, default=8, help="0: no hidden_* candidates"
    )
    parser.add_argument("--twin", help="another model of the same direction: twin_* candidates")
    parser.add_argument(
        "--alignment", action="store_true", help="the align_* candidates (word alignment)"
    )
    parser.add_argument(
        "--consensus", type=int, default=0, help="K > 0: the sample_* candidates from K draws"
    )
    parser.add_argument(
        "--mono-source", type=Path, nargs="*", default=[], help="monolingual source-language files"
    )
    parser.add_argument(
        "--mono-target", type=Path, nargs="*", default=[], help="monolingual target-language files"
    )
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rows = load_rows(args.rows)
    if not all(r.source for r in rows):
        parser.error(f"{args.rows} lacks texts: write it again with anuvad calibrate --save-rows")
    translator = Translator.from_file(args.model, device="cpu", confidence=False)
    extra = model_features(translator, rows, args.dropout_passes)
    reverse = (
        Translator.from_file(args.reverse, device="cpu", confidence=False) if args.reverse else None
    )
    if reverse is not None:
        for found, rp in zip(extra, reverse_pmi_features(reverse, rows), strict=True):
            found |= rp
    if not args.no_agreement:
        for found, agreed in zip(extra, agreement_features(translator, rows, reverse), strict=True):
            found |= agreed
    for found, rare, r in zip(extra, rarity_features(translator, rows), rows, strict=True):
        found |= rare | name_features(r.source)
    if args.hidden_components:
        for found, hidden in zip(
            extra, hidden_features(translator, rows, args.hidden_components), strict=True
        ):
            found |= hidden
    if args.twin:
        twin = Translator.from_file(args.twin, device="cpu", confidence=False)
        for found, agreed in zip(extra, twin_features(translator, twin, rows), strict=True):
            found |= agreed
    if args.alignment:
        for found, aligned in zip(extra, alignment_features(translator, rows), strict=True):
            found |= aligned
    if args.consensus:
        for found, agreed in zip(
            extra, consensus_features(translator, rows, args.consensus), strict=True
        ):
            found |= agreed
    for side, paths in (("src", args.mono_source), ("tgt", args.mono_target)):
        if paths:
            counts = read_counts(paths)
            for found, r in zip(extra, rows, strict=True):
                found |= mono_features(r.source if side == "src" else r.output, side, counts)
    if args.lexicon:
        forward, backward = read_lexicon(args.lexicon, args.lexicon_reversed)
        for found, r in zip(extra, rows, strict=True):
            found |= lexicon_features(r.source, r.output, forward, backward)
    for found, r in zip(extra, rows, strict=True):
        r.features |= found
    base = [f for f in OUTPUT_FEATURES if all(f in r.features for r in rows)]
    candidates = sorted({name for found in extra for name in found})
    print(f"{len(rows)} rows; AUROC held out / 5-fold CV on the fitting halves\n")
    print("\n".join(table(rows, feature_sets(base, candidates))))


if __name__ == "__main__":
    main()
