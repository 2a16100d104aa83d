"""Each query's favourite key (the ``argmax`` of its row), side by side for
several attention functions: static attention (Brody et al., 2022) shows as
one column of rings, dynamic attention as rings that move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects
from matplotlib.figure import Figure

import selfattn.lab.diagrams._draw as d
from selfattn.lab.plotting import CMAP

# the ring of each row's favourite: white with a black halo, visible on any
# viridis cell, dark or bright
_HALO = [patheffects.withStroke(linewidth=4, foreground="black")]


def _weights(name: str, w: Any) -> np.ndarray:
    """``w`` as a 2-D float array; errors name the panel."""
    if hasattr(w, "detach"):
        w = w.detach().cpu().numpy()
    w = np.asarray(w, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"weights of {name!r} must be 2-D (T_q, T_k), got {w.shape}")
    return w


def favourite_stats(weights: Any, targets: Sequence[int] | None = None) -> dict:
    """What :func:`~selfattn.lab.diagrams.favourite_keys` writes in a panel's title.

    Args:
        weights: ``(T_q, T_k)``; row ``i`` is query ``i``'s weights.
        targets: the key each query should pick, or None.

    Returns:
        ``"favourites"``: the argmax of each row; ``"distinct"``: how many
        different ones; ``"on_target"``: how many are their query's target
        (None without targets).
    """
    w = _weights("weights", weights)
    fav = w.argmax(axis=1)
    hits = None if targets is None else int((fav == np.asarray(targets)).sum())
    return {"favourites": fav, "distinct": len(set(fav.tolist())), "on_target": hits}


def favourite_keys(
    weights: Mapping[str, Any],
    *,
    queries: Sequence[Any] | None = None,
    keys: Sequence[Any] | None = None,
    targets: Sequence[int] | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
) -> Figure:
    """Heatmaps of attention weights, one per function, each row's favourite ringed.

    Args:
        weights: ``{title: (T_q, T_k) weights}``, all of one shape, one panel
            each (e.g. ``{"GAT": ..., "GATv2": ...}``); row ``i`` is query ``i``.
        queries, keys: labels for the rows and the columns.
        targets: for each query the key it should pick (a vermillion dot).
        xlabel, ylabel: the axis labels.

    Returns:
        The figure; ``fig.axes[p]`` is panel ``p`` (its ``images[0]`` holds the
        weights), titled with its number of distinct favourites and how many
        are on target; the colour bar comes last.
    """
    if not weights:
        raise ValueError("weights must hold at least one panel")
    arrays = {name: _weights(name, w) for name, w in weights.items()}
    shape = next(iter(arrays.values())).shape
    for name, w in arrays.items():
        if w.shape != shape:
            raise ValueError(f"weights of {name!r} have shape {w.shape}, not {shape}")
    T_q, T_k = shape
    for what, labels, n in (("queries", queries, T_q), ("keys", keys, T_k)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{what} has {len(labels)} labels, the weights need {n}")
    if targets is not None:
        t = np.asarray(targets)
        if t.shape != (T_q,) or t.min() < 0 or t.max() >= T_k:
            raise ValueError(f"targets must be {T_q} key indices in [0, {T_k})")
    P = len(arrays)
    side = min(0.8 + 0.5 * max(T_q, T_k), 4.2)
    size = (side * P + 1.2, side + 0.9)
    fig, axes = plt.subplots(1, P, figsize=size, squeeze=False, layout="constrained")
    fig.set_facecolor("white")
    vmax = max(float(w.max()) for w in arrays.values()) or 1.0
    for ax, (name, w) in zip(axes[0], arrays.items(), strict=True):
        im = ax.imshow(w, cmap=CMAP, vmin=0.0, vmax=vmax, interpolation="nearest")
        stats = favourite_stats(w, targets)
        rows = np.arange(T_q)
        ring = dict(s=420, facecolors="none", edgecolors="white", linewidths=2)
        ax.scatter(stats["favourites"], rows, path_effects=_HALO, **ring)
        if targets is not None:
            ax.scatter(np.asarray(targets), rows, s=40, color=d.VERMILLION, zorder=3)
        ax.set_xticks(np.arange(T_k), [str(k) for k in (keys or range(T_k))])
        ax.set_yticks(rows, [str(q) for q in (queries or range(T_q))])
        ax.set(xlabel=xlabel, ylabel=ylabel)
        n = stats["distinct"]
        title = f"{name}\n{n} distinct favourite{'s' if n > 1 else ''}"
        if targets is not None:
            title += f", {stats['on_target']} of {T_q} on target"
        ax.set_title(title, size=d.SMALL)
    fig.colorbar(im, ax=list(axes[0]), label="attention weight", shrink=0.85)
    ring = dict(mfc="none", mec="white", mew=2, path_effects=_HALO)
    key = [d.mark("each query's favourite key", ls="", marker="o", ms=12, **ring)]
    if targets is not None:
        dot = dict(ls="", marker="o", ms=6, color=d.VERMILLION)
        key.append(d.mark("the key it should pick", **dot))
    d.legend(fig, key, 2, loc="outside lower center")
    return fig
