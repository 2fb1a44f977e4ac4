"""CPU speed of an imported M2M100-shaped model (issue 41 item 5): ``generate``, anuvad's torch
engine, anuvad's CTranslate2 export (int8) and CTranslate2's own converter of the same weights
(int8), beam 4, with the load time and peak memory of each, and CTranslate2's vocabulary
shortlist (``use_vmap``) on both int8 folders.

Nothing is downloaded. The model (``--shape d512``) is an ``M2M100ForConditionalGeneration``
with d_model 512, 6 + 6 layers, 8 heads, FFN 2048, or (``--shape nllb-600m --vocab 256206``)
NLLB-200 distilled 600M's shape (d_model 1024, 12 + 12 layers, 16 heads, FFN 4096, 256k
vocabulary: its load time, memory and speed, not its outputs), random weights (``init_std``
0.02, seed 0) and a vocabulary of ``--vocab`` rows laid out as
M2M100's tokenizer has it: fairseq's specials, the pieces of a SentencePiece model trained on
``--src`` and ``--tgt-text``, dummy pieces ``▁w<N>``, then the 100 ``__xx__`` language tokens and
fairseq's 8 made-up words. It is imported (``import_model``, pairs en-hi and hi-en) and exported
(``export_ctranslate2``, int8); ``TransformersConverter`` converts the same folder (int8).

A random model repeats pieces until the limit, so every engine decodes ``--max-len`` tokens a
sentence (the same work). Each engine runs in a process of its own (``--worker``) so that its
peak resident memory (``VmHWM``) and load time (from the start of the load to a loaded
model) are its own; the first 4 sentences translate once untimed, then all ``--sentences`` in
batches of 16, ``--repeats`` times (the median is reported).

The shortlist (``vmap.txt`` in the model folder, CTranslate2's format ``source<TAB>targets``):
every source piece maps to itself (copied names and numbers; a real shortlist adds its
dictionary translations), and the ``--shortlist`` most frequent pieces of ``--tgt-text`` plus
the language tokens are always candidates. Run from the repository root on a quiet machine::

    .venv/bin/python bench/ct2_imported.py --src ../shared/data/en-hi/dev-general/ntrex128.en \\
        --tgt-text ../shared/data/en-hi/dev-general/ntrex128.hi --sentences 32 --repeats 3
"""

from __future__ import annotations

import argparse
import collections
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sentencepiece as spm
import torch

ENGINES = ("generate", "anuvad-torch", "anuvad-ct2-int8", "own-ct2-int8")
# --shape: d_model, layers a side, heads, FFN width. "nllb-600m" is NLLB-200 distilled 600M's
# (with --vocab 256206 its vocabulary's size): its load time, memory and per-step cost on 2
# cores, with random weights (no download).
SHAPES = {"d512": (512, 6, 8, 2048), "nllb-600m": (1024, 12, 16, 4096)}
VMAP_ENGINES = ("anuvad-ct2-int8+vmap", "own-ct2-int8+vmap")


