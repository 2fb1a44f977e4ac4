"""Catalogue entries: the small general-domain English-Hindi corpora and the Quran translations."""

from __future__ import annotations

from anuvad.data.catalogue.dataset import (
    _ENINDIC,
    _GENERAL,
    _ILGOV,
    _KAGGLE,
    _MTURK,
    _MTURK_SPLITS,
    _QURAN,
    _QURAN_AYAH,
    _QURAN_HI,
    _QURAN_OLD,
    _UD_EN,
    _UD_HI,
    Dataset,
    _by_hand,
    _github,
)
from anuvad.data.unpack import Check, Extract, Output, Part

DATASETS: tuple[Dataset, ...] = (
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
        checks=(Check((f"{_GENERAL}/il-ilgov/train.en", f"{_GENERAL}/il-ilgov/train.hi"), 1_320),),
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
                tuple(Part(f"{split}.hi-en.en.{k}") for split in _MTURK_SPLITS for k in range(4)),
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
)
