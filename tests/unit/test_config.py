"""Configuration: presets, unknown keys, types, overrides, validation, round trips, data root."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from anuvad.config import (
    DATA_ENV_VAR,
    CorpusConfig,
    DataConfig,
    ExperimentConfig,
    ModelConfig,
    TokenizerConfig,
    TrainConfig,
    apply_overrides,
    config_from_dict,
    config_to_dict,
    load_config,
    save_config,
)
from anuvad.decode_config import DecodeConfig
from anuvad.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
PRESETS = sorted((REPO / "configs").glob("*.yaml"))


def field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def minimal() -> dict[str, Any]:
    """A valid config mapping with one corpus in each split (every section present)."""
    return {
        "name": "unit",
        "model": {"d_model": 64, "num_heads": 4, "d_ff": 128},
        "data": {
            "src_lang": "en",
            "tgt_lang": "hi",
            "train": [{"name": "a", "format": "aligned", "src": "a.en", "tgt": "a.hi"}],
            "valid": [{"name": "b", "format": "tsv", "path": "b.tsv"}],
            "tokenizer": {"model_type": "bpe", "vocab_size": 100},
        },
        "train": {"max_steps": 10, "warmup_steps": 5},
        "decode": {"beam_size": 2},
    }


# --- presets -------------------------------------------------------------------------------------


def test_the_presets_folder_holds_the_documented_presets() -> None:
    names = {p.stem for p in PRESETS}
    assert {"base", "big", "parsing", "tiny", "enhi_d256_L3"} <= names


@pytest.mark.parametrize("path", PRESETS, ids=[p.stem for p in PRESETS])
def test_every_preset_loads_and_validates(path: Path) -> None:
    config = load_config(path)
    config.validate()
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    # What the file says is what the config holds (spot-check the model section field by field).
    for key, value in raw.get("model", {}).items():
        assert getattr(config.model, key) == value, key
    assert config.name == raw["name"]
    assert config.model.d_model % config.model.num_heads == 0


def test_paper_presets_have_the_paper_shapes() -> None:
    base = load_config(REPO / "configs" / "base.yaml").model
    big = load_config(REPO / "configs" / "big.yaml").model
    assert (base.d_model, base.d_ff, base.num_heads, base.dropout) == (512, 2048, 8, 0.1)
    assert (big.d_model, big.d_ff, big.num_heads, big.dropout) == (1024, 4096, 16, 0.3)
    assert base.num_encoder_layers == base.num_decoder_layers == 6


# --- unknown keys --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "cls"),
    [
        ((), ExperimentConfig),
        (("model",), ModelConfig),
        (("data",), DataConfig),
        (("data", "tokenizer"), TokenizerConfig),
        (("data", "train", 0), CorpusConfig),
        (("data", "valid", 0), CorpusConfig),
        (("train",), TrainConfig),
        (("decode",), DecodeConfig),
    ],
)
def test_unknown_key_at_any_level_is_named_with_the_allowed_keys(
    where: tuple[str | int, ...], cls: type
) -> None:
    data = minimal()
    node: Any = data
    for part in where:
        node = node[part]
    node["colour_scheme"] = 3
    with pytest.raises(ConfigError) as info:
        config_from_dict(data)
    message = str(info.value)
    assert "colour_scheme" in message
    allowed = message.split("allowed:", 1)[1]
    assert sorted(n.strip() for n in allowed.split(",")) == sorted(field_names(cls))


def test_unknown_key_in_a_file_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    data = minimal()
    data["train"]["warmup_stpes"] = 100
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="warmup_stpes") as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert "warmup_steps" in str(info.value)  # the allowed keys point at the fix


def test_several_unknown_keys_are_all_named() -> None:
    data = minimal()
    data["model"].update({"dmodel": 1, "heads": 2})
    with pytest.raises(ConfigError) as info:
        config_from_dict(data)
    assert "dmodel" in str(info.value) and "heads" in str(info.value)


# --- types ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("model", "d_model"), "512"),  # string for int
        (("model", "d_model"), True),  # bool for int
        (("model", "d_model"), 512.0),  # float for int
        (("model", "dropout"), "high"),  # non-numeric string for float
        (("model", "dropout"), False),  # bool for float
        (("model", "tie_output_embedding"), 1),  # int for bool
        (("model", "tie_output_embedding"), "yes"),  # string for bool
        (("name",), 7),  # int for string
        (("data", "tokenizer", "vocab_size"), [8000]),  # list for int
        (("data", "train", 0, "src"), 5),  # inside a list item
        (("data", "valid", 0, "src_column"), "5"),
        (("data", "train"), {"name": "x"}),  # mapping for list
        (("model",), [1, 2]),  # list for section
        (("decode",), "beam"),  # string for section
    ],
)
def test_wrong_type_names_the_field_path(path: tuple[str | int, ...], value: object) -> None:
    data = minimal()
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as info:
        config_from_dict(data)
    dotted = ".".join(str(p) for p in path).replace(".0", "[0]")
    assert str(info.value).startswith(f"{dotted}:"), str(info.value)
    assert repr(value) in str(info.value)


def test_numbers_are_accepted_where_they_mean_the_same() -> None:
    data = minimal()
    data["train"]["lr_scale"] = 2  # an int where a float is expected
    data["train"]["adam_eps"] = "1e-4"  # PyYAML reads a dot-less exponent as a string
    config = config_from_dict(data)
    assert isinstance(config.train.lr_scale, float) and config.train.lr_scale == 2.0
    assert isinstance(config.train.adam_eps, float) and config.train.adam_eps == 1e-4


def test_missing_keys_take_the_dataclass_defaults() -> None:
    config = config_from_dict({})
    assert config == ExperimentConfig()
    partial = config_from_dict({"model": {"d_model": 256}})
    assert partial.model == dataclasses.replace(ModelConfig(), d_model=256)


# --- overrides -----------------------------------------------------------------------------------


def test_overrides_parse_values_as_yaml() -> None:
    data = apply_overrides(
        minimal(),
        [
            "model.d_model=128",
            "model.dropout=0.25",
            "train.adam_eps=1.0e-8",
            "model.share_source_embedding=true",
            "data.dedup=false",
            "name=my run",
            "data.train=[{name: x, format: tsv, path: x.tsv, src_column: 2}, "
            "{name: y, src: y.en, tgt: y.hi}]",
        ],
    )
    assert data["model"]["d_model"] == 128 and type(data["model"]["d_model"]) is int
    assert data["model"]["dropout"] == 0.25 and type(data["model"]["dropout"]) is float
    assert data["train"]["adam_eps"] == 1e-8
    assert data["model"]["share_source_embedding"] is True
    assert data["data"]["dedup"] is False
    assert data["name"] == "my run"
    config = config_from_dict(data)
    assert config.data.train == [
        CorpusConfig(name="x", format="tsv", path="x.tsv", src_column=2),
        CorpusConfig(name="y", src="y.en", tgt="y.hi"),
    ]
    # Untouched values survive.
    assert config.model.num_heads == 4 and config.train.max_steps == 10


def test_overrides_only_touch_their_keys() -> None:
    before = minimal()
    after = apply_overrides(copy.deepcopy(before), ["model.d_ff=256"])
    before["model"]["d_ff"] = 256
    assert after == before


def test_overrides_create_missing_sections_and_index_lists() -> None:
    data = apply_overrides({}, ["decode.beam_size=5", "train.warmup_steps=7"])
    assert data == {"decode": {"beam_size": 5}, "train": {"warmup_steps": 7}}
    data = apply_overrides(minimal(), ["data.train.0.max_lines=1000", "data.valid.0.path=c.tsv"])
    assert data["data"]["train"][0]["max_lines"] == 1000
    assert data["data"]["valid"][0]["path"] == "c.tsv"


def test_a_later_override_wins() -> None:
    data = apply_overrides(minimal(), ["model.d_ff=256", "model.d_ff=512"])
    assert data["model"]["d_ff"] == 512


def test_empty_value_is_an_empty_string_and_equals_sign_stays_in_the_value() -> None:
    data = apply_overrides(minimal(), ["data.data_root=", "name=a=b"])
    assert data["data"]["data_root"] == ""
    assert data["name"] == "a=b"


def test_the_index_one_past_the_end_appends_a_whole_item() -> None:
    data = apply_overrides(minimal(), ["data.train.1={name: b, format: tsv, path: b.tsv}"])
    assert [item["name"] for item in data["data"]["train"]] == ["a", "b"]
    assert data["data"]["train"][1] == {"name": "b", "format": "tsv", "path": "b.tsv"}
    # a field of an item that is not there yet is still an error, and so is a gap
    for override in ("data.train.1.weight=0.5", "data.train.3={name: c}"):
        with pytest.raises(ConfigError, match=r"not an index.*index 1 appends a whole item"):
            apply_overrides(minimal(), [override])


def test_load_config_applies_overrides_then_validates(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(minimal()), encoding="utf-8")
    config = load_config(path, ["model.d_model=96", "model.num_heads=6", "decode.max_len_b=7"])
    assert (config.model.d_model, config.model.num_heads) == (96, 6)
    assert config.decode.max_len_b == 7
    with pytest.raises(ConfigError, match="divisible"):
        load_config(path, ["model.num_heads=5"])
    with pytest.raises(ConfigError, match="d_modle"):
        load_config(path, ["model.d_modle=96"])
    with pytest.raises(ConfigError, match=r"model\.d_model"):
        load_config(path, ["model.d_model=big"])


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("model.d_model", "key.subkey=value"),  # no equals sign
        ("model.d_model=[1, 2", "not valid YAML"),  # unclosed flow sequence
        ("data.train=[{name: x", "not valid YAML"),  # unclosed mapping
        ("data.train.3.max_lines=1", "not an index"),  # past the end of a list of 1
        ("data.train.first.max_lines=1", "not an index"),  # not a number
        ("name.first=1", "not a section"),  # a scalar is not a section
    ],
)
def test_malformed_override_raises(override: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment) as info:
        apply_overrides(minimal(), [override])
    assert override.split("=")[0] in str(info.value)


# --- validation ----------------------------------------------------------------------------------


def test_validate_reports_every_problem_at_once() -> None:
    config = config_from_dict(minimal())
    config.model.num_heads = 5  # 64 is not divisible by 5
    config.train.warmup_steps = 0
    config.decode = dataclasses.replace(config.decode, beam_size=0)
    with pytest.raises(ConfigError) as info:
        config.validate()
    message = str(info.value)
    problems = [line for line in message.splitlines() if line.strip().startswith("- ")]
    assert len(problems) == 3, message
    assert "model.d_model (64) must be divisible by model.num_heads (5)" in message
    assert "train.warmup_steps" in message
    assert "decode.beam_size" in message


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("model.dropout=1.0", "model.dropout must be in [0, 1), got 1.0"),
        ("model.positional_encoding=rotary", "'rotary'"),
        ("model.norm_position=middle", "'middle'"),
        ("data.tokenizer.model_type=wordpiece", "'wordpiece'"),
        ("data.train.0.format=csv", "data.train[0].format must be 'aligned', 'tsv' or 'ptb'"),
        ("data.train.0.tgt=", "data.train[0]: aligned needs src and tgt"),
        ("data.valid.0.path=", "data.valid[0]: tsv needs path"),
        ("train.precision=fp8", "'fp8'"),
        ("train.label_smoothing=1.0", "train.label_smoothing"),
        ("train.early_stop_metric=ter", "'ter'"),
    ],
)
def test_validate_names_each_bad_value(override: str, fragment: str) -> None:
    config_from_dict(minimal()).validate()  # the starting point is valid
    config = config_from_dict(apply_overrides(minimal(), [override]))
    with pytest.raises(ConfigError) as info:
        config.validate()
    assert fragment in str(info.value)


def test_a_shared_source_embedding_needs_one_vocabulary() -> None:
    config = config_from_dict(minimal())
    config.model.share_source_embedding = True
    config.model.src_vocab_size, config.model.tgt_vocab_size = 100, 120
    with pytest.raises(ConfigError) as info:
        config.validate()
    assert "src_vocab_size=100 and tgt_vocab_size=120" in str(info.value)
    # Shared by the encoder and decoder, the output layer may still be its own matrix (as in
    # imported Marian models with tie_word_embeddings false).
    config.model.tgt_vocab_size = 100
    config.model.tie_output_embedding = False
    config.validate()


def test_an_unknown_activation_is_named() -> None:
    config = config_from_dict(minimal())
    config.model.activation = "tanh"
    with pytest.raises(ConfigError, match=r"model\.activation must be one of relu, swish, gelu"):
        config.validate()


def test_a_run_needs_some_limit() -> None:
    config = config_from_dict(minimal())
    config.train.max_steps = 0
    with pytest.raises(ConfigError, match="at least one of"):
        config.validate()
    config.train.max_minutes = 5.0
    config.validate()


# --- round trips ---------------------------------------------------------------------------------


def tricky_config() -> ExperimentConfig:
    """Values that YAML could misread when written carelessly."""
    config = config_from_dict(minimal())
    config.name = "1.5"  # a string that looks like a number
    config.data.tgt_lang = "no"  # YAML 1.1 reads a bare `no` as false
    config.data.src_lang = "on"
    config.data.data_root = "~/corpora: 2024"
    config.data.train[0].name = "हिंदी corpus"
    config.train.adam_eps = 1e-9
    config.train.lr_scale = 0.1 + 0.2  # not exactly representable in short decimal
    config.model.layer_norm_eps = 1e-12
    config.decode = dataclasses.replace(config.decode, max_len_a=1.25)
    return config


def test_save_then_load_gives_an_equal_config(tmp_path: Path) -> None:
    config = tricky_config()
    path = tmp_path / "saved.yaml"
    save_config(config, path)
    assert load_config(path) == config


@pytest.mark.parametrize("path", PRESETS, ids=[p.stem for p in PRESETS])
def test_presets_survive_save_and_load(tmp_path: Path, path: Path) -> None:
    config = load_config(path)
    save_config(config, tmp_path / "again.yaml")
    assert load_config(tmp_path / "again.yaml") == config


def test_dict_round_trip_is_equal_and_plain() -> None:
    config = tricky_config()
    data = config_to_dict(config)
    assert config_from_dict(data) == config
    assert isinstance(data["data"]["train"][0], dict)

    def plain(value: object) -> bool:
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return isinstance(value, (str, int, float, bool))

    assert plain(data)
    # The dict is a copy: changing it does not change the config.
    data["model"]["d_model"] = 1
    assert config.model.d_model == 64


# --- data root -----------------------------------------------------------------------------------


def test_data_root_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, "/from/env")
    assert DataConfig(data_root="/explicit/root").resolve_root() == Path("/explicit/root")


def test_data_root_expands_home_and_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CORPUS_DIR", "/mnt/corpora")
    assert DataConfig(data_root="~/data").resolve_root() == tmp_path / "data"
    assert DataConfig(data_root="$CORPUS_DIR/en-hi").resolve_root() == Path("/mnt/corpora/en-hi")


def test_environment_variable_is_used_without_data_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, "/from/env")
    assert DataConfig().resolve_root() == Path("/from/env")


def test_shared_data_is_the_last_resort(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    assert DataConfig().resolve_root() == Path("..") / "shared" / "data"
    monkeypatch.setenv(DATA_ENV_VAR, "")  # set but empty counts as unset
    assert DataConfig().resolve_root() == Path("..") / "shared" / "data"


def test_training_summary_names_corpora_weights_and_tags() -> None:
    from anuvad.config import CorpusConfig, DataConfig

    data = DataConfig(
        train=[
            CorpusConfig(name="hvg", src="a", tgt="b", weight=0.5),
            CorpusConfig(src="dir/plain.en", tgt="dir/plain.hi"),
            CorpusConfig(name="off", src="a", tgt="b", weight=0),
            CorpusConfig(name="bt", src="a", tgt="b", weight=2, tag="<bt>"),
        ]
    )
    assert data.training_summary() == "trained on hvg ×0.5, plain.en, bt ×2 (tagged <bt>)"
    assert DataConfig().training_summary() == "training data not recorded"


def test_decode_settings_are_one_frozen_value_changed_by_copy() -> None:
    from anuvad.decode_config import DecodeConfig

    base = DecodeConfig()
    assert (base.beam_size, base.length_penalty, base.early_stopping) == (4, 0.6, "finished")
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.beam_size = 8  # type: ignore[misc]
    changed = base.with_overrides(beam_size=8, nbest=None, early_stopping="bound")
    assert (changed.beam_size, changed.nbest, changed.early_stopping) == (8, 1, "bound")
    assert base.beam_size == 4  # the original is untouched
    assert hash(changed) != hash(base) and changed == base.with_overrides(
        beam_size=8, early_stopping="bound"
    )  # usable as a key: the micro-batcher groups requests by it


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"beam_size": 0}, "decode.beam_size must be at least 1, got 0"),
        ({"nbest": 5}, "decode.nbest must be between 1 and beam_size (4), got 5"),
        ({"early_stopping": "soon"}, "decode.early_stopping must be one of finished, bound"),
        ({"no_repeat_ngram_size": -1}, "decode.no_repeat_ngram_size must be between 0 and 8"),
        ({"max_len_b": -3}, "decode.max_len_b must be at least 0, got -3"),
        ({"length_penalty": 6.0}, "decode.length_penalty must be between 0 and 5, got 6.0"),
    ],
)
def test_bad_decode_settings_are_named(changes: dict[str, object], message: str) -> None:
    """One range check per setting, made from its declaration, named the same from a config
    file and from code."""
    from anuvad.decode_config import DecodeConfig

    with pytest.raises(ConfigError, match=re.escape(message)):
        DecodeConfig().with_overrides(**changes)
    data = minimal()
    data["decode"] = changes
    with pytest.raises(ConfigError, match=re.escape(message)):
        config_from_dict(data).validate()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.adam_beta1=1.5", "train.adam_beta1 must be in [0, 1)"),
        ("train.adam_beta2=-0.1", "train.adam_beta2 must be in [0, 1)"),
        ("train.adam_eps=0", "train.adam_eps must be positive"),
        ("train.weight_decay=-1", "train.weight_decay must be >= 0"),
        ("train.device=gpu", "train.device must be auto, cpu, cuda or cuda:N, got 'gpu'"),
        ("data.valid_max_tokens=0", "data.valid_max_tokens must be positive"),
        ("train.bleu_tokenize=bogus", "train.bleu_tokenize must be one of 13a, intl"),
    ],
)
def test_values_torch_or_the_last_validation_would_reject_are_named_before_training(
    override: str, message: str
) -> None:
    # Each was a traceback: from Adam at the first update, or after a whole run (validation),
    # or silently accepted (train.device=gpu trained on the CPU).
    with pytest.raises(ConfigError) as refused:
        load_config(REPO / "configs" / "tiny.yaml", [override])
    assert message in str(refused.value)
    load_config(REPO / "configs" / "tiny.yaml", ["train.device=cuda:1"])  # a valid form


def test_a_model_file_written_before_the_training_checks_still_loads() -> None:
    data = config_to_dict(load_config(REPO / "configs" / "tiny.yaml"))
    data["train"]["device"] = "gpu"  # what a file trained before train.device was checked holds
    config = config_from_dict(data)
    config.validate(training=False)  # as checkpoint.model_from_payload reads it
    with pytest.raises(ConfigError, match=r"train\.device"):
        config.validate()


def test_a_config_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"# Config\nname: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1.yaml: line 2 is not valid UTF-8"):
        load_config(path)
