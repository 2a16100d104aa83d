"""The score matrix, restricted or tiled: truncated attention
(:func:`selfattn.masks.window_mask`) and the online softmax (the tiles of
:func:`selfattn.efficient.tiles`, in order, with the statistics carried)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int, check_ints
from selfattn.efficient import tiles
from selfattn.masks import window_mask


def truncated_band(*, T: int = 12, radius: int = 2, causal: bool = False) -> Figure:
    """Draw the mask of truncated (local) attention as a ``T × T`` grid.

    Rows are queries ``i``, columns keys ``j``; a filled cell is True in
    :func:`selfattn.masks.window_mask` ``(T, radius, causal=causal)``. The row of
    query ``T // 2`` is outlined and its keys, its receptive field, highlighted.

    Args:
        T: sequence length (positive); radius: how far each side a query may
            look (non-negative); causal: look only backwards.

    Returns:
        The figure; ``fig.axes[0].images[0].get_array() > 0`` is the mask.
    """
    T = check_int("T", T)
    radius = check_int("radius", radius, minimum=0)
    mask = window_mask(T, radius, causal=bool(causal)).numpy()  # (T, T)
    star = T // 2
    codes = mask.astype(int)  # 0: may not attend, 1: may attend
    codes[star, mask[star]] = 2  # the highlighted query's keys
    keys = np.flatnonzero(mask[star])
    fig, ax = d.figure((9.0, 6.0), left=0.09, right=0.6, top=0.9, bottom=0.1)
    d.cells(ax, codes, ["white", d.fill(d.SKY, 0.8), d.ORANGE])
    ticks = range(0, T, 1 if T <= 16 else -(-T // 12))
    ax.set(xticks=ticks, yticks=ticks)
    ax.tick_params(labelsize=d.SMALL)
    ax.set_xlabel("key j", size=d.FONT)
    ax.set_ylabel("query i", size=d.FONT)
    d.row(ax, (-0.5, 0, T - 0.5, T), star - 0.5, 1, fill=False, ec=d.BLACK, lw=2.5)
    call = f"window_mask(T={T}, radius={radius}" + (", causal=True)" if causal else ")")
    ax.set_title(call, size=d.FONT, family="monospace")
    span = f"keys {keys[0]} to {keys[-1]}" if len(keys) > 1 else f"key {keys[0]}"
    key = [
        d.swatch("True: may attend", d.SKY, 0.8, ec=d.GREY),
        d.swatch("False: may not", d.GREY, fc="white"),
        d.swatch(f"receptive field of\nquery {star}: {span}", d.GREY, fc=d.ORANGE),
        d.swatch(f"row of query {star}", d.BLACK, fc="none", lw=2.5),
    ]
    d.legend(ax, key, 1, loc="upper left", bbox_to_anchor=(1.03, 1.0))
    rule = "0 ≤ i − j ≤ radius" if causal else "|i − j| ≤ radius"
    most = int(mask.sum(axis=1).max())
    note = f"query i sees key j\nwhen {rule}:\nat most {most} keys per query,\n"
    note += "however long the sequence"
    ax.text(1.05, 0.62, note, transform=ax.transAxes, size=d.SMALL, va="top")
    return fig


_RULE = (  # the update rule, written beside the grid
    "For each query i of a row block:",
    r"start: $m_i = -\infty,\ \ell_i = 0,\ a_i = 0$",
    "for each key tile, in order 1, 2, …:",
    r"   $m_i^{new} = \max(m_i,\ \max_{j} \alpha_{i,j})$",
    r"   $c_i = \exp(m_i - m_i^{new})$  (rescales the old sums)",
    r"   $\ell_i \leftarrow c_i\,\ell_i + \sum_j \exp(\alpha_{i,j} - m_i^{new})$",
    r"   $a_i \leftarrow c_i\,a_i + \sum_j \exp(\alpha_{i,j} - m_i^{new})\,v_j$",
    r"   $m_i \leftarrow m_i^{new}$",
    r"end: $o_i = a_i / \ell_i$ (exact softmax attention)",
)


def _inches(text: str) -> float:
    """The height of a line of the rule, with the gap below it."""
    return 0.3 * (text.count("\n") + 1) + 0.1


def _chunked_tiles(T_q: int, T_k: int, B_q: int, B_k: int) -> list[tuple[int, ...]]:
    """``(first query, first key, b_q, b_k)`` of each block of
    :func:`selfattn.efficient.tiles`, in the order they are visited."""
    blocks = tiles(T_q, T_k, B_q, B_k)  # (query span, its key spans) per row block
    return [(qs, ks, qe - qs, ke - ks) for (qs, qe), keys in blocks for ks, ke in keys]


def _visit(ax, first: list[tuple[int, ...]], cell_in: float, rad: float) -> None:
    """Number the first row block's tiles, and arc from each to the next."""
    tile_in = min(t[3] for t in first) * cell_in
    peak = -rad * max(t[3] for t in first) / 2  # arc height, in cells
    for n, (qs, ks, bq, bk) in enumerate(first, start=1):
        cx, cy = ks + bk / 2, qs + bq / 2
        if tile_in >= 0.9 and bq * cell_in >= 0.8:
            d.text(ax, cx, cy, str(n), d.FONT + 5, va="bottom", weight="bold")
            stats = f"$m_i^{{({n})}},\\ \\ell_i^{{({n})}}$"
            d.text(ax, cx, cy, stats, d.SMALL + 1, va="top")
        else:
            d.text(ax, cx, cy, str(n), d.FONT, weight="bold")
        if n == len(first):
            break
        nx = first[n][1] + first[n][3] / 2
        d.arrow(ax, (cx, 0), (nx, 0), rad=rad, lw=1.5)
        if n == 1 or tile_in >= 1.6:  # label every arc while there is room
            label = "carry $m_i, \\ell_i, a_i$\n"
            label += f"$\\times \\exp(m_i^{{({n})}} - m_i^{{({n + 1})}})$"
            above = dict(xytext=(0, 4), textcoords="offset points", ha="center")
            arc = ((cx + nx) / 2, -peak)
            ax.annotate(label, arc, va="bottom", size=d.SMALL + 1, **above)


