"""``anuvad export MODEL --format web --out DIR``: a folder any static file host serves, which
translates in the browser with no server (issue 42).

The folder holds ``encoder.onnx`` and ``decoder.onnx`` (:mod:`anuvad.web.onnx_export`; their
weights stored as :mod:`anuvad.web.onnx_storage` says), both SentencePiece models, ``model.json``
(:mod:`anuvad.web.settings`), the JavaScript runtime (``anuvad.js`` and its modules,
:file:`static/`), the vendored onnxruntime-web and sentencepiece-js with their licences
(:mod:`anuvad.web.vendor`) and a README. The graphs, the SentencePiece models and the two
runtimes' WebAssembly (onnxruntime-web's binary, sentencepiece-js's module) are stored
gzip-compressed (``.gz``, unpacked by the page): what a page downloads is then small on any
static host, whether or not it compresses what it sends.
It is written complete or not at all: every problem with the model is named before anything is
written, the graphs are checked against the torch model with onnxruntime (float32: every
log-probability within :data:`MAX_ABS_DIFF`, before and after their storage), and the folder
is built beside ``DIR`` and renamed into place, with the permissions of any folder the user makes
(0755 folders, 0644 files under the usual umask 022: a static server running as another user reads
it); ``--force`` moves the old folder aside first and puts it back if the swap fails.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import torch

from anuvad.checkpoint import ModelFile, load_model
from anuvad.data.batching import collate_source
from anuvad.data.download import sha256_of
from anuvad.decoding.greedy import greedy_search
from anuvad.errors import CheckpointError
from anuvad.web.indic_rules import check as check_rules
from anuvad.web.onnx_check import OnnxGraphs, StepComparison, compare_step_log_probs
from anuvad.web.onnx_export import export_graphs
from anuvad.web.onnx_storage import store
from anuvad.web.settings import model_settings, web_problems
from anuvad.web.vendor import node_modules, vendor_runtime

logger = logging.getLogger(__name__)

DTYPES = ("float32", "float16", "int8")
MAX_ABS_DIFF = 1e-4  # float32 graphs vs torch: largest log-probability difference allowed
STATIC_DIR = Path(__file__).resolve().parent / "static"
FILES = {
    "encoder": "encoder.onnx.gz",
    "decoder": "decoder.onnx.gz",
    "source_spm": "source.model.gz",
    "target_spm": "target.model.gz",
}
# Stored packed besides FILES (the page reads them as it reads the model, then runs them).
WASM = "vendor/onnxruntime-web/ort-wasm-simd-threaded.wasm.gz"
SENTENCEPIECE_JS = "vendor/sentencepiece-js/index.js.gz"
HEADERS_FILE = """/*
  Cross-Origin-Opener-Policy: same-origin
  Cross-Origin-Embedder-Policy: require-corp
"""
RUNTIME_FILES = (
    "anuvad.js", "search.js", "text.js", "document.js", "sentences.js", "numbers.js", "worker.js",
    "index.html", "page.js",
    "README.md",
)  # fmt: skip
# Checked at export time, per source language: short, and with the features the runtime must
# get right (numbers; for the Indic languages the normaliser's danda, nukta and visarga cases,
# which indic_rules.check runs besides every character alone).
CHECK_SENTENCES = {
    "en": (
        "The train is late. It will come at 8 pm.",
        "Water boils at 100 degrees.",
        "She said that the meeting was moved to Monday.",
    ),
    "hi": (
        "ट्रेन देर से है। वह रात 8 बजे आएगी।",
        "पानी 100 डिग्री पर उबलता है।",
        "उसने कहा कि बैठक सोमवार को कर दी गई है।",
        "उसने कहा ''ज़रूर'' | अतः दुःख: समय 10:30 है…",
    ),
    "mr": (
        "गाडी उशिरा आहे. ती रात्री 8 वाजता येईल.",
        "पाणी 100 अंशांवर उकळते।",
        "तो म्हणाला ''ठीक'' | अतः दुःख: वेळ 10:30 आहे…",
    ),
    "ne": (
        "रेल ढिलो छ। यो राति 8 बजे आउँछ।",
        "पानी 100 डिग्रीमा उम्लिन्छ।",
        "उनले भने ''हुन्छ'' | अतः दुःख: समय 10:30 हो…",
    ),
}


def check_graphs(loaded: ModelFile, folder: Path, sentences: tuple[str, ...]) -> StepComparison:
    """Greedy-decode ``sentences`` with torch, then teacher-force the outputs through the graphs
    in ``folder`` (:func:`~anuvad.web.onnx_check.compare_step_log_probs`)."""
    sources = [
        ids[: loaded.config.model.max_positions - 1]
        for ids in loaded.src_tokenizer.encode_batch(list(sentences))
    ]
    src_ids, src_pad_mask = collate_source(sources)
    settings = loaded.config.decode.with_overrides(beam_size=1, nbest=1, no_repeat_ngram_size=0)
    targets = [h.token_ids for h in greedy_search(loaded.model, src_ids, src_pad_mask, settings)]
    return compare_step_log_probs(loaded.model, OnnxGraphs(folder), sources, targets)


def gzip_in_place(path: Path) -> Path:
    """Replace ``path`` by ``path.gz`` (gzip level 9, no time stamp: the same file gives the
    same bytes)."""
    packed = path.with_name(path.name + ".gz")
    packed.write_bytes(gzip.compress(path.read_bytes(), compresslevel=9, mtime=0))
    path.unlink()
    return packed


def usual_permissions(folder: Path) -> None:
    """Give ``folder`` (made by ``mkdtemp``: 0700) and everything in it the permissions of a
    folder and files the user makes: 0777 and 0666 less the umask (0755 and 0644 under 022)."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for path in folder.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def swap_into_place(building: Path, out: Path) -> None:
    """Rename ``building`` to ``out``; an existing ``out`` is renamed aside first and removed
    only once the new folder is in place (put back if the rename fails: nothing is lost)."""
    if not out.exists():
        building.rename(out)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
    aside.rmdir()  # a free name beside `out`
    out.rename(aside)
    try:
        building.rename(out)
    except OSError:
        aside.rename(out)
        raise
    shutil.rmtree(aside)


def _require_close(comparison: StepComparison, model_path: Path, stage: str) -> None:
    if comparison.max_abs_diff > MAX_ABS_DIFF:
        raise CheckpointError(
            f"the exported graphs ({stage}) differ from {model_path} by up to "
            f"{comparison.max_abs_diff:.2e} in a log-probability (allowed {MAX_ABS_DIFF:g}); "
            "this is a bug in anuvad's ONNX export, please report it"
        )


def export_web(
    model_path: str | Path, out: str | Path, dtype: str = "float32", force: bool = False
) -> tuple[Path, StepComparison]:
    """Write the browser export of ``model_path`` into ``out`` (complete or not at all).

    Args:
        model_path: an anuvad model file.
        out: the folder to write.
        dtype: "float32" (the torch engine's numbers: token-identical to it), "float16" (every
            weight rounded to float16) or "int8" (int8 weights); see
            :mod:`anuvad.web.onnx_storage`.
        force: replace ``out`` when it exists.

    Returns:
        The folder and how closely its graphs follow the torch model (float32 log-probabilities;
        for int8 how often the best token agrees).

    Raises:
        CheckpointError: the model has options the runtime does not support (all named), ``out``
            exists without ``force``, the runtime's npm packages are missing, or the float32
            graphs do not reproduce the model.
    """
    model_path, out = Path(model_path), Path(out)
    if dtype not in DTYPES:
        raise CheckpointError(f"--dtype for the web format must be one of {DTYPES}, got {dtype}")
    loaded = load_model(model_path, device="cpu")
    problems = web_problems(loaded)
    if problems:
        raise CheckpointError(
            f"{model_path}: the web runtime does not support " + "; ".join(problems)
        )
    if out.exists() and not force:
        raise CheckpointError(f"{out} exists; choose another --out or add --force to replace it")
    modules = node_modules()
    settings = model_settings(loaded, dtype, FILES, model_path.name)
    # What `anuvad serve --web` matches the export to a served model by.
    settings["source_sha256"] = sha256_of(model_path)
    sentences = CHECK_SENTENCES.get(loaded.config.data.src_lang, CHECK_SENTENCES["en"])
    if settings["normalization"]["kind"] == "indic":
        differences = check_rules(settings["normalization"], sentences)
        if differences:
            raise CheckpointError(
                "the web runtime's description of the Indic NLP normaliser differs from it ("
                + "; ".join(differences)
                + "); the library changed: update anuvad/web/indic_rules.py"
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with torch.no_grad():
            export_graphs(loaded.model, building)
        _require_close(check_graphs(loaded, building, sentences), model_path, "export")
        storage = store(building, dtype)
        comparison = check_graphs(loaded, building, sentences)
        if dtype == "float32":
            _require_close(comparison, model_path, "float16 storage of exact weights")
        settings["weights"] = {"float16": storage.as_float16, "float32": storage.as_float32}
        (building / "source.model").write_bytes(loaded.src_tokenizer.model_proto)
        (building / "target.model").write_bytes(loaded.tgt_tokenizer.model_proto)
        settings["third_party"] = vendor_runtime(building, modules)
        for name in [*FILES.values(), WASM, SENTENCEPIECE_JS]:
            gzip_in_place(building / name.removesuffix(".gz"))
        settings["wasm"], settings["sentencepiece_js"] = WASM, SENTENCEPIECE_JS
        for name in RUNTIME_FILES:
            shutil.copyfile(STATIC_DIR / name, building / name)
        # The headers that let the page run onnxruntime-web on several threads, in the file
        # Netlify and Cloudflare Pages read (other hosts: see the README).
        (building / "_headers").write_text(HEADERS_FILE, encoding="utf-8")
        # What a page downloads (shown before it does): every file but the docs and licences.
        settings["download_bytes"] = sum(
            f.stat().st_size
            for f in building.rglob("*")
            if f.is_file() and f.suffix not in (".md", ".txt") and f.name != "_headers"
        )
        (building / "model.json").write_text(
            json.dumps(settings, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        usual_permissions(building)
        swap_into_place(building, out)
    finally:
        if building.exists():
            shutil.rmtree(building)
    logger.info("web export %s: %s", out, comparison)
    return out, comparison


__all__ = [
    "CHECK_SENTENCES", "DTYPES", "FILES", "HEADERS_FILE", "MAX_ABS_DIFF", "SENTENCEPIECE_JS",
    "WASM", "check_graphs", "export_web", "gzip_in_place", "swap_into_place",
    "usual_permissions",
]  # fmt: skip
