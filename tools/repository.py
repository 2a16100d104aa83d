"""The course's repository URL: one place (``_config.yml``), every copy made from it.

Usage::

    python tools/repository.py set https://github.com/you/self-attention-executable
    python tools/repository.py sync        # rewrite every copy from _config.yml
    python tools/repository.py check       # exit 1 if a copy is stale
    python tools/repository.py published   # exit 1 while the URL is the placeholder

The URL lives in ``_config.yml`` (``repository.url``: the book's repository,
launch and issue buttons). A notebook opened in Colab cannot read that file,
so the first cell of every notebook (the install cell, tagged ``remove-cell``)
carries the URL, and ``book/how-to-run.md`` shows that cell. Those copies are
written by this tool and checked by ``tests/test_repository.py``; nobody edits
them by hand. The install cell installs from ``$SELFATTN_SOURCE`` when it is
set (the tests point it at a local copy of the repository).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
HOW_TO_RUN = ROOT / "book" / "how-to-run.md"
PLACEHOLDER = "OWNER"

INSTALL_CELL = """\
# Install the course library when it is missing (e.g. on Colab); else a no-op.
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("selfattn") is None:
    url = "git+{url}"
    source = os.environ.get("SELFATTN_SOURCE", url)  # tests: a local copy
    pip = [sys.executable, "-m", "pip", "install", "-q", source]
    subprocess.run(pip, check=True)"""
FIRST_LINE = INSTALL_CELL.splitlines()[0]
BLOCK = re.compile(r"```python\n" + re.escape(FIRST_LINE) + r"\n.*?\n```", re.S)


def url() -> str:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["repository"]["url"]


def install_cell(repo_url: str) -> str:
    return INSTALL_CELL.format(url=repo_url)


def notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def _install_cell_index(cells: list[dict]) -> int:
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            if "".join(cell["source"]).startswith(FIRST_LINE):
                return i
            break
    raise ValueError("the first code cell is not the install cell")


def stale(repo_url: str | None = None) -> list[str]:
    """The copies that differ from what ``repo_url`` (default: the config's) gives."""
    want = install_cell(repo_url or url())
    out = []
    for path in notebooks():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        try:
            if "".join(cells[_install_cell_index(cells)]["source"]) != want:
                out.append(path.relative_to(ROOT).as_posix())
        except ValueError:
            out.append(path.relative_to(ROOT).as_posix() + " (no install cell)")
    blocks = BLOCK.findall(HOW_TO_RUN.read_text(encoding="utf-8"))
    if blocks != [f"```python\n{want}\n```"]:
        out.append(HOW_TO_RUN.relative_to(ROOT).as_posix())
    return out


def sync() -> None:
    """Rewrite every copy from the URL in ``_config.yml``."""
    want = install_cell(url())
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        cell = nb.cells[_install_cell_index(nb.cells)]
        if cell.source != want:
            cell.source = want
            nbformat.write(nb, path)
    page = HOW_TO_RUN.read_text(encoding="utf-8")
    page = BLOCK.sub(lambda _: f"```python\n{want}\n```", page)
    HOW_TO_RUN.write_text(page, encoding="utf-8")


def set_url(repo_url: str) -> None:
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repo_url):
        raise SystemExit(f"expected https://github.com/OWNER/REPO, got {repo_url!r}")
    text = CONFIG.read_text(encoding="utf-8")
    new, n = re.subn(
        r"(?m)^(repository:\n(?:  #.*\n)*  url: ).*$",
        lambda m: m.group(1) + repo_url,
        text,
    )
    if n != 1:
        raise SystemExit("could not find repository.url in _config.yml")
    CONFIG.write_text(new, encoding="utf-8")
    sync()


def main(argv: list[str]) -> int:
    match argv:
        case ["set", repo_url]:
            set_url(repo_url)
        case ["sync"]:
            sync()
        case ["check"]:
            if bad := stale():
                print(
                    "stale copies of the repository URL (run tools/repository.py sync):"
                )
                print("\n".join(f"  {b}" for b in bad))
                return 1
        case ["published"]:
            if PLACEHOLDER in url():
                print(
                    f"repository.url in _config.yml is the placeholder {url()}: set it"
                )
                print("with `make repository URL=https://github.com/you/repo` first.")
                return 1
        case _:
            print(__doc__)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
