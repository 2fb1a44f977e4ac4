"""The README's quickstart commands run as written (on a slice of Multi30k, a few steps)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from anuvad.config import DATA_ENV_VAR

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get(DATA_ENV_VAR, REPO.parent / "shared" / "data"))

# Appended to `prepare` and `train` so that the quickstart runs in seconds.
SMALL = [
    "data.train.0.max_lines=400",
    "data.valid.0.max_lines=8",
    "data.tokenizer.vocab_size=600",
    "model.d_model=32",
    "model.num_heads=2",
    "model.d_ff=64",
    "train.max_steps=3",
    "train.max_minutes=0",
    "train.precision=fp32",
]


def quickstart_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- quickstart[^>]*-->\s*```bash\n(.*?)```", text, re.DOTALL)
    assert match, "README.md lost its quickstart block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def test_readme_quickstart_runs(tmp_path: Path) -> None:
    if not (DATA / "en-de" / "multi30k" / "train.en").is_file():
        pytest.skip(f"Multi30k not found under {DATA} (set {DATA_ENV_VAR})")
    commands = quickstart_commands()
    assert [c.split()[0] for c in commands if "|" not in c] == [".venv/bin/anuvad"] * 3
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    env = {**os.environ, DATA_ENV_VAR: str(DATA)}
    anuvad = [sys.executable, "-m", "anuvad.cli.main"]
    outputs = []
    for command in commands:
        stdin = None
        if "|" in command:  # echo "..." | .venv/bin/anuvad translate ...
            echo, command = (part.strip() for part in command.split("|", 1))
            stdin = shlex.split(echo)[1] + "\n"
        argv = shlex.split(command)
        assert argv[0] == ".venv/bin/anuvad"
        argv = anuvad + argv[1:]
        if argv[3] in ("prepare", "train"):
            argv += SMALL
        result = subprocess.run(
            argv,
            cwd=tmp_path,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, f"{command}\n{result.stderr[-2000:]}"
        outputs.append(result.stdout)
    assert (tmp_path / "runs" / "multi30k_en_de" / "model.pt").is_file()
    translate_output = outputs[2]
    assert len(translate_output.splitlines()) == 1
    assert "parameters:" in outputs[3]
