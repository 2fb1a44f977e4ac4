"""What every engine returns: translations with n-best lists, and attention views for heatmaps.

Both engines (:mod:`anuvad.inference.translator`, :mod:`anuvad.inference.ct2.engine`) return
these types, so the CLI and the server never know which engine translated.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Candidate:
    """One entry of an n-best list.

    Attributes:
        text: detokenized output.
        token_ids: target ids without BOS/EOS.
        score: ranking score, log_prob / lp(Y) (Wu et al. 2016); greedy: log_prob.
        log_prob: sum of token log-probabilities (EOS included if produced).
        finished: EOS produced before the length limit.
    """

    text: str
    token_ids: list[int]
    score: float
    log_prob: float
    finished: bool


@dataclass
class Translation:
    """One translated sentence: its best output and the n-best list (best first, >= 1)."""

    source: str
    text: str
    token_ids: list[int]
    score: float
    finished: bool
    nbest: list[Candidate]


@dataclass
class AttentionView:
    """Attention of one sentence's best hypothesis, as plain lists (JSON-ready).

    Attributes:
        src_tokens: source pieces, including the final "</s>".
        tgt_tokens: output pieces, including "</s>" when the output finished.
        cross_attention: [layer][head][tgt_pos][src_pos], every row sums to 1.
        cosine_similarity: [tgt_pos][src_pos], decoder state vs encoder output (memory).
        note: what the view leaves out when an engine cannot give everything (e.g. the
            CTranslate2 engine: one averaged layer, no cosine similarities); "" = complete.
    """

    source: str
    text: str
    src_tokens: list[str]
    tgt_tokens: list[str]
    cross_attention: list[list[list[list[float]]]]
    cosine_similarity: list[list[float]]
    num_layers: int
    num_heads: int
    score: float
    note: str = ""
