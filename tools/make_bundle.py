"""Write the offline bundle of the course: one zip a learner can carry.

Usage: python tools/make_bundle.py [--student] HTML_DIR WHEEL_DIR OUTPUT.zip

The archive holds one folder, ``self-attention-executable/``, with

* ``html/``: the built book; open ``html/index.html`` in a browser, with no
  server and no network (mathematics, search and figures are all inside);
* ``notebooks/``: every chapter as a reader notebook (and in Chinese in
  ``notebooks/zh/``, from ``_build/notebooks/zh/reader``) (the book's text in plain
  Markdown, solutions folded: ``tools/reader_notebooks.py``, from
  ``_build/notebooks/reader``) without its outputs, to run yourself; their
  links to the book lead to ``../html/`` beside them, not to the website, and
  their install cell installs the wheel in ``wheels/`` with ``--no-index``
  (never the network; ``tests/editions/test_bundle_offline.py`` runs one);
* ``wheels/``: the course library ``selfattn`` as a wheel (the release's
  wheelhouse for a system, unzipped here, adds every other package);
* ``requirements.lock``: the versions the book's outputs were made with (the
  authors' environment: a record, not the learner's install);
* ``README.txt``: how to read and how to run it, with no network
  (``--no-index --find-links wheels``) or through a package index.

With ``--student`` it is the student bundle, one folder
``self-attention-executable-student/``: the student edition as ``html/`` (its
PDF included when ``make student-pdf`` put it there) and the student
notebooks (``_build/notebooks/student``), which hold no worked solution.

Everything is written in a fixed order with fixed timestamps, so the same
inputs give the same archive.
"""

from __future__ import annotations

import json
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from reader_notebooks import published_url  # noqa: E402
from repository import OPENING, from_wheel  # noqa: E402

TOP = "self-attention-executable"
EPOCH = (2026, 1, 1, 0, 0, 0)

README = """\
Self-attention, executable: the offline bundle{edition}
==============================================={underline}

Read the book
-------------
Open html/index.html in a web browser (double-click it). It needs no server
and no internet: the mathematics, the search and the figures are inside.{pdf}{chinese}

Run the notebooks
-----------------
You need Python {python} or newer and the packages of the course: the library
selfattn (its wheel is in wheels/: {wheel}) with its extra lab, and
JupyterLab. Supported systems: Linux (x86_64 or arm64), macOS 12 or newer
on Apple silicon, Windows on x64. Intel Macs and Windows on ARM have no
torch 2.5 or newer: use Colab, or a Linux machine.

With no network. Fetch, anywhere, the wheels for your system from the
course's Releases page: self-attention-executable-wheels-<system>-py3.12.zip
(linux, macos for Apple silicon with macOS 14 or newer, windows), for
Python 3.12. Unzip it into wheels/ here. (For another Python or system,
download them on a machine with network, as the book's page "How to run the
notebooks" says, section "Behind a firewall, or offline".) Then, in this
folder:

    python3 -m venv .venv
    .venv/bin/python -m pip install {offline}
    .venv/bin/jupyter lab

On Windows, in PowerShell:

    py -3.12 -m venv .venv
    .venv\\Scripts\\python -m pip install {offline}
    .venv\\Scripts\\jupyter lab

--no-index keeps pip off the network: everything comes from wheels/.

With a package index (PyPI or a mirror; in mainland China, the mirrors of the
book's page "How to run the notebooks"), make the same .venv, then on Linux
first the CPU build of torch, so that pip does not download gigabytes of CUDA
libraries (on macOS and Windows PyPI's torch is the CPU build: skip it):

    .venv/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/cpu

and then, on every system:

    .venv/bin/python -m pip install --find-links wheels "selfattn[lab]" jupyterlab
    .venv/bin/jupyter lab

JupyterLab opens in your browser, in this folder: open notebooks/. Start it
here, not in notebooks/, so that the notebooks' links to the book (html/,
beside them) work. requirements.lock lists the versions the book's outputs
were made with (torch {torch}); you do not need it to run the notebooks.

The notebooks come without outputs: run them top to bottom (Run > Run All
Cells). Each one checks its own claims as it runs, and takes about a minute.
They read like the book: numbers, references and captions are in the text,{solutions}
"""
READER_SOLUTIONS = """
and each worked solution is folded under its exercise (click "Solution")."""
STUDENT_SOLUTIONS = """
and every exercise is there; this edition leaves the worked solutions out."""


OFFLINE = '--no-index --find-links wheels "selfattn[lab]" jupyterlab'  # no network
BESIDE = "../html/"  # the book, from notebooks/ in the bundle


def strip_outputs(
    path: Path, wheel: str, site: str | None = None, depth: int = 1
) -> bytes:
    """The notebook with no outputs and no execution counts; its install cell
    installs the bundle's wheel (``../wheels/...``) alone, never PyPI or the
    repository, so it works offline, and its links to the published book
    (``site``, default: the configured one) lead to the book beside it
    (``../html/``). A notebook ``depth`` folders below the bundle's top
    (the Chinese ones in ``notebooks/zh/``: 2) climbs as many.
    Every other cell unchanged."""
    site = site or published_url()
    up = "../" * depth
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            here = text.replace(f"]({site}", f"]({up}html/")
            if here != text:
                cell["source"] = here.splitlines(keepends=True)
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            source = "".join(cell["source"])
            if source.startswith(OPENING):
                here = from_wheel(source, f"{up}wheels/{wheel}")
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
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pdf = (Path(html_dir) / f"{top}.pdf").is_file()
    title = ", student edition" if student else ""
    readme = README.format(
        edition=title,
        underline="=" * len(title),
        wheel=wheels[0].name,
        torch=pins["torch"],
        offline=OFFLINE,
        python=project["project"]["requires-python"].removeprefix(">="),
        pdf=f"\nThe PDF edition is html/{top}.pdf." if pdf else "",
        solutions=STUDENT_SOLUTIONS if student else READER_SOLUTIONS,
        chinese=""
        if student or not (html / "zh" / "index.html").is_file()
        else "\nThe Chinese edition (中文版): html/zh/index.html, and its notebooks in"
        "\nnotebooks/zh/.",
    )
    with zipfile.ZipFile(output, "w") as zf:
        add(zf, f"{top}/README.txt", readme.encode("utf-8"))
        add(zf, f"{top}/requirements.lock", lock.encode("utf-8"))
        add(zf, f"{top}/wheels/{wheels[0].name}", wheels[0].read_bytes())
        for nb in chapters:
            add(zf, f"{top}/notebooks/{nb.name}", strip_outputs(nb, wheels[0].name))
        # the Chinese edition's reader notebooks, beside its book in html/zh
        chinese = ROOT / "_build" / "notebooks" / "zh" / edition
        for nb in [] if student else sorted(chinese.glob("*.ipynb")):
            data = strip_outputs(nb, wheels[0].name, depth=2)
            add(zf, f"{top}/notebooks/zh/{nb.name}", data)
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
