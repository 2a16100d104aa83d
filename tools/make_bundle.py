"""Write the offline bundle of the course: one zip a learner can carry.

Usage: python tools/make_bundle.py [--student] HTML_DIR WHEEL_DIR OUTPUT.zip

The archive holds one folder, ``self-attention-executable/``, with

* ``html/``: the built book; open ``html/index.html`` in a browser, with no
  server and no network (mathematics, search and figures are all inside);
* ``notebooks/``: every chapter as a reader notebook (the book's text in plain
  Markdown, solutions folded: ``tools/reader_notebooks.py``, from
  ``_build/notebooks/reader``) without its outputs, to run yourself;
* ``wheels/``: the course library ``selfattn`` as a wheel;
* ``requirements.lock``: the pinned environment the notebooks were checked in;
* ``README.txt``: how to read and how to run it.

With ``--student`` it is the student bundle, one folder
``self-attention-executable-student/``: the student edition as ``html/`` (its
PDF included when ``make student-pdf`` put it there) and the student
notebooks (``_build/notebooks/student``), which hold no worked solution.

Everything is written in a fixed order with fixed timestamps, so the same
inputs give the same archive.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = "self-attention-executable"
EPOCH = (2026, 1, 1, 0, 0, 0)

README = """\
Self-attention, executable: the offline bundle{edition}
==============================================={underline}

Read the book
-------------
Open html/index.html in a web browser (double-click it). It needs no server
and no internet: the mathematics, the search and the figures are inside.{pdf}

Run the notebooks
-----------------
You need Python 3.11 or newer, and a package index once, to install the
pinned packages (the book itself needs nothing). In this folder, on Linux
first the CPU build of torch, so that pip does not download gigabytes of CUDA
libraries (skip this step on macOS and Windows):

    python3 -m venv .venv
    .venv/bin/pip install --no-deps "torch=={torch}+cpu" \\
        --index-url https://download.pytorch.org/whl/cpu

then everything else, the course library from this bundle included:

    .venv/bin/pip install -r requirements.lock wheels/{wheel}
    .venv/bin/jupyter lab notebooks/

(On Windows: .venv\\Scripts\\pip and .venv\\Scripts\\jupyter.)

The notebooks come without outputs: run them top to bottom (Run > Run All
Cells). Each one checks its own claims as it runs, and takes about a minute.
They read like the book: numbers, references and captions are in the text,{solutions}
"""
READER_SOLUTIONS = """
and each worked solution is folded under its exercise (click "Solution")."""
STUDENT_SOLUTIONS = """
and every exercise is there; this edition leaves the worked solutions out."""


INSTALL_FROM = re.compile(r'^(\s*url = )"git\+https://[^"]*"', re.M)


def strip_outputs(path: Path, wheel: str) -> bytes:
    """The notebook with no outputs and no execution counts; its install cell
    installs the bundle's wheel (``../wheels/...``) instead of the repository,
    so it works offline. Every other cell unchanged."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            source = "".join(cell["source"])
            here = INSTALL_FROM.sub(rf'\1"../wheels/{wheel}"', source)
            if here != source:
                cell["source"] = here.splitlines(keepends=True)
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def add(zf: zipfile.ZipFile, path: str, data: bytes) -> None:
    info = zipfile.ZipInfo(path, date_time=EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def main(html_dir: str, wheel_dir: str, output: str, *, student: bool = False) -> int:
    edition = "student" if student else "reader"
    notebooks = ROOT / "_build" / "notebooks" / edition
    top = f"{TOP}-student" if student else TOP
    html, wheels = Path(html_dir), sorted(Path(wheel_dir).glob("selfattn-*.whl"))
    chapters = sorted(notebooks.glob("*.ipynb"))
    sources = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    if [p.name for p in chapters] != sources:
        raise SystemExit(
            f"no {edition} notebooks in {notebooks}: run make reader-notebooks"
        )
    if not (html / "index.html").is_file():
        raise SystemExit(f"no built book in {html}: run make book first")
    if len(wheels) != 1:
        raise SystemExit(f"expected one selfattn wheel in {wheel_dir}, found {wheels}")
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    pins = dict(ln.split("==", 1) for ln in lock.splitlines() if "==" in ln)
    pdf = (Path(html_dir) / f"{top}.pdf").is_file()
    title = ", student edition" if student else ""
    readme = README.format(
        edition=title,
        underline="=" * len(title),
        wheel=wheels[0].name,
        torch=pins["torch"],
        pdf=f"\nThe PDF edition is html/{top}.pdf." if pdf else "",
        solutions=STUDENT_SOLUTIONS if student else READER_SOLUTIONS,
    )
    with zipfile.ZipFile(output, "w") as zf:
        add(zf, f"{top}/README.txt", readme.encode("utf-8"))
        add(zf, f"{top}/requirements.lock", lock.encode("utf-8"))
        add(zf, f"{top}/wheels/{wheels[0].name}", wheels[0].read_bytes())
        for nb in chapters:
            add(zf, f"{top}/notebooks/{nb.name}", strip_outputs(nb, wheels[0].name))
        for f in sorted(p for p in html.rglob("*") if p.is_file()):
            if f.name != ".buildinfo":
                name = f"{top}/html/{f.relative_to(html).as_posix()}"
                add(zf, name, f.read_bytes())
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--student"]
    if len(args) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*args, student="--student" in sys.argv[1:]))
