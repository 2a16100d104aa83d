"""Re-execute chapter notebooks in place so their committed outputs are fresh.

Usage: python tools/execute_notebooks.py notebooks/a.ipynb [notebooks/b.ipynb ...]

Each notebook runs top to bottom in one fresh kernel (the current environment's
Python), with the notebooks folder as working directory, exactly as nbval and
the book build run it. Volatile metadata (execution timestamps) is dropped so
diffs show only real changes. Prints how long each notebook took.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


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
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    total = 0.0
    for p in paths:
        seconds = execute(Path(p))
        total += seconds
        print(f"{seconds:6.1f} s  {p}", flush=True)
    print(f"{total:6.1f} s  total")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
