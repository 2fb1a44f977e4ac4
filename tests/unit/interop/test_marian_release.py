"""Issue 41 item 3: Marian's own release format (the OPUS-MT / Tatoeba-MT ``.zip``: ``.npz``,
``decoder.yml``, ``*.vocab.yml``, ``source.spm``, ``target.spm``) imported directly, exact against
``transformers``' conversion of the same random files (:mod:`marian_release_folders`).

For each shape (one shared vocabulary, two vocabularies, an output layer of its own, a
multilingual target with ``>>hin<<`` tokens) the 20 sentences are cut into Marian's pieces, and
greedy and beam outputs equal ``MarianMTModel.generate``'s token for token and
``MarianTokenizer.batch_decode(..., skip_special_tokens=True)``'s string for string. A
multilingual release imported for named target languages (``--tgt-lang``, ``--pairs``) puts each
pair's ``>>xxx<<`` token before the source itself, and each pair equals ``generate`` on the
sentences with that token written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from anuvad.checkpoint import load_model
from anuvad.data.language_tokens import language_tokens_of
from anuvad.errors import CheckpointError
from anuvad.inference.pairs import pair_translators
from anuvad.inference.translator import Translator
from anuvad.interop.importer import import_model
from anuvad.interop.marian_release import is_marian_release, read_marian_release
from marian_release_folders import (
    SENTENCES,
    ReleaseShape,
    reference_conversion,
    write_release,
    zip_release,
)

transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.usefixtures("one_thread")

LIMIT = 24  # generated tokens at most (generate's max_new_tokens, anuvad's max_len_b)
MULTILINGUAL = (">>hin<<", ">>mar<<", ">>urd<<")
SHAPES = [
    ReleaseShape(),  # OPUS-MT's: one vocab.yml, tied-embeddings-all, swish, beam-size 4
    ReleaseShape(shared_vocab=False, activation="relu", layers=(1, 3), beam_size=3, seed=1),
    ReleaseShape(tied_output=False, layers=(3, 1), seed=2),  # decoder_ff_logit_out_W
    ReleaseShape(language_tokens=MULTILINGUAL, d_model=48, ffn=96, seed=3),
]


def texts_for(shape: ReleaseShape) -> list[str]:
    """The sentences; a multilingual model's each begin with a target-language token."""
    if not shape.language_tokens:
        return SENTENCES
    return [f"{shape.language_tokens[i % 2]} {text}" for i, text in enumerate(SENTENCES)]


