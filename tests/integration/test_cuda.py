"""The GPU paths: training in fp32 / bf16 / fp16 (grad scaler) on CUDA, model files moving
between devices, cached decoding on the GPU. Skipped where there is no CUDA device."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model
from anuvad.config import load_config
from anuvad.data.batching import collate_source
from anuvad.data.prepare import prepare_data
from anuvad.data.synthetic import reversal_config, reversal_pairs
from anuvad.inference.translator import Translator
from anuvad.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)"
)


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
def test_training_on_cuda_in_every_precision(tmp_path: Path, precision: str) -> None:
    overrides = [
        "train.max_steps=300",
        "train.max_minutes=0",
        "train.device=cuda",
        f"train.precision={precision}",
        "train.save_every=100",
        "train.valid_every=150",
        "train.valid_bleu_max_sentences=50",
    ]
    config = reversal_config(load_config(REPO / "configs" / "tiny.yaml", overrides), tmp_path)
    prepared = prepare_data(config, tmp_path / "prepared")
    trainer = Trainer(config, prepared, tmp_path / "run")
    assert trainer.device.type == "cuda"
    result = trainer.train(show_progress=False)
    assert result.steps == 300
    assert result.valid["valid_nll"] < 1.5, result.valid  # it learned something
    assert result.model_path is not None

    # The model file is device-independent: CPU and GPU translate alike.
    sources = [src for src, _ in reversal_pairs(40, seed=99)]
    on_gpu = Translator.from_file(result.model_path, device="cuda").translate_text(sources)
    on_cpu = Translator.from_file(result.model_path, device="cpu").translate_text(sources)
    agree = sum(a == b for a, b in zip(on_gpu, on_cpu, strict=True)) / len(sources)
    assert agree >= 0.95


def test_resume_on_cuda_continues_the_run(tmp_path: Path) -> None:
    overrides = ["train.max_minutes=0", "train.device=cuda", "train.save_every=50"]
    config = reversal_config(
        load_config(REPO / "configs" / "tiny.yaml", [*overrides, "train.max_steps=100"]), tmp_path
    )
    prepared = prepare_data(config, tmp_path / "prepared")
    Trainer(config, prepared, tmp_path / "run").train(show_progress=False)
    longer = reversal_config(
        load_config(REPO / "configs" / "tiny.yaml", [*overrides, "train.max_steps=150"]), tmp_path
    )
    resumed = Trainer(longer, prepared, tmp_path / "run", resume=True)
    assert resumed.progress.step == 100
    assert next(resumed.model.parameters()).device.type == "cuda"
    assert resumed.train(show_progress=False).steps == 150


def test_cached_decoding_equals_full_decoding_on_cuda(tmp_path: Path) -> None:
    config = reversal_config(
        load_config(REPO / "configs" / "tiny.yaml", ["train.max_steps=20", "train.max_minutes=0"]),
        tmp_path,
    )
    prepared = prepare_data(config, tmp_path / "prepared")
    result = Trainer(config, prepared, tmp_path / "run").train(show_progress=False)
    assert result.model_path is not None
    model = load_model(result.model_path, device="cuda").model
    src_ids, pad = collate_source([[5, 6, 7, 8], [9, 10]])
    src_ids, pad = src_ids.cuda(), pad.cuda()
    tgt = torch.tensor([[2, 5, 6, 7], [2, 9, 10, 3]], device="cuda")
    with torch.no_grad():
        full = model(src_ids, tgt, pad)
        cache = model.init_cache(model.encode(src_ids, pad))
        steps = [model.decode_step(tgt[:, t : t + 1], cache, pad).logits for t in range(4)]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-4)
