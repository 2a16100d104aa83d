"""The student edition keeps every exercise and no worked solution.

Run by ``make student-check`` after ``make student`` has built the edition
into ``_build/student/_build/html`` (from the committed notebooks, with
sphinx-exercise's ``hide_solutions``). The oracle is the sources: every
``{exercise}`` and ``{solution}`` directive in the notebooks' markdown.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUDENT = ROOT / "_build" / "student" / "_build" / "html"
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


def test_no_notebook_source_download_or_launch_is_offered() -> None:
    """The notebooks hold the solutions: the edition must not hand them out
    (a copy in _sources, the download button, Binder or Colab)."""
    sources = STUDENT / "_sources"
    shipped = sorted(sources.rglob("*.ipynb")) if sources.exists() else []
    assert not shipped, f"notebook sources in the student edition: {shipped[:3]}"
    for nb in NOTEBOOKS:
        raw = (STUDENT / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        links = re.findall(r'href="([^"]*)"', raw)
        bad = [
            u
            for u in links
            if u.endswith((".ipynb", ".md"))
            or "colab.research.google.com" in u
            or "mybinder.org" in u
        ]
        assert not bad, f"{nb.stem}: links that hand out the notebook: {bad[:3]}"
        assert "_sources/" not in raw, f"{nb.stem}: a download button is left"


def test_the_exercise_list_says_which_edition() -> None:
    raw = (STUDENT / "book" / "exercises.html").read_text(encoding="utf-8")
    assert "student edition" in raw
    assert "worked solution" not in raw.replace("the worked solutions", "")
    assert 'class="solution' not in raw
