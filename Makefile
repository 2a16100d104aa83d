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

.PHONY: chapter chapter-check book book-prebuilt book-checked pdf pdf-check student student-check bundle bundle-check editions repository \
        reader-notebooks reader-notebooks-check notebooks-branches student-pdf \
        bundle-student wheel test unit notebooks seeds browser lint format serve \
        execute lock explore mutation stress clean help

help:
	@echo "make book     build the HTML into _build/html (executes every notebook)"
	@echo "make test     run the whole test suite (nbval, seed passes, book, browser)"
	@echo "make pdf      build the book as one PDF into $(PDF) (needs TeX Live)"
	@echo "make serve    serve the built book on http://localhost:8000"
	@echo "make execute  authors: re-execute notebooks in place to refresh outputs"
	@echo "make chapter  authors: NAME=slug TITLE=\"...\" creates a chapter from the template"
	@echo "make lint     ruff check + format check"
	@echo "make lock     regenerate requirements.lock from pyproject.toml"
	@echo "make floors   the lower bounds of pyproject.toml: unit tests and two chapters"
	@echo "make dist     build the package for PyPI (sdist, wheel) and twine-check it"

# --- environment -----------------------------------------------------------
# torch: PyPI's Linux wheel of torch pulls in several GB of CUDA libraries
# (nvidia-* packages). On Linux we install the CPU build first, with no
# dependencies (they are all in the lock): from the configured indexes if they
# carry it, else from PyTorch's CPU index, consulted for torch alone. The lock
# then finds torch==2.13.0 satisfied by 2.13.0+cpu (PEP 440 ignores the local
# label) and installs no nvidia-* package. Elsewhere (macOS, Windows) PyPI's
# wheel is the CPU build already. $(call install_cpu_torch,PYTHON[,VERSION])
# installs VERSION (default: the lock's).
TORCH_VERSION   := $(shell sed -n 's/^torch==//p' requirements.lock)
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
ifeq ($(shell uname -s),Linux)
define install_cpu_torch
	$(1) -m pip install --quiet --disable-pip-version-check --no-deps \
	    "torch==$(or $(2),$(TORCH_VERSION))+cpu" 2>/dev/null \
	|| $(1) -m pip install --quiet --disable-pip-version-check --no-deps \
	    --index-url $(TORCH_CPU_INDEX) "torch==$(or $(2),$(TORCH_VERSION))+cpu"
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

# MathJax is served from the built site (no CDN): the files the book uses,
# checked in under book/_static/mathjax with MathJax's licence (its
# README.txt; tools/vendor_mathjax.py adds a file). No Node, no npm.

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
	$(MAKE) --no-print-directory reader-notebooks
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

# --- reader and student notebooks ------------------------------------------
# The chapters as plain Jupyter notebooks that read like the book in
# JupyterLab, Colab, VS Code or on GitHub (tools/reader_notebooks.py; see
# CONTRIBUTING, "Reader and student notebooks"), written in seconds from the
# committed notebooks and the built book into _build/notebooks/reader
# (solutions folded) and _build/notebooks/student (no solutions). The reader
# notebooks then replace the book's _sources copies, which the download
# button gives. `make reader-notebooks-check` checks both editions
# (tests/editions/test_notebooks.py); `make test` runs it.
NOTEBOOKS_OUT := _build/notebooks
reader-notebooks: $(STAMP)
	@test -f $(HTML) || { echo "no built book: run make book first"; exit 1; }
	$(BIN)/python tools/reader_notebooks.py build _build/html $(NOTEBOOKS_OUT)
	$(BIN)/python tools/reader_notebooks.py install $(NOTEBOOKS_OUT)/reader _build/html

reader-notebooks-check: reader-notebooks
	$(BIN)/python -m pytest tests/editions/test_notebooks.py -q -p no:cacheprovider

# What the publishing workflow pushes to the branches the launch buttons open
# (notebooks_branch in _config.yml): the repository with notebooks/ replaced
# by the reader (or student) notebooks, in _build/branches/<branch>.
notebooks-branches: reader-notebooks
	$(BIN)/python tools/reader_notebooks.py tree $(NOTEBOOKS_OUT)/reader \
	    _build/branches/notebooks
	$(BIN)/python tools/reader_notebooks.py tree $(NOTEBOOKS_OUT)/student \
	    _build/branches/student-notebooks

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
	$(BIN)/python -m pytest tests/editions/test_pdf.py tests/editions/test_licence_pdf.py -q \
	    -p no:cacheprovider

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
	$(BIN)/python tools/reader_notebooks.py build $(dir $(STUDENT_HTML)) \
	    $(NOTEBOOKS_OUT) --edition student
	$(BIN)/python tools/reader_notebooks.py install $(NOTEBOOKS_OUT)/student \
	    $(dir $(STUDENT_HTML))
	@echo "The student edition: file://$(CURDIR)/$(STUDENT_HTML)"

