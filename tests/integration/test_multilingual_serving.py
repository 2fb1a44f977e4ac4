"""Issue 41, item 4: one multilingual model file (an imported NLLB-200 folder, random weights,
built here) serves every pair it was imported for: ``GET /models``, ``POST /translate`` (by id
and by the text's script), the heatmap and the LibreTranslate-compatible routes list and route
both directions, each answering exactly as a translator of that pair alone; and the forced passes
behind confidence and the heatmap see the target-language token the search was forced to write.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from anuvad.inference.confidence import output_signals
from anuvad.inference.pairs import pair_translators, pairs_of
from anuvad.inference.translator import Translator
from anuvad.interop.importer import import_model
from anuvad.server.app import create_app
from m2m100_folders import ENGLISH, HINDI, Shape, write_m2m100_folder

pytest.importorskip("transformers")
pytestmark = pytest.mark.usefixtures("one_thread")

PAIRS = [("eng_Latn", "hin_Deva"), ("hin_Deva", "eng_Latn")]


@pytest.fixture(scope="module")
def nllb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nllb")
    folder = write_m2m100_folder(root / "hf", Shape(seed=7), ENGLISH, "hin_Deva")
    return import_model(str(folder), root / "nllb.pt", pairs=PAIRS).path


@pytest.fixture(scope="module")
def translators(nllb_file: Path) -> list[Translator]:
    return pair_translators(Translator.from_file(nllb_file, device="cpu", confidence=False))


def test_each_pair_is_a_translator_of_its_own_sharing_one_network(
    translators: list[Translator], nllb_file: Path
) -> None:
    english_hindi, hindi_english = translators
    assert [t.pair for t in translators] == PAIRS
    languages = [
        (t.model_file.config.data.src_lang, t.model_file.config.data.tgt_lang) for t in translators
    ]
    assert languages == [("en", "hi"), ("hi", "en")]  # what the server and its clients speak
    assert english_hindi.model is hindi_english.model and english_hindi.lock is hindi_english.lock
    alone = Translator.from_file(nllb_file, device="cpu", confidence=False, pair=("hi", "en"))
    assert alone.pair == ("hin_Deva", "eng_Latn")
    settings = alone.settings(beam_size=2)
    assert [r.text for r in hindi_english.translate(HINDI[:6], settings)] == [
        r.text for r in alone.translate(HINDI[:6], settings)
    ]


def test_a_one_pair_model_serves_as_itself(tiny_enhi_model: Path) -> None:
    translator = Translator.from_file(tiny_enhi_model, device="cpu", confidence=False)
    assert translator.pair is None and pairs_of(translator) == [translator]


def test_forced_passes_see_the_target_language_token(translators: list[Translator]) -> None:
    """The search's own log-probability of each greedy output equals a teacher-forced pass's
    (what confidence and the name speller read) only when the pass is fed the forced token."""
    english_hindi = translators[0]
    results = english_hindi.translate(ENGLISH[:8], english_hindi.settings(beam_size=1))
    sources = english_hindi.encode(ENGLISH[:8])
    outputs = [(r.token_ids, r.finished) for r in results]
    forced = output_signals(
        english_hindi.model, sources, outputs, tgt_prefix=english_hindi.tgt_prefix
    )
    plain = output_signals(english_hindi.model, sources, outputs)
    searched = [r.nbest[0].log_prob for r in results]
    assert [sum(s.log_probs) for s in forced] == pytest.approx(searched, abs=1e-4)
    assert [sum(s.log_probs) for s in plain] != pytest.approx(searched, abs=1e-4)
    for result, signals in zip(results, forced, strict=True):
        assert len(signals.log_probs) == len(result.token_ids) + int(result.finished)
        assert (
            signals.coverage is not None
            and len(signals.coverage) == len(english_hindi.encode([result.source])[0]) + 1
        )


def test_the_server_lists_and_routes_every_pair(
    translators: list[Translator], nllb_file: Path
) -> None:
    english_hindi, hindi_english = translators
    served = pairs_of(Translator.from_file(nllb_file, device="cpu", confidence=False))
    with TestClient(create_app(served)) as client:
        from anuvad.server.engine_batcher import EngineBatcher
        from anuvad.server.state import app_state

        first, second = app_state(client.app).models.values()  # type: ignore[arg-type]
        assert isinstance(second.batcher, EngineBatcher)  # one model thread for the network
        assert second.batcher.shared is first.batcher and second.batcher.engine is served[1]
        models = client.get("/models").json()["models"]
        assert [(m["id"], m["src_lang"], m["tgt_lang"]) for m in models] == [
            (f"{english_hindi.model_file.config.name}", "en", "hi"),
            (f"{hindi_english.model_file.config.name}", "hi", "en"),
        ]
        assert models[0]["id"].endswith("-en-hi") and models[1]["id"].endswith("-hi-en")
        # Named by id, and found by the text's script when no model is named.
        for text, model, translator in [
            (ENGLISH[0], models[0]["id"], english_hindi),
            (HINDI[0], models[1]["id"], hindi_english),
        ]:
            expected = translator.translate([text])[0].text
            by_id = client.post("/translate", json={"text": text, "model": model}).json()
            by_script = client.post("/translate", json={"text": text}).json()
            assert by_id["translations"][0]["text"] == expected and by_id["model"] == model
            assert by_script["translations"][0]["text"] == expected
            assert by_script["model"] == model
        view = client.post("/attention", json={"text": HINDI[1], "model": models[1]["id"]})
        assert view.status_code == 200
        body = view.json()
        rows, cols = len(body["tgt_tokens"]), len(body["src_tokens"])
        assert rows >= 1 and len(body["cross_attention"][0][0]) == rows
        assert all(len(row) == cols for row in body["cross_attention"][0][0])
        assert all(abs(sum(row) - 1) < 1e-3 for row in body["cross_attention"][0][0])
        assert client.get("/libretranslate/languages").json() == [
            {"code": "en", "name": "English", "targets": ["hi"]},
            {"code": "hi", "name": "Hindi", "targets": ["en"]},
        ]
        answer = client.post(
            "/libretranslate/translate", json={"q": HINDI[2], "source": "hi", "target": "en"}
        )
        assert answer.status_code == 200
        assert answer.json()["translatedText"] == hindi_english.translate([HINDI[2]])[0].text


def test_each_pair_is_calibrated_with_the_same_file_s_reverse_pair(
    nllb_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anuvad calibrate --pair hi-en --reverse-model <the same file>`` writes the pair's own
    confidence file; served, that pair gives calibrated confidences with the file's English→Hindi
    pair as its reverse model (the same network), and the other pair, uncalibrated, gives none."""
    import shutil

    from anuvad.cli.main import main

    model = tmp_path / "nllb.pt"
    shutil.copy(nllb_file, model)
    hindi_english = Translator.from_file(model, device="cpu", pair=("hi", "en"))
    outputs = hindi_english.translate_text(HINDI)
    # Odd lines get the model's own output as reference (good), even lines an unrelated one.
    references = [out if i % 2 else "Zebra quantum yields." for i, out in enumerate(outputs)]
    (tmp_path / "dev.hi").write_text("".join(s + "\n" for s in HINDI), encoding="utf-8")
    (tmp_path / "dev.en").write_text("".join(r + "\n" for r in references), encoding="utf-8")
    dev = f"general={tmp_path / 'dev.hi'},{tmp_path / 'dev.en'}"
    command = ["calibrate", "--model", str(model), "--pair", "hin_Deva-eng_Latn", "--dev", dev]
    command += ["--reverse-model", str(model), "--device", "cpu", "--no-progress"]
    assert main([*command, "--beam-size", "2"]) == 0
    assert "nllb.hi-en.confidence.json" in capsys.readouterr().out
    assert not (tmp_path / "nllb.confidence.json").exists()

    served = pairs_of(Translator.from_file(model, device="cpu"))
    first, second = served
    assert isinstance(first, Translator) and isinstance(second, Translator)
    assert first.calibration is None and first.reverse is None
    assert second.calibration is not None and second.reverse is not None
    assert second.reverse.model is second.model  # no second copy
    assert second.reverse.pair == ("eng_Latn", "hin_Deva")
    results = second.translate(HINDI[:6], second.settings(beam_size=2), quality=True)
    for result in results:
        assert result.quality is not None and result.quality.confidence is not None
        assert 0.0 <= result.quality.confidence <= 1.0
    with TestClient(create_app(served)) as client:
        models = client.get("/models").json()["models"]
        assert [m["confidence"] is not None for m in models] == [False, True]


