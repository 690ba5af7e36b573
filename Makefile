# inkground: `make book` builds the companion, `make test` runs the tests. Both create .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
UV     := $(VENV)/bin/uv

.PHONY: book test test-fast venv eval bench clean clean-all lab lock

# ---------------------------------------------------------------------------------------------------- installation
# pyproject.toml declares the dependencies; requirements.txt is the lock made from them (`make lock`: every package
# with its exact version and sha256 hashes, for Linux x86-64 and CPython 3.11); `make venv` installs exactly the
# lock with uv (`uv pip sync`: packages not in it are removed, a file whose hash differs is refused), then this
# repository (editable). Other platforms (macOS, Windows, Linux on ARM) are not tested: there `make venv` installs
# the declared ranges instead (`uv pip install -e .[test]`), torch from PyTorch's CPU index too.
# torch is PyTorch's CPU build wherever the project installs it: the lock pins torch==2.13.0+cpu, a release only
# PyTorch's CPU index has (PyPI's Linux wheel of 2.13.0 brings ~20 CUDA packages), and uv fetches it from there
# (--torch-backend cpu: uv's guide "Using uv with PyTorch", docs.astral.sh/uv/guides/integration/pytorch, read
# 2026-12-06, and `uv pip sync --help` of the pinned uv). Where a local wheel folder in PIP_FIND_LINKS holds that
# very wheel (this project's machines, which reach PyPI but not PyTorch's index), uv takes it from there; the
# lock's sha256 of it is the one PyTorch publishes (download.pytorch.org/whl/cpu/torch-2.13.0%2Bcpu-cp311-cp311-
# manylinux_2_28_x86_64.whl#sha256=6746dbcb..., as pinned in public Dockerfiles, read through the search tool
# 2026-12-06), so either source installs the same bytes.
# The stamp is named by a digest of the lock and pyproject.toml, not by file times: a fresh checkout or a restored
# CI cache with the same files reinstalls nothing.
LOCK      := requirements.txt
LOCK_OUT  ?= $(LOCK)
UV_VERSION = $(shell sed -n 's/^uv==\([^ ]*\).*/\1/p' $(LOCK))
TORCH_PIN  = $(shell sed -n 's/^torch==\([^ ]*\).*/\1/p' $(LOCK))
TORCH_SOURCE ?= $(if $(wildcard $(PIP_FIND_LINKS)/torch-$(TORCH_PIN)-*.whl),--find-links $(PIP_FIND_LINKS),--torch-backend cpu)
LOCK_PLATFORM := --python-version 3.11.5 --python-platform x86_64-manylinux_2_28
INSTALL_KEY := $(shell cat $(LOCK) pyproject.toml 2>/dev/null | $(PYTHON) -c \
  'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])')
STAMP  := $(VENV)/.inkground-installed-$(INSTALL_KEY)

venv: $(STAMP) $(BYTECODE)

# uv itself, at the lock's version, into the venv (pip's only job here)
$(UV):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install uv==$(UV_VERSION)

$(STAMP): | $(UV)
	@rm -f $(VENV)/.inkground-installed* $(VENV)/.inkground-bytecode*
	@if [ "$$(uname -sm)" = "Linux x86_64" ]; then \
	  $(UV) pip sync -q --python $(PY) --require-hashes $(TORCH_SOURCE) $(LOCK); \
	else echo "make venv: $$(uname -sm) is not the locked platform (Linux x86_64): installing the declared ranges"; \
	  $(UV) pip install -q --python $(PY) $(TORCH_SOURCE) -e '.[test]'; fi
	$(UV) pip install -q --python $(PY) --no-deps --no-build-isolation -e .
	@touch $@

# The lock from pyproject.toml (its dependencies and the test extra), for Linux x86-64 and CPython 3.11.5+ (the
# oldest 3.11 the locked soupsieve accepts): the versions already in $(LOCK_OUT) are kept where they still satisfy
# pyproject.toml (uv's preferences), so `make lock` after adding a dependency changes only what it must;
# `make lock UPGRADE=1` takes the newest versions. tests/test_install.py checks that this gives the lock as it is.
lock: | $(UV)
	$(UV) pip compile -q pyproject.toml --extra test $(LOCK_PLATFORM) --generate-hashes $(TORCH_SOURCE) \
	  --custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) -o $(LOCK_OUT)

