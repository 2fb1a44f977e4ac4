"""The catalogue of known corpora: where each is published, and how it becomes the files that the
recipes in ``configs/`` read.

``anuvad data download NAME`` downloads a corpus into the user cache (see
:func:`anuvad.data.download.cache_dir`), extracts the needed files and writes them under a data root
in the layout the configs use (``en-hi/hvg/hindi-visual-genome-train.txt``,
``en-de/multi30k/train.en``, ...); point ``$ANUVAD_DATA`` (or ``data.data_root``) at that root.

Some corpora cannot be downloaded automatically: they were prepared by hand (sentence
splitting, filtering, de-duplication against other files, a sample, or a source that is not a
plain file). Their entries have no files; ``anuvad data list`` shows where they come from and how
they were prepared (``note``), and ``anuvad data download`` refuses them with that explanation.

Files on GitHub are fetched from raw.githubusercontent.com at a full commit SHA, so that they
cannot change under a recipe. Where the data README names only an abbreviated commit, or the
repository's layout changed over its history, the pinned commit is the one whose file was
compared with the prepared copy in the shared data folder; the note names the README's commit.

Checksums: none of the upstream files had a SHA-256 pinned when this catalogue was written (they
could not be fetched from the machine it was written on, and no checksum is invented here).
Without one, each download is checked for a plausible size and its archive format, and the
prepared files for their line counts and column counts. Pin a checksum by setting
``RemoteFile.sha256`` once a file has been verified by hand.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from anuvad.data.download import Progress, RemoteFile, cache_dir, copy_local, download
from anuvad.data.unpack import Check, Extract, Output, Part, check_prepared, write_output
from anuvad.errors import DataError

logger = logging.getLogger(__name__)

#: The kinds of corpora, in the order ``anuvad data list`` shows them.
KINDS = ("parallel", "dev", "monolingual", "dictionary")


@dataclass(frozen=True)
class Dataset:
    """One corpus of the catalogue.

    Attributes:
        name: what ``anuvad data download`` takes.
        description: what the corpus is, in one sentence.
        homepage: where it is published.
        licence: its licence as stated by the source.
        source: the exact files it is made from (``repository@commit:path``, an archive URL).
        files: the files to download; empty when the corpus cannot be downloaded automatically.
        outputs: the prepared files, as paths under the data root the recipes read.
        checks: line and column counts the prepared files must have.
        note: format, caveats, and for a corpus without files how it was prepared.
        kind: ``parallel`` (training pairs), ``dev`` (validation only), ``monolingual`` or
            ``dictionary`` (word pairs); see :data:`KINDS`.
    """

    name: str
    description: str
    homepage: str
    licence: str
    source: str
    files: tuple[RemoteFile, ...]
    outputs: tuple[Output, ...]
    checks: tuple[Check, ...]
    note: str = ""
    kind: str = "parallel"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")

    @property
    def downloadable(self) -> bool:
        """Whether ``anuvad data download`` can fetch and prepare it."""
        return bool(self.files)


def _aligned(folder: str, split: str, file: str, src: str, tgt: str, langs: str) -> list[Output]:
    a, b = langs.split("-")
    return [
        Output(f"{folder}/{split}.{a}", (Part(file, src),)),
        Output(f"{folder}/{split}.{b}", (Part(file, tgt),)),
    ]


_HVG = "https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/1-3267"
_HVG_SPLITS = (("train", 28_000), ("dev", 950), ("test", 1_500), ("challenge-test-set", 1_350))
_IITB = "http://www.cfilt.iitb.ac.in/~moses/iitb_en_hi_parallel/iitb_corpus_download"
_M30K = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
_M30K_SPLITS = (("train", 29_000), ("val", 1_014), ("test_2016_flickr", 1_000))
_WMT = "https://www.statmt.org"
_WMT_TRAIN = (
    ("training-parallel-europarl-v7.tgz", "europarl-v7.de-en"),
    ("training-parallel-commoncrawl.tgz", "commoncrawl.de-en"),
    ("training-parallel-nc-v9.tgz", "news-commentary-v9.de-en"),
)


def _github(repo: str, commit: str, path: str, min_bytes: int) -> RemoteFile:
    """A file of a GitHub repository at a full commit SHA (named by its base name)."""
    assert len(commit) == 40, "pin GitHub files to a full commit SHA"
    return RemoteFile(
        f"https://raw.githubusercontent.com/{repo}/{commit}/{path}",
        path.rsplit("/", 1)[-1],
        None,
        min_bytes,
    )


def _by_hand(folder_or_file: str, *langs: str) -> tuple[Output, ...]:
    """Where a corpus that cannot be downloaded automatically lives under the data root."""
    if not langs:
        return (Output(folder_or_file, ()),)
    return tuple(Output(f"{folder_or_file}.{lang}", ()) for lang in langs)


_GENERAL = "en-hi/general"
_DEV = "en-hi/dev-general"
_MONO = "en-hi/mono-hi"
_DICT = "en-hi/dictionary"

# Commits (full SHAs, see the module docstring).
_ILGOV = ("vmujadia/MT-IL-ILGOV", "96da193acfc04395ebf77a811b2f03bd908ae689")
_MTURK = ("joshua-decoder/indian-parallel-corpora", "a2cd1a99a4f2dbf3a15fffce8182162cd27c1b7b")
_MTURK_SPLITS = ("dev", "devtest", "test")  # 1,082 + 993 + 1,113 Hindi sources
_ENINDIC = ("debajyoty/EnIndic-Corpus", "1fc16af4102120ff855f602afa50ea468be64633")
_KAGGLE = ("deepakmoud/datasets-for-experiment", "6eeeba007b7102e64dac10fbe414ae1c84768166")
_UD_EN = ("UniversalDependencies/UD_English-PUD", "02b6f1dcb653093ee5d9604260448386b860fe43")
_UD_HI = ("UniversalDependencies/UD_Hindi-PUD", "04131d896f370dca6dc1e40b35959771aecf1687")
_QURAN = "ewinsutriandi/data-quran"
_QURAN_AYAH = "c4b8e25d042e46337e098f7e9a52658d981954c0"  # layout ayah-translation/
_QURAN_OLD = "624e830d1e1fb23d0b3100087d6d6ce2804d78d5"  # layout translation/
_QURAN_HI = (
    ("farooq-tanzil", "translation/hi-farooq-tanzil.json", _QURAN_OLD),
    ("hindi-tanzil", "ayah-translation/hi-hindi-tanzil.json", _QURAN_AYAH),
    ("omari-quranenc", "ayah-translation/hi-omari-quranenc.json", _QURAN_AYAH),
)
_NTREX = ("MicrosoftTranslator/NTREX", "c9f006f2c132c932b83ccd7aaa6a35930dd9c370")
_WMT24 = ("wmt-conference/wmt24-news-systems", "5700af1fe59b1cde97d34c9fab22f92caf53c4d2")
_WMT24_LINES = (1, 998)  # line 0 is a canary; test-suite segments follow line 997

_MONO_CLEANING = (
    "Cleaning (en-hi/mono-hi/README.md): split into sentences at danda, ?, ! and '.' before "
    "a space or a Devanagari letter (abbreviations protected); NFC, zero-width spaces removed, "
    "whitespace collapsed; lines of 3-80 words with >= 80 % Devanagari letters kept; lines with "
    "URLs, e-mail/@handles, #tags, markup, '&' or social-media boilerplate dropped; exact "
    "duplicates removed across all mono-hi files (earlier files in its table win); lines equal to "
    "a held-out test or dev line, or sharing a 10-word window with a test line, removed. The "
    "cross-file de-duplication and the held-out sets make it impossible to rebuild exactly from "
    "the source alone."
)
_CONLL_DETOK = (
    "tokens joined with spaces, then spaces removed before , . danda ? ! : ; ) ] } % and after "
    "( [ {, straight quotes re-attached"
)
_DICT_FILTER = (
    "kept only pairs whose English side has a Latin letter and no Devanagari and whose Hindi "
    "side is only Devanagari letters, both <= 60 characters; English lower-cased, Hindi NFC, "
    "exact duplicates removed"
)


def _mono(name: str, lines: int, description: str, source: str, licence: str, how: str) -> Dataset:
    """A monolingual Hindi file of en-hi/mono-hi/ (prepared by hand, see its README)."""
    path = f"{_MONO}/{name}.hi.gz"
    return Dataset(
        name=name,
        description=f"{description}; {lines:,} sentences, gzip, one a line",
        homepage=f"https://github.com/{source.split('@', 1)[0]}",
        licence=licence,
        source=source,
        files=(),
        outputs=_by_hand(path),
        checks=(Check((path,), lines),),
        note=f"{how} {_MONO_CLEANING}",
        kind="monolingual",
    )


CATALOGUE: dict[str, Dataset] = {
    dataset.name: dataset
    for dataset in (
        Dataset(
            name="hvg",
            description="Hindi Visual Genome 1.1: image captions, English -> Hindi, post-edited "
            "(29k train / 1k dev / 1.6k test / 1.4k challenge)",
            homepage="https://lindat.mff.cuni.cz/repository/xmlui/handle/11234/1-3267",
            licence="CC BY-NC-SA 4.0 (non-commercial research)",
            source="LINDAT/CLARIN-CZ item 11234/1-3267: hindi-visual-genome-{train,dev,test,"
            "challenge-test-set}.txt.gz",
            files=tuple(
                RemoteFile(
                    f"{_HVG}/hindi-visual-genome-{split}.txt.gz",
                    f"hindi-visual-genome-{split}.txt.gz",
                    min_bytes=10_000,
                )
                for split, _ in _HVG_SPLITS
            ),
            outputs=tuple(
                Output(
                    f"en-hi/hvg/hindi-visual-genome-{split}.txt",
                    (Part(f"hindi-visual-genome-{split}.txt.gz"),),
                )
                for split, _ in _HVG_SPLITS
            ),
            checks=tuple(
                Check((f"en-hi/hvg/hindi-visual-genome-{split}.txt",), lines, columns=7)
                for split, lines in _HVG_SPLITS
            ),
            note="TSV, 7 columns: image_id x y w h english hindi",
        ),
        Dataset(
            name="tatoeba-hin",
            description="Tatoeba English-Hindi sentence pairs as packaged by manythings.org/anki "
            "(everyday sentences, ~3k pairs, grows over time)",
            homepage="https://www.manythings.org/anki/",
            licence="CC BY 2.0 FR (attribution per line)",
            source="https://www.manythings.org/anki/hin-eng.zip (sentences from tatoeba.org)",
            files=(
                RemoteFile(
                    "https://www.manythings.org/anki/hin-eng.zip", "hin-eng.zip", None, 50_000
                ),
            ),
            outputs=(
                Output("en-hi/anki/hin.txt", (Part("hin-eng.zip", "hin.txt"),)),
                Output("en-hi/anki/_about.txt", (Part("hin-eng.zip", "_about.txt"),)),
            ),
            checks=(Check(("en-hi/anki/hin.txt",), 2_500, columns=3),),
            note="TSV, 3 columns: english hindi attribution",
        ),
        Dataset(
            name="iitb",
            description="IIT Bombay English-Hindi corpus v1.5 (1.6M pairs of mixed quality) with "
            "its dev (= WMT14 newsdev2014) and test sets",
            homepage="https://www.cfilt.iitb.ac.in/iitb_parallel/",
            licence="CC BY-NC 4.0 (non-commercial research)",
            source=f"{_IITB}/parallel.tgz, dev_test.tgz",
            files=(
                RemoteFile(f"{_IITB}/parallel.tgz", "parallel.tgz", None, 50_000_000),
                RemoteFile(f"{_IITB}/dev_test.tgz", "dev_test.tgz", None, 100_000),
            ),
            outputs=(
                *_aligned(
                    "en-hi/iitb", "train", "parallel.tgz", "IITB.en-hi.en", "IITB.en-hi.hi", "en-hi"
                ),
                *_aligned(
                    "en-hi/iitb",
                    "dev",
                    "dev_test.tgz",
                    "dev_test/dev.en",
                    "dev_test/dev.hi",
                    "en-hi",
                ),
                *_aligned(
                    "en-hi/iitb",
                    "test",
                    "dev_test.tgz",
                    "dev_test/test.en",
                    "dev_test/test.hi",
                    "en-hi",
                ),
            ),
            checks=(
                Check(("en-hi/iitb/train.en", "en-hi/iitb/train.hi"), 1_500_000),
                Check(("en-hi/iitb/dev.en", "en-hi/iitb/dev.hi"), 500),
                Check(("en-hi/iitb/test.en", "en-hi/iitb/test.hi"), 2_400),
            ),
            note="CFILT has moved these files before; if the URL fails, the same corpus is on "
            "Hugging Face as cfilt/iitb-english-hindi (use --from with files fetched by hand).",
        ),
        Dataset(
            name="multi30k",
            description="Multi30k task 1: Flickr30k captions, English-German, raw text "
            "(29k train / 1,014 val / 1k test 2016)",
            homepage="https://github.com/multi30k/dataset",
            licence="research use (Flickr30k terms)",
            source="multi30k/dataset@master:data/task1/raw/{train,val,test_2016_flickr}.{en,de}.gz",
            files=tuple(
                RemoteFile(f"{_M30K}/{split}.{lang}.gz", f"{split}.{lang}.gz", None, 10_000)
                for split, _ in _M30K_SPLITS
                for lang in ("en", "de")
            ),
            outputs=tuple(
                Output(f"en-de/multi30k/{split}.{lang}", (Part(f"{split}.{lang}.gz"),))
                for split, _ in _M30K_SPLITS
                for lang in ("en", "de")
            ),
            checks=tuple(
                Check((f"en-de/multi30k/{split}.en", f"en-de/multi30k/{split}.de"), lines)
                for split, lines in _M30K_SPLITS
            ),
        ),
        Dataset(
            name="flores200",
            description="FLORES-200 dev and devtest, English-Hindi (997 / 1,012 sentences, "
            "professional translations of Wikipedia text): an out-of-domain test",
            homepage="https://github.com/facebookresearch/flores/tree/main/flores200",
            licence="CC BY-SA 4.0",
            source="https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz: "
            "{dev,devtest}/{eng_Latn,hin_Deva}.*",
            files=(
                RemoteFile(
                    "https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz",
                    "flores200_dataset.tar.gz",
                    None,
                    5_000_000,
                ),
            ),
            outputs=(
                *_aligned(
                    "en-hi/flores200",
                    "dev",
                    "flores200_dataset.tar.gz",
                    "dev/eng_Latn.dev",
                    "dev/hin_Deva.dev",
                    "en-hi",
                ),
                *_aligned(
                    "en-hi/flores200",
                    "devtest",
                    "flores200_dataset.tar.gz",
                    "devtest/eng_Latn.devtest",
                    "devtest/hin_Deva.devtest",
                    "en-hi",
                ),
            ),
            checks=(
                Check(("en-hi/flores200/dev.en", "en-hi/flores200/dev.hi"), 997),
                Check(("en-hi/flores200/devtest.en", "en-hi/flores200/devtest.hi"), 1_012),
            ),
            kind="dev",
        ),
        Dataset(
            name="wmt14-en-de",
            description="WMT14 English-German training data as in the paper (Europarl v7 + "
            "Common Crawl + News Commentary v9, ~4.5M pairs) and newstest2013 (dev)",
            homepage="https://www.statmt.org/wmt14/translation-task.html",
            licence="WMT research use (per corpus)",
            source="statmt.org: wmt13/training-parallel-{europarl-v7,commoncrawl}.tgz, "
            "wmt14/training-parallel-nc-v9.tgz, wmt14/dev.tgz",
            files=(
                *(
                    RemoteFile(f"{_WMT}/wmt13/{name}", name, None, 10_000_000)
                    for name, _ in _WMT_TRAIN[:2]
                ),
                RemoteFile(f"{_WMT}/wmt14/{_WMT_TRAIN[2][0]}", _WMT_TRAIN[2][0], None, 10_000_000),
                RemoteFile(f"{_WMT}/wmt14/dev.tgz", "dev.tgz", None, 1_000_000),
            ),
            outputs=(
                *(
                    Output(
                        f"en-de/wmt14/train.{lang}",
                        tuple(Part(archive, f"{stem}.{lang}") for archive, stem in _WMT_TRAIN),
                    )
                    for lang in ("en", "de")
                ),
                *(
                    Output(
                        f"en-de/newstest2013/newstest2013.{lang}",
                        (Part("dev.tgz", f"dev/newstest2013.{lang}"),),
                    )
                    for lang in ("en", "de")
                ),
            ),
            checks=(
                Check(("en-de/wmt14/train.en", "en-de/wmt14/train.de"), 4_400_000),
                Check(
                    ("en-de/newstest2013/newstest2013.en", "en-de/newstest2013/newstest2013.de"),
                    3_000,
                ),
            ),
            note="The test set newstest2014 is not included: score with sacrebleu "
            "(`sacrebleu -t wmt14/full -l en-de --echo src`).",
        ),
        Dataset(
            name="ud-pud",
            description="Universal Dependencies PUD: the same 1,000 Wikipedia and news "
            "sentences in English and Hindi",
            homepage="https://universaldependencies.org/",
            licence="CC BY-SA 3.0",
            source=f"{_UD_EN[0]}@{_UD_EN[1][:7]}:en_pud-ud-test.conllu, "
            f"{_UD_HI[0]}@{_UD_HI[1][:7]}:hi_pud-ud-test.conllu",
            files=(
                _github(*_UD_EN, "en_pud-ud-test.conllu", 1_000_000),
                _github(*_UD_HI, "hi_pud-ud-test.conllu", 1_000_000),
            ),
            outputs=tuple(
                Output(
                    f"{_GENERAL}/ud-pud/train.{lang}",
                    (Part(f"{lang}_pud-ud-test.conllu", extract=Extract("conllu", "text")),),
                )
                for lang in ("en", "hi")
            ),
            checks=(Check((f"{_GENERAL}/ud-pud/train.en", f"{_GENERAL}/ud-pud/train.hi"), 1_000),),
            note="The '# text' of every sentence, joined on sent_id. The data README names "
            "UD_English-PUD@f16eba4 and UD_Hindi-PUD@8bc630f; the pinned commits are the ones "
            "whose files were spot-checked against the prepared copy (same sentences, same "
            "order).",
        ),
        Dataset(
            name="xquad",
            description="XQuAD: Wikipedia questions (aligned by id) and context sentences, "
            "English-Hindi (2,073 pairs)",
            homepage="https://github.com/google-deepmind/xquad",
            licence="CC BY-SA 4.0",
            source="google-deepmind/xquad@7d30520:xquad.en.json, xquad.hi.json",
            files=(),
            outputs=_by_hand(f"{_GENERAL}/xquad/train", "en", "hi"),
            checks=(Check((f"{_GENERAL}/xquad/train.en", f"{_GENERAL}/xquad/train.hi"), 2_073),),
            note="Prepared by hand from the SQuAD-format JSON files: every question paired with "
            "the question of the same id in the other language, and the sentences of each "
            "context paragraph paired in order where both languages split into the same number "
            "of sentences. The sentence splitter is not part of this project, so the pairs "
            "cannot be rebuilt exactly.",
        ),
        Dataset(
            name="il-ilgov",
            description="IL-ILGOV: Indian government speeches (Hindi is the original, English "
            "a translation), 1,320 pairs",
            homepage="https://github.com/vmujadia/MT-IL-ILGOV",
            licence="none stated; treat as research-only",
            source=f"{_ILGOV[0]}@{_ILGOV[1][:7]}:nway_parallel.eng, nway_parallel.hin",
            files=(
                _github(*_ILGOV, "nway_parallel.eng", 100_000),
                _github(*_ILGOV, "nway_parallel.hin", 100_000),
            ),
            outputs=(
                Output(f"{_GENERAL}/il-ilgov/train.en", (Part("nway_parallel.eng"),)),
                Output(f"{_GENERAL}/il-ilgov/train.hi", (Part("nway_parallel.hin"),)),
            ),
            checks=(
                Check((f"{_GENERAL}/il-ilgov/train.en", f"{_GENERAL}/il-ilgov/train.hi"), 1_320),
            ),
            note="The English and Hindi columns of the n-way parallel corpus (12 languages).",
        ),
        Dataset(
            name="mturk",
            description="Indian Parallel Corpora (crowd-sourced): Hindi Wikipedia sentences, "
            "each with 4 crowd English translations, 12,752 pairs",
            homepage="https://github.com/joshua-decoder/indian-parallel-corpora",
            licence="CC BY-SA 3.0",
            source=f"{_MTURK[0]}@{_MTURK[1][:7]}:hi-en/{{dev,devtest,test}}.hi-en."
            "{hi,en.0,en.1,en.2,en.3}",
            files=tuple(
                _github(*_MTURK, f"hi-en/{split}.hi-en.{lang}", 20_000)
                for split in _MTURK_SPLITS
                for lang in ("hi", "en.0", "en.1", "en.2", "en.3")
            ),
            outputs=(
                Output(
                    f"{_GENERAL}/mturk/train.en",
                    tuple(
                        Part(f"{split}.hi-en.en.{k}") for split in _MTURK_SPLITS for k in range(4)
                    ),
                ),
                Output(
                    f"{_GENERAL}/mturk/train.hi",
                    tuple(Part(f"{split}.hi-en.hi") for split in _MTURK_SPLITS for _k in range(4)),
                ),
            ),
            checks=(Check((f"{_GENERAL}/mturk/train.en", f"{_GENERAL}/mturk/train.hi"), 12_752),),
            note="For dev, devtest and test in turn: the 4 English translations one after the "
            "other, each against the Hindi file (so each Hindi line occurs 4 times; 3,188 "
            "sources). The English is noisy and 93 English lines are empty.",
        ),
        Dataset(
            name="kaggle-ted-tides",
            description="The Kaggle 'Hindi English Truncated Corpus': TED talks, Indic "
            "Wikipedia and TIDES news, 4,122 pairs",
            homepage=f"https://github.com/{_KAGGLE[0]}",
            licence="unclear; treat as non-commercial",
            source=f"{_KAGGLE[0]}@{_KAGGLE[1][:7]}:Hindi_English_Truncated_Corpus.csv",
            files=(_github(*_KAGGLE, "Hindi_English_Truncated_Corpus.csv", 500_000),),
            outputs=tuple(
                Output(
                    f"{_GENERAL}/kaggle-ted-tides/train.{lang}",
                    (
                        Part(
                            "Hindi_English_Truncated_Corpus.csv",
                            extract=Extract("csv", f"{column}_sentence"),
                        ),
                    ),
                )
                for lang, column in (("en", "english"), ("hi", "hindi"))
            ),
            checks=(
                Check(
                    (
                        f"{_GENERAL}/kaggle-ted-tides/train.en",
                        f"{_GENERAL}/kaggle-ted-tides/train.hi",
                    ),
                    4_122,
                ),
            ),
            note="The english_sentence and hindi_sentence columns of the CSV (columns source, "
            "english_sentence, hindi_sentence), every row. The data README names @6d8c024; the "
            "pinned commit is the one whose file was spot-checked against the prepared copy.",
        ),
        Dataset(
            name="enindic-speeches",
            description="EnIndic: speeches of the President and Vice-President of India "
            "(tune + test), 2,002 pairs",
            homepage=f"https://github.com/{_ENINDIC[0]}",
            licence="none stated; research-only",
            source=f"{_ENINDIC[0]}@{_ENINDIC[1][:7]}:president-VP_of_India_speech/ "
            "(tune and test parts)",
            files=(),
            outputs=_by_hand(f"{_GENERAL}/enindic-speeches/train", "en", "hi"),
            checks=(
                Check(
                    (
                        f"{_GENERAL}/enindic-speeches/train.en",
                        f"{_GENERAL}/enindic-speeches/train.hi",
                    ),
                    2_002,
                ),
            ),
            note="Prepared by hand: the tune and test parts of the speeches folder, English "
            "against Hindi, concatenated. Their file names could not be verified from here (only "
            "president-VP_of_India_speech/train.en.txt could), so no URL is given; fetch the two "
            "parts from the repository at that commit and concatenate tune then test.",
        ),
        Dataset(
            name="enindic-news-subtitles",
            description="EnIndic dev set: news and film subtitles, tokenized (spaces around "
            "punctuation), 1,020 pairs",
            homepage=f"https://github.com/{_ENINDIC[0]}",
            licence="none stated; research-only",
            source=f"{_ENINDIC[0]}@{_ENINDIC[1][:7]}:dev.en.txt, dev.hi.txt",
            files=(
                _github(*_ENINDIC, "dev.en.txt", 50_000),
                _github(*_ENINDIC, "dev.hi.txt", 50_000),
            ),
            outputs=(
                Output(f"{_GENERAL}/enindic-news-subtitles/train.en", (Part("dev.en.txt"),)),
                Output(f"{_GENERAL}/enindic-news-subtitles/train.hi", (Part("dev.hi.txt"),)),
            ),
            checks=(
                Check(
                    (
                        f"{_GENERAL}/enindic-news-subtitles/train.en",
                        f"{_GENERAL}/enindic-news-subtitles/train.hi",
                    ),
                    1_020,
                ),
            ),
            note="Used for training here (the recipes validate on NTREX-128).",
        ),
        Dataset(
            name="milpac",
            description="MILPaC: Indian legal text (acts, FAQs), English -> Hindi, 1,185 pairs",
            homepage="https://github.com/Law-AI/MILPaC",
            licence="CC BY-NC-SA 4.0",
            source="Law-AI/MILPaC@1741280:Data/MILPaC/ (the EN-HI rows)",
            files=(),
            outputs=_by_hand(f"{_GENERAL}/milpac/train", "en", "hi"),
            checks=(Check((f"{_GENERAL}/milpac/train.en", f"{_GENERAL}/milpac/train.hi"), 1_185),),
            note="Prepared by hand: the English -> Hindi rows of the MILPaC files under "
            "Data/MILPaC/. The names and format of those files could not be verified from here, "
            "so no URL is given.",
        ),
        Dataset(
            name="quran",
            description="The Quran: Pickthall's English against three Hindi translations "
            "(6,236 verses each); archaic, religious register",
            homepage=f"https://github.com/{_QURAN}",
            licence="English public domain; Hindi translations non-commercial, verbatim only "
            "(Tanzil / QuranEnc terms)",
            source=f"{_QURAN}@{_QURAN_AYAH[:7]}:ayah-translation/{{en-pickthall-tanzil,"
            f"hi-hindi-tanzil,hi-omari-quranenc}}.json, "
            f"{_QURAN}@{_QURAN_OLD[:7]}:translation/hi-farooq-tanzil.json",
            files=(
                _github(_QURAN, _QURAN_AYAH, "ayah-translation/en-pickthall-tanzil.json", 500_000),
                *(_github(_QURAN, commit, path, 500_000) for _, path, commit in _QURAN_HI),
            ),
            outputs=tuple(
                Output(
                    f"en-hi/religious/quran/{name}.{lang}",
                    (Part(file, extract=Extract("json", "translations")),),
                )
                for name, path, _ in _QURAN_HI
                for lang, file in (
                    ("en", "en-pickthall-tanzil.json"),
                    ("hi", path.rsplit("/", 1)[-1]),
                )
            ),
            checks=tuple(
                Check(
                    (f"en-hi/religious/quran/{name}.en", f"en-hi/religious/quran/{name}.hi"),
                    6_236,
                )
                for name, _, _ in _QURAN_HI
            ),
            note="One verse a line, in verse order (the 'translations' of each JSON file); the "
            "QuranEnc translation keeps its footnote marks ([^1]). The data README names "
            "@b17fc77; the repository moved its files between translation/ and "
            "ayah-translation/ over its history, so the pinned commits are the ones whose files "
            "were compared with the prepared copy.",
        ),
        Dataset(
            name="ntrex128",
            description="NTREX-128 English-Hindi: 1,997 news sentences (WMT19 test sources), "
            "professionally translated; the general-domain dev set",
            homepage="https://github.com/MicrosoftTranslator/NTREX",
            licence="CC BY-SA 4.0",
            source=f"{_NTREX[0]}@{_NTREX[1][:7]}:NTREX-128/newstest2019-src.eng.txt, "
            "NTREX-128/newstest2019-ref.hin.txt",
            files=(
                _github(*_NTREX, "NTREX-128/newstest2019-src.eng.txt", 100_000),
                _github(*_NTREX, "NTREX-128/newstest2019-ref.hin.txt", 100_000),
            ),
            outputs=(
                Output(f"{_DEV}/ntrex128.en", (Part("newstest2019-src.eng.txt"),)),
                Output(f"{_DEV}/ntrex128.hi", (Part("newstest2019-ref.hin.txt"),)),
            ),
            checks=(Check((f"{_DEV}/ntrex128.en", f"{_DEV}/ntrex128.hi"), 1_997),),
            note="Never train on it. CRLF line ends become LF. The data README names @8561f6a; "
            "the pinned commit is the one whose files were compared with the prepared copy.",
            kind="dev",
        ),
        Dataset(
            name="wmt24",
            description="WMT24 general test set English-Hindi: 997 paragraph-level segments "
            "(news, social, speech, literary)",
            homepage=f"https://github.com/{_WMT24[0]}",
            licence="WMT research use",
            source=f"{_WMT24[0]}@{_WMT24[1][:7]}:txt-ts/sources/en-hi.txt, "
            "txt-ts/references/en-hi.refA.txt (lines 2-998)",
            files=(
                _github(*_WMT24, "txt-ts/sources/en-hi.txt", 500_000),
                _github(*_WMT24, "txt-ts/references/en-hi.refA.txt", 500_000),
            ),
            outputs=(
                Output(f"{_DEV}/wmt24.en", (Part("en-hi.txt", lines=_WMT24_LINES),)),
                Output(f"{_DEV}/wmt24.hi", (Part("en-hi.refA.txt", lines=_WMT24_LINES),)),
            ),
            checks=(Check((f"{_DEV}/wmt24.en", f"{_DEV}/wmt24.hi"), 997),),
            note="Never train on it; segments are whole paragraphs (a test of document "
            "translation). Line 1 of both files is a canary line and the lines after 998 are "
            "test suites without a reference, so lines 2-998 are kept. One English segment "
            "contains a tab followed by a sentence its reference does not translate; the copy "
            "in the shared data folder cut that line at the tab, this one keeps it. The data "
            "README names @bfa937e; the pinned commit is the one whose files were compared with "
            "the prepared copy.",
            kind="dev",
        ),
        Dataset(
            name="wmt24pp",
            description="WMT24++: post-edited Hindi references for 960 of the WMT24 English "
            "sources",
            homepage="https://huggingface.co/datasets/google/wmt24pp",
            licence="Apache-2.0",
            source="Hugging Face dataset google/wmt24pp (the English-Hindi JSON-lines file)",
            files=(),
            outputs=_by_hand(f"{_DEV}/wmt24pp", "en", "hi"),
            checks=(Check((f"{_DEV}/wmt24pp.en", f"{_DEV}/wmt24pp.hi"), 960),),
            note="Never train on it. Prepared by hand: the source and post-edited target of "
            "960 segments of the English-Hindi file; which segments of the file were left out "
            "is not recorded, so it cannot be rebuilt exactly.",
            kind="dev",
        ),
        Dataset(
            name="newsdev2014",
            description="WMT14 Hindi-English newsdev2014 (= the IIT Bombay dev set), 520 news "
            "sentences",
            homepage="https://www.statmt.org/wmt14/translation-task.html",
            licence="WMT research use",
            source="http://data.statmt.org/wmt19/translation-task/dev.tgz: "
            "dev/newsdev2014.en, dev/newsdev2014.hi",
            files=(
                RemoteFile(
                    "http://data.statmt.org/wmt19/translation-task/dev.tgz",
                    "dev.tgz",
                    None,
                    1_000_000,
                ),
            ),
            outputs=tuple(
                Output(
                    f"en-hi/newsdev2014/newsdev2014.{lang}",
                    (Part("dev.tgz", f"dev/newsdev2014.{lang}"),),
                )
                for lang in ("en", "hi")
            ),
            checks=(
                Check(
                    ("en-hi/newsdev2014/newsdev2014.en", "en-hi/newsdev2014/newsdev2014.hi"), 520
                ),
            ),
            note="Never train on it. News, much harder than the caption data.",
            kind="dev",
        ),
        _mono(
            "bbc-news",
            7_481,
            "BBC Hindi news articles (test split of the hindi2vec BBC-Hindi set)",
            "danlobo1999/classification-of-hindi-news@edf606fc4beb15a13c8dd963a7cbce5995400f8c:"
            "dataset/bbc_hindi_cleaned/hindi-cleaned-test.csv",
            "none stated (no licence file; BBC content)",
            "Prepared by hand from the article texts of the CSV file (8,602 raw sentences).",
        ),
        _mono(
            "hiner-news-tourism",
            12_889,
            "news (Leipzig Hindi news) and tourism (ILCI) sentences of the HiNER NER corpus",
            "cfiltnlp/HiNER@5e12e796a7a4b7b8880b2e876adb27894501a8e9:"
            "data/original/validation.conll",
            "CC BY-SA 4.0",
            f"Prepared by hand from the CoNLL validation split: {_CONLL_DETOK}.",
        ),
        _mono(
            "hdtb-ssf-news-tourism",
            3_472,
            "news and tourism sentences of the IIIT-H Hindi Treebank 2014 (SSF test and "
            "development parts)",
            "anubhav-sharma13/Dependency-Parser-Hindi@666fadc05c2d15cd3f476a12396f7b3e183ae4f5:"
            "src/data/{clean_testing_data,parsable_clean_development_data,"
            "non_parsable_development_data}.txt",
            "none stated (the Hindi treebank is CC BY-NC-SA 4.0 as distributed by UD)",
            f"Prepared by hand from the SSF files: {_CONLL_DETOK}.",
        ),
        _mono(
            "ilner-general",
            12_648,
            "general written Hindi (news, government, opinion) of the IL-NER corpus",
            "SankalpBahad/IL-NER@079e9184d819cf8114e989b0b9380b5ef4faa9e2:"
            "Datasets/Hindi/Hindi-{train,dev,test}.txt",
            "CC BY 4.0",
            f"Prepared by hand from the token-per-line files: {_CONLL_DETOK}.",
        ),
        _mono(
            "hiwiki-sample",
            184,
            "a few Hindi Wikipedia articles",
            "anupampatil44/hiwiki_scraping-script@8637fd2e38bbf9d67bf17c775598152c2f053d3e:"
            "out_up.json",
            "none stated (Wikipedia text is CC BY-SA)",
            "Prepared by hand from the scraped article texts of the JSON file.",
        ),
        _mono(
            "discourse-stories",
            11_693,
            "narrative prose: sentences of Hindi short stories (discourse-mode dataset)",
            "midas-research/hindi-discourse@d3679594f378a73460e0a6b6b160719c3589f464:"
            "discourse_dataset.json",
            "MIT",
            "Prepared by hand from the sentences of the JSON file.",
        ),
        _mono(
            "literature-nopunct",
            300_000,
            "literary prose (hindisamay.com e-library, Premchand) whose source stripped inner "
            "punctuation: down-weight or tag it",
            "gayatrivenugopal/hindi-corpus-stoplemmas@9acc9873ec9c3e6d6f07ca6a6c5f04150948a21d:"
            "aesthetics corpus/*",
            "GPL-3.0",
            "Prepared by hand: the source has one sentence a line with all punctuation removed; "
            "a danda was appended to every line; files of Dada Bhagwan spiritual books, verse "
            "(median line < 7 words) and files with mangled ra-conjuncts were skipped; of ~467k "
            "clean lines a seeded random sample of 300,000 (seed 13) was kept.",
        ),
        Dataset(
            name="freedict-eng-hin",
            description="FreeDict English-Hindi 1.6 (IIIT Hyderabad's Shabdanjali): 32,654 "
            "English -> Hindi word pairs",
            homepage="https://freedict.org/",
            licence="GPL-2.0-or-later",
            source="Debian package dict-freedict-eng-hin 2022.04.21-1: freedict-eng-hin.index, "
            "freedict-eng-hin.dict.dz",
            files=(),
            outputs=_by_hand(f"{_DICT}/freedict-eng-hin.tsv"),
            checks=(Check((f"{_DICT}/freedict-eng-hin.tsv",), 32_654, columns=2),),
            note="TSV english<TAB>hindi. Prepared by hand from the dictd files: every numbered "
            "sense of each entry; headword without IPA and part of speech; senses split at , ; "
            "/; '~' turned into a space; {...}, (...), [...] comments and English examples "
            f"removed; {_DICT_FILTER}. The source calls itself low quality (some senses are "
            "paraphrases).",
            kind="dictionary",
        ),
        Dataset(
            name="muse-en-hi",
            description="MUSE ground-truth English-Hindi bilingual dictionary (full, ~38k word "
            "pairs)",
            homepage="https://github.com/facebookresearch/MUSE",
            licence="CC BY-NC 4.0",
            source="https://dl.fbaipublicfiles.com/arrival/dictionaries/en-hi.txt",
            files=(
                RemoteFile(
                    "https://dl.fbaipublicfiles.com/arrival/dictionaries/en-hi.txt",
                    "en-hi.txt",
                    None,
                    300_000,
                ),
            ),
            outputs=(Output(f"{_DICT}/muse-en-hi.tsv", (Part("en-hi.txt"),)),),
            checks=(Check((f"{_DICT}/muse-en-hi.tsv",), 30_648, columns=2),),
            note="TSV english<TAB>hindi, as MUSE publishes it (not cleaned). The 30,648-pair "
            "copy in the shared data folder was made from the reformatted copy "
            "coezbek/hunalign-dict-muse@0950a115b315cab94a16b65c4e80df630c7058b3:dict/en-hi.dict "
            f"('hindi @ english' lines swapped) and cleaned: {_DICT_FILTER}. Contains "
            "transliterated names and word-form pairs without context.",
            kind="dictionary",
        ),
        Dataset(
            name="en-hi-combined",
            description="The union of the FreeDict and the cleaned MUSE dictionaries (60,276 "
            "pairs, 39,449 English headwords); the dictionary the Hindi recipes train on",
            homepage="https://freedict.org/",
            licence="GPL-2.0-or-later and CC BY-NC 4.0 (both apply)",
            source="freedict-eng-hin.tsv and the cleaned muse-en-hi.tsv of en-hi/dictionary/ "
            "(see those entries)",
            files=(),
            outputs=_by_hand(f"{_DICT}/en-hi-combined.tsv"),
            checks=(Check((f"{_DICT}/en-hi-combined.tsv",), 60_276, columns=2),),
            note="Prepared by hand: freedict-eng-hin.tsv followed by the cleaned "
            "muse-en-hi.tsv, exact duplicates removed (FreeDict lines first). Both inputs were "
            "prepared by hand (see freedict-eng-hin and muse-en-hi).",
            kind="dictionary",
        ),
    )
}


def get_dataset(name: str) -> Dataset:
    """The catalogue entry called ``name``.

    Raises:
        DataError: unknown name (the message lists the known ones).
    """
    if name not in CATALOGUE:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(CATALOGUE)}")
    return CATALOGUE[name]


def manual_preparation(dataset: Dataset) -> str:
    """Why ``dataset`` cannot be downloaded automatically and how it was prepared instead."""
    return (
        f"{dataset.name} cannot be downloaded automatically: it was prepared by hand from "
        f"{dataset.source}. {dataset.note} Its prepared files belong at "
        f"{', '.join(o.path for o in dataset.outputs)} under the data root."
    )


def download_dataset(
    dataset: Dataset,
    out: Path | None = None,
    *,
    source_dir: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Download (or reuse) a corpus's files, prepare them under ``out`` and verify them.

    Args:
        dataset: a catalogue entry (:func:`get_dataset`).
        out: the data root to write (default ``<cache>/data``).
        source_dir: a folder holding files downloaded by hand (used instead of the network).
        progress: called with (bytes, total) while downloading.

    Returns:
        Line counts of the prepared corpora, by their first path.

    Raises:
        DataError: the corpus cannot be downloaded automatically (the message names its source
            and how it was prepared), a download or a prepared file fails its checks.
    """
    if not dataset.downloadable:
        raise DataError(manual_preparation(dataset))
    downloads = cache_dir() / "downloads" / dataset.name
    root = out if out is not None else cache_dir() / "data"
    for remote in dataset.files:
        local = copy_local(remote, source_dir, downloads) if source_dir else None
        if local is None:
            logger.info("downloading %s", remote.url)
            download(remote, downloads, progress)
    for output in dataset.outputs:
        write_output(downloads, root, output)
    return {check.paths[0]: check_prepared(root, check) for check in dataset.checks}
