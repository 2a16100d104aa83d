# Self-attention, executable: the two commands a fresh machine needs are
#   make book   (build the HTML book, executing every notebook)
#   make test   (the whole test suite: library, notebooks, the built book)
# Both create .venv from requirements.lock when it is missing.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HTML   := _build/html/index.html
MATHJAX := book/_static/mathjax/tex-chtml.js
CACHE  := _build/.jupyter_cache
LIBSTAMP := _build/.selfattn-stamp

SOURCES := _config.yml _toc.yml $(wildcard book/*.md book/*.bib book/*/*.md) \
           $(wildcard book/_ext/*.py book/_static/*.css book/_static/*.svg) \
           $(wildcard notebooks/*.ipynb) $(wildcard selfattn/*.py selfattn/*/*.py)

.PHONY: book test unit notebooks browser lint format serve execute lock clean help

help:
	@echo "make book     build the HTML into _build/html (executes every notebook)"
	@echo "make test     run the whole test suite (builds the book first)"
	@echo "make serve    serve the built book on http://localhost:8000"
	@echo "make execute  authors: re-execute notebooks in place to refresh outputs"
	@echo "make lint     ruff check + format check"
	@echo "make lock     regenerate requirements.lock from pyproject.toml"

# --- environment -----------------------------------------------------------
$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
	    --no-deps --no-build-isolation -e .
	@touch $@

# MathJax is served from the built site (no CDN); it comes from the npm
# registry at set-up, pinned by package-lock.json, and is never committed.
$(MATHJAX): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	rm -rf book/_static/mathjax
	mkdir -p book/_static
	cp -r node_modules/mathjax/es5 book/_static/mathjax
	@touch $@

# --- the book --------------------------------------------------------------
# Notebooks are executed by the build. Locally the jupyter-cache skips
# notebooks whose code did not change, and is wiped whenever selfattn/ changes;
# in CI (CI=true) it is always wiped, so every notebook is executed afresh.
$(LIBSTAMP): $(wildcard selfattn/*.py selfattn/*/*.py)
	rm -rf $(CACHE)
	@mkdir -p _build && touch $@

$(HTML): $(STAMP) $(MATHJAX) $(LIBSTAMP) $(SOURCES)
ifeq ($(CI),true)
	rm -rf $(CACHE)
endif
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going
	@echo
	@echo "The book is built: open file://$(CURDIR)/_build/html/index.html"

book: $(HTML)
	@echo "Book up to date: file://$(CURDIR)/_build/html/index.html"

serve: $(HTML)
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 8000

# --- tests -----------------------------------------------------------------
# nbval and the book build each execute every notebook; they run side by side
# (one per core) so the whole suite stays well under 15 minutes.
test: $(STAMP) $(MATHJAX)
	$(MAKE) --no-print-directory lint unit
	$(MAKE) --no-print-directory -j2 --output-sync=target notebooks book
	$(MAKE) --no-print-directory browser

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: $(STAMP)
	$(BIN)/python -m pytest tests -q --ignore=tests/browser

notebooks: $(STAMP)
	$(BIN)/python -m pytest notebooks -q

browser: $(HTML)
	$(BIN)/python -m pytest tests/browser -q

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# --- authors ---------------------------------------------------------------
# Re-execute notebooks in place, top to bottom in one kernel each, so the
# committed outputs are fresh: make execute [NB=notebooks/some-chapter.ipynb]
NB ?= $(wildcard notebooks/*.ipynb)
execute: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py $(NB)

lock:
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	.lockenv/bin/pip install --quiet ".[book,test,dev]"
	{ echo "# Pinned environment for the course; regenerate with 'make lock'."; \
	  echo "# torch is pinned to the CPU release 2.13.0."; \
	  .lockenv/bin/pip freeze --all --exclude pip --exclude selfattn \
	  | sed -e 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > requirements.lock
	rm -rf .lockenv

clean:
	rm -rf _build
