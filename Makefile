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

# A target whose recipe fails is deleted, so a failed strict build is never
# "up to date" on the next run.
.DELETE_ON_ERROR:

SOURCES := _config.yml _toc.yml $(wildcard book/*.md book/*.bib book/*/*.md) \
           $(wildcard book/_ext/*.py book/_static/*.css book/_static/*.svg) \
           $(wildcard notebooks/*.ipynb) $(wildcard selfattn/*.py selfattn/*/*.py)

.PHONY: chapter chapter-check book book-prebuilt book-checked pdf pdf-check student student-check bundle bundle-check editions repository test unit notebooks seeds browser lint format serve \
        execute lock explore mutation clean help

help:
	@echo "make book     build the HTML into _build/html (executes every notebook)"
	@echo "make test     run the whole test suite (nbval, seed passes, book, browser)"
	@echo "make pdf      build the book as one PDF into $(PDF) (needs TeX Live)"
	@echo "make serve    serve the built book on http://localhost:8000"
	@echo "make execute  authors: re-execute notebooks in place to refresh outputs"
	@echo "make chapter  authors: NAME=slug TITLE=\"...\" creates a chapter from the template"
	@echo "make lint     ruff check + format check"
	@echo "make lock     regenerate requirements.lock from pyproject.toml"

# --- environment -----------------------------------------------------------
# torch: PyPI's Linux wheel of torch pulls in several GB of CUDA libraries
# (nvidia-* packages). On Linux we install the CPU build first, with no
# dependencies (they are all in the lock): from the configured indexes if they
# carry it, else from PyTorch's CPU index, consulted for torch alone. The lock
# then finds torch==2.13.0 satisfied by 2.13.0+cpu (PEP 440 ignores the local
# label) and installs no nvidia-* package. Elsewhere (macOS, Windows) PyPI's
# wheel is the CPU build already.
TORCH_VERSION   := $(shell sed -n 's/^torch==//p' requirements.lock)
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
ifeq ($(shell uname -s),Linux)
define install_cpu_torch
	$(1) -m pip install --quiet --disable-pip-version-check --no-deps \
	    "torch==$(TORCH_VERSION)+cpu" 2>/dev/null \
	|| $(1) -m pip install --quiet --disable-pip-version-check --no-deps \
	    --index-url $(TORCH_CPU_INDEX) "torch==$(TORCH_VERSION)+cpu"
endef
else
install_cpu_torch = @true
endif

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call install_cpu_torch,$(BIN)/python)
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
# `make book` executes the notebooks. Locally the jupyter-cache skips notebooks
# whose code did not change, and is wiped whenever selfattn/ changes; in CI
# (CI=true) it is always wiped, so every notebook is executed afresh.
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

# `make test` builds the book from the committed outputs once nbval has shown
# them to be what a fresh execution gives: the same strict build, no second
# execution. The configuration is _config.yml with execution turned off.
PREBUILT_CONFIG := _build/_config.prebuilt.yml
book-prebuilt: $(STAMP) $(MATHJAX)
	@mkdir -p _build
	$(BIN)/python tools/prebuilt_config.py _config.yml $(PREBUILT_CONFIG)
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going \
	    --config $(PREBUILT_CONFIG) || { rm -f $(HTML); exit 1; }

