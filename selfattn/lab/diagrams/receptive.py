"""Stacked 1-D convolutions: what one output sees, contiguous against dilated.
Which node reads which is what ``torch.nn.Conv1d`` connects (``conv_reads``)."""

from __future__ import annotations

import torch
from matplotlib.figure import Figure
from torch import nn

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int, check_ints

_EDGES = {  # is the edge on a path into the output: its style
    True: dict(color=d.VERMILLION, lw=1.8, zorder=2),
    False: dict(color=d.GREY, lw=0.4, alpha=0.5, zorder=1),
}
_NODES = {  # is the node on a path into the output: its style
    True: dict(s=46, edgecolors=d.VERMILLION, linewidths=1.8, zorder=4),
    False: dict(s=28, edgecolors=d.GREY, linewidths=0.8, zorder=3),
}


def conv_reads(T: int, kernel: int, dilation: int) -> list[list[int]]:
    """Which inputs each output of one padded convolution reads.

    The layer is ``nn.Conv1d(1, 1, kernel, dilation=dilation, padding=dilation *
    (kernel - 1) // 2, bias=False)``, all weights 1, applied to the ``T`` unit
    vectors at once: output ``i`` reads input ``j`` where unit vector ``j`` gives
    nonzero at ``i``.

    Args:
        T: sequence length; kernel: odd kernel size; dilation: spacing of
            the kernel's taps (all positive).

    Returns:
        ``reads[i]``, the input positions output ``i`` reads, ascending.

    Examples:
        >>> conv_reads(5, 3, 2)[2]
        [0, 2, 4]
    """
    check_ints(T=T, kernel=kernel, dilation=dilation)
    if kernel % 2 == 0:
        raise ValueError(f"kernel must be odd (a centred window), got kernel={kernel}")
    pad = dilation * (kernel - 1) // 2
    conv = nn.Conv1d(1, 1, kernel, dilation=dilation, padding=pad, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1.0)
        out = conv(torch.eye(T)[:, None, :])[:, 0, :]  # (input j, output i)
    return [torch.nonzero(out[:, i]).flatten().tolist() for i in range(T)]


def _dilations(kernel: int, layers: int, dilated: bool) -> list[int]:
    return [kernel**layer if dilated else 1 for layer in range(layers)]


def receptive_field(
    T: int, kernel: int, layers: int, *, dilated: bool, out: int
) -> list[list[int]]:
    """The nodes that reach output ``out`` of a stack of ``layers`` convolutions.

    Args:
        T, kernel: as in ``conv_reads``; layers: depth of the stack; dilated:
            dilations ``1, kernel, kernel**2, ...``, not all 1; out: the output
            position (``0 <= out < T``).

    Returns:
        One list per level, input (0) to top layer (``layers``, ``[out]``):
        the positions that reach ``out``; ``result[0]`` is the receptive field.

    Examples:
        >>> len(receptive_field(27, 3, 3, dilated=False, out=13)[0])
        7
        >>> len(receptive_field(27, 3, 3, dilated=True, out=13)[0])
        27
    """
    layers = check_int("layers", layers)
    out = check_int("out", out, minimum=0)
    if out >= T:
        raise ValueError(f"out must be a position below T={T}, got out={out}")
    hot = [[out]]
    for dil in reversed(_dilations(kernel, layers, dilated)):
        reads = conv_reads(T, kernel, dil)
        hot.insert(0, sorted({j for i in hot[0] for j in reads[i]}))
    return hot


def _stack(ax, T: int, kernel: int, layers: int, dilated: bool, out: int) -> None:
    """One stack, bottom to top, what reaches output ``out`` highlighted."""
    dils = _dilations(kernel, layers, dilated)
    hot = receptive_field(T, kernel, layers, dilated=dilated, out=out)
    for level, dil in enumerate(dils):  # edges from level to level + 1
        reads = conv_reads(T, kernel, dil)
        for is_hot in (False, True):
            edges = [
                (j, level, i, level + 1)
                for i in range(T)
                for j in reads[i]
                if (i in hot[level + 1] and j in hot[level]) == is_hot
            ]
            d.segments(ax, edges, **_EDGES[is_hot])
    for level in range(layers + 1):
        face = "white" if level == 0 else d.SKY
        for is_hot in (False, True):
            nodes = [i for i in range(T) if (i in hot[level]) == is_hot]
            gid = "field" if is_hot and level == 0 else None
            ax.scatter(nodes, [level] * len(nodes), c=face, gid=gid, **_NODES[is_hot])
        name = f"layer {level} (dilation {dils[level - 1]})" if level else "input"
        d.text(ax, -1.0, level, name, ha="right")
    kind = "dilated" if dilated else "contiguous"
    title = f"{kind} kernels ({kernel} taps): output {out} sees "
    ax.set_title(f"{title}{len(hot[0])} of the {T} inputs", size=d.FONT, loc="left")
    d.panel(ax, (-0.7, T - 0.3), (-0.4, layers + 0.4))


def receptive_fields(
    *, T: int = 27, kernel: int = 3, layers: int = 3, out: int | None = None
) -> Figure:
    r"""Draw the receptive field of one output, contiguous against dilated kernels.

    Two panels: a stack of ``layers`` convolutions of kernel size ``kernel``,
    contiguous (dilation 1) on top, dilated (:math:`k^l` in layer :math:`l`)
    below, one row of nodes per level (input at the bottom); the nodes and edges
    that reach output ``out`` (``receptive_field``) are highlighted, and each
    panel's title gives the width of its receptive field.

    Args:
        T: sequence length; kernel: odd kernel size (at least 3); layers:
            depth of the stack (all positive); out: the highlighted output
            (default ``T // 2``, the middle).

    Returns:
        The figure, one axes per panel (contiguous first); the highlighted
        input nodes of each are the scatter with ``get_gid() == "field"``.
    """
    T, kernel = check_int("T", T), check_int("kernel", kernel, minimum=3)
    layers = check_int("layers", layers)
    out = T // 2 if out is None else out
    size = (10.5, 2.0 + 1.25 * (layers + 1))
    fig, axes = d.figure(
        size, 2, 1, left=0.2, right=0.99, top=0.93, bottom=0.12, hspace=0.45
    )
    for ax, dilated in zip(axes, (False, True), strict=True):
        _stack(ax, T, kernel, layers, dilated, out)
    hot = f"what reaches output {out}"
    d.legend(fig, d.graph_key(7, "layer output", hot, "other connections"))
    return fig
