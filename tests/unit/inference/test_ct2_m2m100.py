"""Issue 41 item 5: the CTranslate2 engine serves imported M2M100 / NLLB-200 files, checked on
random-weight models built here (:mod:`m2m100_folders`), both pairs of each file, 20 sentences.

* float32: greedy outputs equal anuvad's torch engine token for token and string for string.
  Beam 4 equals it on every sentence outside CTranslate2's two documented rules
  (:mod:`anuvad.inference.ct2.search`: EOS ranked 2nd-4th right after the language token, and a
  search that reached the length limit), which these random models, their EOS tuned strong,
  meet often (the rates are printed).
* Against CTranslate2's own converter of the Hugging Face folder (``TransformersConverter``,
  offline): the same hypotheses, n-best lists included, greedy and beam 4, float32 and int8.
* int8 against anuvad's float32 torch engine: an agreement rate, printed, not asserted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

pytest.importorskip("ctranslate2", reason="the CTranslate2 engine needs pip install 'anuvad[ct2]'")
pytest.importorskip("transformers")

from anuvad.checkpoint import load_model
from anuvad.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from anuvad.inference.ct2.engine import CT2Translator
from anuvad.inference.ct2.export import export_ctranslate2
from anuvad.inference.ct2.pairs import ct2_pair_translators
from anuvad.inference.pairs import pairs_of
from anuvad.inference.translator import Translator
from anuvad.interop.importer import import_model
from m2m100_folders import ENGLISH, HINDI, Shape, write_m2m100_folder

pytestmark = pytest.mark.usefixtures("one_thread")

LIMIT = 24  # output tokens after the language token
K = 4
SHAPES = [
    Shape(),  # NLLB's tokenizer, d 32, 4 heads, 2 + 2 layers
    Shape(layers=(1, 1), d_model=16, heads=4, ffn=32, nllb=False, seed=3),  # M2M100's
]


def texts_of(pair: tuple[str, str]) -> list[str]:
    texts: list[str] = ENGLISH if pair[0].startswith("en") else HINDI
    return texts[:20]


@pytest.fixture(scope="module", params=SHAPES, ids=[s.name for s in SHAPES])
def model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(HF folder, anuvad model file, float32 export, int8 export) of one shape."""
    shape: Shape = request.param
    src, tgt = ("eng_Latn", "hin_Deva") if shape.nllb else ("en", "hi")
    root = tmp_path_factory.mktemp(shape.name)
    tgt_token = tgt if shape.nllb else f"__{tgt}__"
    folder = write_m2m100_folder(root / "hf", shape, ENGLISH, tgt_token)
    path = import_model(str(folder), root / "model.pt", pairs=[(src, tgt), (tgt, src)]).path
    fp32 = export_ctranslate2(path, root / "ct2")
    int8 = export_ctranslate2(path, root / "ct2-int8", quantization="int8")
    return folder, path, fp32, int8


def settings(engine: Any, k: int) -> Any:
    return engine.settings(
        beam_size=k, nbest=k, max_len_a=0.0, max_len_b=LIMIT, length_penalty=1.0,
        early_stopping="finished",
    )  # fmt: skip


def eos_rank_after_prefix(translator: Translator, texts: list[str]) -> list[int]:
    """Per text, EOS's rank among the tokens after BOS + the target-language token (torch)."""
    ranks = []
    with torch.no_grad():
        for ids in translator.encode(texts):
            src = torch.tensor([[*ids, EOS_ID]])  # (1, S)
            tgt = torch.tensor([[BOS_ID, *translator.tgt_prefix]])  # (1, 1 + P)
            logits = translator.model(src, tgt, torch.zeros_like(src, dtype=torch.bool))[0, -1]
            logits[[PAD_ID, BOS_ID]] = float("-inf")
            ranks.append(int((logits > logits[EOS_ID]).sum()))
    return ranks


def test_the_export_keeps_the_language_tokens_and_starts_from_the_copied_start_row(
    model: Any,
) -> None:
    _, path, fp32, _ = model
    info = json.loads((fp32 / "anuvad.json").read_text(encoding="utf-8"))
    assert info["metadata"]["language_tokens"] == load_model(path).metadata["language_tokens"]
    config = json.loads((fp32 / "config.json").read_text(encoding="utf-8"))
    assert config["decoder_start_token"] == "<decoder-start>" and config["add_source_eos"]


def test_one_engine_per_pair_sharing_one_loaded_model(model: Any) -> None:
    _, path, fp32, _ = model
    engine = CT2Translator(fp32, device="cpu")
    engines = pairs_of(engine)
    languages = load_model(path).metadata["language_tokens"]
    assert [e.pair for e in ct2_pair_translators(engine)] == [tuple(p) for p in languages["pairs"]]
    assert engines[0] is engine and all(e.ct2 is engine.ct2 for e in engines)  # type: ignore[attr-defined]
    names = [e.model_file.config.name for e in engines]
    assert len(set(names)) == 2 and all(n.endswith(("-en-hi", "-hi-en")) for n in names)
    back = engines[1].model_file.config.data
    assert (back.src_lang, back.tgt_lang) == ("hi", "en")


