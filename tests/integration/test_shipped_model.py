"""What `make demo` serves: the newest model file in data/trained_models/, its size and storage,
its model card, and that it translates English into Hindi."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from anuvad.checkpoint import load_model, read_model_payload
from anuvad.cli.serve import shipped_model
from anuvad.errors import CheckpointError
from anuvad.inference.translator import Translator

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "trained_models"
DEVANAGARI = re.compile(r"[\u0900-\u097F]")


def test_the_newest_timestamp_of_the_pair_wins(tmp_path: Path) -> None:
    for name in (
        "enhi_d256_L3_V8000_20261122-020000.pt",
        "enhi_d256_L3_V16000_20261121-230000.pt",
        "hien_d256_L3_V8000_20261125-010000.pt",
        "aaa_d64_L2_V100_20261122-010000.pt",
    ):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "README.md").write_text("not a model", encoding="utf-8")
    assert shipped_model(tmp_path).name == "enhi_d256_L3_V8000_20261122-020000.pt"
    assert shipped_model(tmp_path, "hien").name == "hien_d256_L3_V8000_20261125-010000.pt"
    with pytest.raises(CheckpointError, match=r"no ende model file .*it holds aaa_"):
        shipped_model(tmp_path, "ende")


def test_an_empty_folder_says_how_to_get_a_model(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="--model PATH"):
        shipped_model(tmp_path)


@pytest.fixture(scope="module")
def model_path() -> Path:
    return shipped_model(SHIPPED)


def test_the_shipped_model_is_small_16_bit_and_described(model_path: Path) -> None:
    assert model_path.stat().st_size < 25 * 1024 * 1024
    state = read_model_payload(model_path)["state_dict"]
    dtypes = {tensor.dtype for tensor in state.values() if tensor.is_floating_point()}
    assert dtypes == {torch.float16}
    config = load_model(model_path).config
    assert (config.data.src_lang, config.data.tgt_lang) == ("en", "hi")
    assert (config.model.d_model, config.model.num_heads) == (256, 8)
    assert config.model.num_encoder_layers == config.model.num_decoder_layers == 3
    card = (SHIPPED / "README.md").read_text(encoding="utf-8")
    assert model_path.name in card, "the model card must describe the shipped file"
    assert "non-commercial" in card.lower()


def test_the_shipped_model_translates_english_into_hindi(
    model_path: Path, one_thread: None
) -> None:
    translator = Translator.from_file(model_path, device="cpu")
    sentences = ["A man is riding a horse.", "Two dogs are playing in the grass."]
    greedy = translator.translate(sentences, translator.settings(beam_size=1))
    beam = translator.translate(sentences, translator.settings(beam_size=4, nbest=2))
    for result in [*greedy, *beam]:
        assert result.finished
        assert len(DEVANAGARI.findall(result.text)) >= 5, result.text
    assert all(len(result.nbest) == 2 for result in beam)


def test_every_shipped_pair_is_small_16_bit_and_has_a_card() -> None:
    """What `make demo` serves by default: the newest model of every pair, each described."""
    from anuvad.cli.serve import shipped_models

    models = shipped_models(SHIPPED)
    assert models[0].name.startswith("enhi_")  # English->Hindi is the default
    card = (SHIPPED / "README.md").read_text(encoding="utf-8")
    for path in models:
        assert path.stat().st_size < 50 * 1024 * 1024
        state = read_model_payload(path)["state_dict"]
        assert {t.dtype for t in state.values() if t.is_floating_point()} == {torch.float16}
        assert path.name in card, f"the model card must describe {path.name}"


def test_the_shipped_hindi_english_model_translates_into_english(one_thread: None) -> None:
    paths = sorted(SHIPPED.glob("hien_*.pt"))
    if not paths:
        pytest.skip("no Hindi->English model is shipped")
    translator = Translator.from_file(shipped_model(SHIPPED, "hien"), device="cpu")
    assert translator.model_file.config.data.src_lang == "hi"
    results = translator.translate(
        ["एक आदमी घोड़े की सवारी कर रहा है।"], translator.settings(beam_size=4)
    )
    assert results[0].finished
    assert re.search(r"[A-Za-z]{3,}", results[0].text), results[0].text
    assert not DEVANAGARI.search(results[0].text), results[0].text


def test_capitals_and_title_case_translate_as_sentence_case_does(one_thread: None) -> None:
    """Issue 34 item 8: "THE TRAIN IS LATE." came back "ट्रेन पार्क किया गया है।" ("the train has
    been parked"); shouted and title-case sentences are now recased before the model sees them."""
    translator = Translator.from_file(sorted(SHIPPED.glob("enhi_*.pt"))[-1], device="cpu")
    settings = translator.settings(beam_size=4)
    normal = ["The train is late.", "Indian Railways runs many trains to Mumbai."]
    shouted = [s.upper() for s in normal]
    titled = ["The Train Is Late.", "Indian Railways Runs Many Trains To Mumbai."]
    want = [t.text for t in translator.translate(normal, settings)]
    assert translator.translate(shouted, settings)[0].text == want[0]
    assert translator.translate(titled, settings)[0].text == want[0]
    # Names the vocabulary knows in capitals keep them: the second sentence is close, not equal.
    for text in (t.text for t in translator.translate([shouted[1], titled[1]], settings)):
        assert len(DEVANAGARI.findall(text)) >= 10, text


def test_hindi_output_ends_with_a_danda_and_pairs_its_quotes(one_thread: None) -> None:
    """Issue 34 item 7: sentence ends mixed "." and "।", n-best lists offered "|" as a danda, a
    quotation mark was left open. Every candidate of a beam of 8 is checked."""
    translator = Translator.from_file(sorted(SHIPPED.glob("enhi_*.pt"))[-1], device="cpu")
    sentences = [
        "The captain scored 85 runs.",
        'He said, "The train is late."',
        "The weather is nice today.",
        "Two dogs are playing in the grass.",
        "Prices rose by 5 percent this year.",
    ]
    results = translator.translate(sentences, translator.settings(beam_size=8, nbest=8))
    for result in results:
        for candidate in result.nbest:
            text = candidate.text.rstrip()
            assert not re.search(r"[\u0900-\u097F\w][.|]$", text), text
            assert " | " not in text and not text.endswith(" |"), text
            assert text.count('"') % 2 == 0, text


@pytest.mark.parametrize("pair", ["enhi", "hien"])
def test_the_same_output_gets_the_same_confidence_at_any_beam(pair: str, one_thread: None) -> None:
    """Issue 34 item 6: "कप्तान ने 85 रन बनाए." got 24 % at beam 4 and 9 % at beam 12, because
    the beam's agreement was a feature. Both shipped directions are calibrated on signals of the
    source and the output alone, so an output found by two beams gets one confidence."""
    translator = Translator.from_file(sorted(SHIPPED.glob(f"{pair}_*.pt"))[-1], device="cpu")
    assert translator.calibration is not None, "every shipped direction has a confidence file"
    assert "nbest_agreement" not in translator.calibration.features
    sources = (
        ["The captain scored 85 runs.", "The weather is nice today.", "I like to read books."]
        if pair == "enhi"
        else ["कप्तान ने 85 रन बनाए।", "आज मौसम अच्छा है।", "मुझे किताबें पढ़ना पसंद है।"]
    )
    runs = [
        translator.translate(sources, translator.settings(beam_size=k), quality=True)
        for k in (4, 12)
    ]
    same = [(a, b) for a, b in zip(*runs, strict=True) if a.text == b.text]
    assert same, "no sentence kept its output from beam 4 to beam 12"
    for a, b in same:
        assert a.quality is not None and b.quality is not None
        assert a.quality.confidence == pytest.approx(b.quality.confidence, abs=1e-5)


def test_every_shipped_model_is_named_in_words_for_the_page() -> None:
    """A new model file kept its run's config name (round 7: "enhi_r7"), which
    anuvad.server.model_names did not know: the page showed "English → Hindi" and a list of
    corpus codes. Each shipped file needs a purpose and a plain-words summary."""
    from anuvad.server.model_names import SHIPPED as NAMED
    from anuvad.server.model_names import model_summary, model_title

    for path in sorted(SHIPPED.glob("*.pt")):
        payload = read_model_payload(path)
        name, data = payload["config"]["name"], payload["config"]["data"]
        title = model_title(name, data["src_lang"], data["tgt_lang"], payload["metadata"])
        assert "," in title, f"{path.name} ({name}): {title!r} says no purpose"
        assert name in NAMED or payload["metadata"].get("summary"), path.name
        assert model_summary(name, "", payload["metadata"]).startswith("trained on"), path.name