# --- the PDF edition ------------------------------------------------------
# The whole book as one PDF: Jupyter Book's LaTeX builder (xelatex), built
# from the committed outputs like book-prebuilt (no execution). It builds in
# _build/pdf, with a Sphinx cache of its own, so it may run beside an HTML
# build. Needs Debian's TeX Live and fonts (.ci/run installs them; README,
# "The PDF edition"). TEXINPUTS puts book/_latex/texmf at the END of TeX's
# search path: two small packages those Debian packages lack
# (book/_latex/texmf/README.txt). The PDF is copied to $(PDF) and, when the
# HTML book is there, next to its index.html, where the intro links to it (so
# the browser tests, which check that link, come after `make pdf`).
# `make pdf-check` runs the PDF's checks (tests/editions/test_pdf.py).
PDF_CONFIG := _build/_config.pdf.yml
PDF_LATEX  := _build/pdf/_build/latex
PDF        := _build/self-attention-executable.pdf
pdf: $(STAMP)
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null \
	    || { echo "make pdf needs TeX Live: see README.md, The PDF edition"; exit 1; }
	@mkdir -p _build
	rm -f $(PDF) $(PDF_LATEX)/self-attention-executable.pdf
	$(BIN)/python tools/prebuilt_config.py _config.yml $(PDF_CONFIG)
	env TEXINPUTS=":$(CURDIR)/book/_latex/texmf" \
	    LATEXOPTS="-interaction=nonstopmode -halt-on-error" \
	    $(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going \
	    --config $(PDF_CONFIG) --path-output _build/pdf
	cp $(PDF_LATEX)/self-attention-executable.pdf $(PDF)
	@if [ -d _build/html ]; then cp $(PDF) _build/html/; fi
	@echo "The PDF edition: $(CURDIR)/$(PDF)"

pdf-check: pdf
	$(BIN)/python -m pytest tests/editions/test_pdf.py -q -p no:cacheprovider

# --- the student edition --------------------------------------------------
# The same book without the worked solutions (book/_ext/editions.py; every
# exercise stays), built from the committed outputs into
# _build/student/_build/html. `make student-check` proves no solution is in it.
STUDENT_CONFIG := _build/_config.student.yml
STUDENT_HTML   := _build/student/_build/html/index.html
student: $(STAMP) $(MATHJAX)
	@mkdir -p _build
	rm -rf _build/student  # no page of an older build may survive in it
	$(BIN)/python tools/prebuilt_config.py --student _config.yml $(STUDENT_CONFIG)
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going \
	    --config $(STUDENT_CONFIG) --path-output _build/student \
	    || { rm -f $(STUDENT_HTML); exit 1; }
	@echo "The student edition: file://$(CURDIR)/$(STUDENT_HTML)"

student-check: student
	$(BIN)/python -m pytest tests/editions/test_student.py -q -p no:cacheprovider

# --- the offline bundle ---------------------------------------------------
# One zip to carry: the built book (opens from html/index.html with no server
# and no network), the notebooks without outputs, selfattn as a wheel, the
# lock and a README (tools/make_bundle.py). Needs the built book.
BUNDLE := _build/self-attention-executable.zip
bundle: $(STAMP)
	@test -f $(HTML) || { echo "no built book: run make book first"; exit 1; }
	rm -rf _build/wheel
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -w _build/wheel . && rm -rf build
	$(BIN)/python tools/make_bundle.py _build/html _build/wheel $(BUNDLE)

bundle-check: bundle
	$(BIN)/python -m pytest tests/editions/test_bundle.py -q -p no:cacheprovider

# `make chapter` proved: a throw-away copy of the repository gets a chapter
# from the template, which must pass the notebook checks and build strictly.
chapter-check: $(STAMP) $(MATHJAX)
	$(BIN)/python -m pytest tests/editions/test_new_chapter.py -q -p no:cacheprovider

# The editions besides the HTML book, each with its check (.ci/run runs this
# after make test, from the book that make test built): the PDF and the
# student edition and the new-chapter check side by side, then the bundle
# (which carries the PDF).
editions:
	$(MAKE) --no-print-directory -j2 --output-sync=target pdf-check student-check \
	    chapter-check
	$(MAKE) --no-print-directory bundle-check

# The repository URL lives in _config.yml; this sets it and rewrites its
# copies (every notebook's install cell, the how-to-run page).
repository:
	@test -n "$(URL)" || { echo "usage: make repository URL=https://github.com/you/repo"; exit 1; }
	$(BIN)/python tools/repository.py set $(URL)

serve: $(HTML)
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 8000

# --- tests -----------------------------------------------------------------
# The notebooks are checked on two axes (see CONTRIBUTING, "Portable lessons"):
#  * notebooks: nbval compares every output with the committed one, executed
#    with PyTorch's portable kernels on one thread. The committed outputs are
#    made natively by `make execute`, so this pass is a second machine.
#  * seeds: every notebook executed again with each base seed in OTHER_SEEDS
#    (SELFATTN_SEED), natively; outputs are not compared, every assert must
#    hold. So no claim rests on one seed, or on one set of kernels.
# The book is built from the committed outputs (no second execution); nbval
# proves them fresh, and the browser tests then read it. All five jobs share
# the two cores (make -j2, longest first; the suite fails if any fails):
# the portable pass, the two seed passes, the unit tests, and the book build
# followed by the browser tests.
PORTABLE    := ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
               MKL_CBWR=COMPATIBLE
OTHER_SEEDS ?= 1 2
NBVAL       := $(BIN)/python -m pytest notebooks -q -p no:cacheprovider

test: $(STAMP) $(MATHJAX)
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory -j2 --output-sync=target \
	    notebooks $(addprefix seed-,$(OTHER_SEEDS)) unit book-checked

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: $(STAMP)
	env OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests -q --ignore=tests/browser \
	    --ignore=tests/editions

notebooks: $(STAMP)
	env $(PORTABLE) $(NBVAL)

seeds: $(addprefix seed-,$(OTHER_SEEDS))

seed-%: $(STAMP)
	@echo "== every notebook with SELFATTN_SEED=$* (asserts only)"
	env SELFATTN_SEED=$* OMP_NUM_THREADS=1 $(NBVAL) --nbval-lax

browser:
	@test -f $(HTML) || { echo "no built book: run make book first"; exit 1; }
	$(BIN)/python -m pytest tests/browser -q

# The book built from the committed outputs, then read in the browser.
book-checked: book-prebuilt
	$(MAKE) --no-print-directory browser

# Not part of `make test`: hypothesis draws many fresh examples (the suite's
# default profile is derandomised, so CI cannot flake on a rare example).
explore: $(STAMP)
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest tests -q \
	    -k "properties or chunked or hypothesis" --ignore=tests/browser

# --- mutation testing (not part of make test) ---
# mutmut mutates the core modules ([tool.mutmut] in pyproject.toml) and runs,
# for each mutant, the tests that reach the mutated function; then
# tests/MUTATION.md is rewritten from the results. From scratch (mutants/
# removed) so no result of older tests or code is reused. Slow: see the wall
# time in the report.
# MUTATION_CHILDREN mutants at a time (the suite runs torch on one thread, so
# one child per core; mutmut's timeout is on CPU time, so load cannot turn a
# slow survivor into a "timeout" kill).
MUTATION_CHILDREN ?= 2
mutation: $(STAMP)
	rm -rf mutants
	start=$$(date +%s) && $(BIN)/mutmut run --max-children $(MUTATION_CHILDREN) \
	&& $(BIN)/python tools/mutation_report.py --children $(MUTATION_CHILDREN) \
	    --seconds $$(($$(date +%s) - start))

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# --- a new chapter --------------------------------------------------------
# make chapter NAME=slug TITLE="Title" [PART="Part II"] [KEYTERM="key term"] [ZH=中文]
# creates notebooks/<slug>.ipynb from templates/chapter.ipynb (the house
# structure), its glossary fragment, the _toc.yml and glossary lines, and
# executes it (CONTRIBUTING.md, "A new chapter").
chapter: $(STAMP)
	@test -n "$(NAME)" && test -n "$(TITLE)" || { \
	    echo 'usage: make chapter NAME=slug TITLE="Title" [PART="Part II"] [KEYTERM=...] [ZH=...]'; \
	    exit 2; }
	$(BIN)/python tools/new_chapter.py --name "$(NAME)" --title "$(TITLE)" \
	    $(if $(PART),--part "$(PART)") $(if $(KEYTERM),--term "$(KEYTERM)") \
	    $(if $(ZH),--zh "$(ZH)")

# --- authors ---------------------------------------------------------------
# Re-execute notebooks in place, top to bottom in one kernel each, so the
# committed outputs are fresh: make execute [NB=notebooks/some-chapter.ipynb]
NB ?= $(wildcard notebooks/*.ipynb)
execute: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py $(NB)

# The lock is frozen from a fresh venv that got the CPU build of torch first, so
# no CUDA package can enter it; the grep refuses a lock that holds one anyway.
lock:
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	$(call install_cpu_torch,.lockenv/bin/python)
	.lockenv/bin/pip install --quiet ".[book,test,dev]"
	{ echo "# Pinned environment for the course; regenerate with 'make lock'."; \
	  echo "# torch is pinned to the CPU release $(TORCH_VERSION)."; \
	  .lockenv/bin/pip freeze --all --exclude pip --exclude selfattn \
	  | sed -e 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > requirements.lock.new
	! grep -Ein '^(nvidia-|triton|cuda)' requirements.lock.new \
	  || { echo "make lock: CUDA packages above; not written"; exit 1; }
	mv requirements.lock.new requirements.lock
	rm -rf .lockenv

clean:
	rm -rf _build
