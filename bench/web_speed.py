"""The web export's speed and size in headless Chromium against the server's torch engine on the
same sentences (issue 42, item 6; docs/benchmarks.md).

Per shipped direction and dtype (float32, int8): ``anuvad export --format web``, the export's
page opened in Debian's Chromium from a static server on 127.0.0.1 (onnxruntime-web's WASM
build, one thread: a static host sends no cross-origin isolation headers), then

* first translation: from navigation until the first sentence is translated (the model
  downloaded from the local server, compiled, one greedy sentence);
* typing: the first ``--typing`` NTREX-128 dev sentences one call each, greedy (batch 1);
* document: the first 50 sentences in one call, greedy and beam 4;

and the torch engine (anuvad's Translator, ``--threads`` threads) on the same calls. Reports
sentences/s, words/s (source words), the median time of a typing call, the download size, how
many outputs have the torch engine's tokens, and the 50-sentence document's chrF++ against the
references, greedy and beam 4 (raw outputs, before the document's mending: int8 against
float32 in the same browser).

    .venv/bin/python bench/web_speed.py --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import sacrebleu
import torch

from anuvad.checkpoint import load_model
from anuvad.inference.translator import Translator
from anuvad.web.browser_check import browser_problem, export_page
from anuvad.web.export import export_web

REPO = Path(__file__).resolve().parents[1]


def _torch_seconds(
    translator: Translator, texts: list[str], beam: int, one_by_one: bool
) -> tuple[float, list[float], list[list[int]]]:
    settings = translator.settings(beam_size=beam)
    calls: list[float] = []
    tokens: list[list[int]] = []
    started = time.perf_counter()
    for group in [[t] for t in texts] if one_by_one else [texts]:
        t0 = time.perf_counter()
        tokens += [r.token_ids for r in translator.translate(group, settings)]
        calls.append(time.perf_counter() - t0)
    return time.perf_counter() - started, calls, tokens


def _rates(sentences: int, words: int, seconds: float) -> str:
    return f"{sentences / seconds:.1f}, {words / seconds:.0f}"


HEADER = (
    "| direction | engine | download | first translation | typing: median s/sentence, "
    "sent/s, words/s | 50-sentence document greedy: sent/s, words/s | beam 4: sent/s, "
    "words/s | torch's tokens | document chrF++ greedy / beam 4 |"
)


def _chrf(texts: list[str], references: list[str]) -> float:
    return float(sacrebleu.corpus_chrf(texts, [references], word_order=2).score)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--typing", type=int, default=20)
    parser.add_argument("--document", type=int, default=50)
    parser.add_argument("--directions", nargs="+", default=["enhi", "hien"])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int8"])
    args = parser.parse_args()
    problem = browser_problem()
    if problem is not None:
        raise SystemExit(f"cannot open the export in Chromium: {problem}")
    torch.set_num_threads(args.threads)
    print(HEADER)
    print("|---|---|---|---|---|---|---|---|---|")
    for direction in args.directions:
        model = sorted((REPO / "data" / "trained_models").glob(f"{direction}_*.pt"))[-1]
        loaded = load_model(model)
        lines = (
            Path(args.data) / "en-hi" / "dev-general" / f"ntrex128.{loaded.config.data.src_lang}"
        )
        sentences = lines.read_text(encoding="utf-8").splitlines()
        typing, document = sentences[: args.typing], sentences[: args.document]
        references = (
            lines.with_suffix(f".{loaded.config.data.tgt_lang}")
            .read_text(encoding="utf-8")
            .splitlines()[: args.document]
        )
        raw = [
            [r.text for r in translator_outputs]
            for translator_outputs in (
                Translator(loaded).translate(document, Translator(loaded).settings(beam_size=k))
                for k in (1, 4)
            )
        ]
        words_typing = sum(len(s.split()) for s in typing)
        words_doc = sum(len(s.split()) for s in document)
        translator = Translator(loaded)
        started = time.perf_counter()
        first = Translator(load_model(model))
        first.translate(typing[:1], first.settings(beam_size=1))
        torch_first = time.perf_counter() - started
        t_type, t_calls, t_tokens = _torch_seconds(translator, typing, 1, True)
        t_doc, _, t_doc_tokens = _torch_seconds(translator, document, 1, False)
        t_beam, _, t_beam_tokens = _torch_seconds(translator, document, 4, False)
        size = model.stat().st_size / 1e6
        cells = [
            direction,
            f"torch ({args.threads} thread)",
            f"{size:.1f} MB (.pt)",
            f"{torch_first:.2f} s",
            f"{statistics.median(t_calls):.3f}, {_rates(len(typing), words_typing, t_type)}",
            _rates(len(document), words_doc, t_doc),
            _rates(len(document), words_doc, t_beam),
            "-",
            f"{_chrf(raw[0], references):.2f} / {_chrf(raw[1], references):.2f}",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)
        for dtype in args.dtypes:
            with tempfile.TemporaryDirectory() as work:
                export, _ = export_web(model, Path(work) / "web", dtype=dtype)
                download = json.loads((export / "model.json").read_text())["download_bytes"] / 1e6
                with export_page(export, timeout_s=300) as page:
                    _, first_s = page.translate(typing[:1], {"beam_size": 1})
                    first_total = page.load_seconds + first_s
                    calls = []
                    tokens = []
                    for text in typing:
                        result, seconds = page.translate([text], {"beam_size": 1})
                        calls.append(seconds)
                        tokens.append(result[0]["token_ids"])
                    doc, doc_s = page.translate(document, {"beam_size": 1})
                    beam, beam_s = page.translate(document, {"beam_size": 4})
            same = sum(a == b for a, b in zip(tokens, t_tokens, strict=True))
            same += sum(r["token_ids"] == b for r, b in zip(doc, t_doc_tokens, strict=True))
            same += sum(r["token_ids"] == b for r, b in zip(beam, t_beam_tokens, strict=True))
            total = len(typing) + 2 * len(document)
            type_s = sum(calls)
            cells = [
                direction,
                f"Chromium WASM {dtype}",
                f"{download:.1f} MB",
                f"{first_total:.2f} s",
                f"{statistics.median(calls):.3f}, {_rates(len(typing), words_typing, type_s)}",
                _rates(len(document), words_doc, doc_s),
                _rates(len(document), words_doc, beam_s),
                f"{same}/{total}",
                f"{_chrf([r['text'] for r in doc], references):.2f} / "
                f"{_chrf([r['text'] for r in beam], references):.2f}",
            ]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
