"""Re-execute chapter notebooks in place so their committed outputs are fresh.

Usage: python tools/execute_notebooks.py notebooks/a.ipynb [notebooks/b.ipynb ...]

Each notebook runs top to bottom in one fresh kernel (the current environment's
Python), with the notebooks folder as working directory, exactly as nbval and
the book build run it. Volatile metadata (execution timestamps) is dropped so
diffs show only real changes, and the pieces of one printed line that the
kernel flushed separately (under load, ``print("ok:", True)`` can arrive as
"ok:" and " True") are joined, as the book and nbval join them. Prints how
long each notebook took.

Every figure is stored twice: as PNG, which the HTML book and Jupyter show,
and as PDF, a vector drawing, which the PDF edition prints (myst-nb's LaTeX
builder prefers ``application/pdf``), instead of a 100 dpi picture. Its fonts
are embedded as TrueType (``pdf.fonttype`` 42: text stays text), and
``SOURCE_DATE_EPOCH`` fixes its date, so an unchanged figure stays unchanged.
nbval compares neither copy (the root ``conftest.py``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# The kernel's figure formats (the module docstring says why).
KERNEL_ARGUMENTS = [
    "--InlineBackend.figure_formats=png",
    "--InlineBackend.figure_formats=pdf",
    "--InlineBackend.rc={'pdf.fonttype': 42}",
    # fontTools logs "'created' timestamp seems very low" to stderr while it
    # subsets a mathtext font for the PDF copy (the font's own date, whatever
    # SOURCE_DATE_EPOCH says); a chapter's stderr fails the strict book build
    "--IPKernelApp.exec_lines=import logging; "
    "logging.getLogger('fontTools').setLevel(logging.ERROR)",
]


def join_streams(outputs: list) -> list:
    """Consecutive stream outputs of one stream (stdout, stderr), joined."""
    joined: list = []
    for out in outputs:
        prev = joined[-1] if joined else None
        if (
            out.get("output_type") == "stream"
            and prev is not None
            and prev.get("output_type") == "stream"
            and prev.get("name") == out.get("name")
        ):
            prev["text"] = prev["text"] + out["text"]
        else:
            joined.append(out)
    return joined


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        extra_arguments=KERNEL_ARGUMENTS,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = join_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    os.environ["SOURCE_DATE_EPOCH"] = "0"  # the kernel's figures carry no date
    total = 0.0
    for p in paths:
        seconds = execute(Path(p))
        total += seconds
        print(f"{seconds:6.1f} s  {p}", flush=True)
    print(f"{total:6.1f} s  total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