# The student edition as one PDF, like `make pdf` from the student
# configuration, into $(STUDENT_PDF) (and next to the student edition's
# index.html when it is built).
STUDENT_PDF_CONFIG := _build/_config.student-pdf.yml
STUDENT_PDF_LATEX  := _build/student-pdf/_build/latex
STUDENT_PDF        := _build/self-attention-executable-student.pdf
student-pdf: $(STAMP)
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null \
	    || { echo "make student-pdf needs TeX Live: see README.md, The PDF edition"; exit 1; }
	@mkdir -p _build
	rm -f $(STUDENT_PDF) $(STUDENT_PDF_LATEX)/self-attention-executable.pdf
	$(BIN)/python tools/prebuilt_config.py --student _config.yml $(STUDENT_PDF_CONFIG)
	env TEXINPUTS=":$(CURDIR)/book/_latex/texmf" \
	    LATEXOPTS="-interaction=nonstopmode -halt-on-error" \
	    $(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going \
	    --config $(STUDENT_PDF_CONFIG) --path-output _build/student-pdf
	cp $(STUDENT_PDF_LATEX)/self-attention-executable.pdf $(STUDENT_PDF)
	@if [ -d $(dir $(STUDENT_HTML)) ]; then cp $(STUDENT_PDF) $(dir $(STUDENT_HTML)); fi
	@echo "The student PDF: $(CURDIR)/$(STUDENT_PDF)"

# No solution in the student edition, its notebooks, its PDF and its bundle;
# each check is also shown to fail on the full edition's version (the full
# PDF, the reader notebooks and the book they are bundled with).
student-check: student student-pdf pdf
	$(MAKE) --no-print-directory bundle-student
	$(BIN)/python -m pytest tests/editions/test_student.py -q -p no:cacheprovider

# --- the offline bundle ---------------------------------------------------
# One zip to carry: the built book (opens from html/index.html with no server
# and no network), the reader notebooks without outputs, selfattn as a wheel,
# the lock and a README (tools/make_bundle.py). Needs the built book. The
# student bundle is the same made of the student edition, its notebooks and
# its PDF (`make student` first).
BUNDLE := _build/self-attention-executable.zip
STUDENT_BUNDLE := _build/self-attention-executable-student.zip
wheel: $(STAMP)
	rm -rf _build/wheel
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -w _build/wheel . && rm -rf build

bundle: reader-notebooks wheel
	$(BIN)/python tools/make_bundle.py _build/html _build/wheel $(BUNDLE)

bundle-student: wheel
	@test -f $(STUDENT_HTML) || { echo "no student edition: run make student first"; exit 1; }
	$(BIN)/python tools/make_bundle.py --student $(dir $(STUDENT_HTML)) _build/wheel \
	    $(STUDENT_BUNDLE)

bundle-check: bundle
	$(BIN)/python -m pytest tests/editions/test_bundle.py -q -p no:cacheprovider

# `make chapter` proved: a throw-away copy of the repository gets a chapter
# from the template, which must pass the notebook checks and build strictly.
chapter-check: $(STAMP) $(MATHJAX)
	$(BIN)/python -m pytest tests/editions/test_new_chapter.py -q -p no:cacheprovider

# The editions besides the HTML book, each with its check (.ci/run runs this
# after make test, from the book that make test built): the PDF and the
# student edition (with its notebooks, PDF and bundle) and the new-chapter
# check side by side, then the bundle (which carries the PDF).
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

# The library's tests, then every docstring's Examples block as a doctest.
unit: $(STAMP)
	env OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests -q --ignore=tests/browser \
	    --ignore=tests/editions
	env OMP_NUM_THREADS=1 $(BIN)/python -m pytest selfattn -q --doctest-modules

notebooks: $(STAMP)
	env $(PORTABLE) $(NBVAL)

seeds: $(addprefix seed-,$(OTHER_SEEDS))

seed-%: $(STAMP)
	@echo "== every notebook with SELFATTN_SEED=$* (asserts only)"
	env SELFATTN_SEED=$* OMP_NUM_THREADS=1 $(NBVAL) --nbval-lax

browser:
	@test -f $(HTML) || { echo "no built book: run make book first"; exit 1; }
	$(BIN)/python -m pytest tests/browser -q

# The book built from the committed outputs, its reader and student notebooks
# written and checked, then the book and a reader notebook read in the browser.
book-checked: book-prebuilt
	$(MAKE) --no-print-directory reader-notebooks-check
	$(MAKE) --no-print-directory browser

# Not part of `make test`: the chapters that measure time, run again and again
# with portable kernels on one thread beside CPU-bound processes (hours; every
# run must pass). STRESS_RUNS runs, STRESS_LOAD busy processes.
STRESS_RUNS ?= 10
STRESS_LOAD ?= 3
stress: $(STAMP)
	$(BIN)/python tools/stress.py --runs $(STRESS_RUNS) --load $(STRESS_LOAD)

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
	.lockenv/bin/pip install --quiet ".[lab,book,test,dev]"
	{ echo "# Pinned environment for the course; regenerate with 'make lock'."; \
	  echo "# torch is pinned to the CPU release $(TORCH_VERSION)."; \
	  .lockenv/bin/pip freeze --all --exclude pip --exclude selfattn \
	  | sed -e 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > requirements.lock.new
	! grep -Ein '^(nvidia-|triton|cuda)' requirements.lock.new \
	  || { echo "make lock: CUDA packages above; not written"; exit 1; }
	mv requirements.lock.new requirements.lock
	rm -rf .lockenv

# --- the package on PyPI -----------------------------------------------------
# `make dist`: the sdist and the wheel that the workflow publishes on a tag
# (_build/dist), built as PyPI gets them and checked by twine.
DIST := _build/dist
.PHONY: dist
dist: $(STAMP)
	rm -rf $(DIST)
	$(BIN)/python -m build --no-isolation --outdir $(DIST) . && rm -rf build
	$(BIN)/twine check --strict $(DIST)/*

# --- the minimum versions (not part of make test) ------------------------------
# `make floors` proves pyproject.toml's lower bounds: a scratch venv gets exactly
# the floor of every dependency of selfattn and of its extra lab (pip
# constraints that tools/floors.py writes from pyproject.toml; it also says why
# each floor is what it is), with torch at the lock's CPU release: PyTorch's CPU
# index, the only source of an older CPU torch, may be out of reach. The
# workflow's floors job runs `make floors FLOOR_TORCH=floor`. There: the
# Colab-like install-cell test (tests/editions/test_install_cell.py), the
# library's unit tests (the checkout's selfattn: some tests read the files
# beside it), and two chapters, asserts only (--nbval-lax), whose kernels import
# the installed wheel (python -P keeps the checkout off the path). .ci/run runs
# it after the editions.
FLOORS         := _build/floors
FLOOR_TORCH    ?= lock
FLOOR_CHAPTERS ?= notebooks/graph-attention.ipynb notebooks/multi-head-attention.ipynb
FLOOR_PIP      := $(FLOORS)/venv/bin/python -m pip --disable-pip-version-check
# the library's tests (pytest's @file arguments): not those of built artefacts,
# nor those that check the repository's other files (a new test of that kind
# goes into the file's --ignore lines). The workflow runs the same on macOS and
# Windows.
LIBRARY_TESTS  := @.ci/library-tests.txt
.PHONY: floors
floors: $(STAMP)
	rm -rf $(FLOORS) && mkdir -p $(FLOORS)
	$(PYTHON) tools/floors.py --torch $(FLOOR_TORCH) > $(FLOORS)/constraints.txt
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -w $(FLOORS)/wheel . && rm -rf build
	$(PYTHON) -m venv $(FLOORS)/venv
	$(call install_cpu_torch,$(FLOORS)/venv/bin/python,$(shell $(PYTHON) tools/floors.py --torch-version $(FLOOR_TORCH)))
	$(FLOOR_PIP) install --quiet -c $(FLOORS)/constraints.txt \
	    "$$(ls $(FLOORS)/wheel/selfattn-*.whl)[lab]" $$($(PYTHON) tools/floors.py --names)
	$(FLOOR_PIP) check
	$(FLOORS)/venv/bin/python -m pip list --format=freeze > $(FLOORS)/installed.txt
	$(BIN)/python -m pytest tests/editions/test_install_cell.py -q -p no:cacheprovider
	env OMP_NUM_THREADS=1 $(FLOORS)/venv/bin/python -m pytest -q \
	    -p no:cacheprovider $(LIBRARY_TESTS)
	$(FLOORS)/venv/bin/python -P -c "import selfattn; print(selfattn.__file__)" \
	    | grep -q "$(FLOORS)/venv/" || { echo "floors: selfattn is not the wheel"; exit 1; }
	env OMP_NUM_THREADS=1 $(FLOORS)/venv/bin/python -P -m pytest -q \
	    -p no:cacheprovider --nbval-lax $(FLOOR_CHAPTERS)

clean:
	rm -rf _build
