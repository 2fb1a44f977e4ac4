"""Decoding speed of an imported Marian model of opus-mt-en-hi's shape: anuvad's torch engine,
its CTranslate2 export and ``MarianMTModel.generate`` on the very same weights.

Nothing is downloaded. A Hugging Face Marian folder is built offline with random weights and
opus-mt-en-hi's shape (d_model 512, 6 + 6 layers, 8 heads, FFN 2048, swish, one shared
vocabulary of 61,950 entries, embeddings and output layer tied, 512 positions, beam 4 and
``bad_words_ids`` [[pad]] in its generation config): SentencePiece models trained on
``--src`` (English) and ``--tgt-text`` (Hindi), ``vocab.json`` laid out as the OPUS-MT
conversions lay it out (``</s>`` 0, ``<unk>`` 1, the pieces of both models, dummy pieces
``▁w<N>`` up to the full size, ``<pad>`` last) and weights drawn with ``init_std`` 0.02.
A random model repeats one piece and would end at once or never under a constant EOS bias, so
EOS's row of the tied embedding and its ``final_logits_bias`` are fitted (:func:`fit_eos_row`,
on the last 24 lines of ``--src``) so that greedy outputs end at about ``--length-ratio`` times
their source length. The folder is imported with
:func:`anuvad.interop.importer.import_marian` and the import exported with
:func:`anuvad.inference.ct2.export.export_ctranslate2` (float32 and int8).

Then, on the first ``--sentences`` lines of ``--src``:

* ``anuvad torch``: :class:`anuvad.inference.translator.Translator` on the imported file: greedy;
  beam 4 with the settings the import took from ``generation_config.json`` (|Y|^1.0
  normalization, Hugging Face's stopping heuristic: "beam 4 (own settings)"); and beam 4 with
  ``early_stopping="finished"`` (a sentence stops once 4 hypotheses have ended: "beam 4,
  finished"), the rule CTranslate2 offers, for a like-for-like comparison with it;
* ``ctranslate2 float32`` / ``int8``: :class:`anuvad.inference.ct2.engine.CT2Translator` on the
  exports: greedy and "beam 4, finished" (the same |Y|^1.0 ranking);
* ``generate``: ``MarianMTModel.generate`` on the folder with its own generation config, greedy
  and beam 4 (``forced_eos_token_id`` off: anuvad and CTranslate2 stop at the limit without
  forcing EOS).

Every engine gets the same batches (16 sentences, sorted by source length), the same output
limit (``--max-len`` tokens, EOS not counted) and ``--threads`` threads
(``torch.set_num_threads``; CTranslate2's ``intra_threads``). The PyTorch engines run first,
every repeat of them (a CTranslate2 call slows PyTorch's later calls in the same process: see
bench/decode.py), then CTranslate2; each cell reports the median of ``--repeats`` timed runs
(interleaved across the cells) after one untimed call on 4 sentences. Reported: sentences/s,
output tokens/s (EOS included), the speed in sentences/s relative to ``generate``'s in the same
run (for "beam 4, finished": to generate's beam 4 with its own settings, a different stopping
rule), and how many outputs equal (token for token) those of anuvad torch and of generate
under the same search.

It takes about 2.6 s per sentence and repeat on 2 AVX2 cores (half of it ``generate``'s beam
search), plus 1.5 minutes to build the folder. Run from the repository root on a quiet machine
(the figures go to docs/benchmarks.md)::

    .venv/bin/python bench/import_decode.py --src ../shared/data/en-hi/dev-general/ntrex128.en \\
        --tgt-text ../shared/data/en-hi/dev-general/ntrex128.hi --sentences 48 --repeats 3
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import sentencepiece as spm
import torch

from anuvad.inference.translator import Translator
from anuvad.interop.importer import import_marian

VOCAB_SIZE = 61_950  # opus-mt-en-hi's vocab.json
BATCH = 16


@dataclasses.dataclass
class Cell:
    """One engine and search: its timed runs and (from the first) its outputs."""

    engine: str
    search: str
    seconds: list[float] = dataclasses.field(default_factory=list)
    outputs: list[tuple[str, ...]] = dataclasses.field(default_factory=list)
    tokens: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


# ----------------------------------------------------------------------------------------------
# The Marian folder
# ----------------------------------------------------------------------------------------------


def train_spm(lines: Sequence[str], vocab_size: int) -> bytes:
    """A unigram SentencePiece model with Marian's special ids (unk 0, bos 1, eos 2, no pad)."""
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.Train(
        sentence_iterator=iter(lines),
        model_writer=buffer,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=2,
    )
    return buffer.getvalue()


def pieces_of(model: bytes) -> list[str]:
    processor = spm.SentencePieceProcessor()
    processor.LoadFromSerializedProto(model)
    return [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]


