"""Training throughput of anuvad's Transformer against torch.nn.Transformer and Hugging Face Marian.

Measures target tokens per second of one full training step — forward, label-smoothed loss
(anuvad's fused :func:`anuvad.training.loss.label_smoothed_loss` for anuvad, PyTorch's
``F.cross_entropy(label_smoothing=0.1)`` for the others: the same formula, checked equal in
tests/unit/training/test_loss_optim.py) divided by the target-token count, backward, and an Adam
update from :func:`anuvad.training.optim.build_optimizer` with the paper's learning-rate schedule —
for three implementations of the same post-LN encoder-decoder Transformer (tied three-way embeddings
scaled by sqrt(D), sinusoidal positions, ReLU FFN, dropout on embeddings and sub-layer outputs):

* ``anuvad``: ``anuvad.model.transformer.build_model(ModelConfig(...))``;
* ``torch``: ``torch.nn.Transformer`` (post-LN, batch_first) plus embeddings, positions and a tied
  output layer; attention and FFN-activation dropout set to 0 as in anuvad and Marian;
* ``marian``: ``transformers.MarianMTModel(MarianConfig(...))``, logits fed to the same loss.

Every implementation trains on the same random batches (fixed seed, no padding) in its own fresh
subprocess, so allocators do not interfere and peak RSS (``resource.getrusage``) is per model.
Parameter counts are reported so that equal size can be checked; ``--check-loss N`` also trains
each model N steps on one copy-task batch and prints the loss at step 1 and step N.

Run from the repository root (bf16 is only sensible on CPUs with AVX-512-BF16 / AMX)::

    .venv/bin/python bench/train_throughput.py --precision fp32 --steps 10 --markdown
    .venv/bin/python bench/train_throughput.py --steps 2 --warmup 1 --d-model 64 --layers 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from anuvad.config import ModelConfig, TrainConfig
from anuvad.data.batching import Batch, collate
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID, SPECIAL_IDS
from anuvad.model.layers import sinusoidal_table
from anuvad.model.transformer import build_model, causal_mask, count_parameters
from anuvad.training.loss import label_smoothed_loss
from anuvad.training.optim import build_optimizer, noam_learning_rate, set_learning_rate

IMPLEMENTATIONS = ("anuvad", "torch", "marian")
LABEL_SMOOTHING = TrainConfig().label_smoothing  # 0.1, section 5.4


class TorchTransformer(nn.Module):
    """``torch.nn.Transformer`` with anuvad's embeddings, positions, output tying and init."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        d = config.d_model
        self.embed = nn.Embedding(config.tgt_vocab_size, d)  # joint vocabulary, three-way tied
        nn.init.normal_(self.embed.weight, mean=0.0, std=d**-0.5)
        self.embed_scale = math.sqrt(d)
        table = sinusoidal_table(config.max_positions, d)  # (P, D)
        self.register_buffer("positions", table, persistent=False)
        self.embed_dropout = nn.Dropout(config.dropout)
        # (d_model, nhead, encoder layers, decoder layers, dim_feedforward, dropout, activation)
        self.transformer = nn.Transformer(
            d, config.num_heads, config.num_encoder_layers, config.num_decoder_layers,
            config.d_ff, config.dropout, "relu", layer_norm_eps=config.layer_norm_eps,
            batch_first=True, norm_first=False,
        )  # fmt: skip
        # nn.Transformer's one `dropout` also drops attention probabilities and FFN activations;
        # anuvad (paper, section 5.4) and Marian do neither, so give them anuvad's values.
        for module in self.transformer.modules():
            if isinstance(module, nn.MultiheadAttention):
                module.dropout = config.attention_dropout
            if isinstance(module, nn.TransformerEncoderLayer | nn.TransformerDecoderLayer):
                module.dropout.p = config.activation_dropout

    def _embed(self, ids: Tensor) -> Tensor:
        positions = self.get_buffer("positions")[: ids.size(1)]  # (L, D)
        out: Tensor = self.embed_dropout(self.embed(ids) * self.embed_scale + positions)
        return out  # (B, L, D)

    def forward(self, src_ids: Tensor, tgt_in_ids: Tensor, src_pad_mask: Tensor) -> Tensor:
        """(B, S), (B, T), (B, S) True on padding → logits (B, T, V)."""
        tgt_mask = causal_mask(tgt_in_ids.size(1), tgt_in_ids.device)  # (T, T) True = blocked
        hidden = self.transformer(
            self._embed(src_ids),
            self._embed(tgt_in_ids),
            tgt_mask=tgt_mask,
            src_key_padding_mask=src_pad_mask,
            memory_key_padding_mask=src_pad_mask,
            tgt_is_causal=True,
        )  # (B, T, D)
        return F.linear(hidden, self.embed.weight)


