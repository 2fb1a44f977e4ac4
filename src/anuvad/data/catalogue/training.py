"""Catalogue entries: the first corpora (captions, Tatoeba, IIT Bombay, Multi30k, FLORES-200,
WMT14 English-German)."""

from __future__ import annotations

from anuvad.data.catalogue.dataset import (
    _HVG,
    _HVG_SPLITS,
    _IITB,
    _M30K,
    _M30K_SPLITS,
    _WMT,
    _WMT_TRAIN,
    Dataset,
    _aligned,
)
from anuvad.data.download import RemoteFile
from anuvad.data.unpack import Check, Output, Part

DATASETS: tuple[Dataset, ...] = (
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
            RemoteFile("https://www.manythings.org/anki/hin-eng.zip", "hin-eng.zip", None, 50_000),
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
)
