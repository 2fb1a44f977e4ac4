"""A served model's terms of use (issue 40 item 10): the model card's licence when it has one,
else non-commercial when any training corpus is, else nothing (never a guess)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anuvad.server.licences import model_licence

SHIPPED = Path(__file__).resolve().parents[3] / "data" / "trained_models"


def test_the_model_card_s_licence_comes_first() -> None:
    licence = model_licence(["hvg"], {"license": "apache-2.0"})
    assert licence is not None and licence.terms == "apache-2.0"
    assert "model card" in licence.why


def test_a_non_commercial_card_licence_is_said_in_words() -> None:
    """NLLB-200's card says cc-by-nc-4.0: the page must say non-commercial (issue 41 item 6)."""
    licence = model_licence([], {"license": "cc-by-nc-4.0"})
    assert licence is not None and licence.terms == "non-commercial use only (cc-by-nc-4.0)"
    commercial = model_licence([], {"license": "cc-by-4.0"})
    assert commercial is not None and commercial.terms == "cc-by-4.0"


def test_one_non_commercial_corpus_makes_the_model_non_commercial_and_is_named() -> None:
    licence = model_licence(["ud-pud", "hvg", "xquad"], {})
    assert licence is not None and licence.terms == "non-commercial research use only"
    assert "hvg (CC BY-NC-SA 4.0" in licence.why and "ud-pud" not in licence.why


def test_nothing_is_said_without_a_restricted_or_stated_licence() -> None:
    assert model_licence(["ud-pud", "xquad"], {}) is None  # CC BY-SA: commercial use allowed
    assert model_licence(["my-own-corpus"], {"license": " "}) is None  # not known: no guess


@pytest.mark.parametrize("pair", ["enhi", "hien"])
def test_the_shipped_models_are_non_commercial_as_their_cards_say(pair: str) -> None:
    from anuvad.checkpoint import model_info

    files = sorted(SHIPPED.glob(f"{pair}_*.pt"))
    if not files:
        pytest.skip(f"no shipped {pair} model")
    info = model_info(files[-1])
    corpora = [corpus["name"] for corpus in info["config"]["data"]["train"]]
    licence = model_licence(corpora, info["metadata"])
    assert licence is not None and licence.terms == "non-commercial research use only"
    assert "non-commercial, research use only" in (SHIPPED / "README.md").read_text()
