"""Does the encoder still tell the words of a sentence apart? Per-layer spread of its states.

For each model file or training checkpoint given, encodes the first ``--sentences`` lines of a
source file and prints, after the embedding and after every encoder layer, the mean distance
of a token's state from its sentence's mean state ("spread"; 0 = every position carries the
same vector, so the decoder cannot learn anything from the source). A healthy encoder keeps
it near its embedding's; a collapsed one shrinks it by an order of magnitude a layer::

    .venv/bin/python bench/encoder_spread.py runs/ptb_parsing_cpu/checkpoints/step_*.pt \
        --source data/prepared/ptb_parsing_cpu/valid.src.txt

Found with it (docs/benchmark-history.md, parsing): the 4-layer parsing models trained at a peak
learning rate of 2.2e-3 collapse their encoder within ~400 updates and then write the same
tree for every sentence.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from anuvad.checkpoint import load_model
from anuvad.config import config_from_dict
from anuvad.data.tokenizer import EOS_ID, Tokenizer
from anuvad.errors import CheckpointError
from anuvad.model.transformer import Transformer, build_model
from anuvad.training.state import load_training_state


def load_any(path: Path) -> tuple[Transformer, Tokenizer]:
    """A model file (``model.pt``) or a training checkpoint (``checkpoints/step_*.pt``)."""
    try:
        model_file = load_model(path)
        return model_file.model, model_file.src_tokenizer
    except CheckpointError:  # not a model file: read it as a training checkpoint
        state = load_training_state(path)
        model = build_model(config_from_dict(state.config).model)
        model.load_state_dict(state.model)
        return model.eval(), Tokenizer(state.tokenizers["src"])


@torch.inference_mode()
def spreads(model: Transformer, tokenizer: Tokenizer, sentences: list[str]) -> list[float]:
    """Mean spread after the embedding and after each encoder layer, over ``sentences``."""
    totals = [0.0] * (len(model.encoder_layers) + 1)
    for sentence in sentences:
        ids = torch.tensor([[*tokenizer.encode(sentence), EOS_ID]])  # (1, S)
        x = model._embed(model.src_embed, ids)  # (1, S, D)
        for i in range(len(totals)):
            if i > 0:
                x = model.encoder_layers[i - 1](x, None)
            states = x[0]  # (S, D)
            totals[i] += (states - states.mean(0)).norm(dim=-1).mean().item()
    return [t / len(sentences) for t in totals]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", type=Path, help="model files or checkpoints")
    parser.add_argument("--source", type=Path, required=True, help="source sentences, one a line")
    parser.add_argument("--sentences", type=int, default=20)
    args = parser.parse_args()
    lines = args.source.read_text(encoding="utf-8").splitlines()
    sentences = [line for line in lines if line.strip()][: args.sentences]
    for path in args.models:
        model, tokenizer = load_any(path)
        values = spreads(model.eval(), tokenizer, sentences)
        layers = " ".join(f"{v:8.4f}" for v in values)
        print(f"{path}: embedding, layer 1..{len(values) - 1}: {layers}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
