"""Issue 35, bad input: a folder that is not a Marian model, an architecture anuvad does not
compute, a missing tokenizer file, a broken weights file: one line naming what is wrong, exit 2,
nothing written. (The hub's failures: tests/system/test_marian_hub.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from anuvad.checkpoint import load_model
from anuvad.errors import CheckpointError
from anuvad.interop.exporter import export_huggingface
from anuvad.interop.importer import import_marian
from marian_folders import TEXTS, Shape, write_marian_folder

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def marian_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("marian") / "opus-mt-en-de"
    return write_marian_folder(folder, Shape(), tune_eos=False)


def broken_copy(folder: Path, tmp_path: Path, change: Any) -> Path:
    copy = tmp_path / "opus-mt-en-de"
    shutil.copytree(folder, copy)
    change(copy)
    return copy


def edit_config(**changes: Any) -> Any:
    def change(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        config.update(changes)
        (folder / "config.json").write_text(json.dumps(config))

    return change


def with_positions(altered: bool) -> Any:
    """Store position tables in the weights, as older conversions did (Marian's own, or not)."""

    def change(folder: Path) -> None:
        from safetensors.torch import load_file, save_file
        from transformers.models.marian.modeling_marian import (
            MarianSinusoidalPositionalEmbedding,
        )

        state = load_file(str(folder / "model.safetensors"))
        config = json.loads((folder / "config.json").read_text())
        table = MarianSinusoidalPositionalEmbedding(
            config["max_position_embeddings"], config["d_model"]
        ).create_weight()
        if altered:
            table = table + 0.01
        for stack in ("encoder", "decoder"):
            state[f"model.{stack}.embed_positions.weight"] = table.clone()
        save_file(state, str(folder / "model.safetensors"), {"format": "pt"})

    return change


def test_stored_marian_positions_import(marian_folder: Path, tmp_path: Path) -> None:
    folder = broken_copy(marian_folder, tmp_path, with_positions(altered=False))
    assert load_model(import_marian(str(folder), tmp_path / "p.pt").path).model is not None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: (f / "config.json").unlink(), "not a Hugging Face model folder"),
        (edit_config(model_type="bart"), "model_type is 'bart'; anuvad imports Marian models"),
        (edit_config(normalize_before=True), "normalize_before is True"),
        (edit_config(scale_embedding=False), "scale_embedding is False"),
        (edit_config(activation_function="tanh"), "activation_function 'tanh'"),
        (lambda f: (f / "source.spm").unlink(), "missing source.spm"),
        (lambda f: (f / "model.safetensors").unlink(), "no weights (model.safetensors"),
        (
            lambda f: (f / "model.safetensors").write_bytes(
                (f / "model.safetensors").read_bytes()[:5000]
            ),
            "not a readable safetensors file",
        ),
        (
            lambda f: (f / "vocab.json").write_text(json.dumps({"</s>": 0, "<unk>": 1})),
            "2 pieces, but the model's embedding has",
        ),
        (edit_config(d_model=48), "its weights do not fit its config.json"),
        (with_positions(altered=True), "is not the sinusoid table Marian computes"),
    ],
    ids=[
        "no-config", "bart", "pre-ln", "unscaled", "activation", "no-spm", "no-weights",
        "truncated-weights", "wrong-vocab", "wrong-shape", "altered-positions",
    ],
)  # fmt: skip
def test_bad_folders_get_one_line_exit_2_and_no_file(
    marian_folder: Path,
    tmp_path: Path,
    change: Any,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from anuvad.cli.main import main

    folder = broken_copy(marian_folder, tmp_path, change)
    out = tmp_path / "out" / "model.pt"
    code = main(["import", str(folder), "--out", str(out), "--src-lang", "en", "--tgt-lang", "de"])
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], stderr
    assert not out.exists()
    assert not (out.parent.exists() and any(out.parent.iterdir()))


def test_languages_come_from_the_name_or_must_be_given(marian_folder: Path, tmp_path: Path) -> None:
    imported = import_marian(str(marian_folder), tmp_path / "a.pt")  # "opus-mt-en-de"
    assert (imported.src_lang, imported.tgt_lang) == ("en", "de")
    renamed = tmp_path / "some-model"
    shutil.copytree(marian_folder, renamed)
    with pytest.raises(CheckpointError, match="give --src-lang and --tgt-lang"):
        import_marian(str(renamed), tmp_path / "b.pt")


def test_models_that_are_not_marian_are_not_exported(tmp_path: Path) -> None:
    import torch

    from anuvad.checkpoint import save_model
    from anuvad.config import ExperimentConfig, ModelConfig, TokenizerConfig
    from anuvad.data.tokenizer import train_tokenizer
    from anuvad.model.transformer import build_model

    tok = train_tokenizer(TEXTS * 3, TokenizerConfig(model_type="char"), 100)
    config = ExperimentConfig(
        model=ModelConfig(
            d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
            src_vocab_size=tok.vocab_size, tgt_vocab_size=tok.vocab_size, norm_position="pre",
        )
    )  # fmt: skip
    torch.manual_seed(0)
    path = save_model(tmp_path / "pre.pt", build_model(config.model), config, tok, tok)
    with pytest.raises(CheckpointError, match="norm_position is 'pre'; Marian models are post-LN"):
        export_huggingface(path, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_export_on_the_command_line_writes_a_folder_once(
    marian_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.cli.main import main

    model = import_marian(str(marian_folder), tmp_path / "m.pt").path
    out = tmp_path / "hf"
    assert main(["export", str(model), "--format", "huggingface", "--out", str(out)]) == 0
    assert "MarianMTModel.from_pretrained" in capsys.readouterr().out
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(
        ["README.md", "config.json", "generation_config.json", "model.safetensors",
         "source.spm", "target.spm", "tokenizer_config.json", "vocab.json"]
    )  # fmt: skip
    assert main(["export", str(model), "--format", "huggingface", "--out", str(out)]) == 2
    assert "add --force" in capsys.readouterr().err
    assert (
        main(["export", str(model), "--format", "huggingface", "--out", str(out), "--force"]) == 0
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hf.")], "no build folder left"
