"""Multi-head attention as a picture, with the shapes of a real forward pass of
:class:`selfattn.modules.MultiHeadAttention`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
from selfattn.modules import MultiHeadAttention


def _multi_head_shapes(T: int, D: int, H: int) -> dict[str, tuple[int, ...]]:
    """The shapes of every step, from a run of ``MultiHeadAttention(D, H)``."""
    gen = torch.Generator().manual_seed(0)
    mha = MultiHeadAttention(D, H, generator=gen)
    x = torch.randn(1, T, D, generator=gen)  # (1, T, D)
    with torch.no_grad():
        Q, V = mha.W_q(x), mha.W_v(x)  # (1, T, D) each (K alike)
        weights = mha.attention_weights(x)  # (1, H, T, T)
        heads = weights @ mha._split(V)  # (1, H, T, d_k)
        out = mha._merge(heads)  # (1, T, D): concat, then W_o
    run = dict(x=x, Q=Q, q_h=mha._split(Q), weights=weights, heads=heads, out=out)
    shapes = {name: tuple(a.shape[1:]) for name, a in run.items()}  # q_h: (H, T, d_k)
    shapes["concat"] = (heads.shape[2], mha.W_o.in_features)  # (T, H d_k)
    W_q, W_o = tuple(mha.W_q.weight.T.shape), tuple(mha.W_o.weight.T.shape)
    return shapes | {"W_q": W_q, "W_o": W_o}  # (D, D) each


def _head_colors(H: int) -> list[str]:
    """One colour per head: Okabe-Ito (no yellow) up to 7 heads, viridis beyond."""
    okabe = [d.BLUE, d.VERMILLION, d.GREEN, d.ORANGE, d.SKY, d.PURPLE, d.BLACK]
    if H <= len(okabe):
        return okabe[:H]
    cmap = plt.get_cmap("viridis")
    return [cmap(h / (H - 1)) for h in range(H)]


def _layout(shapes, cell: float, n_lanes: int):
    """The columns' x, the heads' y, the extent, units per inch, the QKV gap."""
    hT, wD = shapes["x"][0] * cell, shapes["Q"][1] * cell
    wT, wk = shapes["weights"][-1] * cell, shapes["heads"][-1] * cell
    xs = {"x": 0.0}
    xs["QKV"] = wD / 2 + 3.2 + wD / 2
    xs["W"] = xs["QKV"] + wD / 2 + 3.4 + wT / 2
    xs["head"] = xs["W"] + wT / 2 + 1.8 + wk / 2
    xs["concat"] = xs["head"] + wk / 2 + (2.2 if n_lanes <= 2 else 3.2) + wD / 2
    xs["out"] = xs["concat"] + wD / 2 + 3.0 + wD / 2
    left, right = -wD / 2 - 0.5, xs["out"] + wD / 2 + 0.6
    upi = (right - left) / 11.0  # data units per inch of an 11-inch figure
    gap = hT + d.LABELS_IN * upi  # between two lanes, as between Q, K and V
    lane_y = [(n_lanes - 1) / 2 * gap - n * gap for n in range(n_lanes)]
    half = max(gap, lane_y[0]) + hT / 2 + 0.45 * upi  # the canvas's upper half
    return xs, lane_y, (left, right, upi, gap, half)


def _heads(ax, lanes, lane_y, colors, at, shapes, cell) -> None:
    """Each drawn head's weights and output, from the split to the concat."""
    bx, xs, wD, hT = at
    for n, h in enumerate(lanes):
        y = lane_y[n]
        if h is None:
            d.text(ax, xs["W"], y, "⋮", d.FONT + 6)
            continue
        T_T, T_dk = dict(dims="T × T", symbol=f"head {h + 1}"), dict(dims="T × d_k")
        W = d.matrix(ax, (xs["W"], y), shapes["weights"][1:], cell, colors[h], **T_T)
        d.arrow(ax, (bx, 0), (W[0], y))
        Z = d.matrix(ax, (xs["head"], y), shapes["heads"][1:], cell, colors[h], **T_dk)
        d.arrow(ax, (W[2], y), (Z[0], y), f"$\\cdot v_{{{h + 1}}}$", above=True)
        spread = 0.8 * hT * (0.5 - n / max(len(lanes) - 1, 1))  # fan into concat
        d.arrow(ax, (Z[2], y), (xs["concat"] - wD / 2, spread if len(lanes) > 1 else 0))


