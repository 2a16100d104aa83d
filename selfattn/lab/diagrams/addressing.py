r"""The encoder–decoder with and without attention, drawn from the library's weights.

* :func:`~selfattn.lab.diagrams.encoder_decoder`: an encoder–decoder without
  attention (one fixed code :math:`C` for every output step) beside one with
  attention (a context
  :math:`C_i = \sum_j \alpha'_{i,j} h_j` per step, Bahdanau et al., 2015). The
  line widths are the weights :math:`\alpha'_{i,j}`, computed by
  :func:`selfattn.attention.scaled_dot_product_attention` (or passed in, e.g.
  from a trained model).
* :func:`selfattn.lab.diagrams.key_value_memory`, the key–value
  memory, is drawn with the same boxes and arrows.

Every weight arrow carries a ``gid`` (``"weight i j"`` and ``"weight j"``) so
that a test can read the drawn width back.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from torch import Tensor

from selfattn.attention import scaled_dot_product_attention
from selfattn.lab.diagrams._draw import (
    BLACK,
    BLUE,
    FONT,
    GREY,
    ORANGE,
    PURPLE,
    SMALL,
    VERMILLION,
    _fill,
    _legend,
)

__all__ = ["encoder_decoder"]

MAX_WIDTH = 7.0  # points: the line width of a weight of 1


def _box(
    ax: Axes,
    x: float,
    y: float,
    text: str,
    color: str,
    w: float,
    h: float,
    size: int = FONT,
) -> None:
    """A rounded box of ``color`` (light fill, full outline), centred at (x, y)."""
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.03",
            fc=_fill(color, 0.35),
            ec=color,
            lw=1.6,
            zorder=3,
        )
    )
    ax.text(x, y, text, ha="center", va="center", size=size, zorder=4)


def _link(
    ax: Axes,
    start,
    end,
    *,
    color=BLACK,
    lw=1.2,
    ls="-",
    rad=0.0,
    gid: str | None = None,
    head: bool = True,
) -> None:
    arrow = FancyArrowPatch(
        start,
        end,
        arrowstyle="-|>" if head else "-",
        mutation_scale=12,
        color=color,
        lw=lw,
        ls=ls,
        shrinkA=3,
        shrinkB=3,
        connectionstyle=f"arc3,rad={rad}",
        zorder=2,
    )
    if gid is not None:
        arrow.set_gid(gid)
    ax.add_artist(arrow)


def _checked_weights(weights: object, n: int, m: int) -> Tensor:
    """``weights`` as a float tensor ``(n, m)`` whose rows are distributions."""
    w = torch.as_tensor(weights, dtype=torch.float64)
    if w.shape != (n, m):
        raise ValueError(
            f"weights must have shape (len(target), len(source)) = ({n}, {m}), "
            f"got {tuple(w.shape)}"
        )
    if (w < 0).any() or not torch.allclose(
        w.sum(-1), torch.ones(n, dtype=w.dtype), atol=1e-5
    ):
        raise ValueError(
            "weights: every row must be non-negative and sum to 1 (the attention "
            f"weights of one output step), got row sums {w.sum(-1).tolist()}"
        )
    return w


def encoder_decoder(
    source: Sequence[str] = ("the", "black", "cat"),
    target: Sequence[str] = ("le", "chat", "noir"),
    *,
    alignment: Sequence[int] | None = (0, 2, 1),
    sharpness: float = 2.0,
    weights: object | None = None,
) -> Figure:
    r"""Draw an encoder–decoder without and with attention, side by side.

    Left: the encoder's states :math:`h_1, \dots, h_m` (one per source token)
    end in one code :math:`C` that every decoder step :math:`g` reads.
    Right: every state is kept, and step :math:`i` reads its own context
    :math:`C_i = \sum_j \alpha'_{i,j} h_j`; the line from :math:`h_j` to
    :math:`C_i` is as wide as :math:`\alpha'_{i,j}`, and the query that
    decides the weights comes from the decoder's previous step.

    Without ``weights``, they are computed by
    :func:`~selfattn.attention.scaled_dot_product_attention` from one-hot keys
    (one per source position) and queries that each match one source
    position, ``alignment[i]``, scored with ``scale=sharpness``: an
    illustration of an alignment, not a trained one. With ``weights``
    (``(len(target), len(source))``, rows summing to 1, e.g. from a trained
    model), those are drawn.

    Args:
        source, target: the tokens (at least one each, at most 8).
        alignment: for each target step, the source position its query
            matches (0-based); ignored when ``weights`` is given.
        sharpness: the score multiplier (``scale``) of the computed weights.
        weights: the weights to draw instead, ``(len(target), len(source))``.

    Returns:
        The figure, two axes (without and with attention).
    """
    m, n = len(source), len(target)
    for name, tokens in (("source", source), ("target", target)):
        if not 1 <= len(tokens) <= 8:
            raise ValueError(f"{name} must have 1 to 8 tokens, got {len(tokens)}")
    if weights is None:
        if alignment is None or len(alignment) != n:
            raise ValueError(
                f"alignment must give one source position per target token "
                f"({n}), got {alignment!r}"
            )
        if any(not 0 <= a < m for a in alignment):
            raise ValueError(
                f"alignment positions must be in 0..{m - 1}, got {list(alignment)}"
            )
        keys = torch.eye(m, dtype=torch.float64)  # (m, m): one key per position
        queries = keys[list(alignment)]  # (n, m): step i looks for alignment[i]
        _, w = scaled_dot_product_attention(queries, keys, keys, scale=sharpness)
    else:
        w = _checked_weights(weights, n, m)

    step = 1.6
    enc_x = [j * step for j in range(m)]
    mid = (enc_x[-1]) / 2
    dec_x = [mid + (i - (n - 1) / 2) * step for i in range(n)]
    left, right = min(enc_x[0], dec_x[0]) - 1.0, max(enc_x[-1], dec_x[-1]) + 1.0
    fig, axes = plt.subplots(1, 2, figsize=(12.0, 6.0), facecolor="white")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.92, bottom=0.16, wspace=0.05)
    y_tok, y_h, y_c, y_g, y_y = 0.0, 1.0, 2.9, 4.3, 5.2
    for ax, attention in zip(axes, (False, True), strict=True):
        ax.set_xlim(left, right)
        ax.set_ylim(-0.5, 5.7)
        ax.set_aspect("equal")
        ax.axis("off")
        for j, x in enumerate(enc_x):  # the encoder, bottom
            ax.text(x, y_tok, source[j], ha="center", va="center", size=FONT)
            _link(ax, (x, y_tok + 0.22), (x, y_h - 0.28))
            _box(ax, x, y_h, f"$h_{{{j + 1}}}$", VERMILLION, 0.8, 0.5)
            if j:
                _link(ax, (enc_x[j - 1] + 0.4, y_h), (x - 0.4, y_h))
        for i, x in enumerate(dec_x):  # the decoder, top
            _box(ax, x, y_g, "$g$", BLUE, 0.8, 0.5)
            ax.text(
                x,
                y_y,
                f"$y_{{{i + 1}}}$ = {target[i]}",
                ha="center",
                va="center",
                size=FONT,
            )
            _link(ax, (x, y_g + 0.27), (x, y_y - 0.22))
            if i:
                _link(ax, (dec_x[i - 1] + 0.4, y_g), (x - 0.4, y_g))
        if not attention:
            _box(ax, mid, y_c, "$C$", GREY, 0.8, 0.5)
            _link(ax, (enc_x[-1], y_h + 0.27), (mid + 0.2, y_c - 0.27))
            for x in dec_x:
                _link(ax, (mid, y_c + 0.27), (x, y_g - 0.27), color=GREY)
            ax.set_title("without attention: one code $C$ for every step", size=FONT)
            continue
        top = w.argmax(dim=1)
        for i, x in enumerate(dec_x):
            _box(ax, x, y_c, f"$C_{{{i + 1}}}$", PURPLE, 0.8, 0.5)
            _link(ax, (x, y_c + 0.27), (x, y_g - 0.27))
            for j, xj in enumerate(enc_x):
                a = float(w[i, j])
                _link(
                    ax,
                    (xj, y_h + 0.27),
                    (x, y_c - 0.27),
                    color=ORANGE,
                    lw=max(MAX_WIDTH * a, 0.05),
                    head=False,
                    gid=f"weight {i} {j}",
                )
            j = int(top[i])
            ax.text(
                x + 0.45,
                y_c + 0.05,
                f"{float(w[i, j]):.2f}",
                ha="left",
                va="center",
                size=SMALL,
                color=BLACK,
            )
            if i:  # the query comes from the decoder's previous step
                _link(
                    ax,
                    (dec_x[i - 1] + 0.2, y_g - 0.27),
                    (x - 0.35, y_c + 0.2),
                    color=BLUE,
                    ls="--",
                )
        ax.set_title("with attention: a context $C_i$ per step", size=FONT)
    _legend(
        fig,
        [
            ("encoder states $h_j$ (keys and values)", VERMILLION),
            ("decoder steps $g$ (dashed: the query)", BLUE),
            ("fixed code $C$", GREY),
            ("context $C_i$", PURPLE),
            (r"weight $\alpha'_{i,j}$ (line width; the largest printed)", ORANGE),
        ],
        ncol=3,
    )
    return fig