def _grid(ax, visited: list[tuple[int, ...]], T_q: int, T_k: int, B_q, B_k) -> None:
    """The cells, the tiles (the first row block filled), the tiles' edges."""
    if max(T_q, T_k) <= 64:
        lines = [(j, 0, j, T_q) for j in range(1, T_k)]
        lines += [(0, i, T_k, i) for i in range(1, T_q)]
        d.segments(ax, lines, color=d.GREY, lw=0.5)
    for qs, ks, bq, bk in visited:
        fc = d.fill(d.ORANGE, 0.4) if qs == 0 else "none"
        tile = plt.Rectangle((ks, qs), bk, bq, fc=fc, ec=d.BLACK, lw=2, gid="tile")
        ax.add_artist(tile)
    ticks = dict(textcoords="offset points", size=d.SMALL, color="#444444")
    for ks in sorted({t[1] for t in visited} | {T_k}):
        ax.annotate(str(ks), (ks, T_q), xytext=(0, -3), ha="center", va="top", **ticks)
    for qs in sorted({t[0] for t in visited} | {T_q}):
        ax.annotate(str(qs), (0, qs), xytext=(-4, 0), ha="right", va="center", **ticks)
    off = dict(textcoords="offset points", size=d.SMALL)
    keys = f"keys j  (T_k = {T_k}, tiles of B_k = {B_k})"
    ax.annotate(keys, (T_k / 2, T_q), xytext=(0, -18), ha="center", va="top", **off)
    queries, off = f"queries i\n(T_q = {T_q}, B_q = {B_q})", off | dict(rotation=90)
    ax.annotate(queries, (0, T_q / 2), xytext=(-26, 0), ha="right", va="center", **off)


def online_softmax_tiling(
    *, T_q: int = 8, T_k: int = 8, B_q: int = 4, B_k: int = 4
) -> Figure:
    r"""Draw the score matrix cut into tiles, as chunked (flash) attention visits it.

    The ``T_q × T_k`` scores are cut into tiles of ``B_q × B_k`` (smaller at the
    edges), those of :func:`selfattn.efficient.tiles`, the iterator of
    :func:`selfattn.efficient.chunked_attention`. The first row block's tiles are
    numbered in visiting order, the arrows carry each query's running max
    :math:`m_i`, sum :math:`\ell_i` and numerator :math:`a_i` from tile to tile,
    and the update rule is written beside the grid (Milakov & Gimelshein, 2018;
    Dao et al., 2022).

    Args:
        T_q: number of queries; T_k: number of keys; B_q: queries per tile;
            B_k: keys per tile (all positive).

    Returns:
        The figure; the tiles are the patches with ``get_gid() == "tile"``
        of ``fig.axes[0]``, in visiting order.
    """
    check_ints(T_q=T_q, T_k=T_k, B_q=B_q, B_k=B_k)
    visited = _chunked_tiles(T_q, T_k, B_q, B_k)
    first = [t for t in visited if t[0] == 0]  # the highlighted row block
    (_, _, b_q, b_k), rad = first[0], -0.45  # arcs bend up: y points down
    cell_in = min(0.7, 4.8 / T_k, 3.6 / T_q)  # inches per cell
    head = -rad * max(t[3] for t in first) / 2 + 0.75 / cell_in  # cells above
    grid_w, grid_h = T_k * cell_in, (T_q + head) * cell_in
    rule = [f"chunked_attention(q, k, v,\n    B_q={B_q}, B_k={B_k})", *_RULE]
    rule += [f"In memory at once: one {b_q} × {b_k} tile of\nscores, "
             f"never the {T_q} × {T_k} matrix."]  # fmt: skip
    width, left, text_w = 10.5, 0.75, 4.45
    height = max(grid_h + 1.5, sum(map(_inches, rule)) + 0.9)
    fig = plt.figure(figsize=(width, height), facecolor="white")
    bottom = (height - grid_h - 0.45) / height
    ax = fig.add_axes((left / width, bottom, grid_w / width, grid_h / height))
    d.panel(ax, (0, T_k), (T_q, -head))  # y down: query 0 on top
    _grid(ax, visited, T_q, T_k, B_q, B_k)
    _visit(ax, first, cell_in, rad)
    text_h = height - 0.9  # inches
    at = ((width - text_w - 0.1) / width, 0.4 / height, text_w / width, text_h / height)
    tx = fig.add_axes(at)
    tx.axis("off")
    y = 1.0
    for n, line in enumerate(rule):
        style = dict(family="monospace", size=d.SMALL) if n == 0 else {}
        style = dict(va="top", transform=tx.transAxes, size=d.FONT - 1) | style
        tx.text(0.0, y, line, **style)
        y -= _inches(line) / text_h
    key = [
        d.swatch("one row block, tiles in visit order", d.ORANGE, 0.4, ec=d.BLACK),
        d.swatch(f"other tiles ({B_q} × {B_k} or smaller)", d.BLACK, fc="white"),
    ]
    d.legend(fig, key, 2, loc="lower left", bbox_to_anchor=(0.0, 0.0))
    fig.suptitle("Online softmax: the scores tile by tile", size=d.FONT + 1)
    return fig
