# inkground: `make book` builds the companion, `make test` runs the tests. Both create .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.inkground-installed
BYTECODE := $(VENV)/.inkground-bytecode
PIP    := $(PY) -m pip --disable-pip-version-check -q

.PHONY: book test test-fast venv eval bench clean clean-all lab

venv: $(STAMP) $(BYTECODE)

# uv installs the same pins as pip in ~15 s instead of ~100 s (measured 2026-11-30, 2 cores; uv does not read
# pip.conf, so the local wheel folder in PIP_FIND_LINKS is passed on); pip does it where uv cannot be had
UV_VERSION := 0.13.9
$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(if $(TORCH_INDEX),$(PIP) install --index-url $(TORCH_INDEX) "$$(grep '^torch==' requirements.txt)")
	@if $(PIP) install uv==$(UV_VERSION) && $(VENV)/bin/uv pip install -q --python $(PY) \
	    $${PIP_FIND_LINKS:+--find-links $$PIP_FIND_LINKS} -r requirements.txt; then :; \
	  else echo "uv unavailable or failed: installing with pip"; $(PIP) install -r requirements.txt; fi
	$(PIP) install --no-deps --no-build-isolation -e .
	@touch $@

# Bytecode, written once: uv installs no .pyc files, and where PYTHONDONTWRITEBYTECODE=1 is set (as on this project's
# machines) Python never writes them either, so every new process - each notebook kernel, process-pool worker and
# command a test starts - compiled torch, pandas, transformers, ... from source again: importing the section-03 stack
# took 130-184 s without .pyc files and 46 s with them (measured 2026-12-02, 2 cores at load 12). compileall writes
# them whatever that variable says and skips files that are up to date; $(BYTECODE) is the installed packages,
# once per installation, `own-bytecode` this repository's code (the editable install), before each run.
$(BYTECODE): $(STAMP)
	@echo "compiling the installed packages to bytecode (once)"
	@$(PY) -m compileall -q -j 0 "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
	  >/dev/null 2>&1 || true  # a few packages ship files for other Python versions that do not compile: not imported
	@touch $@

.PHONY: own-bytecode
own-bytecode: $(BYTECODE)
	@$(PY) -m compileall -q -j 0 inkground_lib tests benchmarks

book: $(STAMP) own-bytecode
	$(PY) -m inkground_lib.cli book

# The section notebooks in JupyterLab on http://127.0.0.1:8888/lab, as working copies in lab/ (git-ignored: editing
# never changes notebooks/); reruns with changed parameters go to data/reruns/<name>/. make lab PORT=8890 NO_BROWSER=1
# The server runs from its own environment .venv-lab (requirements-lab.txt); the notebooks' kernel is .venv's Python.
LAB_VENV  := .venv-lab
LAB_STAMP := $(LAB_VENV)/.inkground-installed
$(LAB_STAMP): requirements-lab.txt | $(STAMP)
	@test -x $(LAB_VENV)/bin/python || $(PYTHON) -m venv $(LAB_VENV)
	@if test -x $(VENV)/bin/uv && $(VENV)/bin/uv pip install -q --python $(LAB_VENV)/bin/python \
	    $${PIP_FIND_LINKS:+--find-links $$PIP_FIND_LINKS} -r requirements-lab.txt; then :; \
	  else $(LAB_VENV)/bin/python -m pip --disable-pip-version-check -q install -r requirements-lab.txt; fi
	@touch $@

lab: $(STAMP) $(LAB_STAMP)
	$(PY) -m inkground_lib.cli lab --server-python $(LAB_VENV)/bin/python $(if $(PORT),--port $(PORT)) \
	  $(if $(NO_BROWSER),--no-browser)

test: $(STAMP) own-bytecode
	$(PY) -m pytest -n 2 --dist loadfile

# The contributor's loop (at most 3 minutes on 2 cores): everything but the tests marked slow (the book build,
# notebooks, process pools, kill -9) or browser. `make test` still runs every test.
test-fast: $(STAMP) own-bytecode
	$(PY) -m pytest -n 2 --dist loadfile -m "not slow and not browser"

# Predictions and scores for some systems, e.g. make eval SYSTEMS="skeleton font gemini-3.1-pro"
SYSTEMS ?= reference skeleton font box
eval: $(STAMP) own-bytecode
	$(PY) -m inkground_lib.cli eval --systems $(SYSTEMS)

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# keeps API predictions, paid or slow components' logs, real ratings and whatever inkground did not write;
# clean-all lists them and asks first
clean:
	$(PYTHON) -m inkground_lib.publish.clean

