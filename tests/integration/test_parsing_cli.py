"""Parsing end to end on a tiny treebank: prepare (format ptb) → train → anuvad parse →
``anuvad evaluate --task parsing`` (run_parsing_evaluation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from anuvad.cli.main import main
from anuvad.parsing.trees import read_trees
from conftest import cli_train

REPO = Path(__file__).resolve().parents[2]

TREES = [
    "( (S (NP-SBJ (DT The) (NN dog)) (VP (VBZ barks)) (. .)) )",
    "( (S (NP-SBJ (PRP He)) (VP (VBD gave) (PRT (RP up))) (. .)) )",
    "( (S (NP-SBJ (NNP John)) (VP (VBZ sees) (NP (DT a) (NN cat))) (. .)) )",
    "( (S (NP-SBJ (-NONE- *)) (VP (VB Stop)) (. !)) )",
]

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def parser_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny parsing model trained for a few steps on a four-tree treebank."""
    tmp = tmp_path_factory.mktemp("parsing")
    bank = tmp / "ptb"
    bank.mkdir()
    for i, tree in enumerate(TREES, 1):
        (bank / f"wsj_000{i}.mrg").write_text(tree + "\n", encoding="utf-8")
    data = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))
    data["data"]["train"] = [{"name": "t", "format": "ptb", "path": str(bank)}]
    data["data"]["valid"] = [{"name": "v", "format": "ptb", "path": str(bank), "first": "wsj_0003"}]
    data["data"]["tokenizer"] = {"model_type": "word", "joint": False, "vocab_size": 40}
    data["data"]["max_len_ratio"] = 20.0
    data["model"]["share_source_embedding"] = False
    data["decode"] = {"beam_size": 2, "length_penalty": 0.3, "max_len_a": 2.0, "max_len_b": 4}
    config = tmp / "parsing.yaml"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return bank, cli_train(tmp, config, 3)


def test_parse_writes_one_well_formed_tree_per_sentence(
    parser_model: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, model = parser_model
    sentences = ["The dog barks .", "He gave up .", "Stop !"]
    (tmp_path / "in.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    out = tmp_path / "trees.txt"
    args = ["parse", "--model", str(model), "--input", str(tmp_path / "in.txt")]
    assert main([*args, "--output", str(out), "--beam-size", "1"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    for line, sentence in zip(lines, sentences, strict=True):
        (tree,) = read_trees(line)
        assert tree.words() == sentence.split()
    err = capsys.readouterr().err
    assert "parsed 3 sentences" in err and "needed repair" in err


def test_parse_without_the_cache_writes_the_same_trees(
    parser_model: tuple[Path, Path], tmp_path: Path, use_cache_calls: list[bool]
) -> None:
    """``--no-cache`` reaches the search (it was accepted and ignored) and changes no tree."""
    _, model = parser_model
    (tmp_path / "in.txt").write_text("The dog barks .\nStop !\n", encoding="utf-8")
    seen = use_cache_calls
    args = ["parse", "--model", str(model), "--input", str(tmp_path / "in.txt")]
    outputs = []
    for extra in ([], ["--no-cache"]):
        out = tmp_path / f"trees{len(extra)}.txt"
        assert main([*args, "--output", str(out), *extra]) == 0
        outputs.append(out.read_text(encoding="utf-8"))
    assert seen == [True, False] and outputs[0] == outputs[1]


def test_evaluate_a_model_on_gold_trees(
    parser_model: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bank, model = parser_model
    command = ["evaluate", "--task", "parsing", "--model", str(model), "--references", str(bank)]
    command += ["--json", "--no-progress"]
    assert main(command) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all"]["sentences"] == 4
    assert report["all"]["error_sentences"] == 0
    assert report["repaired"] == 0  # the tree constraint: only well-formed trees are searched
    assert 0.0 <= report["all"]["f1"] <= 100.0
    # A model trained 3 steps, unconstrained: outputs are repaired.
    assert main([*command, "--unconstrained"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all"]["error_sentences"] == 0  # repair always restores the input words
    assert report["repaired"] > 0


def test_evaluate_hypothesis_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank = tmp_path / "gold.mrg"
    bank.write_text("\n".join(TREES) + "\n", encoding="utf-8")
    perfect = tmp_path / "perfect.txt"
    # Other function tags, the particle as ADVP, the trace gone: all equal for EVALB.
    perfect.write_text(
        "(TOP (S (NP (DT The) (NN dog)) (VP (VBZ barks)) (. .)))\n"
        "(S (NP (PRP He)) (VP (VBD gave) (ADVP (RP up))) (. .))\n"
        "(S (NP-X (NNP John)) (VP (VBZ sees) (NP (DT a) (NN cat))) (. .))\n"
        "(S (VP (VB Stop)) (. !))\n",
        encoding="utf-8",
    )
    evaluate = ["evaluate", "--task", "parsing", "--references", str(bank)]
    assert main([*evaluate, "--hypotheses", str(perfect)]) == 0
    assert "F1 100.00" in capsys.readouterr().out

    broken = tmp_path / "broken.txt"
    lines = perfect.read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join(["(S (NP", *lines[1:]]) + "\n", encoding="utf-8")
    assert main([*evaluate, "--hypotheses", str(broken), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["all"]["error_sentences"] == 1 and report["all"]["f1"] == 100.0

    short = tmp_path / "short.txt"
    short.write_text(lines[0] + "\n", encoding="utf-8")
    assert main([*evaluate, "--hypotheses", str(short), "--json"]) == 2
    assert "aligned one to one" in capsys.readouterr().err


def test_evaluate_with_gold_tags_scores_sentences_own_tags_lose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = tmp_path / "gold.mrg"
    bank.write_text("\n".join(TREES[:3]) + "\n", encoding="utf-8")
    hypotheses = tmp_path / "tagged.txt"
    hypotheses.write_text(
        "(S (NP (DT The) (NN dog)) (VP (VBZ barks)) (NN .))\n"  # the period tagged NN
        "(S (NP (PRP He)) (VP (VBD gave) (PRT (RP up))) (. .))\n"
        "(S (NP (NNP John)) (VP (VBZ sees) (NP (DT a) (NN cat))) (. .))\n",
        encoding="utf-8",
    )
    evaluate = ["evaluate", "--task", "parsing", "--references", str(bank)]
    evaluate += ["--hypotheses", str(hypotheses)]
    assert main([*evaluate, "--json"]) == 0  # EVALB as is: the first sentence is an error
    own = json.loads(capsys.readouterr().out)
    assert own["tags"] == "own" and own["all"]["error_sentences"] == 1
    assert own["all"]["gold_brackets"] == 4 + 4  # the first sentence left out
    assert main([*evaluate, "--json", "--tags", "gold"]) == 0
    gold = json.loads(capsys.readouterr().out)
    assert gold["tags"] == "gold" and gold["all"]["error_sentences"] == 0
    assert gold["all"]["gold_brackets"] == 3 + 4 + 4 and gold["all"]["f1"] == 100.0
    assert gold["tag_accuracy"] == pytest.approx(100 * 12 / 13, abs=0.01)  # 13 words
    assert main([*evaluate, "--tags", "gold"]) == 0
    assert "scored with the gold tags" in capsys.readouterr().out
