"""The GPU paths: training in fp32 / bf16 / fp16 (grad scaler) on CUDA, model files moving
between devices, cached decoding on the GPU. Skipped where there is no CUDA device."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from anuvad.checkpoint import load_model
from anuvad.config import ExperimentConfig, load_config
from anuvad.data.batching import collate_source
from anuvad.data.prepare import prepare_data
from anuvad.data.synthetic import reversal_config, reversal_pairs
from anuvad.inference.translator import Translator
from anuvad.training.state import list_checkpoints, load_training_state
from anuvad.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]
# cuBLAS is deterministic with a fixed workspace (read when a deterministic test runs).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

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


def test_resume_on_cuda_equals_the_uninterrupted_run(tmp_path: Path) -> None:
    """Dropout draws from the CUDA generator: resuming must restore its state exactly."""
    overrides = [
        "train.max_minutes=0",
        "train.device=cuda",
        "train.save_every=50",
        "train.valid_every=0",
        "model.dropout=0.1",
    ]

    def config(steps: int) -> ExperimentConfig:
        loaded = load_config(
            REPO / "configs" / "tiny.yaml", [*overrides, f"train.max_steps={steps}"]
        )
        return reversal_config(loaded, tmp_path)

    prepared = prepare_data(config(100), tmp_path / "prepared")
    torch.use_deterministic_algorithms(True)
    try:
        with sdpa_kernel(SDPBackend.MATH):  # the fused kernels' backward may use atomics
            whole = Trainer(config(100), prepared, tmp_path / "whole").train(show_progress=False)
            Trainer(config(50), prepared, tmp_path / "part").train(show_progress=False)
            torch.cuda.manual_seed_all(12345)  # whatever the CUDA generator holds now is lost
            resumed = Trainer(config(100), prepared, tmp_path / "part", resume=True)
            assert resumed.progress.step == 50
            assert next(resumed.model.parameters()).device.type == "cuda"
            assert resumed.train(show_progress=False).steps == whole.steps == 100
    finally:
        torch.use_deterministic_algorithms(False)
    final = [
        load_training_state(c).model
        for c in (list_checkpoints(tmp_path / "whole")[-1], list_checkpoints(tmp_path / "part")[-1])
    ]
    for name, value in final[0].items():
        assert torch.equal(value, final[1][name]), name


def test_fp16_updates_the_scaler_skips_do_not_count_as_steps(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    overrides = [
        "train.max_steps=40",
        "train.max_minutes=0",
        "train.device=cuda",
        "train.precision=fp16",
        "train.valid_every=0",
    ]
    config = reversal_config(load_config(REPO / "configs" / "tiny.yaml", overrides), tmp_path)
    trainer = Trainer(config, prepare_data(config, tmp_path / "prepared"), tmp_path / "run")
    # A loss scale far above fp16's range: the first updates overflow and must be skipped.
    trainer.scaler = torch.amp.GradScaler("cuda", init_scale=2.0**40)
    with caplog.at_level(logging.WARNING, logger="anuvad.training.trainer"):
        assert trainer.train(show_progress=False).steps == 40
    skipped = [r for r in caplog.records if "gradient overflow" in r.getMessage()]
    assert len(skipped) >= 10  # 2^40 halves to below 2^16 / max-grad before updates land
    adam_steps = {int(state["step"]) for state in trainer.optimizer.state.values()}
    assert adam_steps == {40}  # Adam stepped exactly as often as the step count says


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


def test_glossary_and_confidence_on_cuda_match_the_cpu(tiny_enhi_model: Path) -> None:
    """The constrained beam search and the teacher-forced quality pass on the GPU: every term
    is used, and outputs and word probabilities agree with the CPU's."""
    from anuvad.inference.glossary import Glossary

    on_cpu = Translator.from_file(tiny_enhi_model, device="cpu")
    on_gpu = Translator.from_file(tiny_enhi_model, device="cuda")
    tok = on_cpu.tgt_tokenizer
    pieces = [i for i in range(4, tok.vocab_size) if tok.id_to_piece([i])[0] != "▁"]
    glossary = Glossary.from_pairs([("home", tok.decode(pieces[:2]))])
    texts = ["I am going home.", "The weather is nice today.", "Please sit down."]
    settings = on_cpu.settings(beam_size=4, nbest=2)
    gpu = on_gpu.translate(texts, settings, glossary=glossary, quality=True)
    cpu = on_cpu.translate(texts, settings, glossary=glossary, quality=True)
    phrase = glossary.phrases([texts[0]])[0][0]
    assert all(phrase in c.text for c in gpu[0].nbest)
    for a, b in zip(gpu, cpu, strict=True):
        assert a.text == b.text
        assert a.quality is not None and b.quality is not None
        assert a.quality.token_probs == pytest.approx(b.quality.token_probs, abs=1e-4)
        for name, value in a.quality.features.items():
            assert value == pytest.approx(b.quality.features[name], abs=1e-3), name
