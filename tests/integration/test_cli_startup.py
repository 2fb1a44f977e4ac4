"""What ``anuvad translate`` imports before it translates (issue 40, item 8: 6-7 s for one word,
of it 2.9 s importing torch through the glossary's boundary rules and 0.9 s compiling the
patterns of sacremoses' tokenizer, which the source normaliser never uses).

Import time is asserted by what gets imported, not by the clock: a busy machine cannot make
these tests flaky. docs/benchmarks.md has the measured times.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from anuvad.data.cleaning import moses_punct_normalizer

PROBE = """
import sys
from pathlib import Path
import anuvad.cli.main
from anuvad.cli.model_choice import choose_model
from anuvad.cli.options import read_glossary
from anuvad.data.cleaning import normalizer_for
glossary = read_glossary(Path(sys.argv[1]))
assert glossary is not None and len(glossary.entries) == 1, glossary
assert normalizer_for("en")("“Quoted” – text…") == '"Quoted" - text...'
assert choose_model("some/model.pt", ["hello"]).model == "some/model.pt"
print(" ".join(m for m in ("torch", "sacremoses.tokenize", "sacrebleu") if m in sys.modules))
"""


def test_the_command_line_reads_its_input_without_torch_or_the_moses_tokenizer(
    tmp_path: Path,
) -> None:
    """Parsing the arguments, reading a glossary, normalising English and choosing the model
    import neither torch (the engine loads it when it is needed) nor sacremoses' tokenizer."""
    (tmp_path / "terms.tsv").write_text("court\tअदालत\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "terms.tsv")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_normaliser_read_alone_is_sacremoses_own(lang: str) -> None:
    """The class read from ``sacremoses/normalize.py`` alone normalises as the package's."""
    from sacremoses import MosesPunctNormalizer

    texts = [
        "He said “yes” – then left…",
        "a  ( b ) , c 5 %",
        "«\u00a0x\u00a0»",
        "It‘s 12\u00a0345 ，x。 y",
        "bell\x07 and zero\u200bwidth",
    ]
    options = {"lang": lang, "pre_replace_unicode_punct": True, "post_remove_control_chars": True}
    alone, package = moses_punct_normalizer()(**options), MosesPunctNormalizer(**options)
    assert moses_punct_normalizer() is not MosesPunctNormalizer  # read from its own module
    assert [alone.normalize(t) for t in texts] == [package.normalize(t) for t in texts]
