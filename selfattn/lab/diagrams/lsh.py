"""Reformer's angular LSH drawn in 2-D, and the attention pattern it allows.

The hashing itself is :func:`selfattn.efficient.angular_lsh` (an algorithm,
documented with the efficient attention); :func:`~selfattn.lab.diagrams.lsh_buckets`
draws its buckets and the block-diagonal pattern of pairs that may attend.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from selfattn._checks import check_int
from selfattn.efficient.lsh import _check_buckets, _rotation, angular_lsh
from selfattn.lab.diagrams._draw import (
    _YELLOW,
    BLACK,
    BLUE,
    FONT,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    SKY,
    SMALL,
    VERMILLION,
)

_FIXED_SEED = 0  # the default generator of lsh_buckets


def lsh_buckets(
    *, n_points: int = 32, n_buckets: int = 4, generator: torch.Generator | None = None
) -> Figure:
    r"""Draw Reformer's angular LSH in 2-D and the attention pattern it allows.

    Left: ``n_points`` points near the unit circle coloured by their bucket
    :func:`~selfattn.efficient.angular_lsh` ``(x, n_buckets)`` (argmax of
    :math:`[xR; -xR]`), with the directions :math:`\pm \rho_u` (the columns
    of :math:`R`, drawn at unit length) in the colour of the bucket they stand
    for. Right: the
    ``n × n`` pattern of pairs that may attend after sorting the positions by
    bucket: a query attends to the keys of its own bucket, blocks on the
    diagonal (Kitaev et al., 2020, Fig. 2; Reformer also cuts the sorted
    sequence into chunks, not drawn here).

    Args:
        n_points: number of points (positive).
        n_buckets: number of buckets: even, 2 to 8 (one colour each).
        generator: draws the points and ``R``; None = a fixed generator
            (``torch.Generator().manual_seed(0)``), so the figure never varies.

    Returns:
        The figure; ``fig.axes[0]`` holds the points, ``fig.axes[1]`` the pattern.
    """
    from selfattn.lab.plotting import MARKERS

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
    colors = [BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK, _YELLOW]
    fig, (ax, bx) = plt.subplots(
        1, 2, figsize=(10.5, 5.4), facecolor="white", width_ratios=(1, 1)
    )
    fig.subplots_adjust(left=0.02, right=0.97, top=0.8, bottom=0.2, wspace=0.25)
    t = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(t), np.sin(t), color=GREY, lw=0.8, ls="--")
    for c in range(n_buckets):
        # bucket c < b/2 stands for +rho_c, bucket c + b/2 for -rho_c
        u = R[:, c % (n_buckets // 2)].numpy() * (1 if c < n_buckets // 2 else -1)
        u = u / np.linalg.norm(u)
        ax.annotate(
            "",
            1.5 * u,
            (0, 0),
            arrowprops=dict(arrowstyle="-|>", color=colors[c], lw=1.8),
        )
        sign = "+" if c < n_buckets // 2 else "-"
        label = f"${sign}\\rho_{{{c % (n_buckets // 2) + 1}}}$"
        ax.text(
            *(1.72 * u), label, ha="center", va="center", size=FONT, color=colors[c]
        )
        pts = x[buckets == c].numpy()
        ax.scatter(
            pts[:, 0],
            pts[:, 1],
            color=colors[c],
            marker=MARKERS[c],
            s=55,
            edgecolors=BLACK,
            linewidths=0.5,
            label=f"bucket {c}",
            zorder=3,
        )
    ax.set_xlim(-1.9, 1.9)
    ax.set_ylim(-1.9, 1.9)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("bucket = argmax [xR ; −xR]", size=FONT)
    order = torch.argsort(buckets * n_points + torch.arange(n_points))  # by bucket
    sb = buckets[order]
    allowed = sb[:, None] == sb[None, :]  # (n, n): same bucket
    image = torch.where(allowed, sb[:, None] + 1, 0).numpy()
    cmap = ListedColormap(["white"] + colors[:n_buckets])
    bx.imshow(
        image, cmap=cmap, vmin=-0.5, vmax=n_buckets + 0.5, interpolation="nearest"
    )
    for edge in torch.nonzero(sb[1:] != sb[:-1]).flatten().tolist():
        for line in (bx.axhline, bx.axvline):
            line(edge + 0.5, color=GREY, lw=0.6)
    bx.set_xlabel("key (sorted by bucket)", size=SMALL)
    bx.set_ylabel("query (sorted by bucket)", size=SMALL)
    bx.tick_params(labelsize=SMALL - 1)
    pairs = int(allowed.sum())
    bx.set_title(
        f"may attend: same bucket\n{pairs} of {n_points**2} pairs "
        f"({pairs / n_points**2:.0%})",
        size=FONT,
    )
    fig.legend(
        *ax.get_legend_handles_labels(),
        loc="lower center",
        ncol=min(n_buckets, 4),
        frameon=False,
        fontsize=SMALL,
    )
    fig.suptitle(
        f"Angular LSH (Reformer): {n_points} points, {n_buckets} buckets", size=FONT + 1
    )
    return fig
