"""Convolution, recurrence and self-attention: a figure of their connectivity,
with the path lengths and sequential operations of :mod:`selfattn.paths`
(Vaswani et al., 2017, sec. 4)."""

from __future__ import annotations

from matplotlib.figure import Figure

import selfattn.lab.diagrams._draw as d
from selfattn.paths import LAYERS, layer_reads, path_lengths, sequential_depth

_ORDERS = {  # (path length, sequential operations) in Vaswani et al. (2017)
    "convolution": ("O(n/k)", "O(1)"),
    "recurrence": ("O(n)", "O(n)"),
    "self-attention": ("O(1)", "O(1)"),
}
_EDGE = {  # is the edge into the highlighted output: its style
    True: dict(color=d.VERMILLION, lw=2.0),
    False: dict(color=d.GREY, lw=0.8),
}


def _layer(ax, kind: str, T: int, kernel: int, star: int, top: float) -> int:
    """One kind of layer (output ``star`` highlighted); returns its number of
    sequential operations."""
    reads, needs = layer_reads(kind, T, kernel)
    for hot in (False, True):  # the highlighted edges on top
        into = [i for i in range(T) if (i == star) == hot]  # the outputs drawn now
        edges = [(j, 0, i, top) for i in into for j in reads[i]]
        d.segments(ax, edges, zorder=2 if hot else 1, **_EDGE[hot])
    for i in range(T):
        look = _EDGE[i == star] | dict(mutation_scale=11, shrinkA=7, shrinkB=7)
        for j in needs[i]:
            d.arrow(ax, (j, top), (i, top), **look)
    node = dict(s=110, edgecolors=d.BLACK, linewidths=1.2, zorder=3)
    ax.scatter(range(T), [0] * T, c="white", **node)
    ax.scatter(range(T), [top] * T, c=[d.SKY] * T, **node)
    node |= dict(edgecolors=d.VERMILLION, linewidths=2.5, zorder=4)
    ax.scatter([star], [top], c=[d.SKY], **node)
    return sequential_depth(needs)


def connectivity(*, T: int = 8, kernel: int = 3) -> Figure:
    r"""Draw which inputs one layer connects to each output: convolution,
    recurrence, self-attention, with their path lengths and sequential steps.

    Inputs are the bottom row, outputs the top row (the recurrence's hidden
    states), the edges into one output highlighted. Under each panel: the maximum
    path length between two positions (:func:`~selfattn.paths.path_lengths`) and
    the sequential operations of one layer, with the orders of Vaswani et al.
    (2017), Table 1 and sec. 4 (for a contiguous kernel, :math:`O(n/k)`: Table 1's
    :math:`O(\log_k n)` is for dilated convolutions).

    Args:
        T: sequence length (positive); kernel: the convolution's kernel size
            (odd, at least 3).

    Returns:
        The figure, one axes per kind of layer.
    """
    paths = path_lengths(T, kernel)  # checks T and kernel
    fig, axes = d.figure(
        (10.5, 5.0), 1, 3, left=0.01, right=0.99, top=0.91, bottom=0.43, wspace=0.08
    )
    star, top = T // 2, 2.0  # the output whose edges are highlighted
    for ax, kind in zip(axes, LAYERS, strict=True):
        n_seq = _layer(ax, kind, T, kernel, star, top)
        title = f"convolution, kernel {kernel}" if kind == "convolution" else kind
        d.panel(ax, (-0.7, T - 0.3), (-0.5, top + 0.5), title=title, size=d.FONT)
        (path_o, seq_o), path = _ORDERS[kind], paths[kind]
        text = f"max path length: {path}   [{path_o}]\n"
        text += f"sequential operations: {n_seq}   [{seq_o}]"
        style = dict(transform=ax.transAxes, va="top", linespacing=1.6)
        d.text(ax, 0.5, -0.04, text, **style)
    output, hot = "output (recurrence: hidden state)", f"edges into output {star}"
    d.legend(fig, d.graph_key(10, output, hot, "other edges"), 2)
    note = f"T = {T} positions (0 to {T - 1}). [ ]: Vaswani et al. (2017), Table 1 "
    note += "and sec. 4, n = T, k = kernel\n(a contiguous kernel needs O(n/k) "
    note += "layers; Table 1's O(log_k n) is for dilated convolutions)"
    fig.text(0.5, 0.15, note, ha="center", size=d.SMALL, color="#444444")
    return fig
