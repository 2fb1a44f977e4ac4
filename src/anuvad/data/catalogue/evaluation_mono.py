"""Catalogue entries: the general-domain dev sets, monolingual Hindi and the dictionaries."""

from __future__ import annotations

from anuvad.data.catalogue.dataset import (
    _CONLL_DETOK,
    _DEV,
    _DICT,
    _DICT_FILTER,
    _NTREX,
    _WMT24,
    _WMT24_LINES,
    Dataset,
    _by_hand,
    _github,
    _mono,
)
from anuvad.data.download import RemoteFile
from anuvad.data.unpack import Check, Output, Part

DATASETS: tuple[Dataset, ...] = (
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
        description="WMT24++: post-edited Hindi references for 960 of the WMT24 English sources",
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
            Check(("en-hi/newsdev2014/newsdev2014.en", "en-hi/newsdev2014/newsdev2014.hi"), 520),
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
        "cfiltnlp/HiNER@5e12e796a7a4b7b8880b2e876adb27894501a8e9:data/original/validation.conll",
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
        "anupampatil44/hiwiki_scraping-script@8637fd2e38bbf9d67bf17c775598152c2f053d3e:out_up.json",
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
        description="MUSE ground-truth English-Hindi bilingual dictionary (full, ~38k word pairs)",
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
