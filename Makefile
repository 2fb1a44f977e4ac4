# anuvad: `make demo` (the main job) and `make test` (the tests) set everything up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two installs, each remembered by a stamp file and redone when pyproject.toml changes: what
# serving needs (torch, then anuvad without extras: `make demo`, the recipes) and, for the tests
# and linters, the same plus the [dev] extras (pytest, mypy, ruff, playwright, transformers,
# schemathesis, ...: 1.9 GB in all, against 1.3 GB for serving alone). The full install keeps
# the name older checkouts know.
STAMP := $(VENV)/.installed
SERVE_STAMP := $(VENV)/.installed-serve
# What serving needs is there when either install is: a venv set up for the tests serves too.
SERVING := $(if $(wildcard $(STAMP)),$(STAMP),$(SERVE_STAMP))

.PHONY: demo demo-opus demo-nllb train-demo test test-fast test-system lint format install clean chromium web-runtime synthetic calibrate synthetic-hi synthetic-en gpu-pack gpu-pack-lanes train-gpu train-gpu-lanes

# $(call pip_step,what is installed and roughly how long,pip install arguments): one install
# step, said before it starts (pip itself is quiet) and timed when it ends.
pip_step = @echo "anuvad: installing $(1)..."; started=$$(date +%s); \
	$(BIN)/pip install --quiet $(2) && echo "  done in $$(( $$(date +%s) - started )) s"

$(BIN)/python:
	@echo "anuvad: creating $(VENV) with $(PYTHON) and upgrading pip (about 10 s)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade --quiet pip

TORCH_STEP := torch 2.13.0 (the CPU build, about 1 min)
SERVE_STEP := anuvad and what serving needs (FastAPI, uvicorn, SentencePiece, ..., about 40 s)
DEV_STEP := anuvad with the test and lint tools ([dev]: pytest, mypy, playwright, transformers, \
	schemathesis, ..., about 1 min)

