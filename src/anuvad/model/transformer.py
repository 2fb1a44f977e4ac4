"""The Transformer of "Attention Is All You Need" (Vaswani et al., 2017), read top-down.

Dimension legend (used in every shape comment):
    B  batch size                 S  source length            T  target length
    D  d_model                    H  attention heads          Dh head size = D / H (d_k = d_v)
    F  d_ff (feed-forward width)  V  vocabulary size          L  keys attended to (S or T)

Masks are boolean and **True marks a position that must not be attended to** everywhere:
``src_pad_mask`` (B, S) is True on source padding; ``tgt_mask`` (T, T) is True above the
diagonal (future positions). Attention itself runs on
``torch.nn.functional.scaled_dot_product_attention``; a slower explicit path returns the
attention probabilities for heatmaps.

The building blocks live in :mod:`anuvad.model.layers`; this module assembles them. No training,
optimiser, file or printing code here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from anuvad.config import ModelConfig
from anuvad.model.cache import DecoderCache, LayerCache
from anuvad.model.layers import (
    DecoderLayer,
    EncoderLayer,
    LearnedPositions,
    LinearProduct,
    SinusoidalPositions,
)

# --------------------------------------------------------------------------------------------
# The encoder-decoder model
# --------------------------------------------------------------------------------------------


@dataclass
class DecoderOutput:
    """What the decoder returns.

    Attributes:
        logits: (B, T, V) scores before the softmax.
        hidden: (B, T, D) final decoder states (for the cosine-similarity attention view).
        cross_attention: one (B, H, T, S) tensor per decoder layer, when asked for.
    """

    logits: Tensor
    hidden: Tensor
    cross_attention: list[Tensor] | None = None


class Transformer(nn.Module):
    """Encoder-decoder Transformer (section 3, Figure 1).

    Embeddings are multiplied by sqrt(D) and summed with positions, then dropped out
    (section 3.4, 5.4). The target embedding doubles as the pre-softmax projection; with a joint
    vocabulary the source embedding is the same matrix (three-way tying).
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        if config.src_vocab_size <= 0 or config.tgt_vocab_size <= 0:
            raise ValueError(
                "model.src_vocab_size and model.tgt_vocab_size must be set (anuvad prepare "
                "fills them in from the trained tokenizers)"
            )
        self.config = config
        d = config.d_model
        self.embed_scale = math.sqrt(d)
        self.tgt_embed = nn.Embedding(config.tgt_vocab_size, d)
        self.src_embed = (
            self.tgt_embed
            if config.share_source_embedding
            else nn.Embedding(config.src_vocab_size, d)
        )
        self.positions: SinusoidalPositions | LearnedPositions = (
            LearnedPositions(config.max_positions, d)
            if config.positional_encoding == "learned"
            else SinusoidalPositions(
                config.max_positions, d, fairseq=config.positional_encoding == "sinusoidal_fairseq"
            )
        )
        self.embed_dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(config) for _ in range(config.num_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(config) for _ in range(config.num_decoder_layers)
        )
        pre = config.norm_position == "pre"
        # Pre-LN stacks need a last LayerNorm; post-LN outputs are already normalised.
        self.encoder_norm = nn.LayerNorm(d, eps=config.layer_norm_eps) if pre else nn.Identity()
        self.decoder_norm = nn.LayerNorm(d, eps=config.layer_norm_eps) if pre else nn.Identity()
        self.output_proj: nn.Linear | None = (
            None if config.tie_output_embedding else nn.Linear(d, config.tgt_vocab_size, bias=False)
        )
        # Marian's final_logits_bias (imported models); the paper's output layer has none.
        self.output_bias: nn.Parameter | None = (
            nn.Parameter(torch.zeros(config.tgt_vocab_size)) if config.output_bias else None
        )
        self.output_product = LinearProduct()  # hidden states x output matrix (no parameters)
        self._reset_parameters()

    def restore_derived(self, device: torch.device) -> None:
        """Compute the buffers that are derived, not stored (the sinusoidal position table), on
        ``device``: for a network built on the meta device and given stored weights."""
        if isinstance(self.positions, SinusoidalPositions):
            self.positions.reset_table(device)

    def _reset_parameters(self) -> None:
        # Default: Xavier-uniform per projection matrix (the fused Q/K/V blocks one by one, as
        # if they were separate W_Q, W_K, W_V), zero biases, and embeddings N(0, D^-0.5) so that
        # the sqrt(D)-scaled embeddings have unit variance. With init_std > 0: N(0, init_std).
        d = self.config.d_model
        std = self.config.init_std
        if std > 0.0:
            for module in self.modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(module.weight, mean=0.0, std=std)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    nn.init.zeros_(module.bias)
            return
        for name, module in self.named_modules():
            if isinstance(module, nn.Linear):
                fused = name.endswith(("qkv_proj", "kv_proj"))
                blocks = torch.split(module.weight.data, d) if fused else (module.weight.data,)
                for block in blocks:
                    nn.init.xavier_uniform_(block)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        # dict.fromkeys: each distinct matrix once (tied ones are one), in a fixed order.
        for embedding in dict.fromkeys((self.src_embed, self.tgt_embed)):
            nn.init.normal_(embedding.weight, mean=0.0, std=d**-0.5)

    def _embed(self, embedding: nn.Embedding, ids: Tensor, offset: int = 0) -> Tensor:
        x = embedding(ids) * self.embed_scale  # (B, L, D)
        x = x + self.positions(ids.size(1), offset).to(x.dtype)  # (L, D) broadcast over B
        out: Tensor = self.embed_dropout(x)
        return out

    def encode(self, src_ids: Tensor, src_pad_mask: Tensor | None) -> Tensor:
        """Source ids (B, S) and padding mask (B, S) → memory (B, S, D)."""
        x = self._embed(self.src_embed, src_ids)
        for layer in self.encoder_layers:
            x = layer(x, src_pad_mask)
        out: Tensor = self.encoder_norm(x)
        return out

    def output_matrix(self) -> tuple[Tensor, Tensor | None]:
        """The output layer's weight (V, D) and bias (V,) (None: the paper's has none)."""
        if self.output_proj is not None:
            return self.output_proj.weight, self.output_bias
        return self.tgt_embed.weight, self.output_bias  # tied with the target embedding (3.4)

    def project(self, hidden: Tensor) -> Tensor:
        """Decoder states (..., D) → vocabulary logits (..., V)."""
        weight, bias = self.output_matrix()
        out: Tensor = self.output_product(hidden, weight, bias)
        return out

    def decode(
        self,
        tgt_ids: Tensor,
        memory: Tensor,
        src_pad_mask: Tensor | None,
        tgt_mask: Tensor | None = None,
        need_attention: bool = False,
    ) -> DecoderOutput:
        """Teacher-forced decoding of ``tgt_ids`` (B, T) against ``memory`` (B, S, D).

        ``tgt_mask`` (T, T), True above the diagonal, defaults to the causal mask.
        """
        hidden, attention = self.decode_states(
            tgt_ids, memory, src_pad_mask, tgt_mask, need_attention
        )
        return DecoderOutput(self.project(hidden), hidden, attention)

    def decode_states(
        self,
        tgt_ids: Tensor,
        memory: Tensor,
        src_pad_mask: Tensor | None,
        tgt_mask: Tensor | None = None,
        need_attention: bool = False,
    ) -> tuple[Tensor, list[Tensor] | None]:
        """:meth:`decode` without the output layer: the final decoder states (B, T, D) and,
        when asked for, the cross-attention (one (B, H, T, S) tensor per layer); a caller can
        then :meth:`project` only the positions it needs."""
        x = self._embed(self.tgt_embed, tgt_ids)
        attention: list[Tensor] = []
        for layer in self.decoder_layers:
            x, weights = layer(x, memory, src_pad_mask, tgt_mask, need_weights=need_attention)
            if weights is not None:
                attention.append(weights)
        return self.decoder_norm(x), attention if need_attention else None

    def forward(
        self,
        src_ids: Tensor,
        tgt_ids: Tensor,
        src_pad_mask: Tensor | None,
        tgt_mask: Tensor | None = None,
    ) -> Tensor:
        """Teacher-forced logits (B, T, V) for source (B, S) and shifted target (B, T) ids."""
        memory = self.encode(src_ids, src_pad_mask)
        return self.decode(tgt_ids, memory, src_pad_mask, tgt_mask).logits

    def init_cache(self, memory: Tensor, group: int = 1) -> DecoderCache:
        """An empty incremental-decoding cache, cross-attention keys/values precomputed.

        ``memory`` (B, S, D) has one row per sentence; ``group`` hypotheses are decoded per
        sentence (beam search: the beam size), as consecutive rows of the (B * group) decoder
        batch. They share their sentence's cross-attention keys and values (see
        :class:`~anuvad.model.cache.LayerCache`); ``decode_step`` then takes the (B, S) padding
        mask.
        """
        if group < 1:
            raise ValueError(f"group must be at least 1, got {group}")
        layers = []
        for layer in self.decoder_layers:
            assert isinstance(layer, DecoderLayer)
            cross_k, cross_v = layer.cross_attn.project_kv(memory)  # (B, H, S, Dh) each
            layers.append(LayerCache(cross_k=cross_k, cross_v=cross_v, group=group))
        return DecoderCache(layers)

    def decode_step(
        self,
        tgt_ids: Tensor,
        cache: DecoderCache,
        src_pad_mask: Tensor | None,
        need_attention: bool = False,
    ) -> DecoderOutput:
        """Decode the newest target positions given everything cached so far.

        Args:
            tgt_ids: (B, T_new) the token(s) at positions cache.length .. cache.length+T_new-1
                (usually T_new = 1).
            cache: from :meth:`init_cache`; updated in place.
            src_pad_mask: (B, S) True on source padding ((B / group, S) for a grouped cache);
                None when no sentence has padding.
            need_attention: also return cross-attention per layer.

        Returns:
            logits (B, T_new, V), hidden (B, T_new, D), optional cross-attention per layer.
        """
        start, new = cache.length, tgt_ids.size(1)
        x = self._embed(self.tgt_embed, tgt_ids, offset=start)
        # Several new positions at once (e.g. a forced prefix) must not see each other's future.
        step_mask = (
            torch.ones(new, start + new, dtype=torch.bool, device=tgt_ids.device).triu(start + 1)
            if new > 1
            else None
        )  # (T_new, start + T_new)
        attention: list[Tensor] = []
        for layer, layer_cache in zip(self.decoder_layers, cache.layers, strict=True):
            x, weights = layer(
                x, None, src_pad_mask, step_mask, cache=layer_cache, need_weights=need_attention
            )
            if weights is not None:
                attention.append(weights)
        cache.length += new
        hidden = self.decoder_norm(x)
        return DecoderOutput(self.project(hidden), hidden, attention if need_attention else None)


def causal_mask(length: int, device: torch.device | None = None) -> Tensor:
    """(T, T) boolean mask, True above the diagonal (the positions a query must not see)."""
    return torch.ones(length, length, dtype=torch.bool, device=device).triu(1)


def build_model(config: ModelConfig) -> Transformer:
    """Build the Transformer described by ``config`` (every size comes from it)."""
    return Transformer(config)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters, each shared matrix counted once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
