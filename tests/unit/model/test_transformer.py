"""The Transformer's invariants: shapes, padding, causality, the cache, positions, parameters."""

from __future__ import annotations

import dataclasses
import math
from typing import cast

import pytest
import torch

from anuvad.config import ModelConfig
from anuvad.model.attention import SelfAttention
from anuvad.model.layers import (
    EncoderLayer,
    LearnedPositions,
    SinusoidalPositions,
    sinusoidal_table,
)
from anuvad.model.transformer import Transformer, build_model, causal_mask, count_parameters
from conftest import small_model_config

SMALL = small_model_config(src_vocab_size=40, tgt_vocab_size=50, max_positions=64)


def make_model(**changes: object) -> Transformer:
    torch.manual_seed(0)
    config = dataclasses.replace(SMALL, **changes)  # type: ignore[arg-type]
    return build_model(config).eval()


def random_batch(batch: int = 3, src_len: int = 7, tgt_len: int = 6) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(1)
    src = torch.randint(4, SMALL.src_vocab_size, (batch, src_len), generator=gen)
    tgt = torch.randint(4, SMALL.tgt_vocab_size, (batch, tgt_len), generator=gen)
    pad = torch.zeros(batch, src_len, dtype=torch.bool)
    pad[0, src_len - 2 :] = True  # row 0 has two padding positions
    src = src.masked_fill(pad, 0)
    return src, tgt, pad


@pytest.mark.parametrize("norm_position", ["post", "pre"])
def test_forward_shapes(norm_position: str) -> None:
    model = make_model(norm_position=norm_position)
    src, tgt, pad = random_batch()
    logits = model(src, tgt, pad)
    assert logits.shape == (3, 6, SMALL.tgt_vocab_size)
    memory = model.encode(src, pad)
    assert memory.shape == (3, 7, SMALL.d_model)
    assert torch.isfinite(logits).all()


