"""The GPU memory hierarchy and what FlashAttention keeps at each level.

The only numbers of :mod:`selfattn.lab.diagrams` not computed by the library:
the sizes and bandwidths of ``MEMORY_HIERARCHY``, quoted from Dao et al.
(2022), drawn by :func:`~selfattn.lab.diagrams.memory_hierarchy`.
"""

from __future__ import annotations

from typing import NamedTuple

from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from selfattn.lab.diagrams._draw import BLACK, FONT, GREY, SKY, SMALL, _canvas, _fill


class MemoryLevel(NamedTuple):
    """One level of the memory hierarchy in
    :data:`~selfattn.lab.diagrams.memory.MEMORY_HIERARCHY`."""

    name: str
    bandwidth: float  # bytes per second
    size: float  # bytes (a lower bound for "> 1 TB")
    bandwidth_text: str
    size_text: str


#: The levels of memory of an A100 GPU (40 GB) and its host, fastest and
#: smallest first, as in Dao et al. (2022), FlashAttention, Fig. 1 left
#: (references.bib key ``dao2022flashattention``).
MEMORY_HIERARCHY = (
    MemoryLevel("GPU SRAM", 19e12, 20e6, "19 TB/s", "20 MB"),
    MemoryLevel("GPU HBM", 1.5e12, 40e9, "1.5 TB/s", "40 GB"),
    MemoryLevel("CPU DRAM", 12.8e9, 1e12, "12.8 GB/s", "> 1 TB"),
)


def memory_hierarchy() -> Figure:
    """Draw the GPU memory hierarchy and what FlashAttention keeps at each level.

    A pyramid of the levels of :data:`~selfattn.lab.diagrams.memory.MEMORY_HIERARCHY`
    (Dao et al., 2022,
    Fig. 1 left: on-chip SRAM, the GPU's high-bandwidth memory HBM, the
    CPU's DRAM) with their bandwidths and sizes, the bandwidth ratios of
    neighbouring levels, and beside each level what FlashAttention keeps
    there: tiles of Q, K, V and the running statistics in SRAM; Q, K, V and
    O in HBM; the ``T × T`` attention matrix nowhere (it is never written to
    HBM).

    Returns:
        The figure.
    """
    levels = MEMORY_HIERARCHY
    n = len(levels)
    notes = (
        "tiles of Q, K, V (B × d), one B_q × B_k\ntile of scores, "
        "the running max $m_i$ and sum $\\ell_i$",
        "Q, K, V read in, O written out (T × d each);\n"
        "the T × T attention matrix is never written here",
        "not used by attention\n(the data set, the model between uses)",
    )

    h = 1.4  # height of a level

    def half(y: float) -> float:  # half-width of the pyramid at height y
        return 0.9 + (n * h - y) * 0.8

    fig, ax = _canvas(10.5, (-5.6, 10.6), (-0.2, n * h + 1.0), top=0.1, bottom=0.1)
    for i, level in enumerate(levels):
        y0, y1 = (n - 1 - i) * h, (n - i) * h  # SRAM on top
        corners = [(-half(y0), y0), (half(y0), y0), (half(y1), y1), (-half(y1), y1)]
        fill = _fill(SKY, 0.25 + 0.15 * i)  # darker further down
        ax.add_artist(Polygon(corners, fc=fill, ec=BLACK, lw=1.5))
        ym = (y0 + y1) / 2
        ax.text(
            0, ym + 0.08, level.name, ha="center", va="bottom", size=FONT, weight="bold"
        )
        ax.text(
            0,
            ym + 0.02,
            f"{level.bandwidth_text} · {level.size_text}",
            ha="center",
            va="top",
            size=SMALL + 1,
        )
        ax.annotate(
            "",
            (half(ym) + 0.15, ym),
            (4.3, ym),
            arrowprops=dict(arrowstyle="-", color=GREY, lw=1, ls=":"),
        )
        ax.text(
            4.4,
            ym,
            notes[i] if i < len(notes) else "",
            ha="left",
            va="center",
            size=SMALL,
        )
    for i in range(n - 1):  # how much faster each level is than the next
        ratio = levels[i].bandwidth / levels[i + 1].bandwidth
        y = (n - 1 - i) * h
        ax.text(
            -half(y) - 0.25,
            y,
            f"{ratio:,.0f}× the\nbandwidth ↑",
            ha="right",
            va="center",
            size=SMALL,
        )
    ax.text(
        4.4,
        n * h + 0.1,
        "What FlashAttention keeps where",
        ha="left",
        va="bottom",
        size=FONT,
        weight="bold",
    )
    ax.text(
        -5.5,
        n * h + 0.1,
        "GPU memory hierarchy\n(A100; Dao et al., 2022)",
        ha="left",
        va="bottom",
        size=FONT,
    )
    return fig