def marian_vocab(source: list[str], target: list[str], size: int) -> dict[str, int]:
    """OPUS-MT's layout: ``</s>`` 0, ``<unk>`` 1, every piece once, dummy pieces up to
    ``size``, ``<pad>`` last."""
    ordered = ["</s>", "<unk>"]
    seen = set(ordered)
    for piece in [*source, *target]:
        if piece not in seen and piece not in ("<s>", "</s>", "<unk>"):
            ordered.append(piece)
            seen.add(piece)
    dummy = 0
    while len(ordered) < size - 1:
        if f"▁w{dummy}" not in seen:
            ordered.append(f"▁w{dummy}")
        dummy += 1
    return {piece: i for i, piece in enumerate([*ordered, "<pad>"])}


def fit_eos_row(model: Any, tokenizer: Any, lines: Sequence[str], ratio: float) -> float:
    """Make a random model end its outputs at about ``ratio`` times their source length.

    A random model of this shape repeats one piece with a nearly constant EOS margin, so a
    constant EOS bias makes it end at once or never. Its last decoder states do carry the
    position and (through cross-attention) the source length, so EOS's row of the tied
    embedding and its ``final_logits_bias`` are set by ridge regression on those states
    (teacher-forced on the greedy outputs with EOS suppressed): the EOS logit is fitted to the
    best other logit + 0.5 * (step - ratio * source tokens + 1.5), which turns positive where
    the output should end. The row is also the source EOS's embedding, so the fit is repeated
    (six times, damped by half, the greedy path redone at the fourth) until the states it
    changes settle. Returns the residual (logits).
    """
    batch = tokenizer(list(lines), return_tensors="pt", padding=True)
    source = batch["attention_mask"].sum(1).float()  # EOS included
    steps = int(ratio * float(source.max())) + 10
    pad = model.config.pad_token_id
    row, bias = model.get_input_embeddings().weight, model.final_logits_bias
    residual = float("nan")
    with torch.no_grad():
        bias.zero_()
        for iteration in range(6):
            if iteration % 3 == 0:  # the greedy path moves little between fits
                out = model.generate(
                    **batch,
                    num_beams=1,
                    max_new_tokens=steps,
                    suppress_tokens=[0, pad],
                    forced_eos_token_id=None,
                )[:, :steps]
            found = model(**batch, decoder_input_ids=out, output_hidden_states=True)
            states = found.decoder_hidden_states[-1]  # (B, T, d), what the output layer reads
            logits = found.logits
            logits[..., [0, pad]] = float("-inf")
            best = logits.max(-1).values
            rows, length, width = states.shape
            step = torch.arange(length).float()[None, :]
            target = best + 0.5 * (step - (ratio * source).round()[:, None] + 1.5)
            x = torch.cat([states.reshape(-1, width), torch.ones(rows * length, 1)], 1)
            gram = x.T @ x + 100.0 * torch.diag(torch.tensor([1.0] * width + [0.0]))
            solution = torch.linalg.solve(gram, x.T @ target.reshape(-1))
            residual = float((x @ solution - target.reshape(-1)).std())
            row[0] = (row[0] + solution[:-1]) / 2
            bias[0, 0] = (bias[0, 0] + solution[-1]) / 2
    return residual


