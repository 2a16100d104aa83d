"""Log-log curves with their fitted slopes: how a cost grows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import NullFormatter

from selfattn.complexity import loglog_slope
from selfattn.lab.fonts import cjk_fallback
from selfattn.lab.plotting._style import (
    _as_array,
    _new_ax,
    _style,
)

__all__ = ["loglog_plot"]


def loglog_plot(
    xs: Any,
    ys_by_label: Mapping[str, Any],
    *,
    ax: Axes | None = None,
    fit: bool = True,
    xlabel: str = "sequence length T",
    ylabel: str = "cost",
    title: str | None = None,
) -> tuple[Axes, dict[str, float]]:
    r"""Plot series on log-log axes and fit each one's slope (its growth exponent).

    A power law :math:`y = c\,x^p` is a line of slope :math:`p` in log-log
    space; the slope is the least-squares fit of :math:`\log y` on
    :math:`\log x` (:func:`selfattn.complexity.loglog_slope`), shown in the
    legend as ``"label (slope 2.01)"``.

    Args:
        xs: ``(n,)`` positive x values shared by all series.
        ys_by_label: ``{label: (n,) positive y values}``.
        ax: axes to draw on; a new figure when None.
        fit: fit and report the slopes.
        xlabel, ylabel, title: axis labels and title.

    Returns:
        ``(ax, slopes)`` with ``slopes = {label: slope}`` (empty if not ``fit``).
    """
    x = _as_array("xs", xs, 1)
    if (x <= 0).any():
        raise ValueError(f"xs must be positive on log axes, got min {x.min()}")
    if fit and np.unique(x).size < 2:
        raise ValueError("xs needs at least two distinct values to fit a slope")
    ax = _new_ax(ax, (5.0, 3.5))
    slopes: dict[str, float] = {}
    for i, (label, ys) in enumerate(ys_by_label.items()):
        y = _as_array(f"ys_by_label[{label!r}]", ys, 1)
        if y.shape != x.shape:
            raise ValueError(
                f"ys_by_label[{label!r}] has shape {y.shape} but xs has {x.shape}"
            )
        if (y <= 0).any():
            raise ValueError(f"ys_by_label[{label!r}] must be positive on log axes")
        text = str(label)
        if fit:
            slopes[label] = loglog_slope(x, y)
            shown = round(slopes[label], 2) + 0.0  # a slope of -0.001: "0.00"
            text = f"{label} (slope {shown:.2f})"
        ax.plot(x, y, label=text, **_style(i))
    ax.set_xscale("log")
    ax.set_yscale("log")
    if np.unique(x).size <= 8:  # label the measured sizes, not 3x10^2
        ax.set_xticks(x, [f"{v:g}" for v in x])
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    if ys_by_label:
        ax.legend()
    cjk_fallback(ax.figure)
    return ax, slopes
