"""Sentences and the torch comparison shared by the web runtime's tests (tests/unit/web and
the system tier's shipped-model test)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from anuvad.checkpoint import load_model
from anuvad.inference.translator import Translator
from anuvad.web.node_check import node_translate

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
    "Škoda and Łódź are names. Ça va, Straße?",  # letters folded to ones the tokenizer reads
]


def equal_to_torch(model: Path, export: Path, sentences: list[str]) -> None:
    translator = Translator(load_model(model))
    found = node_translate(export, sentences, [{"beam_size": 1}, {"beam_size": 4}])
    for run in found["runs"]:
        settings = translator.settings(beam_size=run["options"]["beam_size"])
        expected = [t.token_ids for t in translator.translate(sentences, settings)]
        got = [r["token_ids"] for r in run["results"]]
        same = sum(a == b for a, b in zip(expected, got, strict=True))
        assert same == len(sentences), f"beam {settings.beam_size}: {same}/{len(sentences)}"


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


STATIC = Path(__file__).resolve().parents[1] / "src" / "anuvad" / "web" / "static"


def js_normalize(spec: dict[str, Any], texts: list[str], timeout: float = 120) -> list[str]:
    """``texts`` through the web runtime's normaliser (``text.js``) for the export's
    normalisation ``spec``, run under Node."""
    script = (
        f"import {{ normalizer }} from {json.dumps((STATIC / 'text.js').as_uri())};\n"
        "import { readFileSync } from 'node:fs';\n"
        "const { spec, texts } = JSON.parse(readFileSync(0, 'utf8'));\n"
        "process.stdout.write(JSON.stringify(texts.map(normalizer(spec))));\n"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=json.dumps({"spec": spec, "texts": texts}),
        capture_output=True, text=True, check=True, timeout=timeout,
    )  # fmt: skip
    normalized: list[str] = json.loads(done.stdout)
    return normalized