def test_sinusoidal_table_matches_the_paper_formula() -> None:
    d_model = 16
    table = sinusoidal_table(50, d_model)
    for pos in (0, 1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert table[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_positions_beyond_the_maximum_are_refused() -> None:
    positions = SinusoidalPositions(8, 4)
    assert positions(8).shape == (8, 4)
    with pytest.raises(ValueError, match="max_positions"):
        positions(9)


def test_learned_positions_option() -> None:
    model = make_model(positional_encoding="learned")
    assert isinstance(model.positions, LearnedPositions)
    src, tgt, pad = random_batch()
    assert model(src, tgt, pad).shape == (3, 6, SMALL.tgt_vocab_size)
    # Learned positions are parameters; sinusoidal ones are not.
    assert count_parameters(model) == count_parameters(make_model()) + 64 * 32


def test_extra_source_padding_changes_nothing() -> None:
    model = make_model()
    src, tgt, pad = random_batch()
    logits = model(src, tgt, pad)
    wider_src = torch.cat([src, torch.zeros(3, 5, dtype=torch.long)], dim=1)
    wider_pad = torch.cat([pad, torch.ones(3, 5, dtype=torch.bool)], dim=1)
    # Padding holds arbitrary ids: masked keys must not matter whatever they contain.
    wider_src[:, 7:] = 17
    assert torch.allclose(model(wider_src, tgt, wider_pad), logits, atol=1e-5)


def test_a_sentence_translates_the_same_alone_or_padded_in_a_batch() -> None:
    model = make_model()
    src, tgt, pad = random_batch()
    batched = model(src, tgt, pad)[0]
    alone = model(src[:1, :5], tgt[:1], pad[:1, :5])[0]
    assert torch.allclose(batched, alone, atol=1e-5)


@pytest.mark.parametrize("norm_position", ["post", "pre"])
def test_decoder_is_causal(norm_position: str) -> None:
    model = make_model(norm_position=norm_position)
    src, tgt, pad = random_batch()
    logits = model(src, tgt, pad)
    changed = tgt.clone()
    changed[:, 4] = (changed[:, 4] + 1) % SMALL.tgt_vocab_size
    new_logits = model(src, changed, pad)
    assert torch.allclose(new_logits[:, :4], logits[:, :4], atol=1e-6)
    assert not torch.allclose(new_logits[:, 4:], logits[:, 4:], atol=1e-4)


def test_explicit_causal_mask_equals_the_implicit_one() -> None:
    model = make_model()
    src, tgt, pad = random_batch()
    implicit = model(src, tgt, pad)
    explicit = model(src, tgt, pad, causal_mask(tgt.size(1)))
    assert torch.allclose(implicit, explicit, atol=1e-6)


@pytest.mark.parametrize("norm_position", ["post", "pre"])
def test_incremental_decoding_with_the_cache_equals_full_decoding(norm_position: str) -> None:
    model = make_model(norm_position=norm_position)
    src, tgt, pad = random_batch()
    full = model(src, tgt, pad)
    cache = model.init_cache(model.encode(src, pad))
    steps = [model.decode_step(tgt[:, t : t + 1], cache, pad).logits for t in range(tgt.size(1))]
    assert cache.length == tgt.size(1)
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)


def test_decode_step_with_a_prefix_then_single_steps() -> None:
    model = make_model()
    src, tgt, pad = random_batch()
    full = model(src, tgt, pad)
    cache = model.init_cache(model.encode(src, pad))
    prefix = model.decode_step(tgt[:, :4], cache, pad).logits
    rest = [model.decode_step(tgt[:, t : t + 1], cache, pad).logits for t in (4, 5)]
    assert torch.allclose(torch.cat([prefix, *rest], dim=1), full, atol=1e-5)


def test_cache_reorder_follows_the_rows() -> None:
    model = make_model()
    src, tgt, pad = random_batch()
    full = model(src, tgt, pad)
    cache = model.init_cache(model.encode(src, pad))
    model.decode_step(tgt[:, :3], cache, pad)
    order = torch.tensor([2, 0, 0])
    cache.reorder(order)
    out = model.decode_step(tgt[order, 3:4], cache, pad[order]).logits
    assert torch.allclose(out[:, 0], full[order, 3], atol=1e-5)


def test_grouped_cache_shares_cross_attention_and_equals_full_decoding() -> None:
    # Beam search keeps one cross-attention key/value row per sentence for its K beams.
    model = make_model()
    src, _, pad = random_batch()
    group = 2
    gen = torch.Generator().manual_seed(2)
    tgt = torch.randint(4, SMALL.tgt_vocab_size, (src.size(0) * group, 5), generator=gen)
    expand = torch.arange(src.size(0)).repeat_interleave(group)
    full = model(src[expand], tgt, pad[expand])  # (B * G, T, V), every row on its own
    cache = model.init_cache(model.encode(src, pad), group=group)
    assert cache.layers[0].cross_k is not None and cache.layers[0].cross_k.size(0) == src.size(0)
    steps = [model.decode_step(tgt[:, t : t + 1], cache, pad).logits for t in range(3)]
    assert torch.allclose(torch.cat(steps, dim=1), full[:, :3], atol=1e-5)
    # Rows reshuffled within their sentences (sentences unchanged), then sentence 1 dropped.
    within = torch.tensor([1, 1, 2, 3, 5, 4])
    cache.reorder(within)
    out = model.decode_step(tgt[within, 3:4], cache, pad).logits
    assert torch.allclose(out[:, 0], full[within, 3], atol=1e-5)
    keep_rows, keep_sentences = torch.tensor([0, 1, 4, 5]), torch.tensor([0, 2])
    cache.reorder(keep_rows, keep_sentences)
    kept = within[keep_rows]
    out = model.decode_step(tgt[kept, 4:5], cache, pad[keep_sentences]).logits
    assert torch.allclose(out[:, 0], full[kept, 4], atol=1e-5)


def test_attention_weights_path_equals_the_fast_path() -> None:
    model = make_model()
    src, tgt, pad = random_batch()
    memory = model.encode(src, pad)
    fast = model.decode(tgt, memory, pad)
    slow = model.decode(tgt, memory, pad, need_attention=True)
    assert torch.allclose(fast.logits, slow.logits, atol=1e-5)
    assert slow.cross_attention is not None and len(slow.cross_attention) == 2
    weights = slow.cross_attention[0]
    assert weights.shape == (3, 4, 6, 7)  # (B, H, T, S)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 4, 6), atol=1e-5)
    assert weights[0, :, :, 5:].abs().max() == 0  # no attention on source padding


def test_embeddings_tying() -> None:
    tied = make_model(src_vocab_size=50, share_source_embedding=True)
    assert tied.src_embed is tied.tgt_embed
    assert tied.output_proj is None
    separate = make_model()
    assert separate.src_embed is not separate.tgt_embed
    untied = make_model(tie_output_embedding=False)
    assert untied.output_proj is not None
    # Tying removes exactly one (V, D) matrix per shared use.
    assert count_parameters(separate) - count_parameters(tied) == 40 * 32
    assert count_parameters(untied) - count_parameters(separate) == 50 * 32


def test_post_ln_is_the_default_and_matches_the_paper() -> None:
    model = make_model()
    assert model.config.norm_position == "post"
    assert isinstance(model.encoder_norm, torch.nn.Identity)  # post-LN needs no final norm
    # Every encoder sub-layer output is layer-normalised: zero mean, unit variance per position.
    src, _, pad = random_batch()
    memory = model.encode(src, pad)
    assert torch.allclose(memory.mean(-1), torch.zeros(3, 7), atol=1e-5)


def explicit_self_attention(
    layer: SelfAttention, x: torch.Tensor, pad: torch.Tensor
) -> torch.Tensor:
    """MultiHead(x, x, x) = Concat(head_1..h) W_O, head_i = softmax(x Wq_i (x Wk_i)^T / sqrt(d_k)
    + mask) x Wv_i (section 3.2.2), written out from the layer's own weights."""
    d, h = x.size(-1), SMALL.num_heads
    w_q, w_k, w_v = layer.qkv_proj.weight.chunk(3, dim=0)
    b_q, b_k, b_v = layer.qkv_proj.bias.chunk(3)
    heads = []
    for i in range(h):
        rows = slice(i * d // h, (i + 1) * d // h)
        q = x @ w_q[rows].T + b_q[rows]  # (B, S, Dh)
        k = x @ w_k[rows].T + b_k[rows]
        v = x @ w_v[rows].T + b_v[rows]
        scores = q @ k.transpose(1, 2) / math.sqrt(d // h)  # (B, S, S)
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))
        heads.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(heads, dim=-1) @ layer.out_proj.weight.T + layer.out_proj.bias


def test_an_encoder_layer_computes_the_papers_post_ln_formula() -> None:
    """LayerNorm(x + Sublayer(x)) twice (section 3.1), from the weights by hand: self-attention,
    then FFN(x) = max(0, x W1 + b1) W2 + b2 (eq. 2)."""
    model = make_model()
    layer = model.encoder_layers[0]
    assert isinstance(layer, EncoderLayer)
    src, _, pad = random_batch()
    x = torch.randn(
        src.size(0), src.size(1), SMALL.d_model, generator=torch.Generator().manual_seed(5)
    )

    def norm(ln: torch.nn.LayerNorm, y: torch.Tensor) -> torch.Tensor:
        mean = y.mean(-1, keepdim=True)
        var = y.var(-1, unbiased=False, keepdim=True)
        return (y - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias

    h = norm(layer.attn_sublayer.norm, x + explicit_self_attention(layer.self_attn, x, pad))
    ffn = torch.relu(h @ layer.ffn.linear1.weight.T + layer.ffn.linear1.bias)
    ffn = ffn @ layer.ffn.linear2.weight.T + layer.ffn.linear2.bias
    expected = norm(layer.ffn_sublayer.norm, h + ffn)
    with torch.no_grad():
        got = layer(x, pad)
    assert torch.allclose(got, expected, atol=1e-5)
    # Pre-LN (an option) differs: x + Sublayer(LayerNorm(x)).
    pre = make_model(norm_position="pre").encoder_layers[0]
    with torch.no_grad():
        assert not torch.allclose(pre(x, pad), expected, atol=1e-3)


def test_dropout_sits_where_section_5_4_puts_it() -> None:
    """Residual dropout on every sub-layer output before the residual add, and on the summed
    embeddings + positions: each of those nn.Dropout modules runs in training with the
    configured rate (and attention/activation dropout with theirs)."""
    model = make_model(dropout=0.3, attention_dropout=0.1, activation_dropout=0.2).train()
    src, tgt, pad = random_batch()
    calls: dict[str, float] = {}
    hooks = [
        module.register_forward_hook(lambda m, _, __, name=name: calls.__setitem__(name, m.p))
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Dropout)
    ]
    try:
        model(src, tgt, pad)
    finally:
        for hook in hooks:
            hook.remove()
    residual = [n for n in calls if n.endswith("sublayer.dropout")]
    assert len(residual) == 2 * SMALL.num_encoder_layers + 3 * SMALL.num_decoder_layers
    assert all(calls[n] == 0.3 for n in residual)
    embedding = [n for n in calls if "sublayer" not in n and "ffn" not in n]
    assert embedding and all(calls[n] == 0.3 for n in embedding)
    activation = [n for n in calls if n.endswith("ffn.activation_dropout")]
    assert len(activation) == SMALL.num_encoder_layers + SMALL.num_decoder_layers
    assert all(calls[n] == 0.2 for n in activation)
    assert all(cast(EncoderLayer, layer).self_attn.dropout == 0.1 for layer in model.encoder_layers)


def test_dropout_is_active_only_in_training() -> None:
    model = make_model(dropout=0.3)
    src, tgt, pad = random_batch()
    model.train()
    a, b = model(src, tgt, pad), model(src, tgt, pad)
    assert not torch.allclose(a, b)
    model.eval()
    assert torch.equal(model(src, tgt, pad), model(src, tgt, pad))


def test_embeddings_are_scaled_by_sqrt_d_model() -> None:
    """The first encoder layer receives E[ids] * sqrt(d_model) + the sinusoidal positions."""
    model = make_model().eval()
    assert model.embed_scale == pytest.approx(math.sqrt(SMALL.d_model))
    src, _, pad = random_batch()
    seen: list[torch.Tensor] = []
    hook = model.encoder_layers[0].register_forward_pre_hook(lambda _, args: seen.append(args[0]))
    try:
        model.encode(src, pad)
    finally:
        hook.remove()
    d = SMALL.d_model
    position = torch.arange(src.size(1), dtype=torch.float32)[:, None]
    rate = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    table = torch.zeros(src.size(1), d)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * rate), torch.cos(position * rate)
    expected = model.src_embed.weight[src] * math.sqrt(d) + table
    assert torch.allclose(seen[0], expected, atol=1e-5)


