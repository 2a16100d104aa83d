"""The PDF edition numbers chapters, figures, equations and exercises as the HTML.

Left alone, Jupyter Book's LaTeX output (``make pdf``) numbers differently:

* LaTeX numbers every chapter, those of the unnumbered "Getting started" and
  "Reference" parts too, so "Why attention", chapter 1 of the HTML book, would
  be chapter 3 of the PDF, and every figure and equation number with it;
* LaTeX numbers the parts, whose captions carry their own numbers already
  ("Part III" over "Part II: Text, speech, images and graphs");
* sphinx-jupyterbook-latex sets ``numfig_secnum_depth`` to 2, so that LaTeX
  numbers figures and equations within chapters; Sphinx then numbers the
  exercises within sections too ("Exercise 1.9.1" where the HTML, and the
  exercise list, say "Exercise 1.1").

For the LaTeX builder only, this extension

* numbers the exercises with ``numfig_secnum_depth`` 1 while the sources are
  read, and gives LaTeX its 2 back before the PDF is written;
* writes ahead of each document's chapter whether the HTML numbers it, and
  with which number (``\\setcounter{chapter}``), so the two cannot drift;
* makes the parts unnumbered (their captions say which part they are).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.transforms.post_transforms import SphinxPostTransform

PREAMBLE = r"""
% book/_ext/pdf_numbering.py: parts are unnumbered; each chapter says whether
% (and as what) the HTML numbers it.
\AddToHook{cmd/part/before}{\setcounter{secnumdepth}{-2}}
\AtBeginDocument{\edef\booksecnumdepth{\the\value{secnumdepth}}}
\newcommand{\booknumberedchapter}[1]{%
  \setcounter{secnumdepth}{\booksecnumdepth}\setcounter{chapter}{#1}}
\newcommand{\bookunnumberedchapter}{\setcounter{secnumdepth}{-1}}
"""


def add_preamble(app: Sphinx, config: Config) -> None:
    elements = config.latex_elements
    elements["preamble"] = elements.get("preamble", "") + PREAMBLE


def number_exercises_as_html(app: Sphinx) -> None:
    """After sphinx-jupyterbook-latex (priority 500) has set the depth to 2."""
    if app.builder.format == "latex":
        app.pdf_numfig_secnum_depth = app.config.numfig_secnum_depth
        app.config.numfig_secnum_depth = 1


class NumberChaptersAsHtml(SphinxPostTransform):
    """Before each document of the assembled LaTeX tree, its HTML numbering."""

    default_priority = 5
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        # The numbers are assigned (while reading); LaTeX numbers figures and
        # equations within chapters again (its writer reads the depth next).
        depth = getattr(self.app, "pdf_numfig_secnum_depth", None)
        if depth is not None:
            self.config.numfig_secnum_depth = depth
        root = self.config.root_doc
        for start in self.document.findall(addnodes.start_of_file):
            docname = start.get("docname")
            if docname is None or docname == root:
                continue
            number = self.env.toc_secnumbers.get(docname, {}).get("", ())
            if number:  # the chapter counter is stepped by \chapter itself
                tex = rf"\booknumberedchapter{{{number[0] - 1}}}"
            else:
                tex = r"\bookunnumberedchapter"
            start.insert(0, nodes.raw("", tex + "\n", format="latex"))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", add_preamble)
    app.connect("builder-inited", number_exercises_as_html, priority=900)
    app.add_post_transform(NumberChaptersAsHtml)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
