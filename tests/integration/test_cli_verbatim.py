"""``anuvad translate --keep / --digits / --no-verbatim`` on the shipped English→Hindi model: the
command copies what a ``/translate`` request with the same fields copies (numbers, links, marked
names; :mod:`anuvad.inference.verbatim`), with the server's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.cli.main import main
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "trained_models"
GENERAL = sorted(SHIPPED.glob("enhi_*.pt"))

pytestmark = [
    pytest.mark.skipif(not GENERAL, reason="the shipped general model is not in this checkout"),
    pytest.mark.usefixtures("one_thread"),
]


def translate(tmp_path: Path, text: str, *options: str) -> int:
    """``anuvad translate`` of the one line ``text`` with greedy search; its exit status."""
    (tmp_path / "in.txt").write_text(text + "\n", encoding="utf-8")
    command = ["translate", "--model", str(GENERAL[-1]), "--device", "cpu", "--no-progress"]
    return main([*command, "--input", str(tmp_path / "in.txt"), "--beam-size", "1", *options])


@pytest.fixture
def policies(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The ``verbatim`` of every ``Translator.translate`` call from now on (the call still runs)."""
    seen: list[object] = []
    original = Translator.translate

    def spy(self: Translator, *args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("verbatim"))
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Translator, "translate", spy)
    return seen


def test_by_default_a_number_is_copied_as_the_server_copies_it(
    tmp_path: Path, policies: list[object], capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.server.planning import verbatim_policy
    from anuvad.server.schemas import TranslateRequest

    assert translate(tmp_path, "He scored 85 runs.") == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert "85" in line.split() and "८५" not in line
    # The same policy as a request that sets none of the fields.
    assert policies == [verbatim_policy(TranslateRequest.model_validate({"text": "85"}))]


def test_digits_devanagari_writes_the_number_in_devanagari_digits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert translate(tmp_path, "He scored 85 runs.", "--digits", "devanagari") == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert "८५" in line.split() and "85" not in line


def test_keep_copies_a_name_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert translate(tmp_path, "Rohit Sharma scored 85 runs.", "--keep", "Rohit Sharma") == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert "Rohit Sharma" in line and "85" in line.split()


def test_no_verbatim_turns_off_numbers_links_and_symbols_but_keeps_marked_names(
    tmp_path: Path, policies: list[object]
) -> None:
    options = ["--no-verbatim", "--keep", "Rohit Sharma", "--keep", "BCCI"]
    assert translate(tmp_path, "Rohit Sharma scored 85 runs.", *options, "--digits", "latin") == 0
    expected = Verbatim(numbers=False, links=False, symbols=False, keep=("Rohit Sharma", "BCCI"))
    assert policies == [expected]
    assert policies[0] != Verbatim(keep=("Rohit Sharma", "BCCI"))  # what the flag changes


def test_a_bad_digits_value_or_keep_string_is_refused_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anuvad.cli.options import DIGITS
    from anuvad.inference.verbatim import DIGITS as LIBRARY_DIGITS

    assert DIGITS == LIBRARY_DIGITS  # the CLI's choices are the library's
    with pytest.raises(SystemExit) as exit_:
        translate(tmp_path, "He scored 85 runs.", "--digits", "roman")
    assert exit_.value.code == 2
    assert "invalid choice: 'roman' (choose from 'latin', 'devanagari')" in capsys.readouterr().err
    assert translate(tmp_path, "He scored 85 runs.", "--keep", " ") == 2
    assert "keep.0: an empty string; leave it out" in capsys.readouterr().err