def _paper_model(d_model: int, d_ff: int, heads: int) -> Transformer:
    config = ModelConfig(
        d_model=d_model,
        d_ff=d_ff,
        num_heads=heads,
        src_vocab_size=37000,
        tgt_vocab_size=37000,
        share_source_embedding=True,
    )
    with torch.device("meta"):
        return build_model(config)


def expected_parameters(vocab: int, d: int, d_ff: int, layers: int) -> int:
    """Count by hand: three-way-tied embedding, 4 biased projections per attention, FFN, norms."""
    attention = 4 * (d * d + d)
    ffn = d * d_ff + d_ff + d_ff * d + d
    norm = 2 * d
    encoder_layer = attention + ffn + 2 * norm
    decoder_layer = 2 * attention + ffn + 3 * norm
    return vocab * d + layers * (encoder_layer + decoder_layer)


def test_paper_parameter_counts() -> None:
    """Table 3: base 65M and big 213M with a joint vocabulary of ~37,000 tokens.

    The architecture of section 3 with tied embeddings gives exactly 63.08M for base (the paper
    rounds its own count up; it states no vocabulary size more precise than "about 37000") and
    214.2M for big.
    """
    base = count_parameters(_paper_model(512, 2048, 8))
    big = count_parameters(_paper_model(1024, 4096, 16))
    assert base == expected_parameters(37000, 512, 2048, 6) == 63_082_496
    assert big == expected_parameters(37000, 1024, 4096, 6) == 214_245_376
    assert abs(big - 213e6) <= 2e6
    assert abs(base - 65e6) / 65e6 < 0.03