def multi_head_flow(*, T: int = 4, D: int = 8, H: int = 2) -> Figure:
    r"""Draw multi-head attention: project, split into heads, attend, concat, ``W_o``.

    .. math::
        \operatorname{head}_h = \operatorname{softmax}\!\big(q_h k_h^\top /
        \sqrt{d_k}\big)\, v_h,\qquad
        \text{out} = [\operatorname{head}_1; \dots; \operatorname{head}_H]\, W_o

    :math:`X` (``T × D``) is projected to :math:`Q, K, V`, whose ``D`` columns
    fall into ``H`` heads of ``d_k = D / H`` (coloured by head); each head attends
    on its own; the heads' outputs are concatenated and mixed by :math:`W_o =
    (W^O)^\top` (Vaswani et al., 2017, sec. 3.2.2, write :math:`W^O`). Beyond 4
    heads, heads 1, 2 and ``H`` are drawn. The shapes are those of a run of
    :class:`selfattn.modules.MultiHeadAttention` ``(D, H)``.

    Args:
        T: sequence length; D: model width; H: number of heads (must divide D).

    Returns:
        The figure.
    """
    T, D, H = check_int("T", T), check_int("D", D), check_int("H", H)
    if D % H:
        raise ValueError(
            f"D={D} must be divisible by H={H} (each head gets d_k = D / H columns)"
        )
    shapes = _multi_head_shapes(T, D, H)
    d_k, colors = shapes["q_h"][-1], _head_colors(H)
    lanes = list(range(H)) if H <= 4 else [0, 1, None, H - 1]  # None: the dots
    cell = min(0.28, 2.4 / max(T, D))
    xs, lane_y, (left, right, upi, qkv_gap, half) = _layout(shapes, cell, len(lanes))
    hT, wD = T * cell, shapes["Q"][1] * cell
    fig, ax = d.canvas(11.0, (left, right), (-half - 0.75 * upi, half), bottom=0.8)
    col_colors = [colors[c // d_k] for c in range(shapes["Q"][1])]
    by_head = dict(dims="T × D", col_colors=col_colors)
    X = d.matrix(ax, (0, 0), shapes["x"], cell, d.GREY, symbol="$X$", dims="T × D")
    # 1) project: X -> Q, K, V, whose columns fall into H heads
    for n, (name, w) in enumerate((("Q", "W_q"), ("K", "W_k"), ("V", "W_v"))):
        y, symbol = qkv_gap * (1 - n), f"${name} = XW_{name.lower()}$"
        box = d.matrix(
            ax, (xs["QKV"], y), shapes["Q"], cell, d.BLACK, symbol=symbol, **by_head
        )
        label = f"${w}$\nD × D\n" + "({} × {})".format(*shapes["W_q"])
        d.arrow(ax, (X[2], 0), (box[0], y), label, where=0.62)
    # 2) split: head h takes columns (h-1) d_k ... h d_k - 1 of Q, K and V
    bx = box[2] + 0.35
    ax.plot([bx, bx], [qkv_gap, -qkv_gap], color=d.BLACK, lw=1.3)
    for y in (qkv_gap, 0.0, -qkv_gap):
        ax.plot([box[2] + 0.05, bx], [y, y], color=d.BLACK, lw=1.3)
    _heads(ax, lanes, lane_y, colors, (bx, xs, wD, hT), shapes, cell)
    # 3) concatenate the heads, 4) mix them with W_o = (W^O)^T
    concat = dict(symbol="concat", **by_head)
    C = d.matrix(ax, (xs["concat"], 0), shapes["concat"], cell, d.BLACK, **concat)
    out = dict(symbol="out", dims="T × D")
    O = d.matrix(ax, (xs["out"], 0), shapes["out"], cell, d.GREY, **out)
    label = f"$W_o$\n{d.tex('D × D')}\n" + "({} × {})".format(*shapes["W_o"])
    d.arrow(ax, (C[2], 0), (O[0], 0), label, above=True)
    formula = (
        f"split: head $h$ gets $d_k = D/H$ = {d_k} of the $D$ = {D} columns of "
        "$Q, K, V$ (its colour): $q_h, k_h, v_h$\n"
        r"in head $h$: weights $= \mathrm{softmax}(q_h k_h^\top/\sqrt{d_k})$, "
        r"output $=$ weights $\cdot\, v_h$"
    )
    d.text(ax, (xs["QKV"] + xs["out"]) / 2, -half - 0.15 * upi, formula, va="top")
    ax.set_title("Multi-head attention (selfattn.MultiHeadAttention)", size=d.FONT + 1)
    shown = range(H) if H <= 8 else [h for h in lanes if h is not None]
    key = [("input, output", d.GREY)] + [(f"head {h + 1}", colors[h]) for h in shown]
    d.legend(fig, key, ncol=min(len(key), 5))
    return fig
