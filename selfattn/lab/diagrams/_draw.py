"""The drawing primitives shared by :mod:`selfattn.lab.diagrams` (private).

Colours (the Okabe-Ito ``PALETTE`` of :mod:`selfattn.lab.plotting`), one
role→colour map (``ROLE``: queries blue, keys vermillion, values green, scores
and weights orange, output purple, input grey) and font sizes, and the pieces
every diagram is built from: a white frameless canvas, a matrix drawn as a
grid of cells with its symbol and shape, a labelled box, a labelled arrow, a
link whose width can carry a weight, a bar with its number, centred text, a
colour key by role, light fills and fast line segments.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch, Rectangle

from selfattn.lab.plotting import PALETTE

BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK, _YELLOW = PALETTE
GREY = "#999999"  # neutral: edges and cells that carry no code
FONT = 13  # labels; at 10 inches wide a 700-pixel page shows them at ~9 pt
SMALL = 11  # shapes and notes
_LABELS_IN = 1.0  # inches between two stacked matrices: symbol above, shape below
MAX_WIDTH = 7.0  # points: the line width of a link that carries a weight of 1
# One colour per role, in every figure; _legend takes a role where it takes a colour.
ROLE = {
    "input": GREY,
    "query": BLUE,
    "key": VERMILLION,
    "value": GREEN,
    "score": ORANGE,
    "weight": ORANGE,
    "output": PURPLE,
}


def _canvas(
    width: float,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    *,
    top: float = 0.5,
    bottom: float = 0.5,
) -> tuple[Figure, Axes]:
    """A white figure ``width`` inches wide with one frameless axes filling it.

    The axes shows ``xlim`` x ``ylim`` in data units at equal aspect; ``top``
    and ``bottom`` inches are left for a title and a legend.
    """
    (x0, x1), (y0, y1) = xlim, ylim
    height = width * (y1 - y0) / (x1 - x0) + top + bottom
    fig, ax = plt.subplots(figsize=(width, height), facecolor="white")
    fig.subplots_adjust(left=0, right=1, bottom=bottom / height, top=1 - top / height)
    ax.set_facecolor("white")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _fill(color: str, alpha: float = 0.3) -> tuple[float, float, float, float]:
    """A light fill of ``color`` (the outline keeps the full colour)."""
    return to_rgba(color, alpha)


def _segments(ax: Axes, segments: list[tuple[float, ...]], **style) -> None:
    """Draw segments ``(x0, y0, x1, y1)`` as one line, broken by NaNs (fast)."""
    xs = [v for x0, _, x1, _ in segments for v in (x0, x1, np.nan)]
    ys = [v for _, y0, _, y1 in segments for v in (y0, y1, np.nan)]
    ax.plot(xs, ys, **style)


def tex(dims: str) -> str:
    """``"T × d_k"`` as mathtext, ``"$T \\times d_k$"``: subscripts set as such."""
    return "$" + dims.replace(" × ", r" \times ") + "$"


def _matrix(
    ax: Axes,
    center: tuple[float, float],
    shape: tuple[int, int],
    cell: float,
    color: str,
    *,
    symbol: str = "",
    dims: str = "",
    note: str = "",
    col_colors: list[str] | None = None,
) -> tuple[float, float, float, float]:
    """Draw a ``rows x cols`` matrix as a grid of cells centred at ``center``.

    ``symbol`` goes above, ``dims`` (e.g. ``"T × d_k"``) and the numeric shape
    below, then ``note``; ``col_colors`` colours each column (e.g. by head).
    Returns the box ``(left, bottom, right, top)``.
    """
    rows, cols = shape
    w, h = cols * cell, rows * cell
    x0, y0 = center[0] - w / 2, center[1] - h / 2
    if col_colors is None:
        ax.add_artist(Rectangle((x0, y0), w, h, fc=_fill(color), ec="none"))
    else:
        start = 0
        for c in range(1, cols + 1):  # one patch per run of equal colours
            if c == cols or col_colors[c] != col_colors[start]:
                xy, wc = (x0 + start * cell, y0), (c - start) * cell
                ax.add_artist(Rectangle(xy, wc, h, fc=_fill(col_colors[start], 0.45)))
                start = c
    if max(rows, cols) <= 24:  # cell lines while they stay visible
        lines = [(x0 + c * cell, y0, x0 + c * cell, y0 + h) for c in range(1, cols)]
        lines += [(x0, y0 + r * cell, x0 + w, y0 + r * cell) for r in range(1, rows)]
        _segments(ax, lines, color=color, lw=0.5, alpha=0.6)
    ax.add_artist(Rectangle((x0, y0), w, h, fc="none", ec=color, lw=1.6))
    box = dict(boxstyle="square,pad=0.05", fc="white", ec="none")  # over arrows
    if symbol:
        _text(
            ax, center[0], y0 + h + 0.12, symbol, FONT, va="bottom", bbox=box, zorder=4
        )
    if dims:
        text = f"{tex(dims)}\n({rows} × {cols})" + (f"\n{note}" if note else "")
        _text(ax, center[0], y0 - 0.12, text, va="top", bbox=box, zorder=4)
    return x0, y0, x0 + w, y0 + h


def _arrow(
    ax: Axes,
    start: tuple[float, float],
    end: tuple[float, float],
    label: str = "",
    *,
    color: str = BLACK,
    where: float = 0.5,
    rad: float = 0.0,
    size: int = SMALL,
    above: bool = False,
) -> None:
    """An arrow from ``start`` to ``end``, ``label`` on a white patch at ``where``
    (or just above the arrow, ``above=True``)."""
    style = dict(arrowstyle="-|>", mutation_scale=14, color=color, lw=1.3)
    bend = dict(shrinkA=2, shrinkB=2, connectionstyle=f"arc3,rad={rad}")
    ax.add_artist(FancyArrowPatch(start, end, **style, **bend))
    if label:
        x = start[0] + where * (end[0] - start[0])
        y = start[1] + where * (end[1] - start[1])
        box = dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.9)
        va = "bottom" if above else "center"
        y += 0.08 if above else 0.0
        ax.text(x, y, label, ha="center", va=va, size=size, bbox=box)


def _text(ax: Axes, x: float, y: float, text: str, size: int = SMALL, **kw) -> None:
    """``text`` centred at ``(x, y)`` (``ha``, ``va`` and the rest as keywords)."""
    ax.text(x, y, text, **({"ha": "center", "va": "center", "size": size} | kw))


def _box(
    ax: Axes, x: float, y: float, text: str, color: str, w: float, h: float, size=FONT
) -> None:
    """A rounded box of ``color`` (light fill, full outline), centred at (x, y)."""
    xy, style = (x - w / 2, y - h / 2), "round,pad=0.03"
    fc = _fill(color, 0.35)
    ax.add_patch(
        FancyBboxPatch(xy, w, h, boxstyle=style, fc=fc, ec=color, lw=1.6, zorder=3)
    )
    _text(ax, x, y, text, size, zorder=4)


def _link(
    ax: Axes,
    start: tuple[float, float],
    end: tuple[float, float],
    *,
    color: str = BLACK,
    lw: float = 1.2,
    ls: str = "-",
    head: bool = True,
    gid: str | None = None,
) -> None:
    """A thin arrow (``head=False``: a line) from box to box; a link that carries
    a weight gets ``lw=_width(weight)`` and a ``gid`` a test can read back."""
    style = dict(color=color, lw=lw, ls=ls, shrinkA=3, shrinkB=3, zorder=2)
    arrow = FancyArrowPatch(
        start,
        end,
        arrowstyle="-|>" if head else "-",
        mutation_scale=12,
        connectionstyle="arc3,rad=0.0",
        **style,
    )
    arrow.set_gid(gid)
    ax.add_artist(arrow)


def _width(weight: float) -> float:
    """The line width of a weight: ``MAX_WIDTH`` for 1, never invisible."""
    return max(MAX_WIDTH * weight, 0.05)


def _bar(ax: Axes, x: float, y: float, value: float, length: float) -> None:
    """A weight as an orange bar ``value * length`` long from ``x``, then its number."""
    bar = length * value
    style = dict(boxstyle="square,pad=0", fc=ROLE["weight"], ec="none")
    ax.add_patch(FancyBboxPatch((x, y - 0.15), bar, 0.3, **style))
    _text(ax, x + bar + 0.08, y, f"{value:.3f}", ha="left")


def _legend(
    fig: Figure, entries: list[tuple[str, str]], ncol: int | None = None
) -> None:
    """A key of filled squares ``(label, colour or role)`` along the bottom of
    ``fig``, all in one row unless ``ncol`` says otherwise."""
    handles = [
        Patch(fc=_fill(ROLE.get(c, c), 0.45), ec=ROLE.get(c, c), label=label)
        for label, c in entries
    ]
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=ncol or len(entries),
        frameon=False,
        fontsize=SMALL,
    )
