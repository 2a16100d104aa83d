"""Figures for the course: attention heatmaps, encodings, scaling and training.

Every function draws on an ``ax`` you pass (or on a new figure), returns what
it drew on and never calls ``plt.show()``; importing the module changes no
global matplotlib setting. Colours are chosen for colour-vision deficiency
(CVD):

* ``CMAP = "viridis"`` for non-negative data such as attention weights:
  perceptually uniform, its lightness rises monotonically (it reads in
  greyscale) and it stays ordered for the common CVD types.
* ``DIVERGING_CMAP = "RdBu_r"`` for signed data in ``[-1, 1]`` such as
  sinusoidal encodings: ColorBrewer's red-blue scheme is rated colour-blind
  safe, because red against blue survives protanopia and deuteranopia (unlike
  red against green), and its light centre makes zero neutral.
* ``PALETTE``: the Okabe-Ito qualitative colours for lines, distinguishable
  under all common CVD types; lines also get distinct markers so they never
  rely on colour alone.

Chinese in a figure (a token, a title) needs a font with CJK glyphs, which
matplotlib's default, DejaVu Sans, lacks: every function here lets such text
fall back to ``cjk_font()`` (``cjk_fallback``, which you can call on a figure
drawn by hand too).
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator, NullFormatter

from selfattn.complexity import loglog_slope

__all__ = [
    "CJK_FONTS",
    "CMAP",
    "DIVERGING_CMAP",
    "PALETTE",
    "attention_heatmap",
    "attention_heads",
    "cjk_fallback",
    "cjk_font",
    "graph_attention_plot",
    "loglog_plot",
    "positional_encoding_heatmap",
]

CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"
# Okabe-Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue,
# black, yellow (yellow last: it is the hardest to see on white).
PALETTE = tuple(
    "#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 #F0E442".split()
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_ANNOTATE_MAX = 10  # "auto" annotates matrices up to 10 x 10
# Fonts with Chinese glyphs, in order of preference (Debian: fonts-noto-cjk,
# fonts-wqy-microhei; "JP" is the first face of Noto's .ttc files).
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK JP",
    "Source Han Sans",
    "Microsoft YaHei",
    "SimHei",
    "PingFang SC",
    "Heiti SC",
    "Arial Unicode MS",
)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


@functools.cache
def cjk_font() -> str | None:
    """The name of an installed font with Chinese glyphs (from ``CJK_FONTS``).

    Matplotlib lists the system's fonts once and caches the list on disk, so a
    font installed after matplotlib first ran (on a CI machine, a fresh
    laptop) is not in it, and Chinese shows as empty boxes with a warning
    "Glyph ... missing from font(s) DejaVu Sans". When no font of
    ``CJK_FONTS`` is listed, the system's font files that the list lacks are
    added to it, for this process (the cache on disk is left as it is).

    Returns:
        The font's family name, or None if no such font is installed.
    """

    def listed() -> str | None:
        names = {f.name for f in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in names), None)

    if listed() is None:
        known = {f.fname for f in font_manager.fontManager.ttflist}
        for path in font_manager.findSystemFonts():
            if path not in known:
                with contextlib.suppress(OSError, RuntimeError, ValueError):
                    font_manager.fontManager.addfont(path)
    return listed()


def cjk_fallback(artist: Figure | Axes) -> None:
    """Let the Chinese characters in ``artist``'s texts fall back to ``cjk_font()``.

    Each text with Chinese in it keeps its fonts and gets the CJK font last in
    its family list, which matplotlib uses for the glyphs the others lack.
    Text without Chinese is left as it is; nothing changes where no CJK font
    is installed.

    Args:
        artist: a figure or axes; every text in it is looked at (titles,
            labels, tick labels, legends, annotations).
    """
    texts = [t for t in artist.findobj(Text) if _CJK.search(t.get_text())]
    font = cjk_font() if texts else None
    for text in texts if font else ():
        families = [f for f in text.get_fontfamily() if f != font]
        text.set_fontfamily([*families, font])


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
    if ncols < 1:
        raise ValueError(f"ncols must be at least 1, got {ncols}")
    ncols = min(ncols, H)
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
            text = f"{label} (slope {slopes[label]:.2f})"
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


def graph_attention_plot(
    graph: Any,
    weights: Any,
    *,
    pos: Mapping[Any, Any] | None = None,
    node_colors: Any = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw a graph with its attention: arrow ``j -> i`` is the weight ``w[i, j]``.

    The graph's edges are thin grey lines; each attention weight is an arrow
    from key node ``j`` to query node ``i`` (the value flowing into ``i``)
    whose width and opacity are proportional to the weight. Weights below 1 %
    of the largest and self-weights ``w[i, i]`` are not drawn.

    Args:
        graph: a networkx graph with ``N`` nodes; row/column ``i`` of
            ``weights`` is the ``i``-th node of ``list(graph.nodes)``.
        weights: ``(N, N)`` attention weights, query rows and key columns.
        pos: ``{node: (x, y)}``; ``nx.spring_layout(graph, seed=0)`` if None.
        node_colors: ``N`` integer classes (coloured from ``PALETTE``), ``N``
            matplotlib colours, one colour, or None.
        ax: axes to draw on; a new figure when None.

    Returns:
        The axes.
    """
    import networkx as nx  # imported here: only the graph chapter needs it

    nodes = list(graph.nodes)
    w = _as_array("weights", weights, 2)
    if w.shape != (len(nodes), len(nodes)):
        raise ValueError(
            f"weights has shape {w.shape} but the graph has {len(nodes)} nodes; "
            f"expected ({len(nodes)}, {len(nodes)})"
        )
    pos = nx.spring_layout(graph, seed=0) if pos is None else pos
    if node_colors is None:
        node_colors = "#DDDDDD"
    elif np.issubdtype(np.asarray(node_colors).dtype, np.integer):
        node_colors = [PALETTE[int(c) % len(PALETTE)] for c in node_colors]
    ax = _new_ax(ax, (6.0, 5.0))
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#BBBBBB", width=0.8)
    top = w.max() if w.max() > 0 else 1.0
    pairs = [(i, j) for i, j in np.argwhere(w >= 0.01 * top) if i != j]
    if pairs:
        strength = np.array([w[i, j] / top for i, j in pairs])
        edges = [(nodes[j], nodes[i]) for i, j in pairs]  # key j -> query i
        rgba = [(0.0, 0.0, 0.0, float(s)) for s in strength]  # alpha = strength
        width = list(0.5 + 3.5 * strength)
        arrows = {"arrowsize": 10, "connectionstyle": "arc3,rad=0.15", "ax": ax}
        G = nx.DiGraph(edges)
        nx.draw_networkx_edges(
            G, pos, edgelist=edges, width=width, edge_color=rgba, **arrows
        )
    nx.draw_networkx_nodes(
        graph, pos, ax=ax, node_color=node_colors, edgecolors="black", linewidths=0.5
    )
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=8)
    ax.set_axis_off()
    cjk_fallback(ax.figure)
    return ax
