"""Issue 41 item 3, bad input: a Marian release zip or folder lacking a piece, or holding a model
anuvad does not compute, gets one line naming the file and the piece, exit 2, nothing written."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from marian_release_folders import ReleaseShape, write_release, zip_release

NPZ = "opus.spm32k-spm32k.transformer-align.model1.npz.best-perplexity.npz"
VOCAB = "opus.spm32k-spm32k.vocab.yml"


@pytest.fixture(scope="module")
def release_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_release(tmp_path_factory.mktemp("release") / "eng-hin", ReleaseShape(), False)


def edit_npz(change: Callable[[dict[str, np.ndarray]], object]) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        npz = dict(np.load(folder / NPZ))
        change(npz)
        np.savez(folder / NPZ, **npz)

    return edit


def edit_options(**options: object) -> Callable[[Path], None]:
    """Change the model.yml the npz carries."""

    def change(npz: dict[str, np.ndarray]) -> None:
        text = bytes(npz["special:model.yml"].astype(np.uint8)).decode().rstrip("\0")
        values = yaml.safe_load(text)
        values.update(options)
        dumped = yaml.safe_dump(values) + "\0"
        npz["special:model.yml"] = np.frombuffer(dumped.encode(), dtype=np.int8)

    return edit_npz(change)


def edit_decoder(**options: object) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        values = yaml.safe_load((folder / "decoder.yml").read_text())
        values.update(options)
        (folder / "decoder.yml").write_text(yaml.safe_dump(values))

    return edit


def drop_vocab_pieces(folder: Path) -> None:
    lines = (folder / VOCAB).read_text(encoding="utf-8").splitlines()
    (folder / VOCAB).write_text("\n".join(lines[:-2]) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: (f / "decoder.yml").unlink(), "no decoder.yml; a Marian release"),
        (
            edit_npz(lambda npz: npz.pop("decoder_l1_context_Wk")),
            f"{NPZ}: lacks decoder_l1_context_Wk",
        ),
        (lambda f: (f / NPZ).unlink(), f"lacks {NPZ}"),
        (lambda f: (f / "target.spm").unlink(), "lacks target.spm"),
        (edit_npz(lambda npz: npz.pop("special:model.yml")), "has no special:model.yml"),
        (
            edit_options(**{"transformer-preprocess": "n", "transformer-postprocess": "da"}),
            "transformer-postprocess is 'da' (anuvad computes 'dan'); transformer-preprocess "
            "is 'n'",
        ),
        (edit_options(**{"transformer-ffn-activation": "gelu"}), "transformer-ffn-activation"),
        (
            edit_npz(lambda npz: npz.update(encoder_l1_ffn_W1=np.zeros((32, 48), np.float32))),
            "encoder_l1_ffn_W1 has shape (32, 48), expected (32, 64)",
        ),
        (drop_vocab_pieces, "Wemb has shape"),
        (
            edit_npz(lambda npz: npz.update(encoder_emb_ln_scale_pre=np.ones((1, 32)))),
            "holds weights anuvad does not compute: encoder_emb_ln_scale_pre",
        ),
        (edit_decoder(models=[NPZ, NPZ]), "an ensemble of 2 models"),
    ],
    ids=[
        "no-decoder-yml", "missing-weight", "no-npz", "no-target-spm", "no-model-yml", "pre-ln",
        "activation", "misshapen-weight", "short-vocab", "embedding-norm", "ensemble",
    ],
)  # fmt: skip
@pytest.mark.parametrize("as_zip", [False, True], ids=["folder", "zip"])
def test_bad_releases_get_one_line_exit_2_and_no_file(
    release_folder: Path,
    tmp_path: Path,
    change: Callable[[Path], None],
    message: str,
    as_zip: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from anuvad.cli.main import main

    broken = tmp_path / "eng-hin"
    shutil.copytree(release_folder, broken)
    change(broken)
    source = zip_release(broken, tmp_path / "opus.zip") if as_zip else broken
    out = tmp_path / "out" / "model.pt"
    code = main(["import", str(source), "--out", str(out)])
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], stderr
    assert str(source.name) in lines[0], stderr  # the file named
    assert not out.exists()
    assert not (out.parent.exists() and any(out.parent.iterdir()))


def test_a_release_without_languages_asks_for_them(release_folder: Path, tmp_path: Path) -> None:
    from anuvad.errors import CheckpointError
    from anuvad.interop.marian_release import import_marian_release

    renamed = tmp_path / "some-model"
    shutil.copytree(release_folder, renamed)
    (renamed / "README.md").unlink()
    with pytest.raises(CheckpointError, match="give --src-lang and --tgt-lang"):
        import_marian_release(str(renamed), tmp_path / "m.pt")
    imported = import_marian_release(str(renamed), tmp_path / "m.pt", "en", "hi")
    assert (imported.src_lang, imported.tgt_lang) == ("en", "hi")
