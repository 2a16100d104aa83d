"""tools/make_bundle.py without a built book: its README and its notebooks.

The built bundle is checked by tests/editions/test_bundle.py (``make
bundle-check``); these parts are checked here on every ``make unit``: the
README gives the learner's install with no network, and a bundled notebook
links to the book beside it and installs the wheel beside it (issue 31, F8,
F9).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "make_bundle", ROOT / "tools" / "make_bundle.py"
)
make_bundle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_bundle)
repository = make_bundle.sys.modules["repository"]  # the module make_bundle imports
WHEEL = "selfattn-2.0.0-py3-none-any.whl"


def readme(student: bool = False) -> str:
    return make_bundle.README.format(
        edition="",
        underline="",
        wheel=WHEEL,
        torch="2.13.0",
        python="3.10",
        offline=make_bundle.OFFLINE,
        pdf="",
        chinese="",
        solutions=make_bundle.STUDENT_SOLUTIONS
        if student
        else make_bundle.READER_SOLUTIONS,
    )


def test_the_readme_gives_the_learner_s_install_with_no_network() -> None:
    text = readme()
    assert (
        '.venv/bin/python -m pip install --no-index --find-links wheels "selfattn[lab]"'
        " jupyterlab" in text
    )
    assert (
        ".venv\\Scripts\\python -m pip install --no-index --find-links wheels" in text
    )
    assert "requirements.lock" in text and "-r requirements.lock" not in text
    # the venv line is not in the Linux-only step (F8), which names the CPU index
    assert text.index("python3 -m venv .venv") < text.index("skip it")
    assert "self-attention-executable-wheels-<system>-py3.12.zip" in text
    assert "Intel Macs and Windows on ARM" in text


def test_a_bundled_notebook_links_to_the_book_beside_it(tmp_path: Path) -> None:
    site = "https://someone.github.io/course/"
    cell = repository.install_cell("https://github.com/someone/course")
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": 3,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}],
                "source": [cell],
            },
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": [
                    f"See [the glossary]({site}book/glossary.html#term-query) and\n",
                    f"[Fig. 4.1]({site}notebooks/matrix-view.html#fig-x), or "
                    "[the source](https://github.com/someone/course).\n",
                ],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    out = json.loads(make_bundle.strip_outputs(path, WHEEL, site))
    code, prose = out["cells"]
    assert code["outputs"] == [] and code["execution_count"] is None
    local = "".join(code["source"])  # the wheel beside it, alone
    assert local == make_bundle.from_wheel(cell, f"../wheels/{WHEEL}")
    assert f'sources = ["../wheels/{WHEEL}[lab]"]' in local and "github" not in local
    text = "".join(prose["source"])
    assert "](../html/book/glossary.html#term-query)" in text
    assert "](../html/notebooks/matrix-view.html#fig-x)" in text
    assert site not in text
    assert "(https://github.com/someone/course)" in text  # other links stay