# Bytecode: uv installs no .pyc files, and where PYTHONDONTWRITEBYTECODE=1 is set (as on this project's machines)
# Python never writes them either, so every new process - each notebook kernel, process-pool worker and command a
# test starts - compiled torch, pandas, transformers, ... from source again: importing the section-03 stack took
# 130-184 s without .pyc files and 46 s with them (measured 2026-12-02, 2 cores at load 12). So:
# - the commands this Makefile runs run without that variable (`unexport`): a process that imports a module not
#   compiled yet writes its .pyc beside it (in .venv/ and this checkout, both ours; atomically, so two processes
#   importing it at once are safe). Python run outside make follows the environment as it is.
# - `make venv` compiles the installed packages once per installation ($(BYTECODE), named as the installation's
#   stamp; `compileall` on every core: 34 s on 2), for Python run outside make; `make book` compiles them in the
#   background at the lowest priority (nice 19: it takes the cycles the book leaves), so that the book's first stages
#   do not wait for it and its HTML and PDF builds at the end find the Sphinx stack compiled; the tests compile what
#   they import. Measured 2026-12-06 on fresh clones (2 cores, quiet; benchmarks/results/make_book.txt): compiled up
#   front, the first book took 635 s (34 s of it the compile); compiled only as imported, 604 s (its processes
#   wrote the .pyc of 5,909 of the 24,800 files, but the PDF stage, the first to import Sphinx, took 19 s longer);
#   in the background, 580 s. `make test-fast` from a fresh clone: 226 s compiled as imported (pytest 211 s), 268 s
#   compiled first (pytest 211 s; the commit before this change, the same machine then: pytest 208 s).
#   Left out (BYTECODE_SKIP): what no process of the book or the tests imports - the packages' own test suites and
#   transformers' model families but the three it loads (resnet, auto, encoder_decoder).
# - `own-bytecode` compiles this repository's code before each run (a second; nothing when nothing changed).
unexport PYTHONDONTWRITEBYTECODE
BYTECODE := $(VENV)/.inkground-bytecode-$(INSTALL_KEY)
BYTECODE_SKIP := /tests/|/transformers/models/(?!(resnet|auto|encoder_decoder)/|__init__\.py)
COMPILE_PACKAGES = $(PY) -m compileall -q -j 0 -x '$(BYTECODE_SKIP)' \
  "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
# (a few packages ship files for other Python versions that do not compile: never imported, so the status is not read)
$(BYTECODE): $(STAMP)
	@echo "compiling the installed packages to bytecode (once per installation)"
	@$(COMPILE_PACKAGES) >/dev/null 2>&1 || true
	@touch $@
# (its output, and the descriptors it holds, go nowhere: a reader of make's output never waits for it)
define background-bytecode
@{ test -f $(BYTECODE) || { nice -n 19 $(COMPILE_PACKAGES); touch $(BYTECODE); }; } </dev/null >/dev/null 2>&1 &
endef

.PHONY: own-bytecode
own-bytecode: $(STAMP)
	@$(PY) -m compileall -q -j 0 inkground_lib tests benchmarks

book: $(STAMP) own-bytecode
	$(background-bytecode)
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
#   make venv            the installation (torch's CPU build, as everywhere)
#   make ci-keys         cache keys (install=..., runs=...) for $$GITHUB_OUTPUT
#   make book            the book (sections rerun only when what they read changed), with its downloads:
#                        _build/html/inkground.pdf (one PDF of the whole book, Debian's Chromium, headless),
#                        _build/html/inkground-results.zip (the run files behind its numbers), inkground.bib
#   make pdf / results   those two alone, from the sections already executed
#   make linkcheck       _build/html served under /inkground/ on loopback: every link and asset followed
#   make lint-workflows  actionlint over .github/workflows
#   make runs-digest     digest=<sha256 of the cached run folders>: CI saves them only when it changed
#   make linkcheck-external   every link to another site, followed (Sphinx's linkcheck builder; weekly in CI)
#   make lock-check      the lock against pyproject.toml, no CUDA package in it
# Publishing (.github/workflows/publish.yml; inkground_lib/publish/pages_site.py, standard library only):
#   make site SITE=_site HTML=built/html [PREVIEW=N]   main's book, or pull request N's, into the site branch
#   make site SITE=_site PREVIEW=N DROP=1               a closed pull request's preview out of it
#   make pr-number-file NUMBER=N / preview-number ARTIFACT=DIR SHA=.. REPO=..   / announce-preview ...
SITE_PREFIX ?= /inkground/
.PHONY: ci-venv ci-keys pdf results linkcheck lint-workflows citation runs-digest linkcheck-external lock-check \
  site pr-number-file preview-number announce-preview
ci-venv: venv

runs-digest:
	@$(PYTHON) -m inkground_lib.publish.ci runs-digest

linkcheck-external: $(STAMP)
	$(PY) -m inkground_lib.publish.ci linkcheck-external

lock-check: $(STAMP)
	$(PY) -m inkground_lib.publish.lock check

PAGES_SITE := $(PYTHON) -m inkground_lib.publish.pages_site
site:
	$(PAGES_SITE) $(if $(DROP),drop,place) --site $(SITE) $(if $(DROP),,--html $(HTML)) --preview "$(PREVIEW)"

pr-number-file:
	@mkdir -p _build && printf '%s\n' "$(NUMBER)" > _build/pr.txt

preview-number:
	@$(PAGES_SITE) pr-number --artifact $(ARTIFACT) --sha $(SHA) --repo $(REPO)

announce-preview:
	$(PAGES_SITE) announce --repo $(REPO) --pr $(PREVIEW) --sha $(SHA) \
	  --url "$$($(PYTHON) -c 'import sys; from inkground_lib.publish.pages_site import preview_url; \
	  print(preview_url(sys.argv[1], sys.argv[2]))' "$(PAGE_URL)" "$(PREVIEW)")"

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
