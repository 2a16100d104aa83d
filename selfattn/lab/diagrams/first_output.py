r"""The first output of a self-attention layer, :math:`b^1`, computed in full.

Each weight's circle and arrow carry a ``gid`` (``"weight j"``, ``"arrow j"``)
that a test reads back. Taught in ``notebooks/self-attention-qkv``.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch
from torch import Tensor

import selfattn.lab.diagrams._draw as d
from selfattn.attention import scaled_dot_product_attention

__all__ = ["first_output"]


def _box(ax: Axes, x: float, y: float, text: str, color: str, width: float) -> None:
    """A rounded box of colour or role ``color``, centred text at (x, y)."""
    style = dict(boxstyle="round,pad=0.02", fc=d.fill(color, 0.35), ec=d.hue(color))
    ax.add_patch(FancyBboxPatch((x - width / 2, y - 0.2), width, 0.4, lw=1.2, **style))
    d.text(ax, x, y, text, 8)


def _arrow(ax: Axes, start, end, lw: float = 1.0, color: str = "0.3", gid=None):
    """A straight arrow of colour or role ``color`` from start to end."""
    arrowprops = {"arrowstyle": "->", "lw": lw, "color": d.hue(color)}
    ax.annotate("", xy=end, xytext=start, arrowprops=arrowprops, gid=gid)


def _fmt(x: Tensor) -> str:
    """A short tuple such as (1, 0.5) for a vector."""
    return "(" + ", ".join(f"{t:g}" for t in x.tolist()) + ")"


def first_output(
    a: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    tokens: Sequence[str],
    *,
    ax: Axes | None = None,
) -> Figure:
    r"""Draw the computation of :math:`b^1` from the inputs, bottom to top.

    Args:
        a: ``(T, D)`` inputs, one row per position (row convention).
        q, k, v: ``(T, d_k)``, ``(T, d_k)``, ``(T, d_v)``; only ``q[0]`` asks.
        tokens: ``T`` labels printed under the inputs.
        ax: axes to draw on; a new figure when None.

    Returns:
        The figure; the weights and :math:`b^1` drawn are those of
        ``scaled_dot_product_attention(q[:1], k, v)``, to 2 decimals.

    Example:
        >>> import torch
        >>> a = torch.eye(3)
        >>> fig = first_output(a, a[:, :2], a[:, :2], a, ["x", "y", "z"])
        >>> sorted(p.get_gid() for p in fig.axes[0].patches if p.get_gid())
        ['weight 1', 'weight 2', 'weight 3']
    """
    T = len(tokens)
    if not a.shape[0] == q.shape[0] == k.shape[0] == v.shape[0] == T:
        raise ValueError("a, q, k, v and tokens must have one entry per position")
    out, w = scaled_dot_product_attention(q[:1], k, v)  # (1, d_v), (1, T)
    b1, weights = out[0], w[0]
    if ax is None:
        fig, ax = d.figure((1.75 * T + 0.5, 5))  # white: readable on the dark theme
    d.panel(ax, (-0.8, 1.5 * T + 0.2), (-0.5, 4.5), equal=True)
    top = 1.5 * (T - 1) / 2 + 0.9  # b^1 sits above the middle of the inputs
    _box(ax, -0.3, 1.9, f"$q^1$ {_fmt(q[0])}", "query", 0.8)
    _arrow(ax, (0.5, 0.2), (-0.3, 1.7))
    for i in range(T):
        x, wi = 1.5 * i + 0.9, float(weights[i])
        _box(ax, x, 0, f"$a^{i + 1}$ {_fmt(a[i])}\n{tokens[i]}", "#DDDDDD", 1.0)
        _box(ax, x - 0.36, 1.3, f"$k^{i + 1}$ {_fmt(k[i])}", "key", 0.64)
        _box(ax, x + 0.36, 1.3, f"$v^{i + 1}$ {_fmt(v[i])}", "value", 0.64)
        _arrow(ax, (x, 0.2), (x - 0.36, 1.1))
        _arrow(ax, (x, 0.2), (x + 0.36, 1.1))
        ring = dict(fc=d.fill("weight", 0.35), ec=d.hue("weight"))
        ax.add_patch(Circle((x - 0.36, 2.7), 0.26, gid=f"weight {i + 1}", **ring))
        d.text(ax, x - 0.36, 2.7, f"{wi:.2f}", 9)
        _arrow(ax, (0.1, 2.1), (x - 0.62, 2.7), lw=0.6, color="0.6")  # q^1
        _arrow(ax, (x - 0.36, 1.5), (x - 0.36, 2.44))  # k^i
        lw, gid = 0.5 + 6 * wi, f"arrow {i + 1}"  # v^i, as wide as its weight
        _arrow(ax, (x + 0.36, 1.5), (top, 3.85), lw, "weight", gid)
    _box(ax, top, 4.05, f"$b^1$ = {_fmt(b1.round(decimals=2))}", "output", 1.6)
    ax.text(-0.75, 2.7, r"$\alpha'_{1,j}$", va="center", fontsize=11)
    return ax.figure