$(SERVE_STAMP): pyproject.toml | $(BIN)/python
	$(call pip_step,$(TORCH_STEP),"torch==2.13.0")
	$(call pip_step,$(SERVE_STEP),-e .)
	@touch $(SERVE_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(call pip_step,$(TORCH_STEP),"torch==2.13.0")
	$(call pip_step,$(DEV_STEP),-e ".[dev]")
	@touch $(STAMP)

install: $(STAMP)

# The translators shipped in data/trained_models/ (the newest file of each direction), with the
# web page, on http://127.0.0.1:8000 (no data, no network needed). Installs only what serving needs.
demo: $(SERVING)
	$(BIN)/anuvad serve --host 127.0.0.1 --port 8000

# OPUS-MT's Tatoeba-MT English<->Hindi releases, opus+bt 2021 (CC-BY-4.0: credit the authors;
# FLORES-200 devtest chrF++ 46.4 en->hi, 55.9 hi->en, Helsinki-NLP/OPUS-MT-leaderboard), imported
# from their Marian release zips (needs internet once; the zips stay in the user cache, ANUVAD_CACHE
# or ~/.cache/anuvad, under marian-releases/); each calibrated with the other as its reverse model
# on the first 300 lines of NTREX-128 dev (when $(ANUVAD_DATA) has it), then served with the page.
# Offline, the import says in one line what it needs and exits 2.
OPUS := data/opus
OPUS_DEV := $(ANUVAD_DATA)/en-hi/dev-general
TATOEBA_MT := https://object.pouta.csc.fi/Tatoeba-MT-models
OPUS_ENHI := $(OPUS)/opus-mt-tatoeba-en-hi.pt
OPUS_HIEN := $(OPUS)/opus-mt-tatoeba-hi-en.pt
demo-opus: $(SERVING)
	mkdir -p $(OPUS)
	test -f $(OPUS_ENHI) || $(BIN)/anuvad import $(TATOEBA_MT)/eng-hin/opus+bt-2021-04-10.zip --out $(OPUS_ENHI)
	test -f $(OPUS_HIEN) || $(BIN)/anuvad import $(TATOEBA_MT)/hin-eng/opus+bt-2021-04-30.zip --out $(OPUS_HIEN)
	if [ -f $(OPUS_DEV)/ntrex128.en ] && [ ! -f $(OPUS)/opus-mt-tatoeba-en-hi.confidence.json ]; then \
		head -n 300 $(OPUS_DEV)/ntrex128.en > $(OPUS)/dev.en; head -n 300 $(OPUS_DEV)/ntrex128.hi > $(OPUS)/dev.hi; \
		$(BIN)/anuvad calibrate --model $(OPUS_ENHI) --reverse-model $(OPUS_HIEN) \
			--dev general=$(OPUS)/dev.en,$(OPUS)/dev.hi && \
		$(BIN)/anuvad calibrate --model $(OPUS_HIEN) --reverse-model $(OPUS_ENHI) \
			--dev general=$(OPUS)/dev.hi,$(OPUS)/dev.en; \
	fi
	$(BIN)/anuvad serve --model $(OPUS_ENHI) --model $(OPUS_HIEN) --host 127.0.0.1 --port 8000

# NLLB-200 distilled 600M (Meta; CC-BY-NC-4.0: non-commercial use only, the page says so), the
# strongest open English<->Hindi model (FLORES-200 devtest chrF++ 52.8 / 61.8), imported exactly
# for both directions (needs internet once: 2.5 GB); each pair calibrated with the other as its
# reverse model on the first 300 lines of NTREX-128 dev (when $(ANUVAD_DATA) has it), then served
# with the page: one model file, two served directions. Offline, the import says in one line what
# it needs and exits 2.
NLLB := data/nllb
NLLB_MODEL := $(NLLB)/nllb-200-distilled-600M.pt
demo-nllb: $(SERVING)
	mkdir -p $(NLLB)
	test -f $(NLLB_MODEL) || $(BIN)/anuvad import facebook/nllb-200-distilled-600M \
		--pairs eng_Latn-hin_Deva,hin_Deva-eng_Latn --out $(NLLB_MODEL)
	if [ -f $(OPUS_DEV)/ntrex128.en ] && [ ! -f $(NLLB)/nllb-200-distilled-600M.en-hi.confidence.json ]; then \
		head -n 300 $(OPUS_DEV)/ntrex128.en > $(NLLB)/dev.en; head -n 300 $(OPUS_DEV)/ntrex128.hi > $(NLLB)/dev.hi; \
		$(BIN)/anuvad calibrate --model $(NLLB_MODEL) --pair en-hi --reverse-model $(NLLB_MODEL) \
			--dev general=$(NLLB)/dev.en,$(NLLB)/dev.hi && \
		$(BIN)/anuvad calibrate --model $(NLLB_MODEL) --pair hi-en --reverse-model $(NLLB_MODEL) \
			--dev general=$(NLLB)/dev.hi,$(NLLB)/dev.en; \
	fi
	$(BIN)/anuvad serve --model $(NLLB_MODEL) --host 127.0.0.1 --port 8000

# A tiny Transformer trained from scratch in about a minute on a built-in task.
train-demo: $(SERVING)
	$(BIN)/anuvad demo

# Back-translated monolingual Hindi for configs/enhi_general_d256_L3.yaml: the shipped
# Hindi->English model translates the punctuated news/tourism/government/story files of
# $(ANUVAD_DATA)/en-hi/mono-hi into data/synthetic/bt-mono.{en,hi}. Resumable (run it again
# after a kill); does nothing when the files exist.
ANUVAD_DATA ?= ../shared/data
MONO_HI := bbc-news hiner-news-tourism hdtb-ssf-news-tourism ilner-general hiwiki-sample \
	discourse-stories
synthetic: $(SERVING)
	$(BIN)/anuvad backtranslate --model "$$($(BIN)/python -c 'from anuvad.cli.serve import \
		shipped_model; print(shipped_model(pair="hien"))')" \
		--input $(foreach f,$(MONO_HI),$(ANUVAD_DATA)/en-hi/mono-hi/$(f).hi.gz) \
		--out-prefix data/synthetic/bt-mono --beam-size 1 --max-tokens 6000 \
		--no-repeat-ngram-size 4

# All 13 punctuated mono-hi files (131,390 lines: news, tourism, health, government, speech,
# stories, Wikipedia) back-translated by the shipped Hindi->English model into
# data/synthetic/bt-hi-shipped.{en,hi}, as English->Hindi rounds 4-9 read them
# (configs/enhi_bt_d256_L3.yaml's bt-hi-rN; bench/recipe_gpu.py's MONO_HI): CTranslate2 int8 in
# two one-thread torchrun workers, about 2.5 minutes on 2 cores. Resumable.
MONO_HI_ALL := bbc-news covid-news-2020 discourse-stories hdtb-full-news-conv hdtb-ssf-news-tourism \
	hdtb-wx-pos-general hiner-news-tourism hiwiki-40articles hiwiki-sample ijcnlp08-ner-general \
	ilci-health-tourism ilner-general mann-ki-baat-speech
synthetic-hi: $(SERVING)
	$(BIN)/python -m torch.distributed.run --standalone --nproc-per-node 2 -m anuvad.cli.main \
		backtranslate --model "$$(ls $(SHIPPED)/hien_*.pt | tail -1)" --engine ctranslate2 \
		--compute-type int8 --beam-size 1 --no-repeat-ngram-size 4 --no-progress \
		--input $(foreach f,$(MONO_HI_ALL),$(ANUVAD_DATA)/en-hi/mono-hi/$(f).hi.gz) \
		--out-prefix data/synthetic/bt-hi-shipped

# Back-translated English news for configs/hien_bt_d256_L3.yaml: the shipped English->Hindi model
# translates WMT newstest, BBC 2004-05 and the first 25,000 lines of Reuters-21578 into
# data/synthetic/bt-{wmt,bbc,reuters}.{hi,en}: CTranslate2 int8, one thread each in two worker
# processes started by torchrun (two single-thread workers translate this d256 model about 4x
# faster than one process on both cores). Resumable; does nothing when the files exist.
MONO_EN := $(ANUVAD_DATA)/en-hi/mono-en
BT_EN = $(BIN)/python -m torch.distributed.run --standalone --nproc-per-node 2 -m anuvad.cli.main \
	backtranslate --model "$$(ls $(SHIPPED)/enhi_*.pt | tail -1)" --engine ctranslate2 \
	--compute-type int8 --beam-size 1 --no-repeat-ngram-size 4 --no-progress
synthetic-en: $(SERVING)
	$(BT_EN) --input $(MONO_EN)/wmt-newstest-en.en.gz --out-prefix data/synthetic/bt-wmt
	$(BT_EN) --input $(MONO_EN)/bbc-news-2005.en.gz --out-prefix data/synthetic/bt-bbc
	$(BT_EN) --input $(MONO_EN)/reuters21578.en.gz --max-lines 25000 --out-prefix data/synthetic/bt-reuters

# Issue 39's recipe on a lent GPU, where nothing can be downloaded. Here: `make gpu-pack` writes
# .gpu/ (the corpora and monolingual files both round-2 recipes read, as a checksummed data pack,
# and the wheels the device's python3 lacks); carry .gpu to the device. There, in calls of at
# most 9 minutes, each continuing the last on the same machine: `make train-gpu` (models and dev
# scores into $$OUT; bench/recipe_gpu.py says what each stage does).
GPU := .gpu
GPU_WHEELS := indic-nlp-library==0.92 morfessor==2.0.6 sacremoses==0.2.0 sentence-splitter==1.4
MONO_FILES := $(foreach f,wmt-newstest-en bbc-news-2005,--file en-hi/mono-en/$(f).en.gz) \
	$(foreach f,$(MONO_HI_ALL),--file en-hi/mono-hi/$(f).hi.gz)
gpu-pack: $(SERVING)
	mkdir -p $(GPU)/wheels
	$(BIN)/pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
		--implementation py -d $(GPU)/wheels $(GPU_WHEELS)
	$(BIN)/anuvad data pack --config configs/hien_bt_d256_L3.yaml --config configs/enhi_bt_d256_L3.yaml \
		--data-root-only $(MONO_FILES) --out $(GPU)/data.tar.xz
	du -sh $(GPU)
train-gpu:
	python3 -m pip install --quiet --no-index --no-deps --target /tmp/anuvad-site $(GPU)/wheels/*.whl
	test -d /tmp/anuvad-data || PYTHONPATH=src:/tmp/anuvad-site python3 -m anuvad.cli.main \
		data unpack $(GPU)/data.tar.xz --to /tmp/anuvad-data
	PYTHONPATH=src:/tmp/anuvad-site python3 bench/recipe_gpu.py --minutes 8.5 --data /tmp/anuvad-data
# The same stages as side-by-side lanes in one call (bench/gpu_lanes.py; LANES="--lanes hien-r4").
# Lanes whose back-translations were made here travel lighter: `make gpu-pack-lanes` packs the
# corpora without the monolingual files (~4 MiB) and data/synthetic/<BT>.* (~7 MiB a prefix);
# train-gpu-lanes unpacks .gpu/bt.tar.xz where it is there (docs/benchmarks.md [Q14]).
BT := bt-hi-r8 bt-en-r9
gpu-pack-lanes: $(SERVING)
	mkdir -p $(GPU)/wheels
	$(BIN)/pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
		--implementation py -d $(GPU)/wheels $(GPU_WHEELS)
	$(BIN)/anuvad data pack --config configs/hien_bt_d256_L3.yaml --config configs/enhi_bt_d256_L3.yaml \
		--data-root-only --out $(GPU)/data.tar.xz
	tar -cf - $(foreach p,$(BT),data/synthetic/$(p).en data/synthetic/$(p).hi) | xz -9 -T2 > $(GPU)/bt.tar.xz
	du -sh $(GPU)
train-gpu-lanes:
	python3 -m pip install --quiet --no-index --no-deps --target /tmp/anuvad-site $(GPU)/wheels/*.whl
	test -d /tmp/anuvad-data || PYTHONPATH=src:/tmp/anuvad-site python3 -m anuvad.cli.main \
		data unpack $(GPU)/data.tar.xz --to /tmp/anuvad-data
	test ! -f $(GPU)/bt.tar.xz || tar -xJf $(GPU)/bt.tar.xz
	PYTHONPATH=src:/tmp/anuvad-site python3 bench/gpu_lanes.py --minutes 8.6 --data /tmp/anuvad-data $(LANES)

# The confidence files beside the shipped models (data/trained_models/*.confidence.json), each
# direction with the other as its reverse model: fitted on the first halves of the caption and
# news dev sets, reported on the second halves. About 5 (English->Hindi) and 3 (Hindi->English)
# minutes on 2 idle cores.
SHIPPED := data/trained_models
DEV := $(ANUVAD_DATA)/en-hi
CALIBRATE = $(BIN)/anuvad calibrate --beam-size 4 --no-repeat-ngram-size 3 --no-progress
calibrate: $(SERVING)
	$(CALIBRATE) --model $$(ls $(SHIPPED)/enhi_*.pt | tail -1) \
		--reverse-model $$(ls $(SHIPPED)/hien_*.pt | tail -1) \
		--dev captions=$(DEV)/hvg/hindi-visual-genome-dev.txt@5,6 \
		--dev general=$(DEV)/dev-general/ntrex128.en,$(DEV)/dev-general/ntrex128.hi \
		--dev general=$(DEV)/newsdev2014/newsdev2014.en,$(DEV)/newsdev2014/newsdev2014.hi
	$(CALIBRATE) --model $$(ls $(SHIPPED)/hien_*.pt | tail -1) \
		--reverse-model $$(ls $(SHIPPED)/enhi_*.pt | tail -1) \
		--dev captions=$(DEV)/hvg/hindi-visual-genome-dev.txt@6,5 \
		--dev general=$(DEV)/dev-general/ntrex128.hi,$(DEV)/dev-general/ntrex128.en \
		--dev general=$(DEV)/newsdev2014/newsdev2014.hi,$(DEV)/newsdev2014/newsdev2014.en

# The npm packages of `anuvad export --format web` (onnxruntime-web and sentencepiece-js, copied
# into every export) and of its tests (onnxruntime-node), pinned by src/anuvad/web/package-lock.json,
# into src/anuvad/web/node_modules (git-ignored: 450 MB, onnxruntime-web's WASM alone 14 MB).
# npm's cache makes a second run offline. Install scripts are off (src/anuvad/web/.npmrc):
# onnxruntime-node's would download CUDA libraries. Without node/npm the web tests skip.
web-runtime:
	@{ command -v npm >/dev/null 2>&1 && cd src/anuvad/web && npm ci --no-audit --no-fund --silent; } || \
		echo "note: npm missing or npm ci failed (offline?); anuvad export --format web needs it, its tests skip"

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src tests bench

format: $(STAMP)
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

# The web page's browser tests drive Debian's chromium, with a Devanagari font (Lohit) so that
# Hindi is readable in their screenshots; install both when missing and we may (root with
# apt-get). Otherwise the browser tests skip and say why (and Hindi shows as boxes).
chromium:
	@{ command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "lohit devanagari"; } || \
		{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-lohit-deva >/dev/null; } \
		|| echo "note: chromium or fonts-lohit-deva not installed; browser tests skip or show Hindi as boxes"; }

# The gate (under 10 minutes on 2 cores): lint, then the unit and integration tiers (the web
# export's tests run its JavaScript under Node: web-runtime fetches the npm packages, ~10 s from
# npm's cache).
test: lint chromium web-runtime
	$(BIN)/pytest -q --ignore=tests/system --durations=15

# The system tier: real processes killed, served and trained end to end (SIGKILL trials, SIGTERM
# with a request in flight, 600 silent connections, a task learned from scratch); a few
# minutes. CI runs it after `make test` (.ci/run).
test-system: $(STAMP)
	$(BIN)/pytest -q tests/system

# The unit tier alone, without the tests that train a model (tests/unit/training) or take
# seconds each (marked slow): about a minute on 2 cores, for the edit-test loop. `make test`
# (lint, then the unit and integration tiers, slow tests included) stays the gate.
test-fast: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider -m "not slow" tests/unit --ignore=tests/unit/training

clean:
	rm -rf $(VENV) runs data/prepared data/demo .pytest_cache .mypy_cache .ruff_cache
