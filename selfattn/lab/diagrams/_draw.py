"""The drawing primitives shared by :mod:`selfattn.lab.diagrams` (private): a
figure reads ``d.matrix(...)``, ``d.arrow(..., "softmax")``,
``d.legend(fig, [...])``; a colour argument also takes a role of ``ROLE``."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap, to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle

from selfattn.lab.plotting import PALETTE

BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK, YELLOW = PALETTE
GREY = "#999999"  # neutral: edges and cells that carry no code
FONT = 13  # labels; at 10 inches wide a 700-pixel page shows them at ~9 pt
SMALL = 11  # shapes and notes
LABELS_IN = 1.0  # inches between two stacked matrices: symbol above, shape below
MAX_WIDTH = 7.0  # points: the line width of a link that carries a weight of 1
# one colour per role, in every figure
ROLE = dict(input=GREY, query=BLUE, key=VERMILLION, value=GREEN)
ROLE |= dict(score=ORANGE, weight=ORANGE, output=PURPLE)


def hue(c: str) -> str:
    """The colour of role ``c`` (a key of ``ROLE``), or ``c`` itself."""
    return ROLE.get(c, c) if isinstance(c, str) else c


def fill(c: str, alpha: float = 0.3) -> tuple[float, float, float, float]:
    """A light fill of colour or role ``c`` (the outline keeps the full colour)."""
    return to_rgba(hue(c), alpha)


def figure(size, rows: int = 1, cols: int = 1, **adjust) -> tuple[Figure, object]:
    """A white figure of ``size`` inches, ``rows x cols`` axes placed by
    ``subplots_adjust(**adjust)``."""
    fig, axes = plt.subplots(rows, cols, figsize=size, facecolor="white")
    fig.subplots_adjust(**adjust)
    return fig, axes


def canvas(width: float, xlim, ylim, *, top=0.5, bottom=0.5) -> tuple[Figure, Axes]:
    """A white figure ``width`` inches wide, one frameless axes showing ``xlim``
    x ``ylim`` at equal aspect, ``top`` and ``bottom`` inches left free."""
    (x0, x1), (y0, y1) = xlim, ylim
    height = width * (y1 - y0) / (x1 - x0) + top + bottom
    fig, ax = plt.subplots(figsize=(width, height), facecolor="white")
    fig.subplots_adjust(left=0, right=1, bottom=bottom / height, top=1 - top / height)
    ax.set_facecolor("white")
    panel(ax, xlim, ylim, equal=True)
    return fig, ax


def panel(ax: Axes, xlim, ylim, *, equal: bool = False, title: str = "", **kw) -> None:
    """Make ``ax`` a frameless panel of ``xlim`` x ``ylim``, maybe titled."""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    if equal:
        ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, **kw)


def segments(ax: Axes, segments: list[tuple[float, ...]], **style) -> None:
    """Draw segments ``(x0, y0, x1, y1)`` as one line, broken by NaNs (fast)."""
    xs = [v for x0, _, x1, _ in segments for v in (x0, x1, np.nan)]
    ys = [v for _, y0, _, y1 in segments for v in (y0, y1, np.nan)]
    ax.plot(xs, ys, **style)


def tex(dims: str) -> str:
    """``"T × d_k"`` as mathtext, ``"$T \\times d_k$"``: subscripts set as such."""
    return "$" + dims.replace(" × ", r" \times ") + "$"


def text(ax: Axes, x: float, y: float, s: str, size: int = SMALL, **kw) -> None:
    """``s`` centred at ``(x, y)`` (``ha``, ``va`` and the rest as keywords)."""
    ax.text(x, y, s, **({"ha": "center", "va": "center", "size": size} | kw))


def matrix(
    ax: Axes,
    center,
    shape,
    cell,
    color,
    *,
    symbol="",
    dims="",
    note="",
    col_colors=None,
) -> tuple[float, float, float, float]:
    """A ``rows x cols`` grid of cells of colour or role ``color`` at ``center``,
    ``symbol`` above, ``dims`` (``"T × d_k"``), the shape and ``note`` below,
    ``col_colors`` one per column. Returns its ``(left, bottom, right, top)``."""
    c, (rows, cols) = hue(color), shape
    w, h = cols * cell, rows * cell
    x0, y0 = center[0] - w / 2, center[1] - h / 2
    if col_colors is None:
        ax.add_artist(Rectangle((x0, y0), w, h, fc=fill(c), ec="none"))
    else:
        start = 0
        for n in range(1, cols + 1):  # one patch per run of equal colours
            if n == cols or col_colors[n] != col_colors[start]:
                xy, wc = (x0 + start * cell, y0), (n - start) * cell
                ax.add_artist(Rectangle(xy, wc, h, fc=fill(col_colors[start], 0.45)))
                start = n
    if max(rows, cols) <= 24:  # cell lines while they stay visible
        lines = [(x0 + n * cell, y0, x0 + n * cell, y0 + h) for n in range(1, cols)]
        lines += [(x0, y0 + r * cell, x0 + w, y0 + r * cell) for r in range(1, rows)]
        segments(ax, lines, color=c, lw=0.5, alpha=0.6)
    ax.add_artist(Rectangle((x0, y0), w, h, fc="none", ec=c, lw=1.6))
    pad = dict(boxstyle="square,pad=0.05", fc="white", ec="none")  # over arrows
    if symbol:
        top = dict(va="bottom", bbox=pad, zorder=4)
        text(ax, center[0], y0 + h + 0.12, symbol, FONT, **top)
    if dims:
        s = f"{tex(dims)}\n({rows} × {cols})" + (f"\n{note}" if note else "")
        text(ax, center[0], y0 - 0.12, s, va="top", bbox=pad, zorder=4)
    return x0, y0, x0 + w, y0 + h


def row(ax: Axes, box, y: float, h: float, **style) -> None:
    """A rectangle across ``box`` (as ``matrix`` returns) from ``y`` to ``y + h``."""
    ax.add_artist(Rectangle((box[0], y), box[2] - box[0], h, **style))


def cells(ax: Axes, codes, colors: list, *, grid: str | None = GREY) -> None:
    """Integer ``codes`` as cells of ``colors[code]``, lines of colour ``grid``."""
    cmap = ListedColormap(colors)
    vmax = len(colors) - 0.5
    ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=vmax, interpolation="nearest")
    if grid is not None:
        rows, cols = np.shape(codes)
        ax.set_xticks(np.arange(cols + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(rows + 1) - 0.5, minor=True)
        ax.grid(which="minor", color=grid, lw=0.6)
        ax.tick_params(which="minor", length=0)


def arrow(
    ax: Axes,
    start,
    end,
    label="",
    *,
    color=BLACK,
    where=0.5,
    rad=0.0,
    size=SMALL,
    above=False,
    **style,
) -> None:
    """An arrow of colour or role ``color``, bent by ``rad``, ``label`` on white
    at ``where`` (or above the arrow); ``style`` overrides the defaults."""
    base = dict(arrowstyle="-|>", mutation_scale=14, color=hue(color), lw=1.3)
    bend = dict(shrinkA=2, shrinkB=2, connectionstyle=f"arc3,rad={rad}")
    ax.add_artist(FancyArrowPatch(start, end, **(base | bend | style)))
    if label:
        x = start[0] + where * (end[0] - start[0])
        y = start[1] + where * (end[1] - start[1])
        pad = dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.9)
        va = "bottom" if above else "center"
        y += 0.08 if above else 0.0
        ax.text(x, y, label, ha="center", va=va, size=size, bbox=pad)


def chain(ax: Axes, boxes: list, labels: list[str], **kw) -> None:
    """Arrows along ``y = 0`` from each box to the next, ``labels`` on them."""
    ends = [(b[2] + 0.05, 0) for b in boxes[:-1]]
    starts = [(b[0] - 0.05, 0) for b in boxes[1:]]
    for end, start, label in zip(ends, starts, labels, strict=True):
        arrow(ax, end, start, label, **kw)


def box(
    ax: Axes, x: float, y: float, s: str, color: str, w: float, h: float, size=FONT
) -> None:
    """A rounded box of colour or role ``color`` centred at (x, y), ``s`` in it."""
    xy, c = (x - w / 2, y - h / 2), hue(color)
    style = dict(boxstyle="round,pad=0.03", fc=fill(c, 0.35), ec=c, lw=1.6, zorder=3)
    ax.add_patch(FancyBboxPatch(xy, w, h, **style))
    text(ax, x, y, s, size, zorder=4)


def link(ax: Axes, start, end, *, color=BLACK, lw=1.2, ls="-", head=True, gid=None):
    """A thin arrow (or a line) between boxes; a weight's gets ``lw=width(w)``
    and a ``gid`` that a test reads back."""
    style = dict(color=hue(color), lw=lw, ls=ls, shrinkA=3, shrinkB=3, zorder=2)
    tip = "-|>" if head else "-"
    bend = dict(mutation_scale=12, connectionstyle="arc3,rad=0.0")
    ax.add_artist(FancyArrowPatch(start, end, arrowstyle=tip, **bend, **style, gid=gid))


def width(weight: float) -> float:
    """The line width of a weight: ``MAX_WIDTH`` for 1, never invisible."""
    return max(MAX_WIDTH * weight, 0.05)


def bar(ax: Axes, x: float, y: float, value: float, length: float) -> None:
    """A weight as an orange bar ``value * length`` long, then its number."""
    long = length * value
    style = dict(boxstyle="square,pad=0", fc=ROLE["weight"], ec="none")
    ax.add_patch(FancyBboxPatch((x, y - 0.15), long, 0.3, **style))
    text(ax, x + long + 0.08, y, f"{value:.3f}", ha="left")


def swatch(label: str, color: str, alpha: float = 0.45, **kw) -> Patch:
    """A legend entry: a square filled light in colour or role ``color``."""
    return Patch(**({"fc": fill(color, alpha), "ec": hue(color), "label": label} | kw))


def mark(label: str, **kw) -> Line2D:
    """A legend entry drawn as a line or a marker."""
    return Line2D([], [], label=label, **kw)


def graph_key(ms: float, output: str, hot: str, other: str) -> list[Line2D]:
    """A graph's key: input and ``output`` nodes, ``hot`` and ``other`` edges."""
    node = dict(ls="", marker="o", mec=BLACK, ms=ms)
    nodes = [mark("input", mfc="white", **node), mark(output, mfc=SKY, **node)]
    return nodes + [mark(hot, color=VERMILLION, lw=2), mark(other, color=GREY, lw=1)]


def legend(where: Figure | Axes, entries: list, ncol: int | None = None, **kw):
    """A key along the bottom of ``where``, in one row unless ``ncol``; an entry
    is a handle or ``(label, colour or role)``."""
    handles = [e if isinstance(e, Artist) else swatch(*e) for e in entries]
    style = dict(loc="lower center", frameon=False, fontsize=SMALL)
    where.legend(handles=handles, ncol=ncol or len(handles), **(style | kw))
