"""The student edition keeps every exercise and no worked solution.

Run by ``make student-check`` after ``make student`` has built the edition
into ``_build/student/_build/html`` (from the committed notebooks, with
sphinx-exercise's ``hide_solutions``), ``make student-pdf`` its PDF and
``make bundle-student`` its offline bundle. The oracle is the sources: every
``{exercise}`` and ``{solution}`` directive in the notebooks' markdown.

The same check covers the student notebooks (``_build/notebooks/student``,
which the edition's download and launch buttons give), the student PDF and the
student bundle; each is shown to fail when pointed at the full edition's
version (the reader notebooks, the full PDF, the book with its reader
notebooks), so it cannot pass for want of looking.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUDENT = ROOT / "_build" / "student" / "_build" / "html"
FULL = ROOT / "_build" / "html"
NOTEBOOKS_OUT = ROOT / "_build" / "notebooks"
STUDENT_PDF = ROOT / "_build" / "self-attention-executable-student.pdf"
FULL_PDF = ROOT / "_build" / "self-attention-executable.pdf"
STUDENT_BUNDLE = ROOT / "_build" / "self-attention-executable-student.zip"
STUDENT_BRANCH = "student-notebooks"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FENCE = re.compile(r"^(`{3,}|:{3,})\{(exercise|solution)(-start)?\}", re.M)
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}", re.M)
# Six or more plain words in a row: text that renders verbatim in HTML (no
# markup, maths or quotes, which the build may turn into other characters).
PHRASE = re.compile(r"(?<![\w$`*\\{])(?:[A-Za-z]+ ){5,}[A-Za-z]+(?![\w$`*}])")


def blocks(path: Path, kind: str) -> tuple[list[str], str]:
    """The ``{exercise}`` or ``{solution}`` blocks of a notebook, and the rest.

    Returns the markdown of each block (option lines dropped) and the text of
    the notebook (all cells) with those blocks cut out. A gated solution
    (``{solution-start}`` ... ``{solution-end}``) spans cells: its body is
    the text up to the end marker, code cells in between included.
    """
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells)
    bodies, rest, last = [], [], 0
    for m in FENCE.finditer(text):
        if m.group(2) != kind:
            continue
        fence = m.group(1)
        if m.group(3):  # gated: up to {solution-end}
            end = END.search(text, m.end()).end()
            stop = END.search(text, m.end()).start()
        else:
            close = re.compile("^" + re.escape(fence) + r"\s*$", re.M)
            stop = close.search(text, m.end()).start()
            end = close.search(text, m.end()).end()
        body = text[text.find("\n", m.end()) + 1 : stop]
        lines = [ln for ln in body.splitlines() if not ln.startswith(":")]
        bodies.append("\n".join(lines))
        rest.append(text[last : m.start()])
        last = end
    rest.append(text[last:])
    return bodies, "\n".join(rest)


def directives(path: Path, kind: str) -> list[str]:
    """The markdown of the ``{exercise}`` or ``{solution}`` blocks of a notebook."""
    return blocks(path, kind)[0]


def phrases(body: str) -> list[str]:
    return [" ".join(p.split()) for p in PHRASE.findall(" ".join(body.split()))]


def page_text(name: str) -> str:
    page = STUDENT / "notebooks" / f"{name}.html"
    raw = page.read_text(encoding="utf-8")
    main = raw[raw.find("<main") :]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", main)).split())


def solution_phrases(nb: Path) -> list[str]:
    """Phrases of a chapter's worked solutions found nowhere else in it (and
    within one cell: a phrase may not run from a code cell into the prose)."""
    solutions, outside = blocks(nb, "solution")
    elsewhere = " ".join(outside.split())
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    texts = [" ".join("".join(c["source"]).split()) for c in cells]
    own = [p for body in solutions for p in phrases(body) if p not in elsewhere]
    own = [p for p in own if any(p in t for t in texts)]
    assert len(own) >= len(solutions), f"{nb.name}: too few solution-only phrases"
    return own


def exercise_phrases(nb: Path) -> list[str]:
    kept = [p for body in directives(nb, "exercise") for p in phrases(body)]
    assert kept, f"{nb.name}: no plain phrase in the exercises: the check is void"
    return kept


def notebook_text(path: Path) -> str:
    """Every cell of a notebook, Markdown escapes undone, spaces collapsed."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells)
    return " ".join(re.sub(r"\\([\\`*_\[\]<>$|])", r"\1", text).split())


