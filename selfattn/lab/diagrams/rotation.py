r"""A fixed offset is a rotation: the sinusoidal encoding's pairs on the circle,
each arrow :func:`selfattn.positional.offset_rotation` applied to a point."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Arc

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
from selfattn.positional import frequencies, offset_rotation, sinusoidal_encoding


def _circle(ax, pts, f: int, omega: float, M, delta: int, starts: list[int]) -> None:
    """Pair ``f``'s points on the circle and the arrows of ``M`` from ``starts``."""
    ax.add_artist(plt.Circle((0, 0), 1, fill=False, ec=d.GREY, lw=1))
    ax.plot(pts[:, 0], pts[:, 1], "o", color=d.BLUE, ms=7, zorder=3)
    for i, (x, y) in enumerate(pts.tolist()):
        d.text(ax, 1.16 * x, 1.16 * y, str(i))
    bend = -0.3 if delta * omega < np.pi else 0.3  # arrows hug the circle
    for i in starts:
        end = M @ pts[i]  # M_f(delta) p_i
        if not torch.allclose(end, pts[i + delta]):
            raise AssertionError("M_f(delta) p_i is not the table's p_(i+delta)")
        tips = (0.82 * pts[i]).tolist(), (0.82 * end).tolist()
        d.arrow(ax, *tips, color=d.VERMILLION, rad=bend, lw=1.8, zorder=4)
    turn = delta * omega
    a0 = 90 - np.degrees(starts[0] * omega)  # matplotlib angles
    arc = dict(theta1=a0 - np.degrees(turn), theta2=a0, color=d.BLACK, lw=1)
    ax.add_artist(Arc((0, 0), 0.5, 0.5, **arc))
    for p in (pts[starts[0]], pts[starts[0] + delta]):
        ax.plot([0, p[0]], [0, p[1]], color=d.GREY, lw=0.8)
    ax.set_title(
        f"pair $f = {f}$: $\\omega_{{{f}}}$ = {omega:.3g} per position\n"
        f"$\\delta = {delta}$ turns every point by {turn:.3g} rad",
        size=d.SMALL + 1,
    )
    ax.set_xlabel(f"$P_{{i,{2 * f}}} = \\sin \\omega_{{{f}}} i$", size=d.SMALL)
    ax.set_ylabel(f"$P_{{i,{2 * f + 1}}} = \\cos \\omega_{{{f}}} i$", size=d.SMALL)
    ax.set(xlim=(-1.35, 1.35), ylim=(-1.35, 1.35), aspect="equal")
    ax.set(xticks=[-1, 0, 1], yticks=[-1, 0, 1])


def offset_circles(
    *,
    embed_dim: int = 64,
    pairs: Sequence[int] = (0, 4),
    n_positions: int = 8,
    delta: int = 2,
    starts: Sequence[int] = (0, 3),
) -> Figure:
    r"""Draw pairs of the sinusoidal encoding on the unit circle, and the turn
    :math:`M_f(\delta)` that moves every position :math:`\delta` steps on.

    One panel per pair ``f``: positions :math:`0, \dots, n-1` as numbered points
    :math:`(\sin\omega_f i, \cos\omega_f i)` (0 at the top, then clockwise), and
    from each :math:`i` in ``starts`` an arrow to :math:`M_f(\delta)` applied to
    it, point :math:`i + \delta`: every arrow of a panel turns by
    :math:`\delta\omega_f`, less in slower pairs.

    Args:
        embed_dim: the width ``D`` of the encoding (even).
        pairs: the frequency pairs ``f`` to draw, each in ``0 .. D/2 - 1``.
        n_positions: how many positions to mark (at least 2).
        delta: the offset (positive).
        starts: where the arrows start; ``i + delta < n_positions``.

    Returns:
        The figure, one panel per pair.

    Examples:
        >>> fig = offset_circles(embed_dim=16, pairs=(0,), n_positions=5,
        ...                      delta=1, starts=(0,))
        >>> len(fig.axes)
        1
    """
    D = check_int("embed_dim", embed_dim, minimum=2)
    if D % 2:
        raise ValueError(f"embed_dim must be even (sin and cos pairs), got {D}")
    n = check_int("n_positions", n_positions, minimum=2)
    delta = check_int("delta", delta)
    pairs = [check_int("pairs", f, minimum=0) for f in pairs]
    if not pairs or max(pairs) >= D // 2:
        raise ValueError(
            f"pairs must be non-empty, each in 0 .. {D // 2 - 1} for embed_dim={D}, "
            f"got {list(pairs)}"
        )
    starts = [check_int("starts", i, minimum=0) for i in starts]
    if any(i + delta >= n for i in starts):
        raise ValueError(
            f"every start i needs i + delta < n_positions={n}, got starts="
            f"{starts} with delta={delta}"
        )
    P = sinusoidal_encoding(n, D, dtype=torch.float64)  # (n, D)
    M = offset_rotation(delta, D, dtype=torch.float64)  # (D/2, 2, 2)
    omega = frequencies(D).double()  # (D/2,)
    fig, axes = plt.subplots(
        1, len(pairs), figsize=(4.4 * len(pairs), 5.2), facecolor="white", squeeze=False
    )
    for ax, f in zip(axes[0], pairs, strict=True):
        pts = P[:, 2 * f : 2 * f + 2]  # (n, 2): (sin w_f i, cos w_f i)
        _circle(ax, pts, f, omega[f].item(), M[f], delta, starts)
    title = f"A fixed offset is a rotation (D = {D}): "
    fig.suptitle(title + f"$p_{{i+{delta}}} = M({delta})\\, p_i$", size=d.FONT)
    turn = f"$M_f({delta})$: from $i$ to $i + {delta}$"
    key = [d.mark("position $i$", marker="o", ls="none", color=d.BLUE)]
    key.append(d.mark(turn, color=d.VERMILLION, lw=1.8))
    d.legend(fig, key, bbox_to_anchor=(0.5, 0.01))
    fig.tight_layout(rect=(0, 0.13, 1, 0.92))
    return fig
