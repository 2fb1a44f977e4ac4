"""Shared fixtures: a small English–Hindi parallel text written in the tests themselves, and a
single-thread setting for tests of tiny tensors."""

from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch

from anuvad.config import ExperimentConfig, ModelConfig
from anuvad.data.batching import collate_source
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.constraints import OutputConstraint
from anuvad.decoding.greedy import greedy_search
from anuvad.decoding.search import Hypothesis
from anuvad.model.transformer import Transformer, build_model

if TYPE_CHECKING:
    from anuvad.inference.translator import Translator

REPO = Path(__file__).resolve().parents[1]
# The shared corpora sit beside the checkout (or wherever $ANUVAD_DATA points).
SHARED_DATA = Path(os.environ.get("ANUVAD_DATA") or REPO.parent / "shared" / "data")
# The user cache (CPU product choices, CTranslate2 exports, downloads) is a folder of this test
# session, not ~/.cache/anuvad, removed when the session ends (each run had left ~1.5 MB behind).
os.environ["ANUVAD_CACHE"] = tempfile.mkdtemp(prefix="anuvad-test-cache-")
atexit.register(shutil.rmtree, os.environ["ANUVAD_CACHE"], ignore_errors=True)

# Everyday sentences; Devanagari without precomposed nukta letters (SentencePiece's NFKC
# normalisation would decompose those, so they would not round-trip byte for byte).
EN_HI_PAIRS: list[tuple[str, str]] = [
    ("I am going home.", "मैं घर जा रहा हूँ।"),
    ("What is your name?", "आपका नाम क्या है?"),
    ("My name is Ravi.", "मेरा नाम रवि है।"),
    ("The weather is nice today.", "आज मौसम अच्छा है।"),
    ("Please sit down.", "कृपया बैठ जाइए।"),
    ("Where is the station?", "स्टेशन कहाँ है?"),
    ("I like to read books.", "मुझे किताबें पढ़ना पसंद है।"),
    ("She is my sister.", "वह मेरी बहन है।"),
    ("We will eat at eight.", "हम आठ बजे खाना खाएँगे।"),
    ("The children are playing in the garden.", "बच्चे बगीचे में खेल रहे हैं।"),
    ("This is a red car.", "यह एक लाल गाड़ी है।"),
    ("He drinks tea every morning.", "वह हर सुबह चाय पीता है।"),
    ("The man has short hair.", "आदमी के छोटे बाल हैं।"),
    ("Two dogs are running on the road.", "दो कुत्ते सड़क पर दौड़ रहे हैं।"),
    ("The computer screen is on.", "कंप्यूटर स्क्रीन चालू है।"),
    ("It is an indoor scene.", "यह एक इनडोर दृश्य है।"),
    ("I do not know.", "मुझे नहीं पता।"),
    ("Thank you very much.", "बहुत बहुत धन्यवाद।"),
    ("How much does this cost?", "इसकी कीमत कितनी है?"),
    ("Open the window.", "खिड़की खोलो।"),
    ("The sky is blue.", "आसमान नीला है।"),
    ("My father is a teacher.", "मेरे पिता अध्यापक हैं।"),
    ("The train is late.", "ट्रेन देर से है।"),
    ("Come here quickly.", "जल्दी यहाँ आओ।"),
    ("I have two brothers.", "मेरे दो भाई हैं।"),
    ("The book is on the table.", "किताब मेज़ पर है।"),
    ("She sings very well.", "वह बहुत अच्छा गाती है।"),
    ("We live in Delhi.", "हम दिल्ली में रहते हैं।"),
    ("The water is cold.", "पानी ठंडा है।"),
    ("He is reading a newspaper.", "वह अखबार पढ़ रहा है।"),
    ("There are 12 apples in the basket.", "टोकरी में 12 सेब हैं।"),
    ("The shop opens at 9 o'clock.", "दुकान 9 बजे खुलती है।"),
    ("Mother is cooking food.", "माँ खाना बना रही है।"),
    ("A woman is wearing a white shirt.", "एक औरत ने सफेद कमीज़ पहनी है।"),
    ("The clock is on the wall.", "घड़ी दीवार पर है।"),
    ("I will call you tomorrow.", "मैं तुम्हें कल फोन करूँगा।"),
    ("The bus is full.", "बस भरी हुई है।"),
    ("Birds are flying in the sky.", "पक्षी आसमान में उड़ रहे हैं।"),
    ("Do you speak Hindi?", "क्या आप हिंदी बोलते हैं?"),
    ("Yes, a little.", "हाँ, थोड़ी सी।"),
]