def leaks(text: str, nb: Path) -> list[str]:
    """The solution-only phrases of chapter ``nb`` found in ``text``."""
    return [p for p in solution_phrases(nb) if p in text]


def test_the_student_edition_is_built() -> None:
    assert (STUDENT / "index.html").is_file(), "run `make student` first"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_exercise_stays_and_no_solution_is_left(nb: Path) -> None:
    exercises, solutions = directives(nb, "exercise"), directives(nb, "solution")
    assert len(exercises) >= 3 and len(solutions) >= 3, nb.name
    raw = (STUDENT / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
    assert raw.count('class="solution') == 0
    assert raw.count('class="exercise') == len(exercises)
    text = page_text(nb.stem)
    kept = [p for body in exercises for p in phrases(body)]
    assert kept, "no plain phrase found in the exercises: the check would be void"
    assert all(p in text for p in kept), [p for p in kept if p not in text]
    # A solution may quote the chapter (its prose or its exercise): a phrase
    # that also stands outside every solution proves nothing, so only the
    # solutions' own phrases are looked for, and there must be some.
    _, outside = blocks(nb, "solution")
    elsewhere = " ".join(outside.split())
    own = [p for body in solutions for p in phrases(body) if p not in elsewhere]
    assert len(own) >= len(solutions), "too few solution-only phrases: void check"
    left = [p for p in own if p in text]
    assert not left, f"solution text in the student edition: {left[:3]}"


def test_the_exercise_list_says_which_edition() -> None:
    raw = (STUDENT / "book" / "exercises.html").read_text(encoding="utf-8")
    assert "student edition" in raw
    assert "worked solution" not in raw.replace("the worked solutions", "")
    assert 'class="solution' not in raw


# --- the student notebooks -----------------------------------------------------
def student_notebook(name: str, edition: str = "student") -> Path:
    path = NOTEBOOKS_OUT / edition / name
    assert path.is_file(), f"no {path}: run `make student` (or make reader-notebooks)"
    return path


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_student_notebook_keeps_every_exercise_and_no_solution(nb: Path) -> None:
    text = notebook_text(student_notebook(nb.name))
    missing = [p for p in exercise_phrases(nb) if p not in text]
    assert not missing, f"exercise text missing from the student notebook: {missing}"
    left = leaks(text, nb)
    assert not left, f"solution text in the student notebook: {left[:3]}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebook_check_fails_on_the_reader_notebook(nb: Path) -> None:
    """Pointed at the reader notebook (solutions folded in), the check finds
    every solution: it is not void."""
    text = notebook_text(student_notebook(nb.name, "reader"))
    assert leaks(text, nb) == solution_phrases(nb)


def test_download_and_launch_buttons_give_the_student_notebooks() -> None:
    """The edition's pages hand out the student notebooks: the download button
    gives them (``_sources``), Colab and Binder launch them from the branch
    the publishing workflow fills with them."""
    for nb in NOTEBOOKS:
        shipped = STUDENT / "_sources" / "notebooks" / nb.name
        assert shipped.is_file(), f"no {shipped}: the download button is dead"
        assert shipped.read_bytes() == student_notebook(nb.name).read_bytes()
        assert not leaks(notebook_text(shipped), nb)
        raw = (STUDENT / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        links = [html.unescape(u) for u in re.findall(r'href="([^"]*)"', raw)]
        assert f"../_sources/notebooks/{nb.name}" in links, "no download button"
        launch = [u for u in links if "colab.research" in u or "mybinder.org" in u]
        assert len(launch) == 2, f"{nb.stem}: Colab and Binder buttons {launch}"
        colab = f"/blob/{STUDENT_BRANCH}/notebooks/{nb.name}"
        assert any(u.endswith(colab) for u in launch), launch
        binder = f"/{STUDENT_BRANCH}?urlpath=lab/tree/notebooks/{nb.name}"
        assert any(binder in u for u in launch), launch
    shipped = sorted((STUDENT / "_sources").rglob("*.ipynb"))
    assert len(shipped) == len(NOTEBOOKS), "a notebook other than the chapters"


# --- the student PDF -------------------------------------------------------------
def pdf_text(path: Path) -> str:
    """The PDF's text, words broken at a line end joined, spaces collapsed."""
    if shutil.which("pdftotext") is None:
        reason = "pdftotext is missing (Debian: apt-get install poppler-utils)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (CI=true)")
        pytest.skip(reason)
    assert path.is_file(), f"no {path}: run `make student-pdf` (and `make pdf`)"
    out = subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, check=True, timeout=300
    ).stdout.decode("utf-8", errors="replace")
    return " ".join(re.sub(r"-\n", "", out).split())