def write_folder(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The random Marian folder of opus-mt-en-hi's shape; returns facts for the report."""
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    english = Path(args.src).read_text(encoding="utf-8").splitlines()
    hindi = Path(args.tgt_text).read_text(encoding="utf-8").splitlines()
    source_spm = train_spm(english, args.spm_vocab)
    target_spm = train_spm(hindi, args.spm_vocab)
    (folder / "source.spm").write_bytes(source_spm)
    (folder / "target.spm").write_bytes(target_spm)
    source_pieces, target_pieces = pieces_of(source_spm), pieces_of(target_spm)
    vocab = marian_vocab(source_pieces, target_pieces, VOCAB_SIZE)
    missing = [p for p in [*source_pieces, *target_pieces] if p not in vocab and p != "<s>"]
    assert not missing and len(vocab) == VOCAB_SIZE, (missing[:5], len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(
        source_spm=str(folder / "source.spm"),
        target_spm=str(folder / "target.spm"),
        vocab=str(folder / "vocab.json"),
    )
    tokenizer.save_pretrained(str(folder))
    pad = vocab["<pad>"]
    config = MarianConfig(
        vocab_size=VOCAB_SIZE, decoder_vocab_size=VOCAB_SIZE, d_model=512, encoder_layers=6,
        decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
        encoder_ffn_dim=2048, decoder_ffn_dim=2048, activation_function="swish",
        max_position_embeddings=512, scale_embedding=True, share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True, pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad,
        forced_eos_token_id=0, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        init_std=0.02,
    )  # fmt: skip
    torch.manual_seed(args.seed)
    model = MarianMTModel(config).eval()
    residual = fit_eos_row(model, tokenizer, english[-24:], args.length_ratio)
    model.generation_config.num_beams = 4  # what OPUS-MT's conversion writes
    model.generation_config.max_length = 512
    model.generation_config.bad_words_ids = [[pad]]
    model.save_pretrained(str(folder))
    return {
        "spm": (len(source_pieces), len(target_pieces)),
        "eos_fit": residual,
        "parameters": sum(p.numel() for p in model.parameters()),
    }


# ----------------------------------------------------------------------------------------------
# The engines
# ----------------------------------------------------------------------------------------------

Decode = Callable[[Sequence[str]], tuple[list[tuple[str, ...]], int]]


def anuvad_plan(engine: Any, k: int, stopping: str | None, args: argparse.Namespace) -> Decode:
    """An anuvad engine (torch or CTranslate2) in batches of 16 with a fixed limit; ``stopping``:
    the beam's early-stopping rule (None: the model's own)."""
    changes: dict[str, Any] = {"beam_size": k, "max_len_a": 0.0, "max_len_b": args.max_len}
    if engine.engine == "ctranslate2":
        stopping = "finished"  # the only rule CTranslate2 offers (greedy: no matter)
    settings = engine.settings(**changes, early_stopping=stopping)
    settings = dataclasses.replace(settings, batch_size=BATCH, max_tokens=0)
    pieces = engine.tgt_tokenizer.id_to_piece

    def decode(lines: Sequence[str]) -> tuple[list[tuple[str, ...]], int]:
        results = engine.translate(lines, settings)
        tokens = sum(len(r.token_ids) + r.finished for r in results)
        return [tuple(pieces(r.token_ids)) for r in results], tokens

    return decode


def generate_plan(model: Any, tokenizer: Any, k: int, args: argparse.Namespace) -> Decode:
    """``generate`` on the same batches (16, sorted by source length as anuvad sorts them)."""
    eos, pad = model.config.eos_token_id, model.config.pad_token_id
    vocab = {i: p for p, i in tokenizer.get_vocab().items()}

    def decode(lines: Sequence[str]) -> tuple[list[tuple[str, ...]], int]:
        lengths = [len(ids) for ids in tokenizer(list(lines))["input_ids"]]
        order = sorted(range(len(lines)), key=lambda i: lengths[i])
        outputs: list[tuple[str, ...]] = [()] * len(lines)
        tokens = 0
        with torch.inference_mode():
            for start in range(0, len(order), BATCH):
                group = order[start : start + BATCH]
                batch = tokenizer([lines[i] for i in group], return_tensors="pt", padding=True)
                out = model.generate(**batch, num_beams=k, max_new_tokens=args.max_len)
                for i, row in zip(group, out[:, 1:].tolist(), strict=True):
                    ids = [t for t in row if t != pad]
                    if eos in ids:
                        ids = ids[: ids.index(eos) + 1]
                    tokens += len(ids)
                    outputs[i] = tuple(vocab[t] for t in ids if t != eos)
        return outputs, tokens

    return decode


def measure(cells: list[tuple[Cell, Decode]], lines: Sequence[str], repeats: int) -> None:
    """One untimed call on 4 sentences per cell, then ``repeats`` rounds over all cells
    (interleaved, so that a change of load falls on every cell alike)."""
    for _, decode in cells:
        decode(lines[:4])
    for _ in range(repeats):
        for cell, decode in cells:
            start = time.perf_counter()
            outputs, tokens = decode(lines)
            cell.seconds.append(time.perf_counter() - start)
            if not cell.outputs:
                cell.outputs, cell.tokens = outputs, tokens
            print(f"# {cell.engine}, {cell.search}: {cell.seconds[-1]:.1f} s", flush=True)


def equal(a: Cell, b: Cell) -> int:
    return sum(x == y for x, y in zip(a.outputs, b.outputs, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default="../shared/data/en-hi/dev-general/ntrex128.en")
    parser.add_argument("--tgt-text", default="../shared/data/en-hi/dev-general/ntrex128.hi")
    parser.add_argument("--sentences", type=int, default=200, help="first N lines of --src")
    parser.add_argument("--spm-vocab", type=int, default=8000, help="SentencePiece vocab size")
    parser.add_argument("--length-ratio", type=float, default=1.25, help="output / source tokens")
    parser.add_argument("--max-len", type=int, default=256, help="output tokens at most (no EOS)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per cell (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", help="keep the folder, import and exports here (default: temp)")
    parser.add_argument(
        "--reuse", action="store_true", help="take the Marian folder --work holds from a former run"
    )
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    scratch = None
    if args.work:
        work = Path(args.work)
    else:
        scratch = tempfile.TemporaryDirectory(prefix="anuvad-bench-import-")
        work = Path(scratch.name)
    lines = Path(args.src).read_text(encoding="utf-8").splitlines()[: args.sentences]
    load_before = os.getloadavg()[0]

    start = time.perf_counter()
    if args.reuse and (work / "ct2-int8").is_dir():
        facts: dict[str, Any] = {"eos_fit": float("nan"), "spm": "reused"}
    else:
        facts = write_folder(work / "opus-mt-en-hi-shape", args)
    built = time.perf_counter() - start
    imported = import_marian(str(work / "opus-mt-en-hi-shape"), work / "model.pt", "en", "hi")
    from anuvad.inference.ct2.export import export_ctranslate2

    exports = {
        q: export_ctranslate2(imported.path, work / f"ct2-{q}", quantization=q, force=True)
        for q in ("float32", "int8")
    }
    prepared = time.perf_counter() - start
    print(
        f"# folder built in {built:.0f} s (EOS fit residual {facts['eos_fit']:.2f}, spm pieces "
        f"{facts['spm']}), imported and exported in {prepared - built:.0f} s",
        flush=True,
    )

    from transformers import MarianMTModel, MarianTokenizer

    folder = str(work / "opus-mt-en-hi-shape")
    marian = MarianMTModel.from_pretrained(folder).eval()
    marian.generation_config.forced_eos_token_id = None  # anuvad stops at the limit unforced
    tokenizer = MarianTokenizer.from_pretrained(folder)
    translator = Translator.from_file(imported.path, device="cpu")
    own, finished = "beam 4 (own settings)", "beam 4, finished"
    torch_cells: list[tuple[Cell, Decode]] = [
        (Cell("anuvad torch", "greedy"), anuvad_plan(translator, 1, None, args)),
        (Cell("generate", "greedy"), generate_plan(marian, tokenizer, 1, args)),
        (Cell("anuvad torch", own), anuvad_plan(translator, 4, None, args)),
        (Cell("generate", own), generate_plan(marian, tokenizer, 4, args)),
        (Cell("anuvad torch", finished), anuvad_plan(translator, 4, "finished", args)),
    ]
    measure(torch_cells, lines, args.repeats)

    from anuvad.inference.ct2.engine import CT2Translator

    ct2_cells: list[tuple[Cell, Decode]] = []
    sizes = {}
    for quantization, out in exports.items():
        engine = CT2Translator(out, device="cpu", threads=args.threads)
        sizes[quantization] = (out / "model.bin").stat().st_size / 1e6
        for search, k in (("greedy", 1), (finished, 4)):
            name = f"ctranslate2 {quantization}"
            ct2_cells.append((Cell(name, search), anuvad_plan(engine, k, "finished", args)))
    measure(ct2_cells, lines, args.repeats)

    cells = [c for c, _ in torch_cells + ct2_cells]
    source_tokens = sum(len(ids) for ids in tokenizer(lines)["input_ids"])  # EOS included
    load_after = os.getloadavg()[0]
    print(
        f"\n{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
        f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"{args.threads} threads, load {load_before:.2f} before / {load_after:.2f} after; "
        f"{imported.parameters / 1e6:.1f} M parameters, vocabulary {VOCAB_SIZE}; {len(lines)} "
        f"sentences of {args.src} ({source_tokens} source tokens with EOS), batches of {BATCH} "
        f"sorted by length, at most {args.max_len} output tokens, median of {args.repeats}; "
        "CTranslate2 model.bin float32 "
        f"{sizes['float32']:.1f} MB, int8 {sizes['int8']:.1f} MB\n"
    )
    print(
        "| engine | search | seconds (runs) | sentences/s | output tokens/s | tokens/sentence "
        "| speed / generate's | = anuvad torch | = generate |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    by = {(c.engine, c.search): c for c in cells}
    for cell in cells:
        hf = by.get(("generate", cell.search), by[("generate", own)])
        ours = by[("anuvad torch", cell.search)]
        same_hf = f"{equal(cell, hf)}/{len(lines)}" if hf.search == cell.search else "-"
        runs = ", ".join(f"{s:.1f}" for s in cell.seconds)
        capped = sum(len(o) >= args.max_len for o in cell.outputs)
        print(
            f"| {cell.engine} | {cell.search} | {cell.median:.1f} ({runs}) "
            f"| {len(lines) / cell.median:.2f} | {cell.tokens / cell.median:.0f} "
            f"| {cell.tokens / len(lines):.1f} ({capped} at the limit) "
            f"| {hf.median / cell.median:.2f}x "
            f"| {equal(cell, ours)}/{len(lines)} | {same_hf} |"
        )
    if scratch is not None:
        scratch.cleanup()


if __name__ == "__main__":
    main()
