r"""Soft addressing of a key–value memory, drawn with the library's numbers.

:func:`~selfattn.lab.diagrams.key_value_memory` draws the query, every key, its score
:math:`\alpha_j = s(q, k_j)`, its weight :math:`\alpha'_j` and value, and the
output :math:`\sum_j \alpha'_j v_j`. Every printed number and every width is
what :func:`~selfattn.attention.scaled_dot_product_attention` returns for the
tensors given; every weight arrow carries a ``gid`` (``"weight j"``) so that a
test can read the drawn width back.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch
from torch import Tensor

from selfattn.attention import scaled_dot_product_attention
from selfattn.lab.diagrams._draw import (
    BLACK,
    BLUE,
    FONT,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    SMALL,
    VERMILLION,
    _legend,
)
from selfattn.lab.diagrams.addressing import MAX_WIDTH, _box, _link

__all__ = ["key_value_memory"]


def _vector(x: Tensor) -> str:
    return "(" + ", ".join(f"{float(t):.2g}" for t in x) + ")"


def key_value_memory(
    q: Tensor,
    K: Tensor,
    V: Tensor,
    *,
    scale: float = 1.0,
    labels: Sequence[str] | None = None,
) -> Figure:
    r"""Draw soft addressing of a key–value memory, with the library's numbers.

    One row per entry :math:`j`: its key :math:`k_j` (and label), the score
    :math:`\alpha_j = \text{scale} \cdot q^\top k_j`, the weight
    :math:`\alpha'_j` as a bar, the value :math:`v_j`, and an arrow as wide as
    :math:`\alpha'_j` into the output :math:`\sum_j \alpha'_j v_j`. The weights
    and the output are those of
    :func:`~selfattn.attention.scaled_dot_product_attention` on ``q[None]``,
    ``K``, ``V``; the entry a hard lookup would return (the largest score) is
    marked.

    Args:
        q: the query ``(d_k,)``; K: the keys ``(N, d_k)``; V: the values
            ``(N, d_v)``, with 1 <= N <= 10 and d_v <= 4 (the values are
            printed).
        scale: the score multiplier (``scale`` of the library).
        labels: a name for each entry (e.g. what its key stands for).

    Returns:
        The figure, one axes.
    """
    q, K, V = (torch.as_tensor(t) for t in (q, K, V))
    if q.dim() != 1 or K.dim() != 2 or V.dim() != 2:
        raise ValueError(
            f"q must be (d_k,), K (N, d_k) and V (N, d_v), got q {tuple(q.shape)}, "
            f"K {tuple(K.shape)}, V {tuple(V.shape)}"
        )
    N = K.shape[0]
    if not 1 <= N <= 10 or V.shape[0] != N or K.shape[1] != q.shape[0]:
        raise ValueError(
            "K and V need the same number N of entries (1 to 10) and K the "
            f"query's width, got q {tuple(q.shape)}, K {tuple(K.shape)}, "
            f"V {tuple(V.shape)}"
        )
    if V.shape[1] > 4:
        raise ValueError(f"V may have at most 4 columns (printed), got {V.shape[1]}")
    if labels is not None and len(labels) != N:
        raise ValueError(f"labels must name the {N} entries, got {len(labels)}")
    out, w = scaled_dot_product_attention(q[None], K, V, scale=scale)  # (1, *)
    out, w = out[0], w[0]  # (d_v,), (N,)
    scores = scale * (K @ q)  # (N,) alpha_j, as the library scores them
    hard = int(scores.argmax())

    fig, ax = plt.subplots(figsize=(13.0, 0.62 * N + 2.4), facecolor="white")
    fig.subplots_adjust(left=0.01, right=0.99, top=0.99, bottom=1.0 / (0.62 * N + 2.4))
    ax.set_xlim(-0.2, 15.4)
    ax.set_ylim(-N - 0.2, 1.2)
    ax.axis("off")
    x_q, x_k, x_s, x_w, x_v, x_o = 0.8, 3.6, 6.3, 7.4, 11.0, 14.2
    heads = [
        (x_q, "query $q$"),
        (x_k, "key $k_j$"),
        (x_s, r"score $\alpha_j$"),
        (x_w + 0.9, r"weight $\alpha'_j$"),
        (x_v, "value $v_j$"),
        (x_o, r"output $\sum_j \alpha'_j v_j$"),
    ]
    for x, text in heads:
        ax.text(x, 0.6, text, ha="center", va="center", size=FONT)
    y_mid = -(N - 1) / 2
    _box(ax, x_q, y_mid, _vector(q), BLUE, 1.5, 0.55, SMALL)
    for j in range(N):
        y = -j
        key = _vector(K[j]) if labels is None else f"{labels[j]}\n{_vector(K[j])}"
        _box(ax, x_k, y, key, VERMILLION, 2.6, 0.5, SMALL - 1)
        _link(ax, (x_q + 0.75, y_mid), (x_k - 1.3, y), color=GREY, lw=0.8)
        ax.text(x_s, y, f"{float(scores[j]):.2f}", ha="center", va="center", size=SMALL)
        bar = 1.8 * float(w[j])
        ax.add_patch(
            FancyBboxPatch(
                (x_w, y - 0.15), bar, 0.3, boxstyle="square,pad=0", fc=ORANGE, ec="none"
            )
        )
        ax.text(
            x_w + bar + 0.08,
            y,
            f"{float(w[j]):.3f}",
            ha="left",
            va="center",
            size=SMALL,
        )
        _box(ax, x_v, y, _vector(V[j]), GREEN, 2.0, 0.45, SMALL)
        _link(
            ax,
            (x_v + 1.0, y),
            (x_o - 0.9, y_mid),
            color=ORANGE,
            lw=max(MAX_WIDTH * float(w[j]), 0.05),
            head=False,
            gid=f"weight {j}",
        )
        if j == hard:
            ax.text(x_k - 1.45, y, "★", ha="right", va="center", size=FONT, color=BLACK)
    _box(ax, x_o, y_mid, _vector(out), PURPLE, 1.8, 0.55, SMALL)
    ax.text(
        x_k - 1.6,
        -N + 0.2,
        "★ largest score: the entry a hard lookup returns",
        ha="left",
        va="center",
        size=SMALL,
    )
    _legend(
        fig,
        [
            ("query", BLUE),
            ("keys", VERMILLION),
            ("weights (bar, arrow width)", ORANGE),
            ("values", GREEN),
            ("output", PURPLE),
        ],
        ncol=5,
    )
    return fig