@functools.cache
def student_site() -> str:
    """The text of every page of the student edition (the API reference
    included): a PDF of the whole book may hold a chapter's solution-only
    phrase elsewhere (a docstring, another chapter), and that proves nothing."""
    pages = sorted(STUDENT.rglob("*.html"))
    raw = " ".join(p.read_text(encoding="utf-8") for p in pages)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def pdf_leaks(text: str) -> dict[str, list[str]]:
    elsewhere = student_site()
    found = {
        nb.stem: [p for p in leaks(text, nb) if p not in elsewhere] for nb in NOTEBOOKS
    }
    return {k: v for k, v in found.items() if v}


def test_the_student_pdf_keeps_every_exercise_and_no_solution() -> None:
    text = pdf_text(STUDENT_PDF)
    exercises = sum(len(directives(nb, "exercise")) for nb in NOTEBOOKS)
    titles = set(re.findall(r"Exercise (\d+\.\d+) \(", text))
    assert len(titles) == exercises, f"{len(titles)} exercises of {exercises}"
    assert "Solution to Exercise" not in text
    left = pdf_leaks(text)
    assert not left, f"solution text in the student PDF: {left}"


def test_the_pdf_check_fails_on_the_full_pdf() -> None:
    text = pdf_text(FULL_PDF)
    assert "Solution to Exercise" in text
    assert len(pdf_leaks(text)) == len(NOTEBOOKS), "a chapter's solutions not found"


# --- the student bundle ----------------------------------------------------------
def bundle_leaks(notebooks: Path, book: Path) -> dict[str, list[str]]:
    """Solution text in a bundle's notebooks and in its book's chapter pages."""
    found = {}
    for nb in NOTEBOOKS:
        page = (book / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        main = page[page.find("<main") :]
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", main)).split())
        left = leaks(notebook_text(notebooks / nb.name), nb) + leaks(text, nb)
        if left:
            found[nb.stem] = left
    return found


def test_the_student_bundle_holds_the_student_edition_and_no_solution(
    tmp_path: Path,
) -> None:
    assert STUDENT_BUNDLE.is_file(), "run `make bundle-student` first"
    with zipfile.ZipFile(STUDENT_BUNDLE) as zf:
        zf.extractall(tmp_path)
    top = tmp_path / "self-attention-executable-student"
    assert "student edition" in (top / "README.txt").read_text(encoding="utf-8")
    names = sorted(p.name for p in (top / "notebooks").glob("*.ipynb"))
    assert names == [nb.name for nb in NOTEBOOKS]
    for nb in NOTEBOOKS:  # the student notebooks, outputs left out
        ours = json.loads((top / "notebooks" / nb.name).read_text(encoding="utf-8"))
        theirs = json.loads(student_notebook(nb.name).read_text(encoding="utf-8"))
        assert [c["cell_type"] for c in ours["cells"]] == [
            c["cell_type"] for c in theirs["cells"]
        ]
    if STUDENT_PDF.is_file():
        assert (top / "html" / STUDENT_PDF.name).is_file(), "the student PDF"
    left = bundle_leaks(top / "notebooks", top / "html")
    assert not left, f"solution text in the student bundle: {left}"


def test_the_bundle_check_fails_on_the_reader_bundles_contents() -> None:
    """The reader bundle is made of the reader notebooks and the full book."""
    left = bundle_leaks(NOTEBOOKS_OUT / "reader", FULL)
    assert len(left) == len(NOTEBOOKS), "a chapter's solutions not found"
