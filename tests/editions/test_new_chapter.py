"""`make chapter` creates a chapter that passes the book's checks as created.

Run by ``make chapter-check`` (part of ``make editions``). A throw-away copy of
the repository gets a new chapter from the template
(``tools/new_chapter.py``, the script behind ``make chapter``); then the
copy's own checks run on it (hygiene, notation, fonts), the book is built
strictly from it (``-W -n``, as ``make test`` builds it), and the built pages
are read: the chapter with its glued number, figure, exercise and reference,
its exercise on the exercise list and its key term in the glossary.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SLUG, TITLE, TERM, ZH = "demo-topic", "A demo topic", "demo term", "演示术语"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files (tracked and new, not ignored) with a new chapter."""
    where = tmp_path_factory.mktemp("repo")
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    assert (where / "book" / "_static" / "mathjax" / "tex-chtml.js").is_file()
    made = _run(
        [
            sys.executable,
            "tools/new_chapter.py",
            "--name",
            SLUG,
            "--title",
            TITLE,
            "--part",
            "Part II",
            "--term",
            TERM,
            "--zh",
            ZH,
        ],
        where,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    return where


@pytest.fixture(scope="module")
def built(copy: Path) -> Path:
    """The copy's book, built strictly from the committed outputs."""
    config = copy / "_build" / "_config.prebuilt.yml"
    config.parent.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "tools/prebuilt_config.py", "_config.yml", str(config)], copy)
    build = _run(
        [
            str(BIN / "jupyter-book"),
            "build",
            ".",
            "--builder",
            "html",
            "-W",
            "-n",
            "--keep-going",
            "--config",
            str(config),
        ],
        copy,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return copy / "_build" / "html"


def test_the_chapter_is_wired_into_toc_and_glossary(copy: Path) -> None:
    toc = (copy / "_toc.yml").read_text()
    part2 = toc.split("Part II:")[1].split("- caption:")[0]
    assert part2.rstrip().endswith(f"- file: notebooks/{SLUG}")
    assert (
        f"```{{include}} glossary/_{SLUG}.md" in (copy / "book/glossary.md").read_text()
    )
    fragment = (copy / "book" / "glossary" / f"_{SLUG}.md").read_text()
    assert TERM in fragment and ZH in fragment


def test_the_chapter_is_committed_executed(copy: Path) -> None:
    nb = json.loads((copy / "notebooks" / f"{SLUG}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    assert not any(o["output_type"] == "error" for c in code for o in c["outputs"])
    install = code[0]
    assert "".join(install["source"]).startswith("# Install the course library")
    assert "remove-cell" in install["metadata"]["tags"]


def test_the_chapter_passes_the_notebook_checks(copy: Path) -> None:
    checks = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/course/test_notebook_hygiene.py",
            "tests/course/test_notation.py",
            "tests/lab/test_fonts.py",
            "-k",
            SLUG,
        ],
        copy,
    )
    assert checks.returncode == 0, checks.stdout[-4000:]
    assert " passed" in checks.stdout and "deselected" in checks.stdout


def test_the_chapter_suits_the_student_edition(copy: Path) -> None:
    """What make student-check asks of every chapter: three exercises or more,
    each solution with words of its own (so its absence can be proved)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import test_student as student

    nb = copy / "notebooks" / f"{SLUG}.ipynb"
    exercises = student.directives(nb, "exercise")
    solutions, outside = student.blocks(nb, "solution")
    assert len(exercises) >= 3 and len(solutions) >= 3
    rest = " ".join(outside.split())
    own = [p for b in solutions for p in student.phrases(b) if p not in rest]
    assert len(own) >= len(solutions), own
    assert "(Replace.)" in " ".join(exercises)  # marked for the author


def test_the_built_chapter_has_the_house_structure(built: Path) -> None:
    page = (built / "notebooks" / f"{SLUG}.html").read_text()
    for expected in (
        TITLE,
        "Learning objectives",
        "Prerequisites",
        "Exercise 11.1",  # the last chapter of Part II: after graphs (10.)
        "★ Temperature",
        "★★ Equal scores",
        "★★★ One key far ahead",
        "Solution to",
        "Fig. 11.1",
        "Vaswani",
    ):
        assert expected in page, expected
    assert "__SLUG" not in page and "__TITLE" not in page  # every placeholder filled
    exercises = (built / "book" / "exercises.html").read_text()
    assert f"{SLUG}.html" in exercises
    glossary = (built / "book" / "glossary.html").read_text()
    assert TERM in glossary and ZH in glossary


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "Bad_Name", "--title", "x"], "lower-case words"),
        (["--name", "matrix-view", "--title", "x"], "exists already"),
        (["--name", "new-one", "--title", "x", "--part", "Part IX"], "Part IX"),
    ],
)
def test_bad_requests_are_refused(copy: Path, args: list[str], message: str) -> None:
    refused = _run([sys.executable, "tools/new_chapter.py", *args], copy)
    assert refused.returncode != 0
    assert message in refused.stderr
