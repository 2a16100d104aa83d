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
reader-notebooks: $(STAMP) ## [editions] the reader and student notebooks, into _build/notebooks
	@test -f $(HTML) || { echo "no built book: run make book first"; exit 1; }
	$(BIN)/python tools/reader_notebooks.py build _build/html $(NOTEBOOKS_OUT)
	$(BIN)/python tools/reader_notebooks.py install $(NOTEBOOKS_OUT)/reader _build/html
	@# the Chinese edition's, from its sources and its book (make book-zh)
	@test -f _build/html/zh/book/intro.html || { echo "no Chinese edition: make book-zh"; exit 1; }
	$(BIN)/python tools/reader_notebooks.py build _build/html/zh $(NOTEBOOKS_OUT)/zh \
	    --sources $(ZH_SRC)/notebooks --language zh_CN
	$(BIN)/python tools/reader_notebooks.py install $(NOTEBOOKS_OUT)/zh/reader _build/html/zh

reader-notebooks-check: reader-notebooks ## [editions] check the reader and student notebooks
	$(BIN)/python -m pytest tests/editions/test_notebooks.py -q -p no:cacheprovider

# What the publishing workflow pushes to the branches the launch buttons open
# (notebooks_branch in _config.yml): the repository with notebooks/ replaced
# by the reader (or student) notebooks, in _build/branches/<branch>.
notebooks-branches: reader-notebooks ## [editions] the repositories the launch buttons open (_build/branches)
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
# A4 (_config.yml); `make pdf PAPER=letter` (or student-pdf) for US letter.
PAPER_OPTION = $(if $(PAPER),--paper $(PAPER))
PDF_LATEX  := _build/pdf/_build/latex
PDF        := _build/self-attention-executable.pdf
pdf: $(STAMP) ## [editions] the PDF edition, A4 (PAPER=letter: US letter; needs TeX Live)
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null \
	    || { echo "make pdf needs TeX Live: see README.md, The PDF edition"; exit 1; }
	@mkdir -p _build
	rm -f $(PDF) $(PDF_LATEX)/self-attention-executable.pdf
	$(BIN)/python tools/prebuilt_config.py $(PAPER_OPTION) _config.yml $(PDF_CONFIG)
	env TEXINPUTS=":$(CURDIR)/book/_latex/texmf" \
	    LATEXOPTS="-interaction=nonstopmode -halt-on-error" \
	    $(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going \
	    --config $(PDF_CONFIG) --path-output _build/pdf
	cp $(PDF_LATEX)/self-attention-executable.pdf $(PDF)
	@if [ -d _build/html ]; then cp $(PDF) _build/html/; fi
	@echo "The PDF edition: $(CURDIR)/$(PDF)"

# The Chinese edition as one PDF (中文版): the same build from the Chinese
# sources (make book-zh writes them) with the Chinese configuration.
PDF_ZH := _build/self-attention-executable-zh.pdf
pdf-zh: $(STAMP) $(ZH_HTML) ## [editions] the Chinese edition's PDF (needs TeX Live)
	rm -rf _build/pdf-zh $(PDF_ZH)
	$(BIN)/python tools/prebuilt_config.py --language zh_CN $(PAPER_OPTION) _config.yml \
	    $(ZH_SRC)/_config.pdf.yml
	env TEXINPUTS=":$(CURDIR)/book/_latex/texmf" \
	    LATEXOPTS="-interaction=nonstopmode -halt-on-error" \
	    $(BIN)/jupyter-book build $(ZH_SRC) --builder pdflatex -W -n --keep-going \
	    --config $(ZH_SRC)/_config.pdf.yml --path-output _build/pdf-zh
	cp _build/pdf-zh/_build/latex/self-attention-executable.pdf $(PDF_ZH)
	@if [ -d _build/html/zh ]; then cp $(PDF_ZH) _build/html/zh/; fi
	@echo "The Chinese PDF edition: $(CURDIR)/$(PDF_ZH)"

pdf-zh-check: pdf-zh ## [editions] build and check the Chinese edition's PDF
	$(BIN)/python -m pytest tests/editions/test_pdf_zh.py -q -p no:cacheprovider

pdf-check: pdf ## [editions] build and check the PDF edition
	$(BIN)/python -m pytest tests/editions/test_pdf.py tests/editions/test_licence_pdf.py -q \
	    -p no:cacheprovider

# --- the student edition --------------------------------------------------
# The same book without the worked solutions (book/_ext/editions.py; every
# exercise stays), built from the committed outputs into
# _build/student/_build/html. `make student-check` proves no solution is in it.
STUDENT_CONFIG := _build/_config.student.yml
STUDENT_HTML   := _build/student/_build/html/index.html
student: $(STAMP) $(MATHJAX) ## [editions] the student edition (no solutions) and its notebooks
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
student-pdf: $(STAMP) ## [editions] the student PDF
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null \
	    || { echo "make student-pdf needs TeX Live: see README.md, The PDF edition"; exit 1; }
	@mkdir -p _build
	rm -f $(STUDENT_PDF) $(STUDENT_PDF_LATEX)/self-attention-executable.pdf
	$(BIN)/python tools/prebuilt_config.py --student $(PAPER_OPTION) _config.yml $(STUDENT_PDF_CONFIG)
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
student-check: student student-pdf pdf ## [editions] build and check the student edition, its PDF, notebooks, bundle
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
wheel: $(STAMP) ## [editions] selfattn as a wheel, into _build/wheel
	rm -rf _build/wheel
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps \
	    --no-build-isolation -w _build/wheel . && rm -rf build

bundle: reader-notebooks wheel ## [editions] the offline bundle: book, reader notebooks, wheel, lock
	$(BIN)/python tools/make_bundle.py _build/html _build/wheel $(BUNDLE)

bundle-student: wheel ## [editions] the offline bundle of the student edition
	@test -f $(STUDENT_HTML) || { echo "no student edition: run make student first"; exit 1; }
	$(BIN)/python tools/make_bundle.py --student $(dir $(STUDENT_HTML)) _build/wheel \
	    $(STUDENT_BUNDLE)

# bundle-check opens the bundle's book from the file in Chromium, then installs
# selfattn as its README says and runs a chapter from its notebooks/ with the
# network off (tests/editions/test_bundle_offline.py: about 40 CPU s).
bundle-check: bundle ## [editions] build the offline bundle, open its book from the file, run a chapter offline
	$(BIN)/python -m pytest tests/editions/test_bundle.py \
	    tests/editions/test_bundle_offline.py -q -p no:cacheprovider

# `make chapter` proved: a throw-away copy of the repository gets a chapter
# from the template, which must pass the notebook checks and build strictly.
chapter-check: $(STAMP) $(MATHJAX) ## [editions] prove that a chapter made by make chapter passes the checks
	$(BIN)/python -m pytest tests/editions/test_new_chapter.py -q -p no:cacheprovider

# The editions besides the HTML book, each with its check (.ci/run runs this
# after make test, from the book that make test built): the PDF and the
# student edition (with its notebooks, PDF and bundle) and the new-chapter
# check side by side, then the bundle (which carries the PDF).
editions: ## [editions] every edition besides the HTML book, each checked (CI)
	$(MAKE) --no-print-directory translations-complete
	$(MAKE) --no-print-directory -j2 --output-sync=target pdf-check student-check \
	    chapter-check pdf-zh-check
	$(MAKE) --no-print-directory bundle-check

