"""The GPU memory hierarchy and what FlashAttention keeps at each level: the
only numbers of the package not computed, quoted from Dao et al. (2022)."""

from __future__ import annotations

from typing import NamedTuple

from matplotlib.figure import Figure
from matplotlib.patches import Polygon

import selfattn.lab.diagrams._draw as d


class MemoryLevel(NamedTuple):
    """One level of the memory hierarchy in
    :data:`~selfattn.lab.diagrams.memory.MEMORY_HIERARCHY`."""

    name: str
    bandwidth: float  # bytes per second
    size: float  # bytes (a lower bound for "> 1 TB")
    bandwidth_text: str
    size_text: str


#: The levels of memory of an A100 GPU (40 GB) and its host, fastest and
#: smallest first, as in Dao et al. (2022), FlashAttention, Fig. 1 left.
MEMORY_HIERARCHY = (
    MemoryLevel("GPU SRAM", 19e12, 20e6, "19 TB/s", "20 MB"),
    MemoryLevel("GPU HBM", 1.5e12, 40e9, "1.5 TB/s", "40 GB"),
    MemoryLevel("CPU DRAM", 12.8e9, 1e12, "12.8 GB/s", "> 1 TB"),
)


def memory_hierarchy() -> Figure:
    """Draw the GPU memory hierarchy and what FlashAttention keeps at each level.

    A pyramid of the levels of
    :data:`~selfattn.lab.diagrams.memory.MEMORY_HIERARCHY` (SRAM, HBM, DRAM) with
    their bandwidths, sizes and ratios, and beside each level what FlashAttention
    keeps there: tiles and running statistics in SRAM; Q, K, V and O in HBM; the
    ``T × T`` attention matrix nowhere.

    Returns:
        The figure.
    """
    levels, n, h = MEMORY_HIERARCHY, len(MEMORY_HIERARCHY), 1.4  # h: a level's height
    notes = (
        "tiles of Q, K, V (B × d), one B_q × B_k\ntile of scores, "
        "the running max $m_i$ and sum $\\ell_i$",
        "Q, K, V read in, O written out (T × d each);\n"
        "the T × T attention matrix is never written here",
        "not used by attention\n(the data set, the model between uses)",
    )

    def half(y: float) -> float:  # half-width of the pyramid at height y
        return 0.9 + (n * h - y) * 0.8

    fig, ax = d.canvas(10.5, (-5.6, 10.6), (-0.2, n * h + 1.0), top=0.1, bottom=0.1)
    dotted = dict(arrowstyle="-", color=d.GREY, lw=1, ls=":")
    for i, level in enumerate(levels):
        y0, y1 = (n - 1 - i) * h, (n - i) * h  # SRAM on top
        corners = [(-half(y0), y0), (half(y0), y0), (half(y1), y1), (-half(y1), y1)]
        fill = d.fill(d.SKY, 0.25 + 0.15 * i)  # darker further down
        ax.add_artist(Polygon(corners, fc=fill, ec=d.BLACK, lw=1.5))
        ym = (y0 + y1) / 2
        d.text(ax, 0, ym + 0.08, level.name, d.FONT, va="bottom", weight="bold")
        speed = f"{level.bandwidth_text} · {level.size_text}"
        d.text(ax, 0, ym + 0.02, speed, d.SMALL + 1, va="top")
        ax.annotate("", (half(ym) + 0.15, ym), (4.3, ym), arrowprops=dotted)
        d.text(ax, 4.4, ym, notes[i] if i < len(notes) else "", ha="left")
    for i in range(n - 1):  # how much faster each level is than the next
        ratio = levels[i].bandwidth / levels[i + 1].bandwidth
        y = (n - 1 - i) * h
        d.text(ax, -half(y) - 0.25, y, f"{ratio:,.0f}× the\nbandwidth ↑", ha="right")
    above = dict(ha="left", va="bottom")
    keeps = "What FlashAttention keeps where"
    d.text(ax, 4.4, n * h + 0.1, keeps, d.FONT, weight="bold", **above)
    gpu = "GPU memory hierarchy\n(A100; Dao et al., 2022)"
    d.text(ax, -5.5, n * h + 0.1, gpu, d.FONT, **above)
    return fig
