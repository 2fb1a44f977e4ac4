"""What `make demo` serves: the newest model file in data/trained_models/, its size and storage,
its model card, and that it translates English into Hindi."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model, read_model_payload
from anuvad.cli_serve import shipped_model
from anuvad.errors import CheckpointError
from anuvad.translator import Translator

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "trained_models"
DEVANAGARI = re.compile(r"[\u0900-\u097F]")


def test_the_newest_timestamp_of_the_pair_wins(tmp_path: Path) -> None:
    for name in (
        "enhi_d256_L3_V8000_20261122-020000.pt",
        "enhi_d256_L3_V16000_20261121-230000.pt",
        "hien_d256_L3_V8000_20261125-010000.pt",
        "aaa_d64_L2_V100_20261122-010000.pt",
    ):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "README.md").write_text("not a model", encoding="utf-8")
    assert shipped_model(tmp_path).name == "enhi_d256_L3_V8000_20261122-020000.pt"
    assert shipped_model(tmp_path, "hien").name == "hien_d256_L3_V8000_20261125-010000.pt"
    with pytest.raises(CheckpointError, match=r"no ende model file .*it holds aaa_"):
        shipped_model(tmp_path, "ende")


def test_an_empty_folder_says_how_to_get_a_model(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="--model PATH"):
        shipped_model(tmp_path)


@pytest.fixture(scope="module")
def model_path() -> Path:
    return shipped_model(SHIPPED)


def test_the_shipped_model_is_small_16_bit_and_described(model_path: Path) -> None:
    assert model_path.stat().st_size < 25 * 1024 * 1024
    state = read_model_payload(model_path)["state_dict"]
    dtypes = {tensor.dtype for tensor in state.values() if tensor.is_floating_point()}
    assert dtypes == {torch.float16}
    config = load_model(model_path).config
    assert (config.data.src_lang, config.data.tgt_lang) == ("en", "hi")
    assert (config.model.d_model, config.model.num_heads) == (256, 8)
    assert config.model.num_encoder_layers == config.model.num_decoder_layers == 3
    card = (SHIPPED / "README.md").read_text(encoding="utf-8")
    assert model_path.name in card, "the model card must describe the shipped file"
    assert "non-commercial" in card.lower()


def test_the_shipped_model_translates_english_into_hindi(
    model_path: Path, one_thread: None
) -> None:
    translator = Translator.from_file(model_path, device="cpu")
    sentences = ["A man is riding a horse.", "Two dogs are playing in the grass."]
    greedy = translator.translate(sentences, beam_size=1)
    beam = translator.translate(sentences, beam_size=4, nbest=2)
    for result in [*greedy, *beam]:
        assert result.finished
        assert len(DEVANAGARI.findall(result.text)) >= 5, result.text
    assert all(len(result.nbest) == 2 for result in beam)