clean-all:
	$(PYTHON) -m inkground_lib.publish.clean --all $(if $(YES),--yes)

# InkSight end to end, outside `make test`: its own environment .venv-inksight (requirements-inksight.txt:
# TensorFlow 2.17.0 + tensorflow-text, ~2.1 GB, Python 3.9-3.12), a tiny SavedModel with InkSight's signature,
# and the real worker driven from the main environment (torch, no TensorFlow) through the `inksight` system
.PHONY: inksight-e2e
inksight-e2e: $(STAMP)
	@$(PYTHON) -c 'import sys; sys.exit(not (3, 9) <= sys.version_info[:2] <= (3, 12))' || \
	  { echo "inksight-e2e: TensorFlow 2.17 needs Python 3.9-3.12; run with PYTHON=python3.11"; exit 1; }
	@test -x .venv-inksight/bin/python || $(PYTHON) -m venv .venv-inksight
	.venv-inksight/bin/python -m pip --disable-pip-version-check -q install -r requirements-inksight.txt
	$(PY) -m inkground_lib.components.derenderers.inksight_e2e --python .venv-inksight/bin/python

# The paper's scale end to end (2,984 candidate pages -> pseudo-labels -> benchmark -> local systems scored ->
# tables; resumable after kill -9): make paper-scale [PAPER_SCALE_OUT=DIR] [SCHEDULER=tcp://host:8786]
PAPER_SCALE_OUT ?= data/runs/paper_scale
.PHONY: paper-scale
paper-scale: $(STAMP) own-bytecode
	$(PY) -m inkground_lib.cli paper-scale --out $(PAPER_SCALE_OUT) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

# ---------------------------------------------------------------------------------------------------------------
# Publishing: the steps of the book's CI (.github/workflows/book.yml), each one a target that runs here too.
# CI installs torch's CPU-only build (never the CUDA wheels) from PyTorch's CPU index before the other pins. The
# index is the one of PyTorch's install selector (https://pytorch.org/get-started/locally/, "Linux / Pip / CPU"; its
# source pytorch/pytorch.github.io assets/quick-start-module.js, the stored version read through the search tool
# 2026-12-02: "pip3 install torch torchvision torchaudio --extra-index-url https://download.pytorch.org/whl/cpu").
# Here torch alone comes from it with --index-url, so PyPI's CUDA build cannot be picked; its +cpu wheel
# satisfies torch==2.13.0, and the other pins then leave it in place.
#   make ci-venv         the installation, torch from $(CPU_TORCH_INDEX)
#   make ci-keys         cache keys (install=..., runs=...) for $$GITHUB_OUTPUT
#   make book            the book (sections rerun only when what they read changed), with its downloads:
#                        _build/html/inkground.pdf (one PDF of the whole book, Debian's Chromium, headless),
#                        _build/html/inkground-results.zip (the run files behind its numbers), inkground.bib
#   make pdf / results   those two alone, from the sections already executed
#   make linkcheck       _build/html served under /inkground/ on loopback: every link and asset followed
#   make lint-workflows  actionlint over .github/workflows
CPU_TORCH_INDEX := https://download.pytorch.org/whl/cpu
SITE_PREFIX ?= /inkground/
.PHONY: ci-venv ci-keys pdf results linkcheck lint-workflows citation
ci-venv:
	$(MAKE) venv TORCH_INDEX=$(CPU_TORCH_INDEX)

ci-keys:
	@$(PYTHON) -m inkground_lib.publish.ci keys

pdf: $(STAMP)
	$(PY) -m inkground_lib.publish.pdf _build/html _build/html/inkground.pdf

results: $(STAMP)
	$(PY) -m inkground_lib.publish.results pack _build/html/inkground-results.zip

linkcheck: $(STAMP)
	$(PY) -m inkground_lib.publish.linkcheck _build/html --prefix $(SITE_PREFIX)

lint-workflows: $(STAMP)
	$(PY) -m inkground_lib.publish.ci lint

# the repository's address and citation from CITATION.cff into _config.yml and pyproject.toml (CHECK=1: only check)
citation: $(STAMP)
	$(PY) -m inkground_lib.publish.citation $(if $(CHECK),--check)