def small_model_config(size: int = 32, layers: int = 2, **fields: object) -> ModelConfig:
    """A small Transformer for unit tests: d_model ``size`` (4 heads, d_ff 2x; 2 heads from
    16 down), ``layers`` encoder and decoder layers, no dropout; ``fields`` set the rest
    (vocabulary sizes, max_positions, sharing ...)."""
    settings: dict[str, object] = {"dropout": 0.0, **fields}
    return ModelConfig(
        d_model=size,
        num_heads=4 if size > 16 else 2,
        d_ff=2 * size,
        num_encoder_layers=layers,
        num_decoder_layers=layers,
        **settings,  # type: ignore[arg-type]
    )


def random_model(seed: int, tgt_vocab_size: int, src_vocab_size: int = 30) -> Transformer:
    """An untrained one-layer model (seeded) for search tests: it loops and stops at random."""
    torch.manual_seed(seed)
    config = small_model_config(
        layers=1, src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size, max_positions=128
    )
    return build_model(config).eval()


def search_outputs(
    model: Transformer,
    sources: list[list[int]],
    beam: int,
    constraint: OutputConstraint | None,
    length_penalty: float = 0.6,
    max_len: tuple[float, int] = (3.0, 10),
    signals: bool = False,
) -> list[list[Hypothesis]]:
    """Greedy search (beam 1) or beam search with ``nbest=beam`` under ``constraint``: a list
    of hypotheses per source (``signals``: recording token log-probabilities and entropies)."""
    src_ids, src_pad_mask = collate_source(sources)
    a, b = max_len
    settings = DecodeConfig(
        beam_size=beam, length_penalty=length_penalty, max_len_a=a, max_len_b=b, nbest=beam
    )
    if beam == 1:
        greedy = greedy_search(
            model, src_ids, src_pad_mask, settings, constraint=constraint, signals=signals
        )
        return [[h] for h in greedy]
    return beam_search(
        model, src_ids, src_pad_mask, settings, constraint=constraint, signals=signals
    )


def encoded_texts(monkeypatch: pytest.MonkeyPatch, engine: object, method: str) -> list[str]:
    """The texts ``engine.<method>`` (its source encoder) is given from now on (it still
    encodes them): what the model reads."""
    seen: list[str] = []
    encode = getattr(engine, method)

    def spy(texts: list[str]) -> list[list[int]]:
        seen.extend(texts)
        return encode(texts)  # type: ignore[no-any-return]

    monkeypatch.setattr(engine, method, spy)
    return seen


@pytest.fixture
def use_cache_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every ``Translator.translate`` call from now on appends its ``use_cache`` here (the call
    still runs), e.g. to check that a command passes ``--no-cache`` on to the search."""
    from anuvad.inference.translator import Translator

    seen: list[bool] = []
    original = Translator.translate

    def spy(self: Translator, *args: object, **kwargs: object) -> object:
        seen.append(bool(kwargs.get("use_cache", True)))
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Translator, "translate", spy)
    return seen


@pytest.fixture
def en_hi_pairs() -> list[tuple[str, str]]:
    """Forty English–Hindi sentence pairs (a fresh list per test)."""
    return list(EN_HI_PAIRS)


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """Tiny tensors: one intra-op thread is fastest, and immune to a busy machine's contention.

    Use it per module: ``pytestmark = pytest.mark.usefixtures("one_thread")``.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def train_tiny_enhi_model(work: Path, steps: int = 60) -> Path:
    """Train the tiny preset on :data:`EN_HI_PAIRS` (a joint character vocabulary) for ``steps``
    updates and return its model file. A few seconds on one thread; it half-learns the pairs, so
    it writes Devanagari, which is all the server and web-page tests need."""
    from anuvad.config import CorpusConfig, load_config
    from anuvad.data.prepare import prepare_data
    from anuvad.training.trainer import Trainer

    work.mkdir(parents=True, exist_ok=True)
    (work / "pairs.en").write_text("".join(en + "\n" for en, _ in EN_HI_PAIRS), encoding="utf-8")
    (work / "pairs.hi").write_text("".join(hi + "\n" for _, hi in EN_HI_PAIRS), encoding="utf-8")
    corpus = CorpusConfig(name="pairs", src=str(work / "pairs.en"), tgt=str(work / "pairs.hi"))
    config = load_config(
        REPO / "configs" / "tiny.yaml",
        [f"train.max_steps={steps}", "train.max_minutes=0", "train.warmup_steps=50"],
    )
    data = dataclasses.replace(
        config.data, src_lang="en", tgt_lang="hi", train=[corpus], valid=[corpus], max_len=120
    )
    config = dataclasses.replace(config, name="tiny_enhi", data=data)
    prepared = prepare_data(config, work / "prepared")
    result = Trainer(config, prepared, work / "run").train(show_progress=False)
    assert result.model_path is not None
    return result.model_path