class MarianTransformer(nn.Module):
    """``transformers.MarianMTModel`` built from anuvad's sizes, called like anuvad's model."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        from transformers import MarianConfig, MarianMTModel

        d, h, f, v = config.d_model, config.num_heads, config.d_ff, config.tgt_vocab_size
        encoder_layers, decoder_layers = config.num_encoder_layers, config.num_decoder_layers
        # attn_implementation is a PreTrainedConfig keyword the dataclass stub does not list.
        marian_config = MarianConfig(  # type: ignore[call-arg, unused-ignore]
            vocab_size=v, decoder_vocab_size=v, d_model=d,
            max_position_embeddings=config.max_positions,  # static sinusoidal table, frozen
            encoder_layers=encoder_layers, encoder_attention_heads=h, encoder_ffn_dim=f,
            decoder_layers=decoder_layers, decoder_attention_heads=h, decoder_ffn_dim=f,
            activation_function="relu", scale_embedding=True, attn_implementation="sdpa",
            dropout=config.dropout, attention_dropout=config.attention_dropout,
            activation_dropout=config.activation_dropout,
            share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
            pad_token_id=PAD_ID, eos_token_id=EOS_ID, forced_eos_token_id=EOS_ID,
            decoder_start_token_id=BOS_ID,
        )  # fmt: skip
        self.marian = MarianMTModel(marian_config)

    def forward(self, src_ids: Tensor, tgt_in_ids: Tensor, src_pad_mask: Tensor) -> Tensor:
        """(B, S), (B, T), (B, S) True on padding → logits (B, T, V)."""
        out = self.marian(
            input_ids=src_ids,
            attention_mask=(~src_pad_mask).long(),  # HF: 1 = attend
            decoder_input_ids=tgt_in_ids,
            use_cache=False,  # training: no key/value cache
        )
        logits: Tensor = out.logits
        return logits


def model_config(args: argparse.Namespace) -> ModelConfig:
    """The shared model shape (joint vocabulary: source, target and output embeddings tied)."""
    layers, vocab = args.layers, args.vocab
    return ModelConfig(
        d_model=args.d_model, num_heads=args.heads, d_ff=args.d_ff or 4 * args.d_model,
        num_encoder_layers=layers, num_decoder_layers=layers, dropout=args.dropout,
        max_positions=max(1024, args.sentence_len), src_vocab_size=vocab, tgt_vocab_size=vocab,
        share_source_embedding=True,
    )  # fmt: skip


def build(name: str, config: ModelConfig) -> tuple[nn.Module, list[str]]:
    """The named implementation and notes on where it differs from anuvad's model."""
    if name == "anuvad":
        return build_model(config), []
    if name == "torch":
        return TorchTransformer(config), [
            "nn.Transformer adds a final LayerNorm to encoder and decoder (4*D params)",
            f"LayerNorm eps {config.layer_norm_eps} as anuvad; xavier init from nn.Transformer",
        ]
    return MarianTransformer(config), [
        "final_logits_bias: a (1, V) zero buffer added to the logits (not trained)",
        "frozen sinusoidal position tables (2 x P x D) not counted as parameters",
        "LayerNorm eps 1e-5 (anuvad 1e-6); N(0, 0.02) init; SDPA attention",
        "no padding in the batches, so HF may drop the attention masks (anuvad always passes one)",
    ]


def make_batches(args: argparse.Namespace, count: int, copy_task: bool = False) -> list[Batch]:
    """``count`` batches of random ids; each row has ``sentence_len`` source and target positions.

    ``collate`` adds EOS to the source and BOS / EOS to the target, so sentences hold
    ``sentence_len - 1`` tokens. ``copy_task`` makes the target equal the source (learnable).
    """
    generator = torch.Generator().manual_seed(args.seed)
    rows, width = args.batch_tokens // args.sentence_len, args.sentence_len - 1
    batches = []
    for _ in range(count):
        shape = (rows, width)
        src = torch.randint(len(SPECIAL_IDS), args.vocab, shape, generator=generator).tolist()
        other = torch.randint(len(SPECIAL_IDS), args.vocab, shape, generator=generator).tolist()
        tgt = src if copy_task else other
        batches.append(collate(src, tgt, range(rows)))
    return batches


def reference_loss(logits: Tensor, target_ids: Tensor) -> Tensor:
    """The label-smoothed loss as PyTorch and Hugging Face users write it (summed, float32)."""
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)).float(),  # (B*T, V)
        target_ids.reshape(-1),
        ignore_index=PAD_ID,
        label_smoothing=LABEL_SMOOTHING,
        reduction="sum",
    )