def test_invalid_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        build_model(dataclasses.replace(SMALL, src_vocab_size=0))


def test_init_std_draws_every_matrix_from_one_normal() -> None:
    model = make_model(init_std=0.02, d_model=64, d_ff=256, src_vocab_size=400)
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            assert torch.count_nonzero(p) == 0, name
        elif p.dim() == 2:
            std = float(p.detach().std())
            assert abs(std - 0.02) < 0.003, (name, std)
    xavier = make_model(d_model=64, d_ff=256, src_vocab_size=400)
    # Xavier's std for a 64x64 block is sqrt(2 / 128) = 0.125: the default is left as it was.
    weight = cast(EncoderLayer, xavier.encoder_layers[0]).self_attn.out_proj.weight
    assert abs(float(weight.detach().std()) - 0.125) < 0.01


def test_negative_init_std_is_refused() -> None:
    from anuvad.config import ExperimentConfig
    from anuvad.errors import ConfigError

    config = ExperimentConfig(model=dataclasses.replace(SMALL, init_std=-0.1))
    with pytest.raises(ConfigError, match=r"model\.init_std"):
        config.validate()


def test_a_two_token_prefix_sees_no_future() -> None:
    """decode_step with several new positions at once masks their future (two is enough)."""
    model = make_model()
    src, tgt, pad = random_batch()
    full = model(src, tgt, pad)
    cache = model.init_cache(model.encode(src, pad))
    assert torch.allclose(model.decode_step(tgt[:, :2], cache, pad).logits, full[:, :2], atol=1e-5)


