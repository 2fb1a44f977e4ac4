# anuvad: `make demo` (the main job) and `make test` (the tests) set everything up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade --quiet pip

# Reinstall whenever the project's dependencies change.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/anuvad demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src

format: $(STAMP)
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

test: lint
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) runs data/prepared data/demo .pytest_cache .mypy_cache .ruff_cache
