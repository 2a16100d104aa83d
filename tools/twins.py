"""Each chapter's text twin: ``notebooks/twins/<chapter>.md``, written from it.

Usage::

    python tools/twins.py write    # every notebooks/*.ipynb -> its twin
    python tools/twins.py check    # exit 1 naming every twin out of date

A chapter is a notebook stored with its outputs (JSON), so a change to it
reads badly as a diff. Its twin is the same chapter as MyST Markdown
(jupytext's ``md:myst``): the prose, the code cells, their tags and figure
metadata (captions, alt text), and no outputs. The notebook is the source;
the twin is regenerated from it (``make twins``) and committed beside it, so a
pull request shows the change as text, and ``make test`` fails when a twin is
out of date (tests/course/test_twins.py). ``jupytext.toml`` pairs the two for
authors who edit in JupyterLab with jupytext; the filters there and here are
the same. The book builds only the files in ``_toc.yml``, so the twins are
never pages of it.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TWINS = NOTEBOOKS / "twins"
CONFIG = tomllib.loads((ROOT / "jupytext.toml").read_text(encoding="utf-8"))


def twin_of(notebook: Path) -> Path:
    return TWINS / f"{notebook.stem}.md"


def twin_text(notebook: Path) -> str:
    """The twin's text: the notebook as MyST Markdown, filtered as in jupytext.toml."""
    nb = jupytext.read(notebook)
    nb.metadata["jupytext"] = {
        "notebook_metadata_filter": CONFIG["notebook_metadata_filter"],
        "cell_metadata_filter": CONFIG["cell_metadata_filter"],
    }
    return jupytext.writes(nb, fmt="md:myst")


def chapters() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def stale() -> list[str]:
    """The twins that are missing, out of date, or without a chapter."""
    bad = [
        str(twin_of(nb).relative_to(ROOT))
        for nb in chapters()
        if not twin_of(nb).is_file()
        or twin_of(nb).read_text(encoding="utf-8") != twin_text(nb)
    ]
    orphans = {p.stem for p in TWINS.glob("*.md")} - {nb.stem for nb in chapters()}
    return bad + [f"notebooks/twins/{name}.md (no chapter)" for name in sorted(orphans)]


def write() -> None:
    TWINS.mkdir(exist_ok=True)
    for nb in chapters():
        twin_of(nb).write_text(twin_text(nb), encoding="utf-8")
    for twin in TWINS.glob("*.md"):
        if not (NOTEBOOKS / f"{twin.stem}.ipynb").is_file():
            twin.unlink()


def main(argv: list[str]) -> int:
    if argv[1:] == ["write"]:
        write()
        return 0
    if argv[1:] == ["check"]:
        bad = stale()
        for name in bad:
            print(f"out of date: {name} (run make twins)")
        return 1 if bad else 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
