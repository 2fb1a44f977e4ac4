"""Which source word each word of a translation came from, read from the model's cross-attention
(for putting a sentence's inline markup, a bold word or a link, around its translation:
:mod:`anuvad.inference.inline`).

A word is what white space separates, in the sentence as given and in the translation as
returned. The attention of an output piece over the source pieces is averaged over the heads of
the chosen layers; a target word's attention is summed over its pieces and over each source
word's pieces, and the source word with most of it is the word's origin. The source's end
token is left out (attention parks on it when no word is read). Models trained without an
alignment objective align roughly (Garg et al. 2019 found the penultimate layer of a 6-layer
model best); :data:`LAYERS` was chosen by measurement (docs/benchmarks.md, "Inline markup"):
on NTREX-128 dev sentences, of the links a dictionary makes unambiguous, the shipped 3-layer
models' last layer finds 77 % (English→Hindi) and 80 % (Hindi→English), the second 70 % and
74 %, all three 75 % and 77 %, word order 14 % and 12 %. (Leaving a word unaligned when its
attention is spread, as a particle's is, lost more than it gained: content words spread too.)

When the pieces do not split into the same words as the texts (the engine's post-processing
joined or split a word), there is no alignment, and the caller falls back to word order.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from anuvad.inference.translation import AttentionView

MARK = "\u2581"  # SentencePiece's word-start mark
# Which decoder layers' attention is read, counted from the end (-1: the last); a layer the
# view lacks (a CTranslate2 view has one) is skipped, and all of a view's layers are read when
# none of these is there.
LAYERS: tuple[int, ...] = (-1,)


def piece_words(pieces: Sequence[str]) -> list[int]:
    """For each piece, the index of the word it belongs to (-1: an end token, or a lone word
    mark at the very end)."""
    words: list[int] = []
    current = -1
    started = False  # a lone mark has started the word the next piece continues
    for piece in pieces:
        if piece in ("</s>", "<s>", "<pad>"):
            words.append(-1)
            continue
        if not started and (piece.startswith(MARK) or current < 0):
            current += 1
        started = piece == MARK
        words.append(current)
    if started:  # a mark before nothing: no word
        words[len(words) - 1 - words[::-1].index(current)] = -1
    return words


def word_alignment(view: AttentionView, read: str = "") -> list[int] | None:
    """For each word of ``view.text``, the index of the word of ``view.source`` it attends to
    most; None when the pieces' words are not the texts' words. ``read``: the source as the
    model read it where that differs (:attr:`Translation.read`: "USD 25" read as "$25", an
    address as "Z1"), whose words are mapped back to the source's (:func:`read_words`)."""
    src_words = piece_words(view.src_tokens)
    tgt_words = piece_words(view.tgt_tokens)
    n_src, n_tgt = len((read or view.source).split()), len(view.text.split())
    if max(src_words, default=-1) + 1 != n_src or max(tgt_words, default=-1) + 1 != n_tgt:
        return None
    if n_tgt == 0 or n_src == 0:
        return [] if n_tgt == 0 else None
    layers = [view.cross_attention[i] for i in _layer_indices(view.num_layers)]
    mass = [[0.0] * n_src for _ in range(n_tgt)]  # [target word][source word]
    for layer in layers:
        for head in layer:
            for t, row in enumerate(head[: len(tgt_words)]):
                tw = tgt_words[t]
                if tw < 0:
                    continue
                for s, weight in enumerate(row[: len(src_words)]):
                    if src_words[s] >= 0:
                        mass[tw][src_words[s]] += weight
    found = [max(range(n_src), key=row.__getitem__) for row in mass]
    if not read:
        return found
    back = read_words(read, view.source)
    return [back[word] for word in found]


def read_words(read: str, source: str) -> list[int]:
    """For each word of ``read`` (a sentence as the model read it), the word of ``source`` (the
    sentence as given) it stands for: the same words in the same order match one to one, and
    the words of a rewritten stretch ("$25" for "USD 25", "Rs 500" for "₹500", "Z1" for an
    address) go to the words of the stretch they replace, in order, the last taking the rest."""
    read_list, source_list = read.split(), source.split()
    back = [0] * len(read_list)
    blocks = SequenceMatcher(None, read_list, source_list, autojunk=False).get_opcodes()
    for _tag, i1, i2, j1, j2 in blocks:
        for k in range(i1, i2):
            back[k] = (
                min(j1 + (k - i1), j2 - 1) if j2 > j1 else max(0, min(j1, len(source_list) - 1))
            )
    return back


def _layer_indices(count: int) -> list[int]:
    chosen = sorted({count + i if i < 0 else i for i in LAYERS if -count <= i < count})
    return chosen or list(range(count))


def diagonal(n_src: int, n_tgt: int) -> list[int]:
    """The alignment of word order alone: target word j to the source word at the same
    relative place (the fallback without attention)."""
    if n_src == 0:
        return [0] * n_tgt
    return [min(n_src - 1, (2 * j + 1) * n_src // (2 * n_tgt)) for j in range(n_tgt)]


__all__ = ["LAYERS", "diagonal", "piece_words", "read_words", "word_alignment"]