def test_greedy_equals_the_torch_engine_on_both_pairs(model: Any) -> None:
    _, path, fp32, _ = model
    model_file = load_model(path)
    engines = ct2_pair_translators(CT2Translator(fp32, device="cpu"))
    for first, engine in zip((True, False), engines, strict=True):
        texts = texts_of(engine.pair or ("en", "hi"))
        torch_engine = Translator(model_file, pair=engine.pair)
        ours = torch_engine.translate(texts, settings(torch_engine, 1))
        theirs = engine.translate(texts, settings(engine, 1))
        assert [t.token_ids for t in theirs] == [t.token_ids for t in ours]
        assert [t.text for t in theirs] == [t.text for t in ours]
        if first:  # the direction the random model's EOS was tuned for
            assert any(0 < len(t.token_ids) < LIMIT for t in ours), "some outputs end early"


def test_beam_equals_the_torch_engine_outside_ctranslate2s_two_rules(model: Any) -> None:
    _, path, fp32, _ = model
    model_file = load_model(path)
    for engine in ct2_pair_translators(CT2Translator(fp32, device="cpu")):
        texts = texts_of(engine.pair or ("en", "hi"))
        torch_engine = Translator(model_file, pair=engine.pair)
        ours = torch_engine.translate(texts, settings(torch_engine, K))
        theirs = engine.translate(texts, settings(engine, K))
        ranks = eos_rank_after_prefix(torch_engine, texts)
        clean = [
            i
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            if not 0 < ranks[i] < K and all(c.finished for c in [*a.nbest, *b.nbest])
        ]
        same = [i for i in range(len(texts)) if ours[i].token_ids == theirs[i].token_ids]
        print(f"{engine.pair}: beam {K} equal on {len(same)}/{len(texts)}, outside the rules "
              f"{len(clean)}/{len(texts)}")  # fmt: skip
        assert clean, "some sentences must fall outside both rules"
        for i in clean:
            assert theirs[i].token_ids == ours[i].token_ids, texts[i]
            assert theirs[i].text == ours[i].text
            assert theirs[i].score == pytest.approx(ours[i].score, abs=2e-3)


def _own_conversion(folder: Path, out: Path, quantization: str) -> Path:
    from ctranslate2.converters import TransformersConverter

    if not out.exists():
        TransformersConverter(str(folder)).convert(str(out), quantization=quantization)
    return out


@pytest.mark.parametrize("quantization", ["float32", "int8"])
def test_search_equals_ctranslate2s_own_converter(
    model: Any, quantization: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import ctranslate2

    folder, _, fp32, int8 = model
    own_folder = _own_conversion(folder, folder.parent / f"own-{quantization}", quantization)
    own = ctranslate2.Translator(str(own_folder), device="cpu", intra_threads=1)
    ours = CT2Translator(fp32 if quantization == "float32" else int8, device="cpu")
    for engine in ct2_pair_translators(ours):
        texts = texts_of(engine.pair or ("en", "hi"))
        sources = [engine.src_tokenizer.id_to_piece(ids) for ids in engine._encode(texts)]
        prefix = [engine.tgt_tokenizer.id_to_piece(engine.tgt_prefix)] * len(texts)
        for k in (1, K):
            options: dict[str, Any] = {
                "target_prefix": prefix, "beam_size": k, "num_hypotheses": k,
                "length_penalty": 0.0 if k == 1 else 1.0, "max_decoding_length": LIMIT + 1,
                "return_scores": True, "return_end_token": True,
            }  # fmt: skip
            mine = engine.ct2.translate_batch(sources, **options)
            # Their model forbids nothing: <pad> is suppressed as anuvad's export forbids it;
            # their folder does not append the source EOS.
            theirs = own.translate_batch(
                [[*s, "</s>"] for s in sources], suppress_sequences=[["<pad>"]], **options
            )
            assert [r.hypotheses for r in mine] == [r.hypotheses for r in theirs]
            for a, b in zip(mine, theirs, strict=True):
                assert a.scores == pytest.approx(b.scores, abs=1e-4)


def test_int8_greedy_mostly_agrees_with_the_float32_torch_engine(model: Any) -> None:
    _, path, _, int8 = model
    model_file = load_model(path)
    for engine in ct2_pair_translators(CT2Translator(int8, device="cpu")):
        texts = texts_of(engine.pair or ("en", "hi"))
        torch_engine = Translator(model_file, pair=engine.pair)
        for k in (1, K):
            ours = torch_engine.translate(texts, settings(torch_engine, k))
            theirs = engine.translate(texts, settings(engine, k))
            same = sum(a.token_ids == b.token_ids for a, b in zip(ours, theirs, strict=True))
            print(f"int8 {engine.pair} beam {k}: {same}/{len(texts)} equal to float32 torch")
            if k == 1:  # measured 19-20 of 20 greedy; beam 4 varies (3-19 of 20) on random weights
                assert same >= len(texts) * 3 // 4, f"int8 greedy: {same}/{len(texts)}"


def test_attention_leaves_out_the_language_tokens_row(model: Any) -> None:
    _, path, fp32, _ = model
    engine = CT2Translator(fp32, device="cpu")
    torch_engine = Translator(load_model(path), pair=engine.pair)
    text = ENGLISH[0]
    mine = engine.attention(text, settings(engine, 1))
    theirs = torch_engine.attention(text, settings(torch_engine, 1))
    assert mine.src_tokens == theirs.src_tokens
    assert mine.src_tokens[:1] == engine.src_tokenizer.id_to_piece(engine.src_prefix)
    assert mine.tgt_tokens == theirs.tgt_tokens
    rows = mine.cross_attention[0][0]
    assert len(rows) == len(mine.tgt_tokens) and all(len(r) == len(mine.src_tokens) for r in rows)
    assert all(sum(r) == pytest.approx(1.0, abs=1e-4) for r in rows)
