r"""Soft addressing of a key–value memory, drawn with the library's numbers;
each weight arrow carries a ``gid`` (``"weight j"``) that a test reads back."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from torch import Tensor

import selfattn.lab.diagrams._draw as d
from selfattn.attention import scaled_dot_product_attention

__all__ = ["key_value_memory"]


def _vector(x: Tensor) -> str:
    return "(" + ", ".join(f"{float(t):.2g}" for t in x) + ")"


X = dict(q=0.8, k=3.6, s=6.3, w=7.4, v=11.0, o=14.2)  # the columns
HEADS = dict(q="query $q$", k="key $k_j$")  # each column's heading
HEADS |= dict(s=r"score $\alpha_j$", w=r"weight $\alpha'_j$")
HEADS |= dict(v="value $v_j$", o=r"output $\sum_j \alpha'_j v_j$")


def _check(q: Tensor, K: Tensor, V: Tensor, labels: Sequence[str] | None) -> int:
    """The number N of entries, once the shapes are checked."""
    got = f"got q {tuple(q.shape)}, K {tuple(K.shape)}, V {tuple(V.shape)}"
    if q.dim() != 1 or K.dim() != 2 or V.dim() != 2:
        raise ValueError(f"q must be (d_k,), K (N, d_k) and V (N, d_v), {got}")
    N = K.shape[0]
    if not 1 <= N <= 10 or V.shape[0] != N or K.shape[1] != q.shape[0]:
        raise ValueError(
            f"K and V need the same number N of entries (1 to 10) and K the query's "
            f"width, {got}"
        )
    if V.shape[1] > 4:
        raise ValueError(f"V may have at most 4 columns (printed), got {V.shape[1]}")
    if labels is not None and len(labels) != N:
        raise ValueError(f"labels must name the {N} entries, got {len(labels)}")
    return N


def _entry(ax: Axes, j: int, y_q: float, key: str, score, weight, value) -> None:
    """Entry j's row: its key, score, weight bar, value and weighted link."""
    y = -j
    d.box(ax, X["k"], y, key, "key", 2.6, 0.5, d.SMALL - 1)
    d.link(ax, (X["q"] + 0.75, y_q), (X["k"] - 1.3, y), color=d.GREY, lw=0.8)
    d.text(ax, X["s"], y, f"{score:.2f}")
    d.bar(ax, X["w"], y, weight, 1.8)
    d.box(ax, X["v"], y, value, "value", 2.0, 0.45, d.SMALL)
    ends = (X["v"] + 1.0, y), (X["o"] - 0.9, y_q)
    gid = f"weight {j}"
    d.link(ax, *ends, color="weight", lw=d.width(weight), head=False, gid=gid)


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
    :math:`\alpha_j = \text{scale} \cdot q^\top k_j`, the weight :math:`\alpha'_j`
    as a bar, the value :math:`v_j`, and an arrow as wide as :math:`\alpha'_j` into
    the output :math:`\sum_j \alpha'_j v_j`, as
    :func:`~selfattn.attention.scaled_dot_product_attention` gives them; a star
    marks the entry a hard lookup would return.

    Args:
        q: the query ``(d_k,)``; K: the keys ``(N, d_k)``; V: the values
            ``(N, d_v)``, with 1 <= N <= 10 and d_v <= 4 (printed).
        scale: the score multiplier (``scale`` of the library).
        labels: a name for each entry (e.g. what its key stands for).

    Returns:
        The figure, one axes.
    """
    q, K, V = (torch.as_tensor(t) for t in (q, K, V))
    N = _check(q, K, V, labels)
    out, w = scaled_dot_product_attention(q[None], K, V, scale=scale)  # (1, *)
    out, w = out[0], w[0]  # (d_v,), (N,)
    scores = scale * (K @ q)  # (N,) alpha_j, as the library scores them
    size = (13.0, 0.62 * N + 2.4)  # inches
    fig, ax = d.figure(size, left=0.01, right=0.99, top=0.99, bottom=1 / size[1])
    d.panel(ax, (-0.2, 15.4), (-N - 0.2, 1.2))
    for col, text in HEADS.items():  # the weight's heading over its bar's middle
        d.text(ax, X[col] + (0.9 if col == "w" else 0.0), 0.6, text, d.FONT)
    y_mid = -(N - 1) / 2
    d.box(ax, X["q"], y_mid, _vector(q), "query", 1.5, 0.55, d.SMALL)
    for j in range(N):
        key = _vector(K[j]) if labels is None else f"{labels[j]}\n{_vector(K[j])}"
        _entry(ax, j, y_mid, key, float(scores[j]), float(w[j]), _vector(V[j]))
        if j == int(scores.argmax()):
            d.text(ax, X["k"] - 1.45, -j, "★", d.FONT, ha="right", color=d.BLACK)
    d.box(ax, X["o"], y_mid, _vector(out), "output", 1.8, 0.55, d.SMALL)
    note = "★ largest score: the entry a hard lookup returns"
    d.text(ax, X["k"] - 1.6, -N + 0.2, note, ha="left")
    key = [("query", "query"), ("keys", "key")]
    key += [("weights (bar, arrow width)", "weight"), ("values", "value")]
    d.legend(fig, key + [("output", "output")])
    return fig