def test_calibrating_without_a_pair_fits_the_default_pair_s_file(
    nllb_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --pair the file's default pair is calibrated, into the file its translator loads
    (a name without the pair would never be read); a pair the file lacks is refused."""
    import shutil

    from anuvad.cli.main import main

    model = tmp_path / "nllb.pt"
    shutil.copy(nllb_file, model)
    english_hindi = Translator.from_file(model, device="cpu")
    outputs = english_hindi.translate_text(ENGLISH)
    references = [out if i % 2 else "क ख ग घ" for i, out in enumerate(outputs)]
    (tmp_path / "dev.en").write_text("".join(s + "\n" for s in ENGLISH), encoding="utf-8")
    (tmp_path / "dev.hi").write_text("".join(r + "\n" for r in references), encoding="utf-8")
    dev = f"general={tmp_path / 'dev.en'},{tmp_path / 'dev.hi'}"
    base = ["calibrate", "--model", str(model), "--device", "cpu", "--no-progress"]
    rows = str(tmp_path / "rows")
    assert main([*base, "--dev", dev, "--beam-size", "2", "--save-rows", rows]) == 0
    assert (tmp_path / "nllb.en-hi.confidence.json").is_file()
    assert not (tmp_path / "nllb.confidence.json").exists()
    (tmp_path / "nllb.en-hi.confidence.json").unlink()
    assert main([*base, "--rows", rows]) == 0  # refit from rows: the same name, unbuilt
    assert (tmp_path / "nllb.en-hi.confidence.json").is_file()
    capsys.readouterr()
    loaded = Translator.from_file(model, device="cpu")
    assert loaded.calibration is not None and loaded.pair_name == "en-hi"
    assert main([*base, "--rows", rows, "--pair", "en-de"]) == 2
    assert "offers eng_Latn-hin_Deva, hin_Deva-eng_Latn, not en-de" in capsys.readouterr().err


def test_same_file_reverse_pair_shares_the_network_and_its_lock(nllb_file: Path) -> None:
    english_hindi = Translator.from_file(nllb_file, device="cpu", confidence=False)
    english_hindi.use_reverse(nllb_file)
    assert english_hindi.reverse is not None
    assert english_hindi.reverse.model is english_hindi.model
    assert english_hindi.reverse.lock is english_hindi.lock
