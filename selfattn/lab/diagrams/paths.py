"""Convolution, recurrence and self-attention: a figure of their connectivity.

:func:`~selfattn.lab.diagrams.connectivity` draws which inputs one layer connects to
each output,
with the maximum path length and the number of sequential operations that
:func:`selfattn.paths.path_lengths` and
:func:`selfattn.paths.sequential_depth` compute (Vaswani et al., 2017,
sec. 4).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from selfattn.lab.diagrams._draw import (
    BLACK,
    FONT,
    GREY,
    SKY,
    SMALL,
    VERMILLION,
    _segments,
)
from selfattn.paths import LAYERS, layer_reads, path_lengths, sequential_depth


def connectivity(*, T: int = 8, kernel: int = 3) -> Figure:
    r"""Draw which inputs one layer connects to each output: convolution,
    recurrence, self-attention, with their path lengths and sequential steps.

    Inputs are the bottom row of nodes, outputs the top row (for the
    recurrence, the chain of hidden states); the edges into one output are
    highlighted. Under each panel: the maximum path length between two
    positions (from :func:`~selfattn.paths.path_lengths`, a breadth-first search) and
    the
    number of sequential operations of one layer (the longest chain of
    outputs that wait for each other), with the orders of Vaswani et al.
    (2017), Table 1 and sec. 4: :math:`O(n/k)` and :math:`O(1)` for a
    convolution with a contiguous kernel (Table 1 gives :math:`O(\log_k n)`,
    the path length of dilated convolutions), :math:`O(n)` and :math:`O(n)`
    for a recurrence, :math:`O(1)` and :math:`O(1)` for self-attention.

    Args:
        T: sequence length (positive); kernel: the convolution's kernel size
            (odd, at least 3).

    Returns:
        The figure, one axes per kind of layer.
    """
    paths = path_lengths(T, kernel)  # checks T and kernel
    orders = {
        "convolution": ("O(n/k)", "O(1)"),
        "recurrence": ("O(n)", "O(n)"),
        "self-attention": ("O(1)", "O(1)"),
    }
    titles = {
        "convolution": f"convolution, kernel {kernel}",
        "recurrence": "recurrence",
        "self-attention": "self-attention",
    }
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 5.0), facecolor="white")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.91, bottom=0.43, wspace=0.08)
    star = T // 2  # the output whose edges are highlighted
    top = 2.0
    for ax, kind in zip(axes, LAYERS, strict=True):
        reads, needs = layer_reads(kind, T, kernel)
        for hot in (False, True):  # the highlighted edges on top
            style = dict(color=VERMILLION if hot else GREY, lw=2.0 if hot else 0.8)
            edges = [
                (j, 0, i, top) for i in range(T) if (i == star) == hot for j in reads[i]
            ]
            _segments(ax, edges, zorder=2 if hot else 1, **style)
        for i in range(T):
            style = dict(
                color=VERMILLION if i == star else GREY, lw=2.0 if i == star else 0.8
            )
            for j in needs[i]:
                ax.add_artist(
                    FancyArrowPatch(
                        (j, top),
                        (i, top),
                        arrowstyle="-|>",
                        mutation_scale=11,
                        shrinkA=7,
                        shrinkB=7,
                        **style,
                    )
                )
        node = dict(s=110, edgecolors=BLACK, linewidths=1.2, zorder=3)
        ax.scatter(range(T), [0] * T, c="white", **node)
        ax.scatter(range(T), [top] * T, c=[SKY] * T, **node)
        ax.scatter(
            [star],
            [top],
            c=[SKY],
            s=110,
            edgecolors=VERMILLION,
            linewidths=2.5,
            zorder=4,
        )
        ax.set_xlim(-0.7, T - 0.3)
        ax.set_ylim(-0.5, top + 0.5)
        ax.axis("off")
        ax.set_title(titles[kind], size=FONT)
        n_seq = sequential_depth(needs)
        path_o, seq_o = orders[kind]
        text = (
            f"max path length: {paths[kind]}   [{path_o}]\n"
            f"sequential operations: {n_seq}   [{seq_o}]"
        )
        ax.text(
            0.5,
            -0.04,
            text,
            transform=ax.transAxes,
            ha="center",
            va="top",
            size=SMALL,
            linespacing=1.6,
        )
    handles = [
        Line2D([], [], ls="", marker="o", mfc="white", mec=BLACK, ms=10, label="input"),
        Line2D(
            [],
            [],
            ls="",
            marker="o",
            mfc=SKY,
            mec=BLACK,
            ms=10,
            label="output (recurrence: hidden state)",
        ),
        Line2D([], [], color=VERMILLION, lw=2, label=f"edges into output {star}"),
        Line2D([], [], color=GREY, lw=1, label="other edges"),
    ]
    fig.legend(
        handles=handles, loc="lower center", ncol=2, frameon=False, fontsize=SMALL
    )
    fig.text(
        0.5,
        0.15,
        f"T = {T} positions (0 to {T - 1}). [ ]: Vaswani et al. (2017), Table 1 "
        "and sec. 4, n = T, k = kernel\n(a contiguous kernel needs O(n/k) "
        "layers; Table 1's O(log_k n) is for dilated convolutions)",
        ha="center",
        size=SMALL,
        color="#444444",
    )
    return fig
