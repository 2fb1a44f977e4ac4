"""Averaging model files (anuvad average A.pt B.pt: a model soup)."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model, read_model_payload, save_model
from anuvad.cli.main import main
from anuvad.data.tokenizer import Tokenizer
from anuvad.errors import CheckpointError
from anuvad.training.soup import average_model_files


def shifted(source: Path, out: Path, by: float, d_ff: int = 0) -> Path:
    """A copy of model file ``source`` with every weight moved by ``by`` (float16 as shipped)."""
    loaded = load_model(source)
    config = loaded.config
    model = loaded.model
    if d_ff:
        from anuvad.model.transformer import build_model

        config = dataclasses.replace(config, model=dataclasses.replace(config.model, d_ff=d_ff))
        model = build_model(config.model)
    with torch.no_grad():
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor.add_(by)
    return save_model(
        out, model, config, loaded.src_tokenizer, loaded.tgt_tokenizer, dtype=torch.float16
    )


def test_the_soup_is_the_mean_of_the_files(tiny_enhi_model: Path, tmp_path: Path) -> None:
    a = shifted(tiny_enhi_model, tmp_path / "a.pt", 0.0)
    b = shifted(tiny_enhi_model, tmp_path / "b.pt", 0.25)
    out = average_model_files([a, b], tmp_path / "soup.pt")
    soup = load_model(out).model.state_dict()
    first, second = load_model(a).model.state_dict(), load_model(b).model.state_dict()
    for name, value in soup.items():
        if value.is_floating_point():
            mean = ((first[name].double() + second[name].double()) / 2).to(torch.float16)
            assert torch.equal(value, mean.float()), name
    payload = read_model_payload(out)
    assert {t.dtype for t in payload["state_dict"].values() if t.is_floating_point()} == {
        torch.float16
    }  # both stored float16: so is the soup
    sources = payload["metadata"]["averaged_model_files"]
    assert [s["file"] for s in sources] == ["a.pt", "b.pt"]
    # facts of one file's training or export are not carried into the mean
    assert payload["metadata"]["storage_dtype"] == "float16"
    assert not {"steps", "exported_from", "valid_chrf"} & set(payload["metadata"])
    assert sources[1]["sha256"] == hashlib.sha256(b.read_bytes()).hexdigest()
    # a file averaged with itself is itself
    same = load_model(average_model_files([a, a], tmp_path / "same.pt")).model.state_dict()
    assert all(torch.equal(same[k], first[k]) for k in first)


def test_the_command_line_averages_model_files(tiny_enhi_model: Path, tmp_path: Path) -> None:
    a = shifted(tiny_enhi_model, tmp_path / "a.pt", 0.0)
    b = shifted(tiny_enhi_model, tmp_path / "b.pt", -0.5)
    assert main(["average", str(a), str(b), "--out", str(tmp_path / "s.pt")]) == 0
    assert load_model(tmp_path / "s.pt").config == load_model(b).config
    soup = load_model(tmp_path / "s.pt").model.state_dict()
    library = load_model(average_model_files([a, b], tmp_path / "l.pt")).model.state_dict()
    assert all(torch.equal(soup[k], library[k]) for k in soup)


def test_model_files_and_checkpoints_are_not_mixed(
    tiny_enhi_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoints = sorted((tiny_enhi_model.parent / "checkpoints").glob("*.pt"))
    assert checkpoints, "the tiny run keeps checkpoints"
    out = tmp_path / "x.pt"
    code = main(["average", str(tiny_enhi_model), str(checkpoints[-1]), "--out", str(out)])
    assert code == 2 and "not both" in capsys.readouterr().err
    assert not out.exists()


def test_files_that_cannot_be_averaged_are_refused(tiny_enhi_model: Path, tmp_path: Path) -> None:
    a = shifted(tiny_enhi_model, tmp_path / "a.pt", 0.0)
    wider = shifted(tiny_enhi_model, tmp_path / "w.pt", 0.0, d_ff=48)
    with pytest.raises(CheckpointError, match=r"w\.pt has another architecture.*model\.d_ff"):
        average_model_files([a, wider], tmp_path / "x.pt")
    other = load_model(a)
    pieces = other.tgt_tokenizer.id_to_piece(list(range(other.config.model.tgt_vocab_size)))
    renamed = Tokenizer(other.tgt_tokenizer.model_proto, [*pieces[:-1], "another"])
    foreign = save_model(tmp_path / "f.pt", other.model, other.config, other.src_tokenizer, renamed)
    with pytest.raises(CheckpointError, match=r"f\.pt has another tgt tokenizer"):
        average_model_files([a, foreign], tmp_path / "x.pt")
    with pytest.raises(CheckpointError, match="at least two"):
        average_model_files([a], tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()
