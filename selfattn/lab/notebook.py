"""Helpers for the chapter notebooks that must work both in the book and on Colab.

Numbers quoted in a chapter's prose are *glued* from the computation for
MyST-NB, so the text cannot drift from the code. MyST-NB is installed in the
course environment but not on Colab; :func:`glue` works in both.
"""

from __future__ import annotations

import importlib.util
from typing import TypeVar

__all__ = ["glue"]

GLUE_PREFIX = "application/papermill.record/"  # MyST-NB's mark of a hidden value

T = TypeVar("T")


def glue(name: str, value: T, display: bool = False) -> T:
    """Store ``value`` under ``name`` for MyST-NB's ``{glue}`` role in the text.

    Stores the value as MyST-NB's ``glue`` does (the same display bundle, so
    the book reads it the same way), without importing MyST-NB, whose import
    costs seconds per notebook. When MyST-NB is not installed (e.g. on Colab)
    it does nothing, so the notebook still runs. Either way the value is
    returned, so a cell can glue and use it at once::

        ratio = glue("speedup", round(t_naive / t_flash, 1))

    Args:
        name: the key used in the text, unique within the notebook.
        value: any object; the book shows its plain-text (or rich) display.
            A numpy or torch scalar is stored as the Python number it holds.
        display: also show the value as the cell's output (MyST-NB's default
            is True; here it is False so cells stay quiet).

    Returns:
        ``value`` itself.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if importlib.util.find_spec("myst_nb") is None:
        return value  # no book to glue into
    try:  # here: IPython is not a dependency of the lab extra (a kernel has it)
        from IPython.core.formatters import format_display_data
        from IPython.display import display as ipy_display
    except ImportError:
        return value
    # numpy / torch scalars print as ``np.float64(0.5)``, which MyST-NB's
    # number formats (``{glue:text}`x:.2f` ``) cannot parse: glue the Python number.
    stored = value.item() if hasattr(value, "item") and _is_scalar(value) else value
    # As myst_nb.ext.glue.glue: a raw display bundle whose MIME types carry
    # the papermill prefix when hidden, named in the "scrapbook" metadata.
    bundle, metadata = format_display_data(stored)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
    return value


def _is_scalar(value: object) -> bool:
    """True for numpy scalars and one-element tensors/arrays."""
    size = getattr(value, "size", None)
    size = size() if callable(size) else size
    return getattr(value, "ndim", None) == 0 or size in (1, (1,))