def build(
    work: Path, src: list[str], tgt: list[str], vocab: int, shape: str = "d512"
) -> dict[str, Path]:
    """Write the Hugging Face folder, its import, both int8 CTranslate2 folders and their
    shortlists under ``work``; return their paths."""
    from ctranslate2.converters import TransformersConverter
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    from anuvad.inference.ct2.export import export_ctranslate2
    from anuvad.interop.importer import import_model

    hf = work / "hf"
    hf.mkdir(parents=True, exist_ok=True)
    model_file = hf / "sentencepiece.bpe.model"
    spm.SentencePieceTrainer.Train(
        sentence_iterator=iter(src + tgt), model_prefix=str(hf / "spm"), vocab_size=8000,
        model_type="bpe", character_coverage=1.0, hard_vocab_limit=False, minloglevel=2,
        bos_id=1, eos_id=2, unk_id=0, pad_id=-1, num_threads=2,
    )  # fmt: skip
    (hf / "spm.model").rename(model_file)
    processor = spm.SentencePieceProcessor(model_file=str(model_file))
    pieces = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(3, processor.GetPieceSize()):
        pieces[processor.IdToPiece(i)] = len(pieces)
    languages, madeup = 100, 8
    while len(pieces) < vocab - languages - madeup:
        pieces[f"▁w{len(pieces)}"] = len(pieces)
    (hf / "vocab.json").write_text(json.dumps(pieces, ensure_ascii=False), encoding="utf-8")
    tokenizer = M2M100Tokenizer(
        vocab_file=str(hf / "vocab.json"), spm_file=str(model_file), src_lang="en", tgt_lang="hi"
    )
    tokenizer.save_pretrained(str(hf))
    config_path = hf / "tokenizer_config.json"
    tokenizer_config = json.loads(config_path.read_text(encoding="utf-8"))
    tokenizer_config["additional_special_tokens"] = list(tokenizer.lang_token_to_id)
    config_path.write_text(json.dumps(tokenizer_config, ensure_ascii=False), encoding="utf-8")
    width, layers, heads, ffn = SHAPES[shape]
    config = M2M100Config(
        vocab_size=len(tokenizer.encoder) + len(tokenizer.lang_token_to_id) + madeup,
        d_model=width, encoder_layers=layers, decoder_layers=layers,
        encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        max_position_embeddings=1024, dropout=0.0, attention_dropout=0.0, init_std=0.02,
        scale_embedding=True, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2,
    )  # fmt: skip
    torch.manual_seed(0)
    M2M100ForConditionalGeneration(config).eval().save_pretrained(str(hf))
    model = import_model(str(hf), work / "model.pt", pairs=[("en", "hi"), ("hi", "en")]).path
    ours = export_ctranslate2(model, work / "anuvad-ct2-int8", quantization="int8", force=True)
    theirs = work / "own-ct2-int8"
    TransformersConverter(str(hf)).convert(str(theirs), quantization="int8", force=True)
    return {"hf": hf, "model": model, "ours": ours, "theirs": theirs}


