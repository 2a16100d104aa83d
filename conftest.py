"""nbval (``make notebooks``) compares every output with the committed one,
except the figures: their PNG (nbval's own rule) and their PDF copy, which
``tools/execute_notebooks.py`` stores for the PDF edition. Both are drawn
from numbers that move in their last bits between machines and kernels;
what a figure shows is checked by the chapter's asserts and claims.
"""

from __future__ import annotations

FIGURES = ("image/png", "application/pdf")


def pytest_collection_modifyitems(items: list) -> None:
    for item in items:
        notebook = getattr(item, "parent", None)
        skip = getattr(notebook, "skip_compare", None)
        if isinstance(skip, tuple):  # an nbval cell
            notebook.skip_compare = skip + tuple(f for f in FIGURES if f not in skip)
