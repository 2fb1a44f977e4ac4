"""prepare_data → files → load_prepared, with joint and separate vocabularies."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from anuvad.config import CorpusConfig, DataConfig, ExperimentConfig, TokenizerConfig
from anuvad.data.encoded import EncodedCorpus
from anuvad.data.prepare import (
    PreparedData,
    load_prepared,
    prepare_data,
    prepare_or_load,
)
from anuvad.data.prepared_folder import PREPARED_FILES
from anuvad.errors import DataError

Pairs = list[tuple[str, str]]


def _write_aligned(folder: Path, stem: str, pairs: Pairs) -> CorpusConfig:
    (folder / f"{stem}.en").write_text("".join(f"{en}\n" for en, _ in pairs), encoding="utf-8")
    (folder / f"{stem}.hi").write_text("".join(f"{hi}\n" for _, hi in pairs), encoding="utf-8")
    return CorpusConfig(name=stem, format="aligned", src=f"{stem}.en", tgt=f"{stem}.hi")


def _config(tmp_path: Path, pairs: Pairs, *, joint: bool = True) -> ExperimentConfig:
    """Train on all pairs but the last five (as an aligned pair plus a TSV), validate on those."""
    data_dir = tmp_path / "corpora"
    data_dir.mkdir()
    train = pairs[:-5]
    aligned = _write_aligned(data_dir, "train", train[:20])
    (data_dir / "more.tsv").write_text(
        "".join(f"{i}\t{en}\t{hi}\n" for i, (en, hi) in enumerate(train[20:])), encoding="utf-8"
    )
    tsv = CorpusConfig(name="more", format="tsv", path="more.tsv", src_column=1, tgt_column=2)
    valid = _write_aligned(data_dir, "dev", pairs[-5:])
    tokenizer = TokenizerConfig(joint=joint, vocab_size=150, src_vocab_size=120 if not joint else 0)
    data = DataConfig(
        src_lang="en",
        tgt_lang="hi",
        data_root=str(data_dir),
        train=[aligned, tsv],
        valid=[valid],
        tokenizer=tokenizer,
    )
    return ExperimentConfig(data=data)


def _assert_same(a: PreparedData, b: PreparedData) -> None:
    assert a.train.src == b.train.src and a.train.tgt == b.train.tgt
    assert a.valid.src == b.valid.src and a.valid.tgt == b.valid.tgt
    assert a.valid_src_text == b.valid_src_text
    assert a.valid_tgt_text == b.valid_tgt_text
    assert a.src_tokenizer.model_proto == b.src_tokenizer.model_proto
    assert a.tgt_tokenizer.model_proto == b.tgt_tokenizer.model_proto
    assert a.report == b.report
    assert a.train_src_text == b.train_src_text and a.train_tgt_text == b.train_tgt_text


def test_joint_round_trip(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    out = tmp_path / "prepared"
    prepared = prepare_data(_config(tmp_path, en_hi_pairs), out)
    written = sorted(p.name for p in out.iterdir())  # no temporary files
    assert written == sorted([*PREPARED_FILES, "train.src.txt", "train.tgt.txt"])
    assert (out / "src.spm.model").read_bytes() == (out / "tgt.spm.model").read_bytes()
    loaded = load_prepared(out)
    _assert_same(prepared, loaded)

    assert len(loaded.train) == 35
    assert len(loaded.valid) == 5
    assert loaded.valid_src_text == [en for en, _ in en_hi_pairs[-5:]]
    assert loaded.valid_tgt_text == [hi for _, hi in en_hi_pairs[-5:]]
    # Ids are the tokenizer's encoding of the text, without BOS/EOS.
    assert loaded.train.src[0] == loaded.src_tokenizer.encode(en_hi_pairs[0][0])
    assert loaded.tgt_tokenizer.decode(loaded.train.tgt[-1]) == en_hi_pairs[34][1]
    assert loaded.valid.tgt == loaded.tgt_tokenizer.encode_batch(loaded.valid_tgt_text)

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["src_vocab_size"] == report["tgt_vocab_size"] == 150
    assert report["data_config"]["tokenizer"]["joint"] is True
    assert report["train"]["filter"] == {
        "total": 35,
        "kept": 35,
        "dropped": {
            "empty": 0,
            "script": 0,
            "dev_overlap": 0,
            "duplicate": 0,
            "too_long": 0,
            "length_ratio": 0,
        },
    }
    assert [(c["name"], c["pairs"]) for c in report["train"]["corpora"]] == [
        ("train", 20),
        ("more", 15),
    ]
    assert report["valid"]["pairs"] == 5


def test_separate_vocabularies(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    out = tmp_path / "prepared"
    prepared = prepare_data(_config(tmp_path, en_hi_pairs, joint=False), out)
    assert prepared.src_tokenizer.vocab_size == 120
    assert prepared.tgt_tokenizer.vocab_size == 150
    assert (out / "src.spm.model").read_bytes() != (out / "tgt.spm.model").read_bytes()
    # The English model has no Devanagari pieces: Hindi encodes to unknowns there.
    assert 1 in prepared.src_tokenizer.encode("नमस्ते")
    _assert_same(prepared, load_prepared(out))


def test_saved_ids_are_compact_and_weights_only(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    out = tmp_path / "prepared"
    prepared = prepare_data(_config(tmp_path, en_hi_pairs), out)
    state = torch.load(out / "train.pt", weights_only=True)
    assert state["src_ids"].dtype == torch.int32
    assert state["src_offsets"].shape == (len(prepared.train) + 1,)
    assert state["tgt_ids"].numel() == sum(len(t) for t in prepared.train.tgt)


def test_training_pairs_are_cleaned_and_counted(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    noisy = [*en_hi_pairs[:3], en_hi_pairs[0], ("", "खाली"), *en_hi_pairs[3:]]
    out = tmp_path / "prepared"
    prepared = prepare_data(_config(tmp_path, noisy), out)
    dropped = prepared.report["train"]["filter"]["dropped"]
    assert dropped["duplicate"] == 1
    assert dropped["empty"] == 1
    total, kept = prepared.report["train"]["filter"]["total"], len(prepared.train)
    assert sum(dropped.values()) == total - kept == 2


def test_nothing_left_after_cleaning(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    config = _config(tmp_path, en_hi_pairs)
    config.data.max_len = 1
    with pytest.raises(DataError, match=r"no training pairs left after cleaning.*too_long=35"):
        prepare_data(config, tmp_path / "prepared")
    assert not (tmp_path / "prepared" / "report.json").exists()


def test_empty_train_list_is_an_error(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    config = _config(tmp_path, en_hi_pairs)
    config.data.train = []
    with pytest.raises(DataError, match=r"data\.train lists no corpus"):
        prepare_data(config, tmp_path / "prepared")


def test_empty_valid_list_is_allowed(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    config = _config(tmp_path, en_hi_pairs)
    config.data.valid = []
    out = tmp_path / "prepared"
    prepare_data(config, out)
    loaded = load_prepared(out)
    assert len(loaded.valid) == 0
    assert loaded.valid_src_text == loaded.valid_tgt_text == []


def test_valid_empty_side_names_the_line(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    config = _config(tmp_path, en_hi_pairs)
    dev_hi = tmp_path / "corpora" / "dev.hi"
    lines = dev_hi.read_text(encoding="utf-8").splitlines()
    lines[2] = "   "
    dev_hi.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3 of .*dev\.en / .*dev\.hi: target side is empty"):
        prepare_data(config, tmp_path / "prepared")


def test_load_prepared_names_missing_files_and_the_fix(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    with pytest.raises(DataError, match=r"missing src\.spm\.model.*anuvad prepare --config"):
        load_prepared(tmp_path / "nowhere")
    out = tmp_path / "prepared"
    prepare_data(_config(tmp_path, en_hi_pairs), out)
    (out / "valid.pt").unlink()
    with pytest.raises(DataError, match=r"missing valid\.pt\).*anuvad prepare"):
        load_prepared(out)


def test_load_prepared_rejects_corrupt_files(tmp_path: Path, en_hi_pairs: Pairs) -> None:
    out = tmp_path / "prepared"
    prepare_data(_config(tmp_path, en_hi_pairs), out)
    (out / "train.pt").write_bytes(b"garbage")
    with pytest.raises(DataError, match=r"train\.pt is not a readable encoded corpus"):
        load_prepared(out)


def test_prepare_or_load_reuses_only_matching_folders(
    tmp_path: Path, en_hi_pairs: Pairs, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path, en_hi_pairs)
    out = tmp_path / "prepared"
    first = prepare_or_load(config, out)  # nothing there yet: prepares
    stamp = (out / "train.pt").stat().st_mtime_ns
    config.data.max_tokens *= 2  # batching only: the folder is still valid
    _assert_same(first, prepare_or_load(config, out))
    assert (out / "train.pt").stat().st_mtime_ns == stamp
    longest = sorted(
        max(len(s), len(t)) for s, t in zip(first.train.src, first.train.tgt, strict=True)
    )
    config.data.max_len = longest[len(longest) // 2]  # changes the cleaning: prepares again
    with caplog.at_level(logging.WARNING, logger="anuvad.data.prepare"):
        again = prepare_or_load(config, out)
    assert "preparing it again" in caplog.text
    assert len(again.train) < len(first.train)
    assert len(load_prepared(out).train) == len(again.train)


def test_encoded_corpus_round_trip_with_empty_sequences(tmp_path: Path) -> None:
    corpus = EncodedCorpus(src=[[5, 6], [], [7]], tgt=[[8], [9, 10, 11], []])
    corpus.save(tmp_path / "c.pt")
    loaded = EncodedCorpus.load(tmp_path / "c.pt")
    assert (loaded.src, loaded.tgt) == (corpus.src, corpus.tgt)
    EncodedCorpus(src=[], tgt=[]).save(tmp_path / "empty.pt")
    assert len(EncodedCorpus.load(tmp_path / "empty.pt")) == 0
    with pytest.raises(ValueError, match="target sequences"):
        EncodedCorpus(src=[[1]], tgt=[])
