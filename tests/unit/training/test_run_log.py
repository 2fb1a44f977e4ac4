"""run.json and config.yaml: crash-safe writes, and a damaged run.json never blocks a resume."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from anuvad.config import ExperimentConfig, load_config, save_config
from anuvad.errors import ConfigError
from anuvad.training.launch import resume_settings
from anuvad.training.run_log import RUN_INFO_FILE, RunLogger, read_run_history

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("damage", ["", '[{"data_dir": "/x"', "{}", "[1, 2]", "\xff"])
def test_a_damaged_run_json_is_moved_aside_and_a_new_history_starts(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / RUN_INFO_FILE).write_text(damage, encoding="latin-1")
    save_config(load_config(REPO / "configs" / "tiny.yaml"), tmp_path / "config.yaml")
    with caplog.at_level(logging.WARNING):
        config, data_dir = resume_settings(tmp_path, [])  # no JSONDecodeError traceback
    assert data_dir is None and config.name == "tiny"
    assert "run.json is not" in caplog.text
    log = RunLogger(tmp_path, enabled=True)
    try:
        log.write_run_info({"data_dir": "/prepared"})
    finally:
        log.close()
    history = json.loads((tmp_path / RUN_INFO_FILE).read_text(encoding="utf-8"))
    assert len(history) == 1 and history[0]["data_dir"] == "/prepared"
    (aside,) = tmp_path.glob("run.json.corrupt-*")  # the damaged file is kept, not lost
    assert aside.read_bytes() == damage.encode("latin-1")
    assert resume_settings(tmp_path, [])[1] == Path("/prepared")


def test_run_history_appends_one_entry_per_start(tmp_path: Path) -> None:
    for data_dir in ("/a", "/b"):
        log = RunLogger(tmp_path, enabled=True)
        try:
            log.write_run_info({"data_dir": data_dir})
        finally:
            log.close()
    history = read_run_history(tmp_path / RUN_INFO_FILE)
    assert [entry["data_dir"] for entry in history] == ["/a", "/b"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_config_yaml_round_trips_without_temporary_files(tmp_path: Path) -> None:
    config = load_config(REPO / "configs" / "multi30k_en_de.yaml")
    save_config(config, tmp_path / "config.yaml")
    assert load_config(tmp_path / "config.yaml") == config
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


def test_log_every_zero_is_a_config_error() -> None:
    config = ExperimentConfig()
    config.train.log_every = 0
    with pytest.raises(ConfigError, match=r"train\.log_every must be at least 1"):
        config.validate()
