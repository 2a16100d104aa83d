"""Reformer's angular LSH (:func:`selfattn.efficient.angular_lsh`) drawn in
2-D, and the attention pattern it allows."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
from selfattn.efficient.lsh import _check_buckets, _rotation, angular_lsh
from selfattn.lab.plotting import MARKERS

_FIXED_SEED = 0  # the default generator of lsh_buckets
_COLORS = [d.BLUE, d.VERMILLION, d.GREEN, d.PURPLE, d.ORANGE, d.SKY, d.BLACK, d.YELLOW]


def _points(ax, x: torch.Tensor, buckets: torch.Tensor, R: torch.Tensor) -> None:
    """The points in the colour of their bucket, and the directions ``±rho_u``."""
    t, half = np.linspace(0, 2 * np.pi, 200), R.shape[1]
    ax.plot(np.cos(t), np.sin(t), color=d.GREY, lw=0.8, ls="--")
    for c in range(2 * half):  # bucket c < b/2 stands for +rho_c, c + b/2 for -rho_c
        u = R[:, c % half].numpy() * (1 if c < half else -1)
        u = u / np.linalg.norm(u)
        tip = dict(arrowstyle="-|>", color=_COLORS[c], lw=1.8)
        ax.annotate("", 1.5 * u, (0, 0), arrowprops=tip)
        label = f"${'+' if c < half else '-'}\\rho_{{{c % half + 1}}}$"
        d.text(ax, *(1.72 * u), label, d.FONT, color=_COLORS[c])
        pts = x[buckets == c].numpy()
        look = dict(color=_COLORS[c], marker=MARKERS[c], s=55, edgecolors=d.BLACK)
        look |= dict(linewidths=0.5, label=f"bucket {c}", zorder=3)
        ax.scatter(pts[:, 0], pts[:, 1], **look)
    title = "bucket = argmax [xR ; −xR]"
    d.panel(ax, (-1.9, 1.9), (-1.9, 1.9), equal=True, title=title, size=d.FONT)


def _pattern(ax, buckets: torch.Tensor, n_buckets: int) -> None:
    """The pairs of the same bucket, positions sorted by bucket."""
    n = len(buckets)
    order = torch.argsort(buckets * n + torch.arange(n))  # by bucket
    sb = buckets[order]
    allowed = sb[:, None] == sb[None, :]  # (n, n): same bucket
    image = torch.where(allowed, sb[:, None] + 1, 0).numpy()
    d.cells(ax, image, ["white"] + _COLORS[:n_buckets], grid=None)
    for edge in torch.nonzero(sb[1:] != sb[:-1]).flatten().tolist():
        for line in (ax.axhline, ax.axvline):
            line(edge + 0.5, color=d.GREY, lw=0.6)
    ax.set_xlabel("key (sorted by bucket)", size=d.SMALL)
    ax.set_ylabel("query (sorted by bucket)", size=d.SMALL)
    ax.tick_params(labelsize=d.SMALL - 1)
    pairs = int(allowed.sum())
    share = f"{pairs} of {n**2} pairs ({pairs / n**2:.0%})"
    ax.set_title(f"may attend: same bucket\n{share}", size=d.FONT)


def lsh_buckets(
    *, n_points: int = 32, n_buckets: int = 4, generator: torch.Generator | None = None
) -> Figure:
    r"""Draw Reformer's angular LSH in 2-D and the attention pattern it allows.

    Left: ``n_points`` points near the unit circle in the colour of their bucket,
    :func:`~selfattn.efficient.angular_lsh` ``(x, n_buckets)`` (the argmax of
    :math:`[xR; -xR]`), and the directions :math:`\pm \rho_u` (the columns of
    :math:`R`) in the colour of their bucket. Right: the pairs that may attend,
    positions sorted by bucket: blocks on the diagonal (Kitaev et al., 2020,
    Fig. 2; Reformer's chunks are not drawn).

    Args:
        n_points: number of points (positive).
        n_buckets: number of buckets: even, 2 to 8 (one colour each).
        generator: draws the points and ``R``; None: a fixed one (seed 0).

    Returns:
        The figure; ``fig.axes[0]`` holds the points, ``fig.axes[1]`` the pattern.
    """
    n_points = check_int("n_points", n_points)
    n_buckets = _check_buckets(n_buckets)
    if n_buckets > 8:
        raise ValueError(
            f"n_buckets must be at most 8 to give each bucket a colour, got "
            f"n_buckets={n_buckets}"
        )
    gen = torch.Generator().manual_seed(_FIXED_SEED) if generator is None else generator
    theta = 2 * math.pi * torch.rand(n_points, generator=gen, dtype=torch.float64)
    r = 1 + 0.08 * torch.randn(n_points, generator=gen, dtype=torch.float64)
    x = torch.stack([r * theta.cos(), r * theta.sin()], dim=-1)  # (n, 2)
    state = gen.get_state()
    buckets = angular_lsh(x, n_buckets, generator=gen)  # (n,)
    R = _rotation(2, n_buckets, torch.Generator().set_state(state))  # the same R
    fig, (ax, bx) = d.figure(
        (10.5, 5.4), 1, 2, left=0.02, right=0.97, top=0.8, bottom=0.2, wspace=0.25
    )
    _points(ax, x, buckets, R)
    _pattern(bx, buckets, n_buckets)
    d.legend(fig, ax.get_legend_handles_labels()[0], min(n_buckets, 4))
    title = f"Angular LSH (Reformer): {n_points} points, {n_buckets} buckets"
    fig.suptitle(title, size=d.FONT + 1)
    return fig
