"""The anuvad model as Hugging Face ``MarianMTModel`` (same weights), and that twin converted to
CTranslate2 by CTranslate2's own stock converter, for bench/decode.py.

* :func:`marian_from_anuvad`: a ``MarianMTModel`` with the anuvad model's dimensions and weights
  (fused Q/K/V split, anuvad's sinusoidal table and LayerNorm eps), so that ``generate`` decodes
  the very same network; :func:`logit_difference` checks that.
* :func:`stock_ct2_model`: that twin through ``ctranslate2.converters.TransformersConverter``
  (its ``MarianMTLoader``, unchanged), the baseline for anuvad's own exporter: what CTranslate2
  achieves on an equal model converted its own way. The stock loader expects what Hugging Face
  Marian checkpoints look like, so the twin is dressed that way: one vocabulary for both sides
  whose last entry is ``<pad>`` (the loader drops that row), the token strings ``t0 .. t{V-1}``
  standing for the anuvad ids (source and target keep their own ids, so the network is the
  same), and PAD and BOS get a logit bias of -inf (anuvad's search and export never generate
  them). One difference remains that no stock setting avoids: Marian's decoder starts from a
  zero embedding (``start_from_zero_embedding``) where anuvad's starts from BOS's. A model whose
  BOS embedding row is zero (:func:`zero_bos_embedding`, bench/decode.py ``--zero-bos``) removes
  it: the twin then computes exactly anuvad's network, so the two exports give the same outputs
  and their speeds compare like for like.
* :func:`run_marian`, :func:`run_ct2_stock`: the twins called as their users would, on the
  Translator's length-sorted batches.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import torch
from torch import nn

from anuvad.data.batching import collate_source
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from anuvad.inference.translator import Translator
from anuvad.model.transformer import Transformer


def zero_bos_embedding(model: Transformer) -> None:
    """Zero the BOS row of ``model``'s target embedding, in place (tied matrices included).

    The decoder's first input is then the position encoding alone, which is what CTranslate2's
    stock Marian conversion computes (it starts from a zero embedding). BOS is never generated,
    so the tied output row only changes a logit that search forbids anyway.
    """
    with torch.no_grad():
        model.tgt_embed.weight[BOS_ID].zero_()


def marian_from_anuvad(model: Transformer, extra_row: bool = False) -> nn.Module:
    """A ``MarianMTModel`` with ``model``'s dimensions and weights (post-LN models only).

    ``extra_row`` appends one zero row to both vocabularies (embeddings, output layer): the
    ``<pad>`` row that Hugging Face Marian checkpoints end with and CTranslate2's loader drops.
    """
    from transformers import MarianConfig, MarianMTModel

    c = model.config
    extra = int(extra_row)
    if c.norm_position != "post" or c.positional_encoding != "sinusoidal":
        raise SystemExit("Marian comparison needs a post-LN model with sinusoidal positions")
    # attn_implementation is a PreTrainedConfig keyword the dataclass stub does not list.
    marian_config = MarianConfig(  # type: ignore[call-arg, unused-ignore]
        vocab_size=c.src_vocab_size + extra, decoder_vocab_size=c.tgt_vocab_size + extra,
        d_model=c.d_model,
        max_position_embeddings=c.max_positions,
        encoder_layers=c.num_encoder_layers, encoder_attention_heads=c.num_heads,
        encoder_ffn_dim=c.d_ff, decoder_layers=c.num_decoder_layers,
        decoder_attention_heads=c.num_heads, decoder_ffn_dim=c.d_ff,
        activation_function="relu", scale_embedding=True, attn_implementation="sdpa",
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        share_encoder_decoder_embeddings=c.share_source_embedding,
        tie_word_embeddings=c.tie_output_embedding,
        pad_token_id=PAD_ID, eos_token_id=EOS_ID, forced_eos_token_id=None,
        decoder_start_token_id=BOS_ID,
    )  # fmt: skip
    marian = MarianMTModel(marian_config).eval()
    src = model.state_dict()
    d = c.d_model
    new: dict[str, torch.Tensor] = {}

    def linear(dst: str, src_name: str, part: slice | None = None) -> None:
        weight, bias = src[f"{src_name}.weight"], src[f"{src_name}.bias"]
        new[f"{dst}.weight"] = weight[part] if part else weight
        new[f"{dst}.bias"] = bias[part] if part else bias

    def norm(dst: str, src_name: str) -> None:
        new[f"{dst}.weight"], new[f"{dst}.bias"] = (
            src[f"{src_name}.weight"],
            src[f"{src_name}.bias"],
        )

    thirds = [slice(0, d), slice(d, 2 * d), slice(2 * d, 3 * d)]
    for i in range(c.num_encoder_layers):
        a, m = f"encoder_layers.{i}", f"model.encoder.layers.{i}"
        for name, part in zip(("q_proj", "k_proj", "v_proj"), thirds, strict=True):
            linear(f"{m}.self_attn.{name}", f"{a}.self_attn.qkv_proj", part)
        linear(f"{m}.self_attn.out_proj", f"{a}.self_attn.out_proj")
        norm(f"{m}.self_attn_layer_norm", f"{a}.attn_sublayer.norm")
        linear(f"{m}.fc1", f"{a}.ffn.linear1")
        linear(f"{m}.fc2", f"{a}.ffn.linear2")
        norm(f"{m}.final_layer_norm", f"{a}.ffn_sublayer.norm")
    for i in range(c.num_decoder_layers):
        a, m = f"decoder_layers.{i}", f"model.decoder.layers.{i}"
        for name, part in zip(("q_proj", "k_proj", "v_proj"), thirds, strict=True):
            linear(f"{m}.self_attn.{name}", f"{a}.self_attn.qkv_proj", part)
        linear(f"{m}.self_attn.out_proj", f"{a}.self_attn.out_proj")
        norm(f"{m}.self_attn_layer_norm", f"{a}.self_sublayer.norm")
        linear(f"{m}.encoder_attn.q_proj", f"{a}.cross_attn.q_proj")
        linear(f"{m}.encoder_attn.k_proj", f"{a}.cross_attn.kv_proj", thirds[0])
        linear(f"{m}.encoder_attn.v_proj", f"{a}.cross_attn.kv_proj", thirds[1])
        linear(f"{m}.encoder_attn.out_proj", f"{a}.cross_attn.out_proj")
        norm(f"{m}.encoder_attn_layer_norm", f"{a}.cross_sublayer.norm")
        linear(f"{m}.fc1", f"{a}.ffn.linear1")
        linear(f"{m}.fc2", f"{a}.ffn.linear2")
        norm(f"{m}.final_layer_norm", f"{a}.ffn_sublayer.norm")

    def rows(weight: torch.Tensor) -> torch.Tensor:
        return torch.cat([weight, weight.new_zeros(extra, weight.size(1))]) if extra else weight

    new["model.encoder.embed_tokens.weight"] = rows(src["src_embed.weight"])
    new["model.decoder.embed_tokens.weight"] = rows(src["tgt_embed.weight"])
    if c.share_source_embedding:
        new["model.shared.weight"] = rows(src["tgt_embed.weight"])
    new["lm_head.weight"] = rows(
        src["output_proj.weight" if "output_proj.weight" in src else "tgt_embed.weight"]
    )
    missing, unexpected = marian.load_state_dict(new, strict=False)
    assert not unexpected, unexpected
    left = [k for k in missing if "embed_positions" not in k and k != "final_logits_bias"]
    assert not left, f"Marian weights not filled from anuvad: {left}"
    table = model.positions.get_buffer("table")  # anuvad interleaves sin/cos; Marian halves them
    with torch.no_grad():
        for part in (marian.model.encoder, marian.model.decoder):
            part.embed_positions.weight.copy_(table[: part.embed_positions.weight.size(0)])
    for module in marian.modules():
        if isinstance(module, nn.LayerNorm):
            module.eps = c.layer_norm_eps
    return cast(nn.Module, marian)  # a MarianMTModel (Any where transformers is not installed)


@torch.inference_mode()
def logit_difference(model: Transformer, marian: nn.Module, src: list[list[int]]) -> float:
    """Largest |logit difference| of the two networks, teacher-forced on the sources as targets."""
    src_ids, src_pad_mask = collate_source(src)
    tgt = (
        torch.cat([torch.full((len(src), 1), BOS_ID), src_ids[:, :-1]], dim=1)
        % model.config.tgt_vocab_size
    )
    ours = model(src_ids, tgt, src_pad_mask)
    theirs = marian(
        input_ids=src_ids, attention_mask=(~src_pad_mask).long(), decoder_input_ids=tgt
    ).logits
    keep = (~src_pad_mask).unsqueeze(-1)  # compare real positions only
    return float(((ours - theirs).abs() * keep).max())


class _TokenNames:
    """What CTranslate2's Marian loader asks of a Hugging Face tokenizer: the vocabulary (ids
    ``t0 .. t{V-1}``, then ``<pad>``), EOS and UNK."""

    def __init__(self, size: int) -> None:
        self.vocab = {token_name(i): i for i in range(size)} | {"<pad>": size}
        self.eos_token, self.unk_token = token_name(EOS_ID), token_name(1)

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)


def token_name(token_id: int) -> str:
    """The token string that stands for anuvad id ``token_id`` in the stock-converted model."""
    return f"t{token_id}"


def stock_ct2_model(model: Transformer, out: Path, quantization: str) -> Path:
    """``model``'s Marian twin converted by CTranslate2's stock ``TransformersConverter`` into
    ``out`` (overwritten). Needs equal source and target vocabulary sizes (one shared table)."""
    from ctranslate2.converters import TransformersConverter

    c = model.config
    if c.src_vocab_size != c.tgt_vocab_size:
        raise SystemExit("the stock Marian converter needs equal source and target vocabularies")
    marian = marian_from_anuvad(model, extra_row=True)
    twin: Any = marian  # a MarianMTModel: its bias buffer and config are not nn.Module's
    with torch.no_grad():  # never generated, as in anuvad's search and export
        twin.final_logits_bias[:, [PAD_ID, BOS_ID]] = float("-inf")
    config_dir = out.with_name(out.name + "-hf-config")
    twin.config.save_pretrained(config_dir)  # the converter reads the config from a folder

    # ctranslate2 ships no type information, so its converter class is Any to mypy.
    class Converter(TransformersConverter):  # type: ignore[misc]
        def load_model(self, model_class: Any, name: str, **kwargs: Any) -> nn.Module:
            return marian

        def load_tokenizer(self, tokenizer_class: Any, name: str, **kwargs: Any) -> _TokenNames:
            return _TokenNames(c.tgt_vocab_size)

    Converter(str(config_dir)).convert(str(out), quantization=quantization, force=True)
    return out


# ----------------------------------------------------------------------------------------------
# Running the twins as their users would (bench/decode.py times these)
# ----------------------------------------------------------------------------------------------


def encoded_batches(
    translator: Translator, lines: Sequence[str], size: int
) -> Iterator[tuple[list[int], list[list[int]]]]:
    """(line indices, their source ids) sorted by length, ``size`` per batch, as the Translator
    batches."""
    encoded = translator.encode(lines)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), size):
        group = order[start : start + size]
        yield group, [encoded[i] for i in group]


def run_marian(
    marian: nn.Module,
    translator: Translator,
    lines: Sequence[str],
    k: int,
    args: argparse.Namespace,
    batch_size: int,
) -> tuple[list[str], int]:
    """``generate`` on the Translator's batches; outputs in input order and token count."""
    from transformers import GenerationConfig

    outputs: list[str] = [""] * len(lines)
    tokens = 0
    max_tokens = translator.model.config.max_positions - 1
    with torch.inference_mode():
        for group, src in encoded_batches(translator, lines, batch_size):
            src_ids, src_pad_mask = collate_source(src)
            limit = min(int(args.max_len_a * src_ids.size(1)) + args.max_len_b, max_tokens)
            config = GenerationConfig(
                num_beams=k, do_sample=False, length_penalty=args.length_penalty,
                early_stopping=True,
                max_new_tokens=limit, decoder_start_token_id=BOS_ID, eos_token_id=EOS_ID,
                pad_token_id=PAD_ID, suppress_tokens=[PAD_ID, BOS_ID], use_cache=True,
            )  # fmt: skip
            generated = marian.generate(  # type: ignore[operator]
                input_ids=src_ids, attention_mask=(~src_pad_mask).long(), generation_config=config
            )
            for i, row in zip(group, generated[:, 1:].tolist(), strict=True):  # drop BOS
                # Finished rows are padded with PAD (greedy) or with more EOS (beam search):
                # the output ends at its first EOS, which counts as a token as in every engine.
                ids = [t for t in row if t != PAD_ID]
                if EOS_ID in ids:
                    ids = ids[: ids.index(EOS_ID) + 1]
                tokens += len(ids)
                outputs[i] = translator.tgt_tokenizer.decode([t for t in ids if t != EOS_ID])
    return outputs, tokens


def run_ct2_stock(
    ct2: Any,
    translator: Translator,
    lines: Sequence[str],
    k: int,
    args: argparse.Namespace,
    batch_size: int,
) -> tuple[list[str], int]:
    """The stock-converted twin (:func:`marian_twin.stock_ct2_model`) on the Translator's
    batches, called as a CTranslate2 user would: one ``translate_batch`` per batch."""
    outputs: list[str] = [""] * len(lines)
    tokens = 0
    for group, src in encoded_batches(translator, lines, batch_size):
        sources = [[token_name(t) for t in [*ids, EOS_ID]] for ids in src]
        limit = int(args.max_len_a * max(len(s) for s in sources)) + args.max_len_b
        results = ct2.translate_batch(
            sources, beam_size=k, length_penalty=args.length_penalty if k > 1 else 0.0,
            max_decoding_length=limit, max_batch_size=batch_size, return_end_token=True,
        )  # fmt: skip
        for i, result in zip(group, results, strict=True):
            ids = [int(piece[1:]) for piece in result.hypotheses[0]]
            tokens += len(ids)
            outputs[i] = translator.tgt_tokenizer.decode([t for t in ids if t != EOS_ID])
    return outputs, tokens
