"""Configuration: dataclasses mirrored one-to-one by the YAML files in ``configs/``.

A config is loaded with :func:`load_config`, changed with ``a.b=c`` overrides
(:func:`apply_overrides`), checked by :meth:`ExperimentConfig.validate` and saved, resolved, with
:func:`save_config` and inside every model file. Unknown keys are errors, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from anuvad.atomic import write_atomic
from anuvad.data_config import (
    DATA_ENV_VAR,
    CleaningConfig,
    CorpusConfig,
    DataConfig,
    TokenizerConfig,
)
from anuvad.dataclass_io import apply_overrides, from_plain
from anuvad.decode_config import DecodeConfig
from anuvad.errors import ConfigError

# sacreBLEU's tokenizer names (what train.bleu_tokenize and `anuvad evaluate --tokenize` take).
BLEU_TOKENIZERS = (
    "13a", "intl", "none", "char", "zh", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200",
    "spBLEU-1K",
)  # fmt: skip

__all__ = [
    "ACTIVATIONS",
    "BLEU_TOKENIZERS",
    "DATA_ENV_VAR",
    "POSITIONAL_ENCODINGS",
    "CleaningConfig",
    "CorpusConfig",
    "DataConfig",
    "ExperimentConfig",
    "ModelConfig",
    "TokenizerConfig",
    "TrainConfig",
    "apply_overrides",
    "config_from_dict",
    "config_to_dict",
    "load_config",
    "save_config",
]


ACTIVATIONS = ("relu", "swish", "gelu")
POSITIONAL_ENCODINGS = ("sinusoidal", "learned", "sinusoidal_fairseq")


@dataclass
class ModelConfig:
    """The Transformer's shape (the paper's Table 3 columns) and its few architectural options."""

    d_model: int = 512
    num_heads: int = 8
    d_ff: int = 2048
    num_encoder_layers: int = 6
    num_decoder_layers: int = 6
    # P_drop of section 5.4: on every sub-layer output and on the embedding + position sums.
    dropout: float = 0.1
    # Not in the paper (0.0 = paper); dropout on attention probabilities and inside the FFN.
    attention_dropout: float = 0.0
    activation_dropout: float = 0.0
    # "sinusoidal" (section 3.5), "learned" (Table 3, row E) or "sinusoidal_fairseq" (fairseq's
    # table, which imported M2M100 / NLLB models need: every sine, then every cosine, with
    # frequencies 10000^(-i/(D/2-1)), position i of a sequence reading row i + 2).
    positional_encoding: str = "sinusoidal"
    max_positions: int = 1024
    # "post" = LayerNorm(x + Dropout(Sublayer(x))) as in the paper; "pre" is the common variant.
    norm_position: str = "post"
    # The feed-forward network's non-linearity: "relu" (section 3.3), "swish" (SiLU, as in
    # Marian / OPUS-MT models) or "gelu".
    activation: str = "relu"
    layer_norm_eps: float = 1e-6
    # Vocabulary sizes; 0 means "fill in from the trained tokenizers" (anuvad prepare does it).
    src_vocab_size: int = 0
    tgt_vocab_size: int = 0
    # Section 3.4: the target embedding is tied to the pre-softmax projection; with a joint
    # vocabulary the source embedding shares the same matrix (three-way tying).
    tie_output_embedding: bool = True
    share_source_embedding: bool = False
    # A learned bias on the output logits (Marian's final_logits_bias); the paper has none.
    output_bias: bool = False
    # 0.0: Xavier-uniform projections and N(0, d_model^-0.5) embeddings (fairseq's choice).
    # > 0: every projection and embedding N(0, init_std) (BERT / Hugging Face Marian use 0.02):
    # small residual branches make a post-LN model leave its early plateau sooner.
    init_std: float = 0.0


@dataclass
class TrainConfig:
    """Optimisation (sections 5.3-5.4), training length, checkpoints and logging."""

    seed: int = 1
    # Continued training (fine-tuning): a model file whose weights start the run and whose
    # tokenizers encode the data (data.tokenizer is then unused). Optimizer, learning-rate
    # schedule and step count start afresh; the model's architecture must match. "" = random init.
    init_from: str = ""
    # Another depth from the same file: which of its layers starts each of the run's layers, e.g.
    # a 6 + 2 student from a 3 + 3 model with init_encoder_layers=[0, 1, 2, 0, 1, 2] (stacking,
    # Gong et al. 2019) and init_decoder_layers=[0, 2] (DistilBERT's every other layer). One entry
    # per layer of the run, each an index into the file's layers; [] = layer i from layer i.
    init_encoder_layers: list[int] = field(default_factory=list)
    init_decoder_layers: list[int] = field(default_factory=list)
    max_steps: int = 100_000  # optimizer updates (base 100k, big 300k); 0 = no step limit
    max_epochs: int = 0  # 0 = no epoch limit
    max_minutes: float = 0.0  # wall-clock limit; 0 = none
    # lr = lr_scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)  (equation 3)
    lr_scale: float = 1.0
    warmup_steps: int = 4000
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_eps: float = 1e-9
    weight_decay: float = 0.0
    label_smoothing: float = 0.1
    # Subword regularisation: every epoch re-encodes the training text with SentencePiece
    # sampling (BPE-dropout with this drop probability for bpe vocabularies, Provilkov et al.
    # 2020; the unigram model's smoothing alpha, Kudo 2018), seeded by (seed, epoch) so that a
    # resumed run sees the same pieces. 0 = the fixed encoding of `anuvad prepare`.
    subword_sampling: float = 0.0
    accumulate: int = 1  # gradient accumulation: batches per optimizer update
    clip_norm: float = 0.0  # 0 = no gradient-norm clipping
    # "fp32", "bf16" (CPU and GPU), "fp16" (GPU, with a grad scaler) or "auto": bf16 where the
    # hardware has it (CUDA with bf16, CPUs with AVX-512-BF16 or AMX), else fp32.
    precision: str = "fp32"
    device: str = "auto"  # "auto", "cpu", "cuda", "cuda:1", ...
    num_threads: int = 0  # intra-op CPU threads; 0 = PyTorch's default
    log_every: int = 50
    valid_every: int = 1000  # steps; 0 = only at the end
    save_every: int = 1000  # steps; 0 = only at the end
    save_every_minutes: float = 0.0
    keep_last: int = 5
    average_last: int = 5  # checkpoints averaged into the final model (5 base, 20 big)
    early_stop_patience: int = 0  # validations without improvement; 0 = off
    early_stop_metric: str = "bleu"  # also picks model_best.pt: bleu, chrf, loss or ppl
    valid_bleu_max_sentences: int = 500  # dev sentences translated for BLEU (0 = all)
    # sacreBLEU tokenizer: "13a" (its default) or "intl" for Hindi (splits the danda).
    bleu_tokenize: str = "13a"


@dataclass
class ExperimentConfig:
    """Everything one training run needs; saved, resolved, inside every model file."""

    name: str = "experiment"
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)

    def validate(self, training: bool = True) -> None:
        """Check every value; report all problems at once.

        Args:
            training: also the values only training reads (Adam's, the device), which a model
                file written before they were checked may hold out of range (False: loading).

        Raises:
            ConfigError: listing each invalid field, what it holds and what is allowed.
        """
        problems: list[str] = []
        m = self.model

        def need(ok: bool, message: str) -> None:
            if not ok:
                problems.append(message)

        need(m.d_model > 0, f"model.d_model must be positive, got {m.d_model}")
        need(m.num_heads > 0, f"model.num_heads must be positive, got {m.num_heads}")
        need(
            m.num_heads > 0 and m.d_model % m.num_heads == 0,
            f"model.d_model ({m.d_model}) must be divisible by model.num_heads ({m.num_heads})",
        )
        need(m.d_ff > 0, f"model.d_ff must be positive, got {m.d_ff}")
        need(m.num_encoder_layers >= 1, "model.num_encoder_layers must be at least 1")
        need(m.num_decoder_layers >= 1, "model.num_decoder_layers must be at least 1")
        for name in ("dropout", "attention_dropout", "activation_dropout"):
            value = getattr(m, name)
            need(0.0 <= value < 1.0, f"model.{name} must be in [0, 1), got {value}")
        need(
            0.0 <= m.init_std < 1.0,
            f"model.init_std must be 0 (Xavier) or a small standard deviation such as 0.02, "
            f"got {m.init_std}",
        )
        need(
            m.positional_encoding in POSITIONAL_ENCODINGS,
            f"model.positional_encoding must be one of {', '.join(POSITIONAL_ENCODINGS)}, "
            f"got {m.positional_encoding!r}",
        )
        need(
            m.activation in ACTIVATIONS,
            f"model.activation must be one of {', '.join(ACTIVATIONS)}, got {m.activation!r}",
        )
        need(
            m.norm_position in ("post", "pre"),
            f"model.norm_position must be 'post' or 'pre', got {m.norm_position!r}",
        )
        need(m.max_positions > 0, "model.max_positions must be positive")
        need(m.src_vocab_size >= 0, "model.src_vocab_size must be >= 0")
        need(m.tgt_vocab_size >= 0, "model.tgt_vocab_size must be >= 0")
        if m.share_source_embedding:
            need(
                m.src_vocab_size == m.tgt_vocab_size,
                f"model.share_source_embedding needs one joint vocabulary, but "
                f"src_vocab_size={m.src_vocab_size} and tgt_vocab_size={m.tgt_vocab_size}",
            )

        problems.extend(self.data.problems())

        tr = self.train
        for side, layer_map, count in (
            ("encoder", tr.init_encoder_layers, m.num_encoder_layers),
            ("decoder", tr.init_decoder_layers, m.num_decoder_layers),
        ):
            if layer_map:
                need(
                    bool(tr.init_from),
                    f"train.init_{side}_layers needs train.init_from (the file its layers come "
                    "from)",
                )
                need(
                    len(layer_map) == count and all(i >= 0 for i in layer_map),
                    f"train.init_{side}_layers needs one layer index (>= 0) per layer of the run: "
                    f"model.num_{side}_layers is {count}, got {layer_map}",
                )
        if training:  # what only training reads: a model file may hold it out of range
            for name in ("adam_beta1", "adam_beta2"):
                value = getattr(tr, name)
                need(
                    0.0 <= value < 1.0,
                    f"train.{name} must be in [0, 1) (the paper: 0.9, 0.98), got {value}",
                )
            need(
                tr.adam_eps > 0,
                f"train.adam_eps must be positive (the paper: 1e-9), got {tr.adam_eps}",
            )
            need(tr.weight_decay >= 0, f"train.weight_decay must be >= 0, got {tr.weight_decay}")
            need(
                re.fullmatch(r"auto|cpu|cuda(:\d+)?", tr.device) is not None,
                f"train.device must be auto, cpu, cuda or cuda:N, got {tr.device!r}",
            )
        need(tr.warmup_steps > 0, "train.warmup_steps must be positive")
        need(tr.lr_scale > 0, "train.lr_scale must be positive")
        need(0.0 <= tr.label_smoothing < 1.0, "train.label_smoothing must be in [0, 1)")
        need(tr.accumulate >= 1, "train.accumulate must be at least 1")
        need(tr.log_every >= 1, f"train.log_every must be at least 1, got {tr.log_every}")
        need(
            0.0 <= tr.subword_sampling < 1.0,
            f"train.subword_sampling must be in [0, 1) (0.1 is BPE-dropout's usual value), "
            f"got {tr.subword_sampling}",
        )
        need(
            tr.precision in ("fp32", "bf16", "fp16", "auto"),
            f"train.precision must be fp32, bf16, fp16 or auto, got {tr.precision!r}",
        )
        need(
            tr.max_steps > 0 or tr.max_epochs > 0 or tr.max_minutes > 0,
            "set at least one of train.max_steps, train.max_epochs, train.max_minutes",
        )
        need(tr.keep_last >= 1, "train.keep_last must be at least 1")
        need(tr.average_last >= 1, "train.average_last must be at least 1")
        need(
            tr.early_stop_metric in ("bleu", "chrf", "loss", "ppl"),
            f"train.early_stop_metric must be bleu, chrf, loss or ppl, got "
            f"{tr.early_stop_metric!r}",
        )
        need(
            tr.bleu_tokenize in BLEU_TOKENIZERS,
            f"train.bleu_tokenize must be one of {', '.join(BLEU_TOKENIZERS)}, got "
            f"{tr.bleu_tokenize!r}",
        )

        problems.extend(self.decode.problems())
        if problems:
            raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))


def config_from_dict(data: dict[str, Any]) -> ExperimentConfig:
    """Build an :class:`ExperimentConfig` from plain data (e.g. parsed YAML).

    Raises:
        ConfigError: on an unknown key or a value of the wrong type.
    """
    return from_plain(ExperimentConfig, data, "")


def config_to_dict(config: ExperimentConfig) -> dict[str, Any]:
    """Plain nested dicts/lists/scalars, safe for YAML and for ``torch.load(weights_only=True)``."""
    return dataclasses.asdict(config)


def load_config(path: str | Path, overrides: list[str] | None = None) -> ExperimentConfig:
    """Read a YAML config, apply overrides, validate.

    Args:
        path: a YAML file mirroring :class:`ExperimentConfig`.
        overrides: ``key.sub=value`` strings applied after reading.

    Raises:
        ConfigError: the file is missing or malformed, or a value is invalid.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist (presets live in configs/)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}: line {line} is not valid UTF-8; save the file as UTF-8 "
            f"(e.g. iconv -f latin1 -t utf-8)"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    apply_overrides(data, overrides or [])
    try:
        config = config_from_dict(data)
        config.validate()
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return config


def save_config(config: ExperimentConfig, path: str | Path) -> None:
    """Write the resolved config as YAML (atomically: a kill never leaves half a file)."""
    text = yaml.safe_dump(config_to_dict(config), sort_keys=False, allow_unicode=True)
    write_atomic(Path(path), text.encode("utf-8"))
