"""The README's commands do what it says: the quickstart runs as written (on a slice of Multi30k, a
few steps), and `make demo` / `make test` install what it says."""

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


def make_plan(target: str, venv: Path) -> str:
    """The commands ``make TARGET`` would run with ``VENV=venv`` (``make -n``: nothing runs)."""
    result = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_demo_installs_what_serving_needs_and_make_test_the_dev_tools(tmp_path: Path) -> None:
    """Issue 40, item 9: `make demo` installed the [dev] extras (1.9 GB, 95 s, silent). On a
    fresh clone it installs torch, then anuvad without extras, saying each step first; `make
    test` after it adds [dev]; once both ran, neither installs again."""
    venv = tmp_path / "venv"
    demo = make_plan("demo", venv)
    installs = [line for line in demo.splitlines() if "pip install --quiet" in line]
    assert len(installs) == 2, demo
    torch_step, anuvad_step = installs
    assert 'pip install --quiet "torch==2.13.0" &&' in torch_step
    assert "pip install --quiet -e . &&" in anuvad_step  # without extras
    assert all(line.startswith('echo "anuvad: installing ') for line in installs)
    assert "[dev]" not in demo and f"{venv}/bin/anuvad serve" in demo
    assert '-e ".[dev]"' in make_plan("test", venv)  # a fresh clone's `make test`
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed-serve").touch()  # after `make demo`
    assert "pip install" not in make_plan("demo", venv)
    assert '-e ".[dev]"' in make_plan("test", venv)
    (venv / ".installed").touch()  # after `make test`
    for target in ("demo", "lint", "test-system"):
        assert "pip install" not in make_plan(target, venv), target
