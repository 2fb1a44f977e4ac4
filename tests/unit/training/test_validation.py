"""Validation's input-dependence check: one output for every input is reported, not hidden."""

from __future__ import annotations

import logging

import pytest

from anuvad.training.validation import distinct_share

SOURCES = [f"sentence number {i} ." for i in range(12)]


def test_one_output_for_every_input_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="anuvad.training.validation"):
        share = distinct_share(SOURCES, ["(S (NP DT NN )NP )S"] * 12)
    assert share == pytest.approx(1 / 12)
    assert "12 distinct dev inputs got only 1 distinct outputs" in caplog.text


def test_input_dependent_outputs_are_quiet(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="anuvad.training.validation"):
        share = distinct_share(SOURCES + SOURCES[:3], [s.upper() for s in SOURCES + SOURCES[:3]])
    assert share == 1.0  # repeated inputs count once
    assert caplog.text == ""


def test_a_tiny_dev_set_is_not_judged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="anuvad.training.validation"):
        assert distinct_share(SOURCES[:3], ["x"] * 3) == pytest.approx(1 / 3)
    assert caplog.text == ""