def write_shortlist(folders: list[Path], src: list[str], tgt: list[str], top: int) -> int:
    """Write ``vmap.txt`` into each folder; return the number of always-included pieces."""
    model = spm.SentencePieceProcessor(
        model_file=str(folders[0].parent / "hf" / "sentencepiece.bpe.model")
    )
    counts = collections.Counter(p for line in tgt for p in model.EncodeAsPieces(line))
    always = [p for p, _ in counts.most_common(top)] + ["__hi__", "__en__"]
    sources = sorted({p for line in src for p in model.EncodeAsPieces(line)})
    lines = ["\t" + " ".join(always)] + [f"{p}\t{p}" for p in sources]
    for folder in folders:
        (folder / "vmap.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(always)


def worker(args: argparse.Namespace) -> None:
    """One engine in this process: print a JSON line with its figures and outputs."""
    torch.set_num_threads(args.threads)
    texts = Path(args.src).read_text(encoding="utf-8").splitlines()[: args.sentences]
    work, name = Path(args.work), args.worker
    start = time.perf_counter()
    if name == "generate":
        from transformers import M2M100ForConditionalGeneration, M2M100Tokenizer

        model = M2M100ForConditionalGeneration.from_pretrained(str(work / "hf")).eval()
        tokenizer = M2M100Tokenizer.from_pretrained(str(work / "hf"), src_lang="en")
        forced = tokenizer.get_lang_id("hi")

        def run(batch: list[str]) -> list[list[str]]:
            encoded = tokenizer(batch, return_tensors="pt", padding=True)
            with torch.no_grad():
                out = model.generate(
                    **encoded, num_beams=4, early_stopping=True, length_penalty=1.0,
                    max_new_tokens=args.max_len + 1, forced_bos_token_id=forced,
                    suppress_tokens=[1],
                )  # fmt: skip
            rows = [row[2:] for row in out.tolist()]  # after the start and language tokens
            rows = [row[: row.index(2)] if 2 in row else row for row in rows]  # cut at EOS
            return [tokenizer.convert_ids_to_tokens([i for i in row if i != 1]) for row in rows]
    elif name == "anuvad-torch" or name.startswith("anuvad-ct2"):
        from anuvad.inference.ct2.engine import CT2Translator
        from anuvad.inference.translator import Translator

        engine: Any = (
            Translator.from_file(work / "model.pt", device="cpu", confidence=False)
            if name == "anuvad-torch"
            else CT2Translator(work / "anuvad-ct2-int8", device="cpu", threads=args.threads)
        )
        settings = engine.settings(
            beam_size=4, max_len_a=0.0, max_len_b=args.max_len, early_stopping="finished"
        )
        if name.endswith("+vmap"):
            engine.search.ct2 = _WithVmap(engine.ct2)

        def run(batch: list[str]) -> list[list[str]]:
            results = engine.translate(batch, settings)
            return [engine.tgt_tokenizer.id_to_piece(r.token_ids) for r in results]
    else:
        import ctranslate2
        from transformers import M2M100Tokenizer

        translator = ctranslate2.Translator(
            str(work / "own-ct2-int8"), device="cpu", intra_threads=args.threads
        )
        tokenizer = M2M100Tokenizer.from_pretrained(str(work / "hf"), src_lang="en")

        def run(batch: list[str]) -> list[list[str]]:
            sources = [tokenizer.convert_ids_to_tokens(tokenizer.encode(t)) for t in batch]
            out = translator.translate_batch(
                sources, target_prefix=[["__hi__"]] * len(batch), beam_size=4,
                max_decoding_length=args.max_len + 1, suppress_sequences=[["<pad>"]],
                use_vmap=name.endswith("+vmap"),
            )  # fmt: skip
            return [r.hypotheses[0][1:] for r in out]

    load_s = time.perf_counter() - start
    run(texts[:4])
    times: list[float] = []
    outputs: list[list[str]] = []
    for _ in range(args.repeats):
        outputs = []
        start = time.perf_counter()
        for i in range(0, len(texts), 16):
            outputs += run(texts[i : i + 16])
        times.append(time.perf_counter() - start)
    peak = peak_mib()
    print(json.dumps({"load_s": load_s, "times": times, "peak_mib": peak, "outputs": outputs}))


def peak_mib() -> float:
    """This process's peak resident memory (``VmHWM``: unlike ``ru_maxrss``, not inherited from
    the parent across ``exec``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _WithVmap:
    """A ``ctranslate2.Translator`` whose searches use the folder's vocabulary map."""

    def __init__(self, translator: Any) -> None:
        self.translator = translator

    def translate_batch(self, *args: Any, **kwargs: Any) -> Any:
        return self.translator.translate_batch(*args, use_vmap=True, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt-text", required=True)
    parser.add_argument("--sentences", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-len", type=int, default=48)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="d512")
    parser.add_argument("--shortlist", type=int, default=2000)
    parser.add_argument("--work", default="")
    parser.add_argument("--worker", default="")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    work = Path(args.work or tempfile.mkdtemp(prefix="ct2_imported."))
    src = Path(args.src).read_text(encoding="utf-8").splitlines()
    tgt = Path(args.tgt_text).read_text(encoding="utf-8").splitlines()
    began = time.perf_counter()
    if not (work / "own-ct2-int8").is_dir():
        build(work, src, tgt, args.vocab, args.shape)
    always = write_shortlist(
        [work / "anuvad-ct2-int8", work / "own-ct2-int8"], src[: args.sentences], tgt,
        args.shortlist,
    )  # fmt: skip
    print(f"built in {time.perf_counter() - began:.0f} s under {work}", flush=True)
    figures = {}
    for name in ENGINES + VMAP_ENGINES:
        command = [sys.executable, __file__, *sys.argv[1:], "--work", str(work), "--worker", name]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        figures[name] = json.loads(done.stdout.strip().splitlines()[-1])
        print(name, f"{statistics.median(figures[name]['times']):.1f} s", flush=True)
    n = args.sentences
    base = figures["anuvad-torch"]["outputs"]
    print(f"\n{n} sentences, beam 4, {args.max_len} output tokens at most, {args.threads} threads,"
          f" shortlist {always} pieces + the sources' pieces\n")  # fmt: skip
    print("| engine | load s | peak MiB | seconds (runs) | sentences/s | = anuvad torch |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, f in figures.items():
        median = statistics.median(f["times"])
        runs = ", ".join(f"{t:.1f}" for t in f["times"])
        same = sum(a == b for a, b in zip(f["outputs"], base, strict=True))
        print(f"| {name} | {f['load_s']:.2f} | {f['peak_mib']:.0f} | {median:.1f} ({runs}) | "
              f"{n / median:.2f} | {same}/{n} |")  # fmt: skip
    for name in VMAP_ENGINES:
        plain = figures[name.removesuffix("+vmap")]["outputs"]
        changed = sum(a != b for a, b in zip(figures[name]["outputs"], plain, strict=True))
        print(f"{name}: {changed}/{n} outputs change with the shortlist")
    ours, theirs = figures["anuvad-ct2-int8"]["outputs"], figures["own-ct2-int8"]["outputs"]
    same = sum(a == b for a, b in zip(ours, theirs, strict=True))
    print(f"anuvad int8 = own converter int8: {same}/{n}")


if __name__ == "__main__":
    main()