@pytest.mark.parametrize("norm_position", ["post", "pre"])
def test_every_decoder_layer_is_post_ln_unless_asked_otherwise(norm_position: str) -> None:
    """Post-LN: each decoder layer's output is layer-normalised (zero mean, unit variance per
    position at initialisation); pre-LN leaves the residual stream unnormalised."""
    model = make_model(norm_position=norm_position)
    src, tgt, pad = random_batch()
    outputs: list[torch.Tensor] = []
    hooks = [
        layer.register_forward_hook(lambda _, __, out: outputs.append(out[0]))
        for layer in model.decoder_layers
    ]
    try:
        model(src, tgt, pad)
    finally:
        for hook in hooks:
            hook.remove()
    assert len(outputs) == SMALL.num_decoder_layers
    for out in outputs:
        normalised = torch.allclose(out.mean(-1), torch.zeros(out.shape[:2]), atol=1e-5) and (
            torch.allclose(out.var(-1, unbiased=False), torch.ones(out.shape[:2]), atol=1e-3)
        )
        assert normalised == (norm_position == "post")


@torch.no_grad()
def test_initialisation_follows_the_stated_distributions() -> None:
    """Default: embeddings N(0, D^-0.5) (so that sqrt(D)-scaled embeddings have unit variance),
    zero biases; learned positions N(0, D^-0.5); init_std > 0: every matrix N(0, init_std)."""
    d = SMALL.d_model
    model = make_model(src_vocab_size=400, tgt_vocab_size=400, positional_encoding="learned")
    for embedding in (model.src_embed, model.tgt_embed):
        weight = embedding.weight
        assert abs(float(weight.mean())) < 0.01
        assert float(weight.std()) == pytest.approx(d**-0.5, rel=0.05)
    assert isinstance(model.positions, LearnedPositions)
    positions = model.positions.embedding.weight
    assert abs(float(positions.mean())) < 0.03
    assert float(positions.std()) == pytest.approx(d**-0.5, rel=0.1)
    assert all(
        float(m.bias.abs().max()) == 0.0 for m in model.modules() if isinstance(m, torch.nn.Linear)
    )
    small = make_model(src_vocab_size=400, tgt_vocab_size=400, init_std=0.02)
    weights = torch.cat(
        [m.weight.flatten() for m in small.modules() if isinstance(m, torch.nn.Linear)]
    )
    assert abs(float(weights.mean())) < 0.002
    assert float(weights.std()) == pytest.approx(0.02, rel=0.05)
    assert float(small.src_embed.weight.std()) == pytest.approx(0.02, rel=0.05)


def test_a_model_without_vocabulary_sizes_is_refused() -> None:
    for changes in ({"src_vocab_size": 0}, {"tgt_vocab_size": 0}):
        with pytest.raises(ValueError, match="anuvad prepare"):
            make_model(**changes)
