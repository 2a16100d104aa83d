"""Helpers for the chapter notebooks that must work both in the book and on Colab.

Numbers quoted in a chapter's prose are *glued* from the computation with
MyST-NB, so the text cannot drift from the code. MyST-NB is installed in the
course environment but not on Colab; :func:`glue` works in both.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["glue"]

T = TypeVar("T")


def glue(name: str, value: T, display: bool = False) -> T:
    """Store ``value`` under ``name`` for MyST-NB's ``{glue}`` role in the text.

    Calls ``myst_nb.glue(name, value, display)`` when MyST-NB is importable;
    without it (e.g. on Colab) it does nothing, so the notebook still runs.
    Either way the value is returned, so a cell can glue and use it at once::

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
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return value
    # numpy / torch scalars print as ``np.float64(0.5)``, which MyST-NB's
    # number formats (``{glue:text}`x:.2f` ``) cannot parse: glue the Python number.
    stored = value.item() if hasattr(value, "item") and _is_scalar(value) else value
    myst_glue(name, stored, display=display)
    return value


def _is_scalar(value: object) -> bool:
    """True for numpy scalars and one-element tensors/arrays."""
    size = getattr(value, "size", None)
    size = size() if callable(size) else size
    return getattr(value, "ndim", None) == 0 or size in (1, (1,))
