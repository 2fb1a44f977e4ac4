"""anuvad backtranslate: aligned synthetic pairs, resumable after a kill, usable as a tagged corpus.

The tiny English→Hindi model plays the reverse model here: its "monolingual" input is English and
the synthetic side Hindi; what matters is the bookkeeping, not the translation quality.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from anuvad.cli.main import main
from anuvad.errors import DataError
from anuvad.inference.backtranslate import backtranslate, output_paths
from anuvad.inference.translator import Translator

pytestmark = pytest.mark.usefixtures("one_thread")


class _KilledError(Exception):
    pass


@pytest.fixture(scope="module")
def engine(tiny_enhi_model: Path) -> Translator:
    return Translator.from_file(tiny_enhi_model, device="cpu")


def _mono(tmp_path: Path, en_hi_pairs: list[tuple[str, str]]) -> list[Path]:
    first = tmp_path / "news.en.gz"
    with gzip.open(first, "wt", encoding="utf-8") as handle:
        handle.write("".join(f"{en}\n" for en, _ in en_hi_pairs[:7]))
        handle.write("\n   \n")  # blank lines are skipped
    second = tmp_path / "more.en"
    second.write_text("".join(f"{en}\n" for en, _ in en_hi_pairs[7:12]), encoding="utf-8")
    return [first, second]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_pairs_are_aligned_and_equal_to_translating_directly(
    tmp_path: Path, engine: Translator, en_hi_pairs: list[tuple[str, str]]
) -> None:
    inputs = _mono(tmp_path, en_hi_pairs)
    result = backtranslate(engine, inputs, tmp_path / "out" / "bt", chunk_lines=4)
    synthetic, real = output_paths(tmp_path / "out" / "bt", "hi", "en")
    assert (result.synthetic_path, result.real_path) == (synthetic, real)
    sources = [en for en, _ in en_hi_pairs[:12]]
    expected = engine.translate_text(sources)
    kept = [(out, src) for out, src in zip(expected, sources, strict=True) if out.strip()]
    assert _lines(real) == [src for _, src in kept]
    assert _lines(synthetic) == [out.strip() for out, _ in kept]
    assert result.read == 14 and result.written == len(kept)
    assert result.skipped == 14 - len(kept)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["bt.en", "bt.hi"]


def test_without_the_cache_the_pairs_are_the_same(
    tmp_path: Path, engine: Translator, en_hi_pairs: list[tuple[str, str]]
) -> None:
    inputs = _mono(tmp_path, en_hi_pairs)
    backtranslate(engine, inputs, tmp_path / "a" / "bt")
    seen: list[bool] = []

    class Watched:  # the engine, recording whether each call used the cache
        model_file = engine.model_file

        def settings(self, **changes: Any) -> Any:
            return engine.settings(**changes)

        def translate(self, *args: Any, **kwargs: Any) -> Any:
            seen.append(kwargs["use_cache"])
            return engine.translate(*args, **kwargs)

    backtranslate(Watched(), inputs, tmp_path / "b" / "bt", use_cache=False)  # type: ignore[arg-type]
    assert seen and not any(seen)
    for lang in ("hi", "en"):
        assert _lines(tmp_path / "a" / f"bt.{lang}") == _lines(tmp_path / "b" / f"bt.{lang}")


def test_a_killed_run_resumes_to_the_uninterrupted_result(
    tmp_path: Path, engine: Translator, en_hi_pairs: list[tuple[str, str]]
) -> None:
    inputs = _mono(tmp_path, en_hi_pairs)
    whole = backtranslate(engine, inputs, tmp_path / "whole" / "bt", chunk_lines=3)
    prefix = tmp_path / "killed" / "bt"

    def kill_after_two_chunks(done: int, total: int) -> None:
        if done >= 6:
            raise _KilledError

    with pytest.raises(_KilledError):
        backtranslate(engine, inputs, prefix, chunk_lines=3, progress=kill_after_two_chunks)
    synthetic, real = output_paths(prefix, "hi", "en")
    assert not synthetic.exists() and not real.exists()  # no half-written final files
    # A chunk that was being written when the kill came: bytes past the progress record.
    with (prefix.parent / "bt.hi.partial").open("a", encoding="utf-8") as handle:
        handle.write("half a line")
    resumed = backtranslate(engine, inputs, prefix, chunk_lines=3)
    assert resumed.resumed_from == 6
    assert _lines(synthetic) == _lines(whole.synthetic_path)
    assert _lines(real) == _lines(whole.real_path)
    assert not (prefix.parent / "bt.progress.json").exists()
    # Done already: a second call changes nothing.
    again = backtranslate(engine, inputs, prefix, chunk_lines=3)
    assert again.written == resumed.written and _lines(synthetic) == _lines(whole.synthetic_path)


def test_a_kill_between_the_final_renames_is_repaired(
    tmp_path: Path, engine: Translator, en_hi_pairs: list[tuple[str, str]]
) -> None:
    inputs = _mono(tmp_path, en_hi_pairs)
    prefix = tmp_path / "bt"
    whole = backtranslate(engine, inputs, tmp_path / "whole", chunk_lines=5)
    synthetic, real = output_paths(prefix, "hi", "en")
    # The state after the first rename: the real side final, the synthetic side still partial.
    real.write_text(whole.real_path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "bt.hi.partial").write_text(
        whole.synthetic_path.read_text(encoding="utf-8"), encoding="utf-8"
    )
    record = {"inputs": [str(p) for p in inputs], "done": 14, "written": whole.written}
    (tmp_path / "bt.progress.json").write_text(json.dumps(record), encoding="utf-8")
    result = backtranslate(engine, inputs, prefix, chunk_lines=5)
    assert result.resumed_from == 14
    assert _lines(synthetic) == _lines(whole.synthetic_path)
    assert _lines(real) == _lines(whole.real_path)


def test_progress_of_other_inputs_is_refused(
    tmp_path: Path, engine: Translator, en_hi_pairs: list[tuple[str, str]]
) -> None:
    inputs = _mono(tmp_path, en_hi_pairs)
    record = {"inputs": ["elsewhere.hi"], "done": 3, "written": 3}
    (tmp_path / "bt.progress.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(DataError, match="belongs to a back-translation of"):
        backtranslate(engine, inputs, tmp_path / "bt")
    (tmp_path / "bt.progress.json").write_text("{", encoding="utf-8")
    with pytest.raises(DataError, match="not a back-translation progress record"):
        backtranslate(engine, inputs, tmp_path / "bt")


def test_cli_writes_pairs_and_names_a_bad_line(
    tmp_path: Path,
    tiny_enhi_model: Path,
    en_hi_pairs: list[tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    inputs = _mono(tmp_path, en_hi_pairs)
    args = ["backtranslate", "--model", str(tiny_enhi_model), "--device", "cpu", "--no-progress"]
    code = main([*args, "--input", *map(str, inputs), "--out-prefix", str(tmp_path / "c")])
    assert code == 0
    assert "synthetic pairs in" in capsys.readouterr().out
    assert len(_lines(tmp_path / "c.hi")) == len(_lines(tmp_path / "c.en")) > 0
    bad = tmp_path / "bad.en"
    bad.write_bytes(b"fine\n\xff broken\n")
    code = main([*args, "--input", str(bad), "--out-prefix", str(tmp_path / "d")])
    assert code == 2
    assert "line 2 is not valid UTF-8" in capsys.readouterr().err
    code = main([*args, "--input", str(bad), "--out-prefix", str(tmp_path / "e"), "--beam-size=0"])
    assert code == 2