@pytest.fixture(scope="module", params=SHAPES, ids=[s.name for s in SHAPES])
def release(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(shape, release folder, the converted MarianMTModel, its MarianTokenizer, the anuvad
    file ``anuvad import`` wrote from the folder)."""
    transformers.logging.set_verbosity_error()  # generate's max_length / max_new_tokens note
    shape: ReleaseShape = request.param
    root = tmp_path_factory.mktemp(shape.name)
    folder = write_release(root / "eng-hin", shape, tune_eos=shape == SHAPES[0])
    marian, tokenizer = reference_conversion(folder)
    marian.generation_config.forced_eos_token_id = None  # anuvad stops at the limit unforced
    imported = import_model(str(folder), root / "model.pt")
    return shape, folder, marian, tokenizer, imported.path


def generated(marian: Any, tokenizer: Any, texts: list[str], **settings: Any) -> list[list[str]]:
    """``generate``'s outputs as target pieces (start, EOS and padding dropped)."""
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = marian.generate(**batch, max_new_tokens=LIMIT, **settings)
    vocab = tokenizer.target_encoder if tokenizer.separate_vocabs else tokenizer.get_vocab()
    pieces = {i: p for p, i in vocab.items()}
    eos, pad = marian.config.eos_token_id, marian.config.pad_token_id
    rows = []
    for row in out[:, 1:].tolist():
        ids = row[: row.index(eos)] if eos in row else row
        rows.append([pieces[i] for i in ids if i != pad])
    return rows


def generated_strings(marian: Any, tokenizer: Any, texts: list[str], **settings: Any) -> list[str]:
    """``generate``'s outputs as a user of transformers reads them."""
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = marian.generate(**batch, max_new_tokens=LIMIT, **settings)
    return [str(text) for text in tokenizer.batch_decode(out, skip_special_tokens=True)]


def translated(
    path: Path | Translator, texts: list[str], **settings: Any
) -> tuple[list[list[str]], list[str]]:
    """anuvad's outputs (of a model file or a translator): the pieces, and the text the target
    tokenizer makes of them."""
    translator = path if isinstance(path, Translator) else Translator.from_file(path, device="cpu")
    results = translator.translate(
        texts, translator.settings(max_len_a=0.0, max_len_b=LIMIT, **settings)
    )
    tokenizer = translator.tgt_tokenizer
    return (
        [tokenizer.id_to_piece(r.token_ids) for r in results],
        [tokenizer.decode(r.token_ids) for r in results],
    )


def test_the_source_is_cut_into_marians_pieces(release: Any) -> None:
    shape, _, _, tokenizer, path = release
    model_file = load_model(path)
    for text in texts_for(shape):
        ids = model_file.src_tokenizer.encode(text)
        assert model_file.src_tokenizer.id_to_piece(ids) == tokenizer.tokenize(text)


@pytest.mark.parametrize(
    ("ours_settings", "generate_settings"),
    [
        ({"beam_size": 1}, {"num_beams": 1}),
        ({}, {}),  # the release's own: decoder.yml's beam-size, |Y|^1.0, generate's heuristic
        (
            {"beam_size": 3, "length_penalty": 0.6, "early_stopping": "finished"},
            {"num_beams": 3, "length_penalty": 0.6, "early_stopping": True},
        ),
    ],
    ids=["greedy", "release-defaults", "beam3-finished"],
)
def test_outputs_equal_the_converted_models_token_for_token_and_string_for_string(
    release: Any, ours_settings: dict[str, Any], generate_settings: dict[str, Any]
) -> None:
    shape, _, marian, tokenizer, path = release
    texts = texts_for(shape)
    pieces, strings = translated(path, texts, **ours_settings)
    assert pieces == generated(marian, tokenizer, texts, **generate_settings)
    assert strings == generated_strings(marian, tokenizer, texts, **generate_settings)


@pytest.mark.parametrize(
    ("ours_settings", "generate_settings"),
    [({"beam_size": 1}, {"num_beams": 1}), ({}, {})],
    ids=["greedy", "release-defaults"],
)
def test_named_target_languages_put_their_token_before_each_source(
    release: Any,
    tmp_path: Path,
    ours_settings: dict[str, Any],
    generate_settings: dict[str, Any],
) -> None:
    """Imported for eng-hin and eng-mar (named by two- and three-letter codes), the file serves
    two pairs; each equals generate on the sentences after its token, with no token forced on
    the target side."""
    shape, _, marian, tokenizer, _ = release
    if not shape.language_tokens:
        pytest.skip("a multilingual target only")
    path = import_model(
        str(release[1]), tmp_path / "targets.pt", pairs=[("eng", "hi"), ("eng", "mar")]
    ).path
    languages = language_tokens_of(load_model(path).metadata)
    assert languages is not None and languages.target_in_source
    assert languages.pairs == (("eng", "hin"), ("eng", "mar"))
    translators = pair_translators(Translator.from_file(path, device="cpu"), confidence=False)
    assert [t.pair for t in translators] == [("eng", "hin"), ("eng", "mar")]
    for translator, token in zip(translators, (">>hin<<", ">>mar<<"), strict=True):
        assert translator.tgt_prefix == []
        texts = [f"{token} {text}" for text in SENTENCES]
        pieces, strings = translated(translator, SENTENCES, **ours_settings)
        assert pieces == generated(marian, tokenizer, texts, **generate_settings)
        assert strings == generated_strings(marian, tokenizer, texts, **generate_settings)


def test_tgt_lang_names_one_target_and_an_unknown_one_is_refused(
    release: Any, tmp_path: Path
) -> None:
    shape, folder, _, _, _ = release
    if not shape.language_tokens:
        with pytest.raises(CheckpointError, match="translates one pair"):
            import_model(str(folder), tmp_path / "m.pt", pairs=[("eng", "hin"), ("eng", "mar")])
        return
    path = import_model(str(folder), tmp_path / "urd.pt", tgt_lang="urd").path
    translator = Translator.from_file(path, device="cpu")
    assert translator.pair == ("eng", "urd")
    vocab = translator.src_tokenizer.vocab
    assert vocab is not None and translator.encode(["a"])[0][0] == vocab.index(">>urd<<")
    with pytest.raises(CheckpointError, match="target languages, which are hin, mar, urd"):
        import_model(str(folder), tmp_path / "deu.pt", tgt_lang="deu")
    assert not (tmp_path / "deu.pt").exists()


def test_the_release_settings_become_the_files_search(release: Any) -> None:
    shape, _, _, _, path = release
    model_file = load_model(path)
    assert model_file.config.decode.beam_size == shape.beam_size
    # The README's eng / hin as the two-letter codes the sentence rules and the server speak.
    assert (model_file.config.data.src_lang, model_file.config.data.tgt_lang) == ("en", "hi")
    metadata = model_file.metadata
    assert metadata["import_format"] == "marian_release"
    assert metadata["license"] == "cc-by-4.0"
    assert metadata["marian_language_tokens"] == list(shape.language_tokens)


def test_a_zip_imports_as_its_folder(release: Any, tmp_path: Path) -> None:
    """The published .zip (its files in a subfolder, as some releases keep them) gives the
    same weights, tokenizers and search as the folder it unpacks to."""
    shape, folder, _, _, path = release
    if shape != SHAPES[1]:
        pytest.skip("one shape is enough")
    archive = zip_release(folder, tmp_path / "opus-2021-02-18.zip", inner="eng-hin")
    assert is_marian_release(str(archive)) and is_marian_release(str(folder))
    from_zip = load_model(
        import_model(str(archive), tmp_path / "zip.pt", src_lang="eng", tgt_lang="hin").path
    )
    from_folder = load_model(path)
    ours, theirs = from_zip.model.state_dict(), from_folder.model.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[name], theirs[name]) for name in ours)
    assert from_zip.src_tokenizer.state() == from_folder.src_tokenizer.state()
    assert from_zip.tgt_tokenizer.state() == from_folder.tgt_tokenizer.state()
    assert from_zip.config.decode == from_folder.config.decode


def test_a_hugging_face_folder_is_not_a_release(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "decoder.yml").write_text("models: [m.npz]\n")
    assert not is_marian_release(str(tmp_path))
    assert not is_marian_release(str(tmp_path / "missing.zip"))


def test_the_release_reads_as_the_conversion_writes_it(release: Any) -> None:
    """config.json's fields and the weights under Hugging Face's names are the converted
    model's own (the same tensors ``MarianMTModel`` holds)."""
    _, folder, marian, _, _ = release
    read = read_marian_release(folder).folder
    for key in ("vocab_size", "decoder_vocab_size", "d_model", "pad_token_id", "eos_token_id"):
        assert read.config[key] == getattr(marian.config, key), key
    state = marian.state_dict()
    for name, tensor in read.state.items():
        assert torch.equal(tensor, state[name]), name
