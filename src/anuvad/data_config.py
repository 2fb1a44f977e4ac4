"""The data settings of an experiment (the ``data:`` section of a config): which corpora, their
weights and tags, the tokenizer, cleaning and batching. :mod:`anuvad.config` holds the rest."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DATA_ENV_VAR = "ANUVAD_DATA"


@dataclass
class CorpusConfig:
    """One parallel corpus: an aligned file pair, one TSV file with two chosen columns, or Penn
    Treebank trees (``ptb``: sentence → linearised tree pairs for parsing, section 6.3).

    Relative paths are resolved against ``DataConfig.data_root``, except those starting with
    ``./`` or ``../``, which are resolved against the working directory (files generated beside
    the checkout, such as back-translated pairs under ``./data/synthetic/``); ``~`` and ``$VARS``
    are expanded.
    """

    name: str = ""
    format: str = "aligned"  # "aligned" (two files, one sentence per line), "tsv" or "ptb"
    src: str = ""  # aligned: the source-language file
    tgt: str = ""  # aligned: the target-language file
    path: str = ""  # tsv: the file; ptb: a folder of .mrg files, a glob or one file
    src_column: int = 0  # tsv: 0-based column of the source sentence
    tgt_column: int = 1  # tsv: 0-based column of the target sentence
    max_lines: int = 0  # read only the first N pairs (0 = all), e.g. a dev-set slice
    first: str = ""  # ptb: first file name (without .mrg) to read, inclusive; "" = no bound
    last: str = ""  # ptb: last file name to read, inclusive; "" = no bound
    tree_leaves: str = "xx"  # ptb: a word becomes "xx" (placeholder XX), "pos" (its tag) or "word"
    # Training corpora only. How often the corpus is seen per epoch after cleaning: 2.0 repeats
    # every pair twice, 0.25 keeps a seeded random quarter (so 29k captions need not drown 30k
    # general pairs); 1.0 = as read; 0 leaves the corpus out (not even read), for ablations
    # such as ``data.train.13.weight=0``.
    weight: float = 1.0
    # Training corpora only. A token put before every source sentence (e.g. "<bt>" for
    # back-translated pairs, Caswell et al. 2019) so the model can tell the corpus apart; it
    # becomes one piece of the source vocabulary. "" = none.
    tag: str = ""


@dataclass
class TokenizerConfig:
    """SentencePiece settings (the paper used byte-pair encoding, section 5.1)."""

    model_type: str = "bpe"  # "bpe", "unigram", "char" or "word"
    joint: bool = True  # one vocabulary for both languages (three-way tied embeddings)
    vocab_size: int = 8000  # joint vocabulary size, or per-language size when joint is False
    src_vocab_size: int = 0  # per-language override when joint is False (0 = vocab_size)
    tgt_vocab_size: int = 0
    # 1.0 keeps every character (Devanagari needs it); 0.9995 is SentencePiece's default for Latin.
    character_coverage: float = 1.0
    input_sentence_size: int = 2_000_000  # sentences sampled to train the tokenizer
    seed: int = 1


@dataclass
class CleaningConfig:
    """Text-level cleaning of training pairs, before tokenization (:mod:`anuvad.data.cleaning`).

    Everything is off by default (older recipes and model files behave as they did); every pair
    changed or dropped is counted per corpus and reason in ``report.json``.
    """

    # NFC everywhere; the Indic NLP library's normalizer for Indic languages (nukta forms, danda
    # variants, ZWJ/ZWNJ); sacremoses' Moses punctuation normalizer for the others. Applied to
    # both sides of training pairs and to the source side of dev sets and of every input at
    # translation time (the setting travels inside the model file).
    normalize: bool = False
    # A side wrapped in double quotes with doubled inner quotes ("a ""b"" c") is unwrapped.
    unwrap_csv_quotes: bool = False
    # Smallest share of a side's letters in its language's script (Latin for en/de/fr,
    # Devanagari for hi/mr/ne); languages without a known script are not checked. 0 = off.
    min_script_ratio: float = 0.0
    # Drop a training pair when either side equals a sentence of a dev set (data.valid and
    # `exclude`), whole or split out of a dev paragraph, ignoring case, spacing and surrounding
    # punctuation.
    drop_dev_overlap: bool = False
    # More dev/test sets for that check (e.g. the general-domain dev sets a recipe does not
    # validate on); read like data.valid.
    exclude: list[CorpusConfig] = field(default_factory=list)


@dataclass
class DataConfig:
    """Where the parallel text is, how it is cleaned and how it is batched."""

    src_lang: str = "en"
    tgt_lang: str = "de"
    # Root for relative corpus paths; "" means $ANUVAD_DATA, or ../shared/data when unset.
    data_root: str = ""
    train: list[CorpusConfig] = field(default_factory=list)
    valid: list[CorpusConfig] = field(default_factory=list)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    # Cleaning (applied to training pairs; every dropped pair is counted by reason).
    max_len: int = 250  # subword tokens per side
    max_len_ratio: float = 3.0  # longer side / shorter side, in subword tokens
    dedup: bool = True  # drop exact duplicate (source, target) pairs
    clean: CleaningConfig = field(default_factory=CleaningConfig)
    sample_seed: int = 1  # seeds the random subsets of corpora with a fractional weight
    # Token-budget batching (section 5.1: ~25,000 source and ~25,000 target tokens per batch).
    max_tokens: int = 4096  # padded tokens per side per batch
    valid_max_tokens: int = 8192

    def training_summary(self) -> str:
        """One line naming the training corpora and their weights, e.g. for the web page:
        ``trained on hvg ×0.5, tatoeba, bt-mono (tagged <bt>)``."""
        parts = []
        for corpus in self.train:
            if corpus.weight == 0:
                continue
            name = corpus.name or Path(corpus.src or corpus.path).name
            weight = f" ×{corpus.weight:g}" if corpus.weight != 1 else ""
            tag = f" (tagged {corpus.tag})" if corpus.tag else ""
            parts.append(f"{name}{weight}{tag}")
        return "trained on " + ", ".join(parts) if parts else "training data not recorded"

    def resolve_root(self) -> Path:
        """The folder relative corpus paths are read from."""
        if self.data_root:
            return Path(os.path.expandvars(os.path.expanduser(self.data_root)))
        env = os.environ.get(DATA_ENV_VAR)
        return Path(env) if env else Path("../shared/data")

    def problems(self) -> list[str]:
        """Every invalid value, as messages naming the field (empty: all valid)."""
        problems: list[str] = []

        def need(ok: bool, message: str) -> None:
            if not ok:
                problems.append(message)

        t = self.tokenizer
        need(
            t.model_type in ("bpe", "unigram", "char", "word"),
            f"data.tokenizer.model_type must be bpe, unigram, char or word, got {t.model_type!r}",
        )
        need(t.vocab_size > 0, "data.tokenizer.vocab_size must be positive")
        need(0.0 < t.character_coverage <= 1.0, "data.tokenizer.character_coverage in (0, 1]")
        need(self.max_len > 0, "data.max_len must be positive")
        need(self.max_len_ratio >= 1.0, "data.max_len_ratio must be >= 1")
        need(self.max_tokens > 0, "data.max_tokens must be positive")
        need(self.valid_max_tokens > 0, "data.valid_max_tokens must be positive")
        c = self.clean
        need(
            0.0 <= c.min_script_ratio <= 1.0,
            f"data.clean.min_script_ratio must be in [0, 1], got {c.min_script_ratio}",
        )
        for i, corpus in enumerate(self.train):
            need(
                corpus.weight >= 0,
                f"data.train[{i}].weight must be >= 0 (2.0 repeats a corpus, 0.5 keeps half, "
                f"0 leaves it out), got {corpus.weight}",
            )
            need(
                corpus.tag == corpus.tag.strip() and " " not in corpus.tag,
                f"data.train[{i}].tag must be one token without spaces, got {corpus.tag!r}",
            )
        for split, corpora in (
            ("train", self.train),
            ("valid", self.valid),
            ("clean.exclude", c.exclude),
        ):
            for i, corpus in enumerate(corpora):
                where = f"data.{split}[{i}]"
                if corpus.format == "aligned":
                    need(bool(corpus.src and corpus.tgt), f"{where}: aligned needs src and tgt")
                elif corpus.format == "tsv":
                    need(bool(corpus.path), f"{where}: tsv needs path")
                    need(
                        corpus.src_column >= 0 and corpus.tgt_column >= 0,
                        f"{where}: columns must be >= 0",
                    )
                elif corpus.format == "ptb":
                    need(bool(corpus.path), f"{where}: ptb needs path (a folder of .mrg files)")
                    need(
                        corpus.tree_leaves in ("xx", "pos", "word"),
                        f"{where}.tree_leaves must be xx, pos or word, got {corpus.tree_leaves!r}",
                    )
                else:
                    problems.append(
                        f"{where}.format must be 'aligned', 'tsv' or 'ptb', got {corpus.format!r}"
                    )
        return problems
