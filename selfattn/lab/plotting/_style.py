"""The colours and small helpers every figure of the course shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"
# Okabe-Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue,
# black, yellow (yellow last: it is the hardest to see on white).
PALETTE = tuple(
    "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442".split()
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_ANNOTATE_MAX = 10  # "auto" annotates matrices up to 10 x 10


def _as_array(name: str, x: Any, ndim: int) -> np.ndarray:
    """``x`` (tensor or array-like) as a finite float numpy array of ``ndim`` dims."""
    if hasattr(x, "detach"):  # a torch.Tensor, without importing torch here
        x = x.detach().cpu().float().numpy()
    a = np.asarray(x, dtype=float)
    if a.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty (shape {a.shape})")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinity (shape {a.shape})")
    return a


def _style(i: int) -> dict[str, str]:
    """Colour and marker of the ``i``-th line (never colour alone)."""
    return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}


def _new_ax(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    return plt.subplots(figsize=figsize)[1] if ax is None else ax


def _set_ticks(ax: Axes, axis: str, n: int, labels: Sequence[Any] | None) -> None:
    """One tick per row/column, labelled with the tokens when given."""
    which = ax.xaxis if axis == "x" else ax.yaxis
    if labels is None and n > 20:  # a few integer ticks, chosen by matplotlib
        which.set_major_locator(MaxNLocator(integer=True))
        return
    text = [str(t) for t in (range(n) if labels is None else labels)]
    which.set_ticks(np.arange(n), text)
    if axis == "x" and (max(len(t) for t in text) > 2 or n > 12):  # rotate long ones
        for label in which.get_ticklabels():
            label.set(rotation=45, horizontalalignment="right", rotation_mode="anchor")
