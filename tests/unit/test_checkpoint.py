"""Model files: exact round trips, plain data, tying, fp16 storage, atomic writes, errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import random
import re
import stat
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import pytest
import torch

from anuvad.checkpoint import (
    MODEL_FORMAT_VERSION,
    atomic_save,
    default_model_path,
    export_model_file,
    load_model,
    model_info,
    save_model,
)
from anuvad.cli.main import main
from anuvad.config import ExperimentConfig, TokenizerConfig
from anuvad.data.tokenizer import Tokenizer, train_tokenizer
from anuvad.errors import CheckpointError
from anuvad.model.transformer import Transformer, build_model
from conftest import small_model_config

pytestmark = pytest.mark.usefixtures("one_thread")


@dataclasses.dataclass
class Tokenizers:
    src: Tokenizer
    tgt: Tokenizer
    joint: Tokenizer


@pytest.fixture
def tokenizers(en_hi_pairs: list[tuple[str, str]]) -> Tokenizers:
    """Character vocabularies: English, Hindi, and both together (tens of pieces each)."""
    char = TokenizerConfig(model_type="char")
    english = [en for en, _ in en_hi_pairs]
    hindi = [hi for _, hi in en_hi_pairs]
    return Tokenizers(
        src=train_tokenizer(english, char, 200),
        tgt=train_tokenizer(hindi, char, 200),
        joint=train_tokenizer(english + hindi, char, 200),
    )


def experiment(src: Tokenizer, tgt: Tokenizer, **model_changes: Any) -> ExperimentConfig:
    model = small_model_config(
        max_positions=64, src_vocab_size=src.vocab_size, tgt_vocab_size=tgt.vocab_size
    )
    config = ExperimentConfig(name="ckpt-test", model=dataclasses.replace(model, **model_changes))
    config.data.src_lang, config.data.tgt_lang = "en", "hi"
    config.validate()
    return config


def separate(toks: Tokenizers, **model_changes: Any) -> tuple[Transformer, ExperimentConfig]:
    config = experiment(toks.src, toks.tgt, **model_changes)
    torch.manual_seed(0)
    return build_model(config.model).eval(), config


def shared(toks: Tokenizers, **model_changes: Any) -> tuple[Transformer, ExperimentConfig]:
    model_changes.setdefault("share_source_embedding", True)
    config = experiment(toks.joint, toks.joint, **model_changes)
    torch.manual_seed(0)
    return build_model(config.model).eval(), config


def sample_inputs(config: ExperimentConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(3)
    m = config.model
    src = torch.randint(4, m.src_vocab_size, (2, 9), generator=gen)
    tgt = torch.randint(4, m.tgt_vocab_size, (2, 6), generator=gen)
    pad = torch.zeros(2, 9, dtype=torch.bool)
    pad[1, 6:] = True
    return src.masked_fill(pad, 0), tgt, pad


def unique_parameters(model: torch.nn.Module) -> int:
    """Count by parameter identity, each shared matrix once."""
    seen = {id(p): p for _, p in model.named_parameters(remove_duplicate=False)}
    return sum(p.numel() for p in seen.values())


def storage_bytes(path: Path) -> int:
    """Bytes of tensor data in a torch zip file (its ``<archive>/data/<key>`` records)."""
    with zipfile.ZipFile(path) as archive:
        return sum(
            info.file_size
            for info in archive.infolist()
            if re.fullmatch(r"[^/]+/data/\d+", info.filename)
        )


# --- round trip ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tying", ["separate", "shared"])
def test_save_then_load_gives_identical_logits(
    tmp_path: Path, tokenizers: Tokenizers, tying: str
) -> None:
    model, config = (separate if tying == "separate" else shared)(tokenizers)
    src, tgt, pad = sample_inputs(config)
    with torch.no_grad():
        expected = model(src, tgt, pad)
    src_tok = tokenizers.src if tying == "separate" else tokenizers.joint
    tgt_tok = tokenizers.tgt if tying == "separate" else tokenizers.joint
    path = save_model(tmp_path / "m.pt", model, config, src_tok, tgt_tok, {"steps": 12})
    loaded = load_model(path)
    assert not loaded.model.training
    # Built on the meta device and given the stored tensors: nothing is left there, the derived
    # position table is computed again, and the weights can still be trained.
    tensors = [*loaded.model.parameters(), *loaded.model.buffers()]
    assert all(t.device.type == "cpu" for t in tensors)
    assert all(p.requires_grad for p in loaded.model.parameters())
    with torch.no_grad():
        assert torch.equal(loaded.model(src, tgt, pad), expected)
    assert loaded.config == config
    assert loaded.src_tokenizer.model_proto == src_tok.model_proto
    assert loaded.tgt_tokenizer.model_proto == tgt_tok.model_proto
    assert loaded.tgt_tokenizer.encode("मौसम अच्छा") == tgt_tok.encode("मौसम अच्छा")
    assert loaded.metadata["steps"] == 12
    assert loaded.metadata["num_parameters"] == unique_parameters(model)
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[name], tensor), name


def test_saving_does_not_change_the_model(tmp_path: Path, tokenizers: Tokenizers) -> None:
    model, config = separate(tokenizers)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    save_model(tmp_path / "m.pt", model, config, tokenizers.src, tokenizers.tgt, dtype=torch.half)
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) and after[k].dtype == torch.float32 for k in before)


def test_the_file_is_plain_data(tmp_path: Path, tokenizers: Tokenizers) -> None:
    model, config = separate(tokenizers)
    path = save_model(tmp_path / "m.pt", model, config, tokenizers.src, tokenizers.tgt)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    assert payload["format"] == "anuvad-model"
    assert payload["format_version"] == MODEL_FORMAT_VERSION
    assert payload["config"]["model"]["d_model"] == 32
    assert isinstance(payload["tokenizers"]["src"], bytes)
    assert set(payload["state_dict"]) == set(model.state_dict())


def test_tied_embeddings_stay_tied_after_loading(tmp_path: Path, tokenizers: Tokenizers) -> None:
    model, config = shared(tokenizers)
    path = save_model(tmp_path / "m.pt", model, config, tokenizers.joint, tokenizers.joint)
    loaded = load_model(path).model
    assert loaded.src_embed is loaded.tgt_embed
    assert loaded.output_proj is None
    # One matrix, seen through both names: a change through one shows through the other.
    with torch.no_grad():
        loaded.tgt_embed.weight[5, 0] = 123.0
    assert loaded.src_embed.weight[5, 0].item() == 123.0
    assert unique_parameters(loaded) == unique_parameters(model)


# --- float16 storage -----------------------------------------------------------------------------


def test_float16_storage_halves_the_weights_and_loads_as_float32(
    tmp_path: Path, tokenizers: Tokenizers
) -> None:
    # Wide enough that the weights, not the two tokenizer protos, dominate the file.
    model, config = separate(tokenizers, d_model=128, d_ff=512)
    full = save_model(tmp_path / "fp32.pt", model, config, tokenizers.src, tokenizers.tgt)
    half = save_model(
        tmp_path / "fp16.pt", model, config, tokenizers.src, tokenizers.tgt, dtype=torch.float16
    )
    count = unique_parameters(model)
    assert storage_bytes(full) == 4 * count
    assert storage_bytes(half) == 2 * count
    saved = full.stat().st_size - half.stat().st_size
    assert 0.98 * 2 * count <= saved <= 1.02 * 2 * count
    assert half.stat().st_size < 0.6 * full.stat().st_size

    loaded = load_model(half).model
    original = model.state_dict()
    for name, tensor in loaded.state_dict().items():
        assert tensor.dtype == torch.float32, name
        # Rounding to float16 moves a value by at most half a unit in its last place, 2^-11
        # relative (plus float16's subnormal spacing near zero).
        assert torch.allclose(tensor, original[name], rtol=2**-11, atol=6e-8), name
    src, tgt, pad = sample_inputs(config)
    with torch.no_grad():
        exact, approx = model(src, tgt, pad), loaded(src, tgt, pad)
    assert not torch.equal(exact, approx)
    assert (exact - approx).abs().max() < 2e-2


def test_float16_storage_writes_a_shared_matrix_once(
    tmp_path: Path, tokenizers: Tokenizers
) -> None:
    model, config = shared(tokenizers)
    full = save_model(tmp_path / "fp32.pt", model, config, tokenizers.joint, tokenizers.joint)
    half = save_model(
        tmp_path / "fp16.pt",
        model,
        config,
        tokenizers.joint,
        tokenizers.joint,
        dtype=torch.float16,
    )
    count = unique_parameters(model)
    assert storage_bytes(full) == 4 * count  # float32: the tied matrix is stored once
    assert storage_bytes(half) == 2 * count


# --- paths and atomic writes ---------------------------------------------------------------------


def test_default_model_path_names_pair_size_layers_vocab_and_time(
    tmp_path: Path, tokenizers: Tokenizers
) -> None:
    config = experiment(tokenizers.src, tokenizers.tgt, d_model=32, num_encoder_layers=2)
    stamp = dt.datetime(2026, 11, 22, 9, 30, 5)
    path = default_model_path(config, tmp_path / "models", stamp)
    vocab = tokenizers.tgt.vocab_size
    assert path == tmp_path / "models" / f"enhi_d32_L2_V{vocab}_20261122-093005.pt"
    assert not path.parent.exists()  # naming a file creates nothing

    uneven = experiment(tokenizers.src, tokenizers.tgt, num_encoder_layers=3)
    assert default_model_path(uneven, tmp_path, stamp).name.startswith("enhi_d32_L3-2_")


def test_default_model_path_uses_the_current_time(tokenizers: Tokenizers) -> None:
    config = experiment(tokenizers.src, tokenizers.tgt)
    before = dt.datetime.now().replace(microsecond=0)
    path = default_model_path(config)
    after = dt.datetime.now()
    assert path.parent == Path("data") / "trained_models"
    match = re.fullmatch(r"enhi_d32_L2_V(\d+)_(\d{8}-\d{6})\.pt", path.name)
    assert match is not None, path.name
    assert int(match.group(1)) == config.model.tgt_vocab_size
    assert before <= dt.datetime.strptime(match.group(2), "%Y%m%d-%H%M%S") <= after


def test_model_files_get_the_usual_permissions(tmp_path: Path) -> None:
    """A model file is shared like any file the user writes (umask), not private 0600."""
    old = os.umask(0o022)
    try:
        path = atomic_save({"step": 1}, tmp_path / "model.pt")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_atomic_save_writes_the_object_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "state.pt"
    assert atomic_save({"step": 3, "w": torch.arange(4.0)}, path) == path
    assert [p.name for p in path.parent.iterdir()] == ["state.pt"]
    loaded = torch.load(path, weights_only=True)
    assert loaded["step"] == 3 and torch.equal(loaded["w"], torch.arange(4.0))
    atomic_save({"step": 4}, path)  # replacing an existing file
    assert torch.load(path, weights_only=True) == {"step": 4}
    assert [p.name for p in path.parent.iterdir()] == ["state.pt"]


@pytest.mark.parametrize(
    ("failure", "raised"),
    [
        (OSError(28, "No space left on device"), CheckpointError),
        (
            RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 6 vs 5"),
            CheckpointError,
        ),
        (RuntimeError("boom"), RuntimeError),
    ],
)
def test_a_failed_write_leaves_the_previous_file_intact(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    failure: BaseException,
    raised: type[BaseException],
) -> None:
    path = tmp_path / "model.pt"
    atomic_save({"generation": 1, "w": torch.ones(100)}, path)
    original = path.read_bytes()

    def half_written_save(obj: object, handle: BinaryIO) -> None:
        handle.write(b"PK\x03\x04 partial data")
        raise failure

    monkeypatch.setattr("anuvad.checkpoint.torch.save", half_written_save)
    with pytest.raises(raised) as info:
        atomic_save({"generation": 2}, path)
    if isinstance(failure, OSError):
        assert str(path) in str(info.value) and "No space left" in str(info.value)
    elif raised is CheckpointError:  # torch's zip writer: the free space and the way on named
        message = str(info.value)
        assert str(path) in message and "MB left on that disk" in message
        assert "anuvad train --resume RUN_DIR" in message and "unexpected pos" in message
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt"]


@pytest.mark.parametrize("cause", ["parent is a file", "no permission"])
def test_an_unwritable_folder_is_a_checkpoint_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cause: str
) -> None:
    if cause == "parent is a file":
        (tmp_path / "not_a_folder").write_text("x")
        path = tmp_path / "not_a_folder" / "model.pt"
    else:
        path = tmp_path / "model.pt"

        real_open = Path.open

        def refuse(self: Path, *args: object, **kwargs: object) -> object:
            if self.parent == tmp_path:
                raise PermissionError(13, "Permission denied", str(self))
            return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

        # Tests may run as root, for whom chmod does not block writes: refuse as the OS would.
        monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(CheckpointError, match="cannot write"):
        atomic_save({"a": 1}, path)


# --- damaged and foreign files -------------------------------------------------------------------


@pytest.fixture
def model_file(tmp_path: Path, tokenizers: Tokenizers) -> Path:
    model, config = separate(tokenizers)
    return save_model(tmp_path / "good.pt", model, config, tokenizers.src, tokenizers.tgt)


def rewrite(model_file: Path, change: Any) -> Path:
    payload = torch.load(model_file, weights_only=True)
    change(payload)
    path = model_file.with_name("changed.pt")
    torch.save(payload, path)
    return path


def both_readers_refuse(path: Path, *fragments: str) -> None:
    for read in (load_model, model_info):
        with pytest.raises(CheckpointError) as info:
            read(path)
        message = str(info.value)
        assert str(path) in message
        for fragment in fragments:
            assert fragment in message, message


def test_a_truncated_file_is_refused(model_file: Path) -> None:
    data = model_file.read_bytes()
    truncated = model_file.with_name("truncated.pt")
    truncated.write_bytes(data[: len(data) // 2])
    both_readers_refuse(truncated, "truncated or not a PyTorch model file")


def test_random_bytes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "noise.pt"
    path.write_bytes(random.Random(0).randbytes(4096))
    both_readers_refuse(path, "truncated or not a PyTorch model file")


def test_a_bare_state_dict_is_refused(tmp_path: Path, tokenizers: Tokenizers) -> None:
    model, _ = separate(tokenizers)
    path = tmp_path / "state_dict.pt"
    torch.save(model.state_dict(), path)
    both_readers_refuse(path, "not an anuvad model file", "decoder_layers.")


def test_a_torch_file_holding_a_tensor_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tensor.pt"
    torch.save(torch.zeros(3), path)
    both_readers_refuse(path, "not an anuvad model file", "Tensor")


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    both_readers_refuse(tmp_path / "absent.pt", "does not exist")


def test_a_folder_is_named_a_folder_not_a_missing_file(tmp_path: Path) -> None:
    """Issue 33: a folder given as a model was reported as "does not exist"."""
    (tmp_path / "run").mkdir()
    both_readers_refuse(tmp_path / "run", "is a folder, not a")


def test_a_newer_format_version_is_refused(model_file: Path) -> None:
    newer = MODEL_FORMAT_VERSION + 1

    def bump(payload: dict[str, Any]) -> None:
        payload["format_version"] = newer

    both_readers_refuse(rewrite(model_file, bump), f"format version {newer}", "upgrade anuvad")


def test_a_file_without_its_tokenizers_is_refused(model_file: Path) -> None:
    both_readers_refuse(rewrite(model_file, lambda p: p.pop("tokenizers")), "lacks tokenizers")


def test_weights_that_do_not_fit_the_stored_config_are_refused(model_file: Path) -> None:
    def widen(payload: dict[str, Any]) -> None:
        payload["config"]["model"]["d_ff"] = 128

    with pytest.raises(CheckpointError, match="weights do not match its config"):
        load_model(rewrite(model_file, widen))


def test_an_invalid_stored_config_is_refused(model_file: Path) -> None:
    def break_heads(payload: dict[str, Any]) -> None:
        payload["config"]["model"]["num_heads"] = 5

    with pytest.raises(CheckpointError, match="stored config is invalid"):
        load_model(rewrite(model_file, break_heads))


def test_a_broken_stored_tokenizer_is_refused(model_file: Path) -> None:
    def garble(payload: dict[str, Any]) -> None:
        payload["tokenizers"]["tgt"] = b"not a sentencepiece model"

    with pytest.raises(CheckpointError, match="tokenizer is unusable"):
        load_model(rewrite(model_file, garble))


# --- model_info ----------------------------------------------------------------------------------


def test_model_info_agrees_with_the_model(tmp_path: Path, tokenizers: Tokenizers) -> None:
    model, config = separate(tokenizers)
    path = save_model(
        tmp_path / "m.pt", model, config, tokenizers.src, tokenizers.tgt, {"bleu": 12.5}
    )
    info = model_info(path)
    assert info["num_parameters"] == unique_parameters(model)
    assert info["src_vocab_size"] == tokenizers.src.vocab_size
    assert info["tgt_vocab_size"] == tokenizers.tgt.vocab_size
    assert info["src_vocab_size"] != info["tgt_vocab_size"]  # the two sides are not mixed up
    assert info["format_version"] == MODEL_FORMAT_VERSION
    assert info["metadata"] == {"bleu": 12.5}
    assert info["config"] == dataclasses.asdict(config)


def test_model_info_counts_a_shared_matrix_once(tmp_path: Path, tokenizers: Tokenizers) -> None:
    tied, tied_config = shared(tokenizers)
    untied, untied_config = shared(tokenizers, share_source_embedding=False)
    joint = tokenizers.joint
    tied_info = model_info(save_model(tmp_path / "a.pt", tied, tied_config, joint, joint))
    untied_info = model_info(save_model(tmp_path / "b.pt", untied, untied_config, joint, joint))
    # Sharing the source embedding removes exactly one (V, D) matrix.
    difference = untied_info["num_parameters"] - tied_info["num_parameters"]
    assert difference == joint.vocab_size * 32


# --- release files (anuvad export) ---------------------------------------------------------------


def test_export_to_a_folder_writes_a_named_float16_file_with_close_outputs(
    tmp_path: Path, tokenizers: Tokenizers
) -> None:
    model, config = separate(tokenizers)
    original = save_model(
        tmp_path / "m.pt", model, config, tokenizers.src, tokenizers.tgt, {"steps": 7}
    )
    out = export_model_file(original, tmp_path / "release", "float16", {"dev_bleu": 12.5})
    assert out.parent == tmp_path / "release"
    assert re.fullmatch(r"enhi_d32_L2_V\d+_\d{8}-\d{6}\.pt", out.name)
    payload = torch.load(out, weights_only=True)
    assert {t.dtype for t in payload["state_dict"].values() if t.is_floating_point()} == {
        torch.float16
    }
    assert storage_bytes(out) * 2 == pytest.approx(storage_bytes(original), rel=0.01)
    loaded = load_model(out)
    assert loaded.metadata["steps"] == 7
    assert loaded.metadata["dev_bleu"] == 12.5
    assert loaded.metadata["storage_dtype"] == "float16"
    assert loaded.metadata["exported_from"] == "m.pt"
    src, tgt, pad = sample_inputs(config)
    with torch.no_grad():
        expected = model(src, tgt, pad)
        got = loaded.model(src, tgt, pad)
    assert got.dtype == torch.float32
    assert not torch.equal(got, expected)  # rounded weights ...
    torch.testing.assert_close(got, expected, atol=2e-2, rtol=0)  # ... barely change the logits


def test_export_as_float32_to_a_file_keeps_the_logits_exactly(
    tmp_path: Path, tokenizers: Tokenizers
) -> None:
    model, config = shared(tokenizers)
    original = save_model(tmp_path / "m.pt", model, config, tokenizers.joint, tokenizers.joint)
    out = export_model_file(original, tmp_path / "copy.pt", "float32")
    assert out == tmp_path / "copy.pt"
    src, tgt, pad = sample_inputs(config)
    with torch.no_grad():
        assert torch.equal(load_model(out).model(src, tgt, pad), model(src, tgt, pad))


def test_export_refuses_unknown_dtypes_and_missing_files(model_file: Path) -> None:
    with pytest.raises(CheckpointError, match="unknown storage dtype 'int4'"):
        export_model_file(model_file, model_file.with_name("x.pt"), "int4")
    with pytest.raises(CheckpointError, match="does not exist"):
        export_model_file(model_file.with_name("missing.pt"), model_file.with_name("x.pt"))
    assert not model_file.with_name("x.pt").exists()


def test_the_export_command_reports_the_file_and_exits_2_on_errors(
    model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = model_file.with_name("half.pt")
    assert main(["export", str(model_file), "--out", str(out)]) == 0
    assert f"wrote {out} (float16 weights" in capsys.readouterr().out
    assert load_model(out).metadata["storage_dtype"] == "float16"
    assert main(["export", str(model_file.with_name("nope.pt")), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_export_changes_the_search_settings_a_file_carries_and_nothing_else(
    model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = load_model(model_file)
    out = model_file.with_name("tuned.pt")
    # no --dtype: the file's own storage (here float32), so no weight is rounded
    assert main(["export", str(model_file), "--out", str(out), "decode.length_penalty=1.5",
                 "decode.beam_size=5"]) == 0  # fmt: skip
    assert "search settings decode.length_penalty=1.5" in capsys.readouterr().out
    after = load_model(out)
    assert after.config.decode == before.config.decode.with_overrides(
        length_penalty=1.5, beam_size=5
    )
    assert after.config.model == before.config.model and after.config.data == before.config.data
    assert after.metadata["storage_dtype"] == before.metadata.get("storage_dtype", "float32")
    for (name, a), (_, b) in zip(
        before.model.state_dict().items(), after.model.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    # in place, through a link: the file it names takes the setting, keeps what it came from
    link = model_file.with_name("link.pt")
    link.symlink_to(out)
    (out.parent / "tuned.confidence.json").write_text("{}", encoding="utf-8")
    assert main(["export", str(link), "--out", str(link), "decode.no_repeat_ngram_size=5"]) == 0
    assert "refit it with anuvad calibrate" in capsys.readouterr().err
    assert link.is_symlink()
    again = load_model(out)
    assert again.config.decode.no_repeat_ngram_size == 5
    assert again.config.decode.length_penalty == 1.5
    assert again.metadata.get("exported_from") == after.metadata.get("exported_from")
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]
    command = ["export", str(model_file), "--out", str(out)]
    for bad, message in [
        ("model.d_model=8", "only the search settings of a model file can change"),
        ("decode.beam_width=5", "beam_width"),
        ("decode.beam_size=0", "beam_size"),
        ("decode.length_penalty=.nan", "decode.length_penalty must be a finite number"),
    ]:
        assert main([*command, bad]) == 2, bad
        assert message in capsys.readouterr().err, bad
    assert load_model(out).config.decode.no_repeat_ngram_size == 5  # nothing written
    assert main([*command, "--format", "huggingface", "decode.beam_size=5"]) == 2
    assert "export the changed file with --format huggingface" in capsys.readouterr().err
