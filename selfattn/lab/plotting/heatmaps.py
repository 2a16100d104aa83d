"""Heatmaps: attention weights (one head or several) and positional encodings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from selfattn._checks import check_int
from selfattn.lab.fonts import cjk_fallback
from selfattn.lab.plotting._style import (
    _ANNOTATE_MAX,
    CMAP,
    DIVERGING_CMAP,
    _as_array,
    _new_ax,
    _set_ticks,
)

__all__ = ["attention_heatmap", "attention_heads", "positional_encoding_heatmap"]


def attention_heatmap(
    weights: Any,
    *,
    queries: Sequence[Any] | None = None,
    keys: Sequence[Any] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool | str = "auto",
    vmin: float = 0.0,
    vmax: float | None = None,
    colorbar: bool = True,
    cmap: Any = CMAP,
    cbar_label: str = "attention weight",
) -> Axes:
    """Draw an attention matrix: one row per query, one column per key.

    Row ``i`` shows how query ``i`` spreads its weight over the keys, so with
    softmax weights every row sums to 1.

    Args:
        weights: ``(T_q, T_k)`` tensor or array.
        queries: ``T_q`` labels for the rows (y axis), e.g. the query tokens.
        keys: ``T_k`` labels for the columns (x axis); rotated when long.
        ax: axes to draw on; a new figure when None.
        title: axes title.
        annotate: write each value (2 decimals) in its cell; ``"auto"`` does so
            when both ``T_q`` and ``T_k`` are at most 10.
        vmin, vmax: colour range; ``vmax=None`` uses the largest weight.
        colorbar: add a colour bar labelled ``cbar_label``.
        cmap: colormap (``CMAP`` by default).

    Returns:
        The axes; ``ax.images[0].get_array()`` holds ``weights``.
    """
    w = _as_array("weights", weights, 2)
    T_q, T_k = w.shape
    for name, labels, n in (("queries", queries, T_q), ("keys", keys, T_k)):
        if labels is not None and len(labels) != n:
            raise ValueError(
                f"{name} has {len(labels)} labels but weights of shape "
                f"({T_q}, {T_k}) need {n}"
            )
    if annotate not in (True, False, "auto"):
        raise ValueError(f"annotate must be True, False or 'auto', got {annotate!r}")
    if vmax is None:
        vmax = float(w.max()) if w.max() > vmin else vmin + 1.0
    ax = _new_ax(ax, (min(1.0 + 0.45 * T_k, 9.0), min(0.8 + 0.45 * T_q, 8.0)))
    im = ax.imshow(w, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    _set_ticks(ax, "x", T_k, keys)
    _set_ticks(ax, "y", T_q, queries)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title is not None:
        ax.set_title(title)
    if annotate is True or (annotate == "auto" and max(T_q, T_k) <= _ANNOTATE_MAX):
        for (i, j), value in np.ndenumerate(w):
            r, g, b, _ = im.cmap(im.norm(value))
            dark = 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5  # relative luminance
            color = "white" if dark else "black"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", size=8, c=color)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label=cbar_label)
    cjk_fallback(ax.figure)
    return ax


def attention_heads(
    weights: Any,
    *,
    tokens: Sequence[Any] | None = None,
    ncols: int = 4,
    suptitle: str | None = None,
) -> Figure:
    """Draw one heatmap per head on a grid, with one shared colour scale.

    Args:
        weights: ``(H, T_q, T_k)`` tensor or array (one batch element).
        tokens: labels for queries and keys (self-attention, ``T_q = T_k``).
        ncols: heads per row of the grid.
        suptitle: figure title.

    Returns:
        The figure; ``fig.axes[h - 1]`` is head ``h``, titled "head h" with
        heads numbered from 1 as in the book (the colour bar comes last).
    """
    w = _as_array("weights", weights, 3)
    H, T_q, T_k = w.shape
    ncols = min(check_int("ncols", ncols), H)
    nrows = -(-H // ncols)  # ceil(H / ncols)
    size = min(0.8 + 0.3 * max(T_q, T_k), 3.5)  # inches per panel
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(size * ncols + 1.0, size * nrows), squeeze=False
    )
    vmax = float(w.max()) if w.max() > 0 else 1.0  # one scale for all heads
    shared = {"queries": tokens, "keys": tokens, "vmax": vmax, "colorbar": False}
    for h, ax in enumerate(axes.flat):
        if h >= H:
            fig.delaxes(ax)
            continue
        attention_heatmap(w[h], ax=ax, title=f"head {h + 1}", annotate=False, **shared)
        if h % ncols:
            ax.set_ylabel("")
        if h + ncols < H:
            ax.set_xlabel("")
    used = list(axes.flat[:H])
    fig.colorbar(used[0].images[0], ax=used, label="attention weight")
    if suptitle is not None:
        fig.suptitle(suptitle)
    cjk_fallback(fig)
    return fig


def positional_encoding_heatmap(
    P: Any, *, ax: Axes | None = None, title: str | None = None, colorbar: bool = True
) -> Axes:
    """Draw a positional-encoding table: positions down, dimensions across.

    Args:
        P: ``(num_positions, dim)`` tensor or array with values in ``[-1, 1]``
            (e.g. sinusoidal encodings, Vaswani et al., 2017, section 3.5).
        ax: axes to draw on; a new figure when None.
        title: axes title.
        colorbar: add a colour bar.

    Returns:
        The axes, drawn with ``DIVERGING_CMAP`` from -1 to 1.
    """
    p = _as_array("P", P, 2)
    ax = _new_ax(ax, (6.0, 4.0))
    im = ax.imshow(p, cmap=DIVERGING_CMAP, vmin=-1.0, vmax=1.0, aspect="auto")
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    if title is not None:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="value")
    cjk_fallback(ax.figure)
    return ax
