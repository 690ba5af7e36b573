# inkground: `make book` builds the companion, `make test` runs the tests. Both create .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.inkground-installed
PIP    := $(PY) -m pip --disable-pip-version-check -q

.PHONY: book test venv eval bench clean

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -r requirements.txt
	$(PIP) install --no-deps --no-build-isolation -e .
	@touch $@

book: $(STAMP)
	$(PY) -m inkground_lib.build.cli book

test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile

# Predictions and scores for some systems, e.g. make eval SYSTEMS="skeleton font gemini-3.1-pro"
SYSTEMS ?= reference skeleton font box
eval: $(STAMP)
	$(PY) -m inkground_lib.build.cli eval --systems $(SYSTEMS)

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf _build book/sections data/datasets data/runs