def train_step(
    model: nn.Module, optimizer: torch.optim.Optimizer, batch: Batch, lr: float, bf16: bool
) -> float:
    """One update as ``anuvad.training.trainer.Trainer.train_step`` makes it; returns the loss per
    token.

    As in the trainer, only the forward pass runs under autocast; the loss is taken in float32:
    anuvad's fused :func:`anuvad.training.loss.label_smoothed_loss` for anuvad, ``F.cross_entropy``
    with ``label_smoothing`` (the same formula) for the others.
    """
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(batch.src_ids, batch.tgt_in_ids, batch.src_pad_mask)  # (B, T, V)
    if isinstance(model, TorchTransformer | MarianTransformer):
        loss = reference_loss(logits, batch.tgt_out_ids)
    else:
        loss = label_smoothed_loss(logits, batch.tgt_out_ids, LABEL_SMOOTHING)
    num_tokens = batch.num_tgt_tokens
    (loss / num_tokens).backward()  # type: ignore[no-untyped-call]
    set_learning_rate(optimizer, lr)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss) / num_tokens


def peak_rss_mib() -> float:
    """This process' peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def train(
    name: str, args: argparse.Namespace, batches: list[Batch], steps: int, warmup: int
) -> tuple[nn.Module, list[str], list[float], list[float]]:
    """Build a fresh model (seeded) and train ``steps`` steps; return losses and step times."""
    torch.manual_seed(args.seed)
    config = model_config(args)
    model, notes = build(name, config)
    model.train()
    train_config = TrainConfig(warmup_steps=warmup)
    optimizer = build_optimizer(model, train_config)
    losses, seconds = [], []
    for step in range(1, steps + 1):
        lr = noam_learning_rate(step, config.d_model, train_config.warmup_steps)
        started = time.perf_counter()
        batch = batches[(step - 1) % len(batches)]
        losses.append(train_step(model, optimizer, batch, lr, args.precision == "bf16"))
        seconds.append(time.perf_counter() - started)
    return model, notes, losses, seconds


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    """Benchmark one implementation at one precision (inside its own subprocess)."""
    torch.set_num_threads(args.threads)
    if args.worker == "marian":
        import transformers  # imported before the baseline so that RSS deltas exclude it

        version = transformers.__version__
    else:
        version = torch.__version__
    baseline = peak_rss_mib()
    steps = args.warmup + args.steps
    batches = make_batches(args, steps)
    model, notes, losses, seconds = train(args.worker, args, batches, steps, warmup=4000)
    timed = seconds[args.warmup :]
    tokens = batches[0].num_tgt_tokens
    result: dict[str, Any] = {
        "implementation": args.worker,
        "precision": args.precision,
        "version": version,
        "tokens_per_step": tokens,
        "tokens_per_s": tokens * len(timed) / sum(timed),
        "median_step_ms": 1000 * statistics.median(timed),
        "parameters": count_parameters(model),
        "frozen_parameters": sum(p.numel() for p in model.parameters() if not p.requires_grad),
        "rss_after_imports_mib": baseline,
        "peak_rss_mib": peak_rss_mib(),
        "loss_first": losses[0],
        "loss_last": losses[-1],
        "notes": notes,
    }
    if args.check_loss > 0:
        copy_batch = make_batches(args, 1, copy_task=True)
        _, _, check, _ = train(args.worker, args, copy_batch, args.check_loss, args.check_loss)
        result["check_loss"] = [check[0], check[-1]]
    return result


def run_all(args: argparse.Namespace, argv: list[str]) -> list[dict[str, Any]]:
    """Fresh subprocesses per precision: ``--repeats`` rounds over the implementations.

    Each round rotates the order, so a background load drifting over time does not always hit
    the same implementation; the fastest round of each is kept (all rounds go to the JSON). A
    worker gets this command line plus ``--precision P --worker NAME`` (the last one counts).
    """
    precisions = ["fp32", "bf16"] if args.precision == "both" else [args.precision]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1"}
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for precision in precisions:
        for round_index in range(args.repeats):
            shift = round_index % len(args.only)
            for name in args.only[shift:] + args.only[:shift]:
                command = [sys.executable, __file__, *argv, "--precision", precision]
                proc = subprocess.run(
                    [*command, "--worker", name], capture_output=True, text=True, env=env
                )
                if proc.returncode != 0:
                    sys.exit(f"{name} ({precision}) failed:\n{proc.stderr}")
                run = json.loads(proc.stdout.strip().splitlines()[-1])
                print(f"{name} {precision}: {run['tokens_per_s']:,.0f} tok/s", file=sys.stderr)
                runs.setdefault((name, precision), []).append(run)
    best = [max(rs, key=lambda r: r["tokens_per_s"]) for rs in runs.values()]  # round 0 order
    for kept, rs in zip(best, runs.values(), strict=True):
        kept["all_tokens_per_s"] = [r["tokens_per_s"] for r in rs]
    return best


def table_row(r: dict[str, Any], marian_tps: float | None, anuvad_params: int | None) -> list[str]:
    """One table row: throughput, ratio to Marian, size and its difference, memory, losses."""
    params, delta = r["parameters"], r["parameters"] - (anuvad_params or r["parameters"])
    return [
        r["implementation"],
        r["precision"],
        f"{r['tokens_per_s']:,.0f}",
        f"{r['tokens_per_s'] / marian_tps:.2f}x" if marian_tps else "-",
        f"{r['median_step_ms']:,.0f}",
        f"{params:,}",
        f"{delta:+,} ({100 * delta / anuvad_params:+.2f}%)" if anuvad_params else "-",
        f"{r['peak_rss_mib']:,.0f}",
        f"{r['peak_rss_mib'] - r['rss_after_imports_mib']:,.0f}",
        f"{r['loss_first']:.3f} → {r['loss_last']:.3f}",
    ]


def format_load(load: Sequence[float]) -> str:
    """``os.getloadavg()`` as three numbers."""
    return " ".join(f"{x:.2f}" for x in load)


def report(results: list[dict[str, Any]], args: argparse.Namespace, load: list[float]) -> None:
    """Print the settings, a table (markdown with ``--markdown``), the notes and loss checks."""
    header = ["impl", "prec", "tgt tok/s", "vs Marian", "median ms/step", "params"]
    header += ["Δ vs anuvad", "peak RSS MiB", "RSS − imports MiB", "loss step 1 → last"]
    by_key = {(r["implementation"], r["precision"]): r for r in results}
    anuvad = by_key.get(("anuvad", results[0]["precision"]), {}).get("parameters")
    rows = [
        table_row(r, by_key.get(("marian", r["precision"]), {}).get("tokens_per_s"), anuvad)
        for r in results
    ]
    sizes = f"D={args.d_model} H={args.heads} F={args.d_ff or 4 * args.d_model}"
    print(
        f"{sizes} layers={args.layers}+{args.layers} V={args.vocab}; batch "
        f"{args.batch_tokens // args.sentence_len} x {args.sentence_len} positions per side; "
        f"{args.steps} timed + {args.warmup} warm-up steps, best of {args.repeats} round(s); "
        f"{args.threads} threads; torch {torch.__version__}; load average (1/5/15 min) before "
        f"{format_load(load)}, after {format_load(os.getloadavg())}"
    )
    if args.markdown:
        for row in [header, ["---"] * len(header), *rows]:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]
        for row in [header, *rows]:
            print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    for r in results:
        if r["precision"] != results[0]["precision"]:
            continue
        facts = [f"version {r['version']}", f"frozen params {r['frozen_parameters']:,}"]
        print(f"- {r['implementation']}: " + "; ".join(facts + r["notes"]))
        if "check_loss" in r:
            first, last = r["check_loss"]
            print(f"  copy-task check: loss {first:.3f} at step 1, {last:.3f} at {args.check_loss}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--precision", choices=["fp32", "bf16", "both"], default="fp32")
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--d-ff", type=int, default=0, help="0 = 4 x d_model")
    p.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    p.add_argument("--vocab", type=int, default=8000, help="joint vocabulary size")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--batch-tokens", type=int, default=4096, help="target tokens per batch")
    p.add_argument("--sentence-len", type=int, default=32, help="positions per sentence")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=1, help="rounds per implementation; best kept")
    p.add_argument("--only", default=",".join(IMPLEMENTATIONS), help="comma-separated subset")
    p.add_argument("--check-loss", type=int, default=0, metavar="N", help="copy-task loss check")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    p.add_argument("--worker", choices=IMPLEMENTATIONS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(args.only) - set(IMPLEMENTATIONS))
    if unknown or min(args.steps, args.repeats) < 1:
        p.error(f"--only takes {IMPLEMENTATIONS} (got {unknown}); --steps, --repeats >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    """Run every requested implementation in its own subprocess and report."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args)))
        return
    load_before = list(os.getloadavg())
    results = run_all(args, argv)
    report(results, args, load_before)
    if args.json:
        settings = {k: str(v) for k, v in vars(args).items()}
        loads = {"load_average_before": load_before, "load_average_after": os.getloadavg()}
        payload = {"args": settings, "results": results, **loads}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
