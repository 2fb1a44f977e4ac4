"""The JavaScript runtime of a web export, run under Node on onnxruntime-node, gives the torch
engine's tokens: greedy and beam 4, the tiny model and the shipped English→Hindi model (issue
42). Skipped, with the reason, where node or the npm packages (``make web-runtime``) are
missing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from anuvad.checkpoint import load_model
from anuvad.inference.translator import Translator

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')")
pytest.importorskip("onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')")

from anuvad.web.export import export_web
from anuvad.web.node_check import node_problem, node_translate
from anuvad.web.settings import normalization

REPO = Path(__file__).resolve().parents[3]
SHIPPED = {
    direction: sorted((REPO / "data" / "trained_models").glob(f"{direction}_*.pt"))
    for direction in ("enhi", "hien")
}
STATIC = REPO / "src" / "anuvad" / "web" / "static"
NO_NODE = node_problem()
pytestmark = [
    pytest.mark.skipif(NO_NODE is not None, reason=f"web runtime under Node: {NO_NODE}"),
    pytest.mark.usefixtures("one_thread"),
]

# Everyday text with what the text side must get right: numbers, quotes, dashes, a shouted
# and a title-case sentence (recased), parentheses, non-breaking spaces, a long sentence.
SENTENCES = [
    "The train is late. It will come at 8 pm.",
    "I am going home.",
    "What is your name?",
    "Water boils at 100 degrees Celsius.",
    "She said, “the meeting was moved to Monday.”",
    "THE SHOP IS CLOSED TODAY.",
    "How To Make Tea At Home",
    "The price rose by 2,500 rupees (about 30 dollars) in 2023.",
    "Call me at 9876543210 — or write to me.",
    "Please sit down.",
    "The children played in the park until the sun went down.",
    "Delhi is the capital of India.",
    "He bought three apples, two bananas and a mango.",
    "Is this the right way to the station?",
    "Scientists have found water on the moon.",
    "The river flows\u00a0through the city.",
    "It's raining – take an umbrella…",
    "Our school opens at 9:30 in the morning and closes at 4.",
    "The committee, which met on Tuesday, approved the new budget for the next financial "
    "year after a long discussion about roads, schools and hospitals in the villages.",
    "Thank you!",
]


def _equal_to_torch(model: Path, export: Path, sentences: list[str]) -> None:
    translator = Translator(load_model(model))
    found = node_translate(export, sentences, [{"beam_size": 1}, {"beam_size": 4}])
    for run in found["runs"]:
        settings = translator.settings(beam_size=run["options"]["beam_size"])
        expected = [t.token_ids for t in translator.translate(sentences, settings)]
        got = [r["token_ids"] for r in run["results"]]
        same = sum(a == b for a, b in zip(expected, got, strict=True))
        assert same == len(sentences), f"beam {settings.beam_size}: {same}/{len(sentences)}"


def test_tiny_model_js_search_equals_the_torch_engine(
    tiny_enhi_model: Path, tmp_path: Path
) -> None:
    export, check = export_web(tiny_enhi_model, tmp_path / "web")
    assert check.max_abs_diff < 1e-4
    _equal_to_torch(tiny_enhi_model, export, SENTENCES)


# The Hindi side: danda and pipe, nukta letters (precomposed and not), a visarga typed as ":",
# ZWJ/ZWNJ, curly quotes, numbers in both scripts.
HINDI = [
    "ट्रेन देर से है। वह रात 8 बजे आएगी।",
    "मैं घर जा रहा हूँ|",
    "आपका नाम क्या है?",
    "पानी 100 डिग्री सेल्सियस पर उबलता है।",
    "उसने कहा, “बैठक सोमवार को होगी।”",
    "क़िला बहुत पुराना है और ज\u093cरा ऊँचा भी।",
    "अतः दुख: का कारण क्या है?",
    "क्\u200dष और क्\u200cष अलग\u00a0दिखते हैं।",
    "कीमत 2023 में २,५०० रुपये (लगभग 30 डॉलर) बढ़ी।",
    "दिल्ली भारत की राजधानी है।",
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("direction", "sentences"), [("enhi", SENTENCES), ("hien", HINDI)], ids=["enhi", "hien"]
)
def test_shipped_model_js_search_equals_the_torch_engine(
    direction: str, sentences: list[str], tmp_path: Path
) -> None:
    if not SHIPPED[direction]:
        pytest.skip(f"no shipped {direction}_*.pt in data/trained_models")
    export, _ = export_web(SHIPPED[direction][-1], tmp_path / "web")
    _equal_to_torch(SHIPPED[direction][-1], export, sentences)


def test_int8_export_translates(tiny_enhi_model: Path, tmp_path: Path) -> None:
    float32, _ = export_web(tiny_enhi_model, tmp_path / "f32")
    int8, _ = export_web(tiny_enhi_model, tmp_path / "int8", dtype="int8")
    assert json.loads((int8 / "model.json").read_text())["dtype"] == "int8"
    assert (int8 / "decoder.onnx").stat().st_size < (float32 / "decoder.onnx").stat().st_size
    (run,) = node_translate(int8, SENTENCES[:3], [{"beam_size": 2, "nbest": 2}])["runs"]
    assert [len(r["candidates"]) >= 1 for r in run["results"]] == [True] * 3


def test_js_normaliser_equals_python(tiny_enhi_model: Path) -> None:
    from anuvad.data.cleaning import normalizer_for

    loaded = load_model(tiny_enhi_model)
    loaded.config.data.clean.normalize = True
    spec = normalization(loaded)
    texts = [
        *SENTENCES,
        "ＡＢＣ１２３，（test）！  spaced  out ",
        "«quoted» \u00a0»here« and `ticks'' and ‘single’ quotes",
        "a\u0007control\u200bchar and 5 % and 3\u00a0000",
        'dots..."after" and "before", then',
    ]
    script = (
        f"import {{ normalizer }} from {json.dumps((STATIC / 'text.js').as_uri())};\n"
        "import { readFileSync } from 'node:fs';\n"
        "const { spec, texts } = JSON.parse(readFileSync(0, 'utf8'));\n"
        "const normalize = normalizer(spec);\n"
        "process.stdout.write(JSON.stringify(texts.map(normalize)));\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=json.dumps({"spec": spec, "texts": texts}),
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    python = normalizer_for("en")
    assert json.loads(done.stdout) == [python(t) for t in texts]


def test_js_strip_equals_python_strip(tiny_enhi_model: Path) -> None:
    """A model trained without normalisation: the runtime strips what ``str.strip`` strips
    (JavaScript's trim() strips U+FEFF and keeps U+001C-U+001F and U+0085)."""
    loaded = load_model(tiny_enhi_model)
    loaded.config.data.clean.normalize = False
    spec = normalization(loaded)
    assert spec["kind"] == "strip"
    edges = ["\ufeff", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u3000", " \t\n"]
    texts = [f"{e}I am  going\x1fhome.{e}" for e in edges] + ["", " ", "\ufeff\x85\ufeff"]
    script = (
        f"import {{ normalizer }} from {json.dumps((STATIC / 'text.js').as_uri())};\n"
        "import { readFileSync } from 'node:fs';\n"
        "const { spec, texts } = JSON.parse(readFileSync(0, 'utf8'));\n"
        "process.stdout.write(JSON.stringify(texts.map(normalizer(spec))));\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=json.dumps({"spec": spec, "texts": texts}),
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert json.loads(done.stdout) == [t.strip() for t in texts]