@pytest.fixture(scope="session")
def tiny_enhi_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny English→Hindi model file shared by the whole session (see
    :func:`train_tiny_enhi_model`)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_tiny_enhi_model(tmp_path_factory.mktemp("tiny_enhi"))
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def tiny_enhi_web(tiny_enhi_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's web export (float32), made once for the session (an export takes ~10 s:
    torch.onnx traces two graphs): for tests that only read it. Skips without the npm packages
    or onnxruntime (``make web-runtime``, ``pip install -e '.[web]'``)."""
    pytest.importorskip(
        "onnxruntime", reason="onnxruntime is not installed (pip install -e '.[web]')"
    )
    pytest.importorskip(
        "onnxscript", reason="onnxscript is not installed (pip install -e '.[web]')"
    )
    from anuvad.web.export import export_web
    from anuvad.web.vendor import node_modules

    try:
        node_modules()
    except Exception as exc:
        pytest.skip(str(exc))
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        folder, _ = export_web(tiny_enhi_model, tmp_path_factory.mktemp("tiny_web") / "enhi")
    finally:
        torch.set_num_threads(previous)
    return folder


def write_run_config(
    tmp: Path, pairs: int = 3000, max_tokens: int = 600, seed: int = 7, **train: object
) -> Path:
    """``tmp/config.yaml``: the tiny preset with dropout on (a resume must restore the random
    state too) on a digit-reversal corpus of ``pairs`` pairs, for runs in a subprocess; ``train``
    sets train.* (one thread, no time limit by default)."""
    import yaml

    from anuvad.data.synthetic import write_reversal_corpus

    corpus_train, corpus_valid = write_reversal_corpus(tmp / "corpus", pairs, 20, seed=seed)
    data = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))
    data["model"]["dropout"] = 0.1
    data["data"]["train"] = [{"name": "t", "src": corpus_train.src, "tgt": corpus_train.tgt}]
    data["data"]["valid"] = [{"name": "v", "src": corpus_valid.src, "tgt": corpus_valid.tgt}]
    data["data"]["max_tokens"] = max_tokens
    data["train"].update(
        {"max_minutes": 0, "num_threads": 1, "valid_bleu_max_sentences": 10, "log_every": 5}
    )
    data["train"].update(train)
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def cli_train(tmp: Path, config: Path, steps: int, *overrides: str) -> Path:
    """``anuvad train`` in this process on ``tmp/prepared`` into ``tmp/run`` for ``steps``
    updates; returns the model file."""
    from anuvad.cli.main import main

    data, run = str(tmp / "prepared"), str(tmp / "run")
    command = ["train", "--config", str(config), "--data", data, "--run-dir", run]
    limits = [f"train.max_steps={steps}", "train.max_minutes=0"]
    assert main([*command, "--no-progress", *limits, *overrides]) == 0
    return tmp / "run" / "model.pt"


def tiny_config(tmp: Path, *overrides: str) -> ExperimentConfig:
    """configs/tiny.yaml on a digit-reversal corpus written under ``tmp``, 6 updates."""
    from anuvad.config import load_config
    from anuvad.data.synthetic import reversal_config

    base = [
        "train.max_minutes=0",
        "train.max_steps=6",
        "train.valid_bleu_max_sentences=20",
        "model.dropout=0.0",
        *overrides,
    ]
    config = load_config(REPO / "configs" / "tiny.yaml", base)
    return reversal_config(config, tmp / "corpus", seed=3)


def char_translator(
    sources: list[str], targets: list[str], langs: tuple[str, str], beam_size: int, name: str
) -> Translator:
    """A random model over character vocabularies trained on ``sources`` and ``targets``,
    translating ``langs`` (source, target), ending early (a bias towards EOS): outputs of at
    most 12 pieces, searched with ``beam_size``."""
    from torch import nn

    from anuvad.checkpoint import ModelFile
    from anuvad.config import TokenizerConfig
    from anuvad.data.tokenizer import EOS_ID, train_tokenizer
    from anuvad.inference.translator import Translator

    char = TokenizerConfig(model_type="char")
    src, tgt = train_tokenizer(sources, char, 200), train_tokenizer(targets, char, 200)
    model_config = ModelConfig(
        d_model=32, num_heads=4, d_ff=64, num_encoder_layers=2, num_decoder_layers=2,
        dropout=0.0, max_positions=128, src_vocab_size=src.vocab_size,
        tgt_vocab_size=tgt.vocab_size,
    )  # fmt: skip
    config = ExperimentConfig(name=name, model=model_config)
    config.decode = DecodeConfig(beam_size=beam_size, max_len_a=0.0, max_len_b=12)
    config.data.src_lang, config.data.tgt_lang = langs
    torch.manual_seed(5)
    model = build_model(model_config).eval()
    bias = torch.zeros(tgt.vocab_size)
    bias[EOS_ID] = 3.0
    model.output_bias = nn.Parameter(bias)
    return Translator(ModelFile(model, config, src, tgt))
