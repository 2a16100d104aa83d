# Self-attention, executable: the two commands a fresh machine needs are
#   make book   (build the HTML book, executing every notebook)
#   make test   (the whole test suite: library, notebooks, the built book)
# Both create .venv from requirements.lock when it is missing.

# PYTHON: the Python that makes .venv (and the scratch venvs of make lock and
# make floors). The lock needs PYTHON_FLOOR or newer: the highest
# Requires-Python among its packages (soupsieve 4.1.2 needs 3.11.5;
# tests/course/test_environment.py keeps the two equal). Debian 12's python3
# is 3.11.2, Ubuntu 22.04's 3.10 and Apple's 3.9: there, name a newer one,
# e.g. `make book PYTHON=python3.12` (README, "Set-up").
PYTHON ?= python3
PYTHON_FLOOR := 3.11.5
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

LIBRARY_PY := $(shell find selfattn -name '*.py')
SOURCES := _config.yml _toc.yml $(wildcard book/*.md book/*.bib book/*/*.md) \
           $(wildcard book/_ext/*.py book/_static/*.css book/_static/*.svg) \
           $(wildcard notebooks/*.ipynb) $(LIBRARY_PY)

.PHONY: chapter chapter-check book book-prebuilt book-checked pdf pdf-check student student-check bundle bundle-check editions repository \
        reader-notebooks reader-notebooks-check notebooks-branches student-pdf book-zh pdf-zh pdf-zh-check translations-check translations-complete \
        bundle-student wheel test unit notebooks seeds browser lint format serve \
        execute twins lock explore mutation stress sweep check dist floors clean help

# `make help` lists every target that has a `## [group] ` comment, one line
# each, by group: author (writing a chapter), test (what `make test` runs, and
# its parts), editions (the PDF, student, reader and offline editions) and
# maintenance (the lock, the releases, the slow sweeps). CI calls four targets:
# test, editions, dist and floors (.ci/run). tests/course/test_makefile.py
# holds every documented target to one of the groups.
HELP_GROUPS := author test editions maintenance
help: ## [author] this list, by group
	@grep -hE '^[a-zA-Z0-9%_-]+:.*## ' $(MAKEFILE_LIST) \
	    | sed -E 's/^([^:]+):[^#]*## (\[([a-z]+)\] )?(.*)/\3\t\1\t\4/' \
	    | awk -F'\t' -v groups="$(HELP_GROUPS)" \
	    '{ g = ($$1 == "" ? "(no group)" : $$1); seen[g] = seen[g] \
	       sprintf("  make %-24s %s\n", $$2, $$3) } \
	     END { n = split(groups, order, " "); order[++n] = "(no group)"; \
	           for (i = 1; i <= n; i++) if (order[i] in seen) \
	               printf "%s%s:\n%s", (i > 1 ? "\n" : ""), order[i], seen[order[i]] }'

# --- environment -----------------------------------------------------------
# $(call check_python,PYTHON): stop, with what to do, where PYTHON is older
# than PYTHON_FLOOR (before pip fails on one of the lock's packages).
define check_python
	@$(1) -c 'import sys; floor = tuple(map(int, "$(PYTHON_FLOOR)".split("."))); \
	    sys.exit(sys.version_info[:3] < floor)' 2>/dev/null || { \
	    echo "make: $(1) is $$($(1) --version 2>/dev/null || echo missing); the course's"; \
	    echo "environment (requirements.lock) needs Python $(PYTHON_FLOOR) or newer."; \
	    echo "Name a newer one with PYTHON=, e.g. make book PYTHON=python3.12"; \
	    echo "(and remove a .venv made with the old one: rm -rf $(VENV))."; exit 1; }
endef

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
	$(call check_python,$(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON)))
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
$(LIBSTAMP): $(LIBRARY_PY)
	rm -rf $(CACHE)
	@mkdir -p _build && touch $@

$(HTML): $(STAMP) $(MATHJAX) $(LIBSTAMP) $(SOURCES)
ifeq ($(CI),true)
	rm -rf $(CACHE)
endif
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going
	@echo
	@echo "The book is built: open file://$(CURDIR)/_build/html/index.html"

book: $(HTML) ## [author] build the HTML book into _build/html, executing every notebook
	$(MAKE) --no-print-directory book-zh
	$(MAKE) --no-print-directory reader-notebooks
	@echo "Book up to date: file://$(CURDIR)/_build/html/index.html"

# `make test` builds the book from the committed outputs once nbval has shown
# them to be what a fresh execution gives: the same strict build, no second
# execution. The configuration is _config.yml with execution turned off.
PREBUILT_CONFIG := _build/_config.prebuilt.yml
book-prebuilt: $(STAMP) $(MATHJAX) ## [test] the HTML book from the committed outputs (no execution)
	@mkdir -p _build
	$(BIN)/python tools/prebuilt_config.py _config.yml $(PREBUILT_CONFIG)
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going \
	    --config $(PREBUILT_CONFIG) || { rm -f $(HTML); exit 1; }
	$(MAKE) --no-print-directory book-zh

# The Chinese edition (中文版): the same chapters and pages with every block
# that has a translation in Chinese (tools/translations.py; CONTRIBUTING,
# "Translations"), built like book-prebuilt from the committed outputs into
# _build/html/zh, where every English page's language switch points. Code,
# outputs and glued numbers are the English notebooks' own.
ZH_SRC  := _build/zh-src
ZH_HTML := _build/html/zh/book/intro.html
ZH_DEPS := $(SOURCES) $(shell find translations -name '*.yml' 2>/dev/null) \
           tools/translations.py tools/prebuilt_config.py
book-zh: $(ZH_HTML) ## [editions] the Chinese edition of the HTML book, into _build/html/zh

$(ZH_HTML): $(STAMP) $(MATHJAX) $(ZH_DEPS)
	rm -rf $(ZH_SRC) _build/zh _build/html/zh
	$(BIN)/python tools/translations.py build $(ZH_SRC)
	$(BIN)/python tools/prebuilt_config.py --language zh_CN _config.yml $(ZH_SRC)/_config.yml
	$(BIN)/jupyter-book build $(ZH_SRC) --builder html -W -n --keep-going \
	    --path-output _build/zh
	@mkdir -p _build/html && cp -r _build/zh/_build/html _build/html/zh
	@echo "The Chinese edition: file://$(CURDIR)/_build/html/zh/index.html"

translations-check: $(STAMP) ## [test] every translation true to its markup, terms and style (lists blocks behind the English)
	$(BIN)/python tools/translations.py check --behind-ok

translations-complete: $(STAMP) ## [editions] every translated chapter and page also complete and current (make editions)
	$(BIN)/python tools/translations.py check

# The editions besides the HTML book (reader and student notebooks, PDF,
# student edition, offline bundle) and their checks: mk/editions.mk.
include mk/editions.mk

# The repository URL lives in _config.yml; this sets it and rewrites its
# copies (every notebook's install cell, the how-to-run page). INSTALL=repository
# (a fork that changes the library) makes the install cell take selfattn from
# this repository's tag alone, never from PyPI; INSTALL=pypi sets it back.
repository: ## [maintenance] URL=... [INSTALL=repository] set the repository URL and rewrite its copies
	@test -n "$(URL)" || { echo "usage: make repository URL=https://github.com/you/repo [INSTALL=pypi|repository]"; exit 1; }
	$(BIN)/python tools/repository.py set $(URL) $(if $(INSTALL),--install $(INSTALL))
	$(BIN)/python tools/twins.py write

serve: $(HTML) ## [author] serve the built book on http://127.0.0.1:8000
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

test: $(STAMP) $(MATHJAX) ## [test] the whole test suite: lint, unit, nbval, seeds, book, browser
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory translations-check
	$(MAKE) --no-print-directory -j2 --output-sync=target \
	    notebooks $(addprefix seed-,$(OTHER_SEEDS)) unit book-checked

lint: $(STAMP) ## [test] ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The library's tests, then every docstring's Examples block as a doctest.
unit: $(STAMP) ## [test] the tests of the library, the bench and the course's rules, and every docstring example
	env OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests -q --ignore=tests/browser \
	    --ignore=tests/editions
	env OMP_NUM_THREADS=1 $(BIN)/python -m pytest selfattn -q --doctest-modules

notebooks: $(STAMP) ## [test] nbval: every notebook compared, portable kernels, one thread
	env $(PORTABLE) $(NBVAL)

seeds: $(addprefix seed-,$(OTHER_SEEDS)) ## [test] every notebook with the other base seeds (asserts only)

seed-%: $(STAMP) ## [test] one seed pass, e.g. make seed-3
	@echo "== every notebook with SELFATTN_SEED=$* (asserts only)"
	env SELFATTN_SEED=$* OMP_NUM_THREADS=1 $(NBVAL) --nbval-lax

browser: ## [test] the browser tests of the built book
	@test -f $(HTML) || { echo "no built book: run make book first"; exit 1; }
	$(BIN)/python -m pytest tests/browser -q

# The book built from the committed outputs, its reader and student notebooks
# written and checked, then the book and a reader notebook read in the browser.
book-checked: book-prebuilt ## [test] the book from the committed outputs, then the browser tests
	$(MAKE) --no-print-directory reader-notebooks-check
	$(MAKE) --no-print-directory browser

# The loop an author runs while writing one chapter: the portable pass (outputs
# compared) and the seed passes with base seeds 1 to 4 (asserts only).
check: $(STAMP) ## [author] NB=notebooks/x.ipynb: portable pass and seeds 1-4 of one chapter
	@test -n "$(NB)" || { echo "usage: make check NB=notebooks/<slug>.ipynb"; exit 2; }
	env $(PORTABLE) $(BIN)/python -m pytest $(NB) -q -p no:cacheprovider
	for s in 1 2 3 4; do env SELFATTN_SEED=$$s OMP_NUM_THREADS=1 $(BIN)/python \
	    -m pytest $(NB) -q -p no:cacheprovider --nbval-lax || exit 1; done

# Not part of `make test`: every claim about a trained or sampled quantity
# (selfattn.lab.claims.claim) measured over many draws. Each chapter that
# states one runs once per base seed in SWEEP_SEEDS with portable kernels and
# once per seed in SWEEP_NATIVE with native kernels, one thread each, SWEEP_JOBS
# at a time; tests/seeds.json and tests/SEEDS.md are rewritten (for NB=... only
# those chapters' entries). It fails when a claim fails at any draw or its
# margin is under a quarter of its range (CONTRIBUTING, "Claims over many
# draws"). About an hour for every chapter.
SWEEP_SEEDS  ?= 0-11
SWEEP_NATIVE ?= 0-3
SWEEP_JOBS   ?= 2
sweep: $(STAMP) ## [maintenance] every claim over 12 seeds + native kernels (NB=... for some; slow)
	$(BIN)/python tools/sweep.py --seeds $(SWEEP_SEEDS) --native $(SWEEP_NATIVE) \
	    --jobs $(SWEEP_JOBS) $(if $(filter command line,$(origin NB)),$(NB))

# Not part of `make test`: a learner's wait. Each chapter that states a claim
# runs once, alone, with portable kernels on one thread (base seed 0); its CPU
# seconds go to tests/seeds/<chapter>.json and the budget in tests/SEEDS.md is
# judged on them. Run it on an idle machine (NB=... for some chapters).
wait: $(STAMP) ## [maintenance] each chapter alone once, portable kernels: the budget in SEEDS.md
	$(BIN)/python tools/sweep.py --wait $(if $(filter command line,$(origin NB)),$(NB))

# Not part of `make test`: the chapters that measure time, run again and again
# with portable kernels on one thread beside CPU-bound processes (hours; every
# run must pass). STRESS_RUNS runs, STRESS_LOAD busy processes.
STRESS_RUNS ?= 10
STRESS_LOAD ?= 3
stress: $(STAMP) ## [maintenance] the chapters that measure time, 10 runs under load (hours)
	$(BIN)/python tools/stress.py --runs $(STRESS_RUNS) --load $(STRESS_LOAD)

# Not part of `make test`: hypothesis draws many fresh examples (the suite's
# default profile is derandomised, so CI cannot flake on a rare example).
explore: $(STAMP) ## [test] hypothesis with fresh random examples (not in make test)
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
mutation: $(STAMP) ## [maintenance] mutation testing of the core (slow; writes tests/MUTATION.md)
	rm -rf mutants
	start=$$(date +%s) && $(BIN)/mutmut run --max-children $(MUTATION_CHILDREN) \
	&& $(BIN)/python tools/mutation_report.py --children $(MUTATION_CHILDREN) \
	    --seconds $$(($$(date +%s) - start))

format: $(STAMP) ## [author] ruff format and fix
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# --- a new chapter --------------------------------------------------------
# make chapter NAME=slug TITLE="Title" [PART="Part II"] [KEYTERM="key term"] [ZH=中文]
# creates notebooks/<slug>.ipynb from templates/chapter.ipynb (the house
# structure), its glossary fragment, the _toc.yml and glossary lines, and
# executes it (CONTRIBUTING.md, "A new chapter").
chapter: $(STAMP) ## [author] NAME=slug TITLE="...": a new chapter from the template
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
execute: $(STAMP) ## [author] re-execute notebooks in place (NB=notebooks/x.ipynb for one)
	$(BIN)/python tools/execute_notebooks.py $(NB)
	$(BIN)/python tools/twins.py write

# Each chapter's text twin, notebooks/twins/<chapter>.md (MyST, no outputs),
# written from the notebook so that a change reads as text in a diff
# (tools/twins.py; make test fails on a stale twin; CONTRIBUTING, "Text twins").
twins: $(STAMP) ## [author] rewrite the chapters' text twins (notebooks/twins/*.md)
	$(BIN)/python tools/twins.py write

# The lock is frozen from a fresh venv that got the CPU build of torch first, so
# no CUDA package can enter it; the grep refuses a lock that holds one anyway.
lock: ## [maintenance] regenerate requirements.lock from pyproject.toml
	$(call check_python,$(PYTHON))
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
dist: $(STAMP) ## [maintenance] build the package for PyPI (sdist, wheel) and twine-check it
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
floors: $(STAMP) ## [maintenance] the lower bounds of pyproject.toml: tests and two chapters
	rm -rf $(FLOORS) && mkdir -p $(FLOORS)
	$(PYTHON) tools/floors.py --torch $(FLOOR_TORCH) > $(FLOORS)/constraints.txt
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -w $(FLOORS)/wheel . && rm -rf build
	$(call check_python,$(PYTHON))
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

clean: ## [maintenance] remove _build
	rm -rf _build
