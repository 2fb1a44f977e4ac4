"""The web export against the torch engine on NTREX-128 dev (issue 42): token equality and speed.

Exports a model with ``anuvad export --format web`` (float32 and int8), translates the first
``--sentences`` NTREX-128 dev sentences with the export's JavaScript runtime under Node
(onnxruntime-node: the same ``anuvad.js``/search code as the page, a native onnxruntime instead
of the WASM one) and with anuvad's torch Translator, greedy and beam 4, and reports sentences
with identical tokens, the int8 export's chrF++ against float32's, and the seconds of each. The
browser's own figures (headless Chromium, onnxruntime-web) are a later step.

    .venv/bin/python bench/web_equality.py --model data/trained_models/enhi_*.pt --threads 1
    (the data: --data DIR or $ANUVAD_DATA, holding en-hi/dev-general/ntrex128.{en,hi})
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import sacrebleu
import torch

from anuvad.checkpoint import load_model
from anuvad.inference.translator import Translator
from anuvad.web.export import export_web
from anuvad.web.node_check import node_problem, node_translate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="an anuvad model file (.pt)")
    parser.add_argument("--data", default=os.environ.get("ANUVAD_DATA", "../shared/data"))
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    problem = node_problem()
    if problem is not None:
        raise SystemExit(f"cannot run the web runtime under Node: {problem}")
    torch.set_num_threads(args.threads)
    loaded = load_model(args.model)
    src, tgt = loaded.config.data.src_lang, loaded.config.data.tgt_lang
    folder = Path(args.data) / "en-hi" / "dev-general"
    sources = (folder / f"ntrex128.{src}").read_text(encoding="utf-8").splitlines()
    references = (folder / f"ntrex128.{tgt}").read_text(encoding="utf-8").splitlines()
    sources, references = sources[: args.sentences], references[: args.sentences]
    translator = Translator(loaded)
    runs = [{"beam_size": 1}, {"beam_size": 4}]
    with tempfile.TemporaryDirectory() as work:
        outputs: dict[tuple[str, int], list[str]] = {}
        for dtype in ("float32", "int8"):
            export, check = export_web(args.model, Path(work) / dtype, dtype=dtype)
            size = sum(p.stat().st_size for p in export.rglob("*") if p.is_file()) / 1e6
            print(f"{dtype}: export {size:.1f} MB; graphs vs torch: {check}")
            found = node_translate(export, sources, runs, threads=args.threads)
            print(f"  load {found['load_seconds']:.2f} s")
            for run in found["runs"]:
                k = run["options"]["beam_size"]
                started = time.perf_counter()
                expected = translator.translate(sources, translator.settings(beam_size=k))
                torch_seconds = time.perf_counter() - started
                same = sum(
                    e.token_ids == r["token_ids"]
                    for e, r in zip(expected, run["results"], strict=True)
                )
                texts = [r["text"] for r in run["results"]]
                outputs[(dtype, k)] = texts
                chrf = sacrebleu.corpus_chrf(texts, [references], word_order=2).score
                torch_chrf = sacrebleu.corpus_chrf(
                    [e.text for e in expected], [references], word_order=2
                ).score
                print(
                    f"  beam {k}: identical tokens {same}/{len(sources)}; "
                    f"js {run['seconds']:.2f} s, torch {torch_seconds:.2f} s; "
                    f"chrF++ js (raw text) {chrf:.2f}, torch (post-processed) {torch_chrf:.2f}"
                )
    for k in (1, 4):
        drop = sacrebleu.corpus_chrf(outputs[("int8", k)], [references], word_order=2).score
        full = sacrebleu.corpus_chrf(outputs[("float32", k)], [references], word_order=2).score
        print(f"beam {k}: int8 chrF++ {drop:.2f} vs float32 {full:.2f} ({drop - full:+.2f})")


if __name__ == "__main__":
    main()
