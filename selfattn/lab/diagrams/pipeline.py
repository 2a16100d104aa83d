"""The single-head and multi-head pipelines, with the shapes of a real forward pass.

:func:`~selfattn.lab.diagrams.qkv_pipeline` draws input → Q, K, V → scores →
weights → output in the row convention of the library or the column
convention of the lecture; :func:`~selfattn.lab.diagrams.multi_head_flow` draws
the projection, the split into heads, attention per head, the concatenation
and ``W^O``. Every shape is read off a run of :mod:`selfattn` on a dummy input.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from selfattn.lab.diagrams._draw import (
    _LABELS_IN,
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
    _arrow,
    _canvas,
    _check_int,
    _legend,
    _matrix,
    tex,
)

# --- the single-head pipeline ----------------------------------------------


def _pipeline_shapes(
    convention: str, T: int, D: int, d_k: int, d_v: int
) -> dict[str, tuple[int, int]]:
    """The shapes of every matrix, from a run of the library on a dummy input."""
    if convention == "rows":
        from selfattn.attention import scaled_dot_product_attention
        from selfattn.modules import SelfAttention

        gen = torch.Generator().manual_seed(0)
        layer = SelfAttention(D, d_k, d_v, generator=gen)
        x = torch.randn(1, T, D, generator=gen)  # (1, T, D)
        with torch.no_grad():
            q, k, v = layer.W_q(x), layer.W_k(x), layer.W_v(x)  # (1, T, d)
            scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (1, T_q, T_k)
            out, weights = scaled_dot_product_attention(q, k, v)  # (1, T, d_v)
        named = dict(X=x, W_q=layer.W_q.weight.T, W_k=layer.W_k.weight.T)
        named |= dict(W_v=layer.W_v.weight.T, Q=q, K=k, V=v, S=scores)
        named |= dict(weights=weights, out=out)
    else:
        from selfattn.reference import self_attention_columns

        rng = np.random.default_rng(0)
        I = rng.standard_normal((D, T))  # (D, T): the inputs as columns
        W_q, W_k = rng.standard_normal((2, d_k, D))  # (d_k, D) each
        W_v = rng.standard_normal((d_v, D))  # (d_v, D)
        res = self_attention_columns(I, W_q, W_k, W_v)
        named = dict(I=I, W_q=W_q, W_k=W_k, W_v=W_v, Q=W_q @ I, K=W_k @ I)
        named |= dict(V=W_v @ I, A=res.A, A_prime=res.A_prime, O=res.O)
    return {name: tuple(a.shape[-2:]) for name, a in named.items()}


def qkv_pipeline(
    convention: str = "rows", *, T: int = 4, D: int = 6, d_k: int = 3, d_v: int = 3
) -> Figure:
    r"""Draw single-head self-attention as a pipeline of matrices with their shapes.

    Input → :math:`Q, K, V` → scores → weights → output, each matrix a grid
    of its real shape, labelled with its symbol, its shape in symbols and in
    numbers. The two conventions of the course (see :mod:`selfattn.reference`):

    * ``"rows"`` (the library, PyTorch): :math:`X` is ``T × D``;
      :math:`Q = X W_q` with :math:`W_q` ``D × d_k`` applied from the right;
      :math:`S = Q K^\top / \sqrt{d_k}` is ``T_q × T_k``; the weights are
      the softmax of each row; :math:`\text{out} = \text{weights}\, V` is
      ``T × d_v``.
    * ``"columns"`` (the lecture): :math:`I` is ``D × T``;
      :math:`Q = W^q I` with :math:`W^q` ``d_k × D`` applied from the left;
      :math:`A = K^\top Q / \sqrt{d_k}` is ``T_k × T_q``; :math:`A'` is the
      softmax of each column; :math:`O = V A'` is ``d_v × T``.

    The shapes are read off a run of :class:`selfattn.modules.SelfAttention` and
    :func:`selfattn.attention.scaled_dot_product_attention` (rows) or
    :func:`selfattn.reference.self_attention_columns` (columns) on a dummy
    input of the given sizes.

    Args:
        convention: ``"rows"`` or ``"columns"``.
        T: sequence length; D: input width; d_k: query/key width;
            d_v: value width (all positive).

    Returns:
        The figure.
    """
    if convention not in ("rows", "columns"):
        raise ValueError(f"convention must be 'rows' or 'columns', got {convention!r}")
    for name, n in (("T", T), ("D", D), ("d_k", d_k), ("d_v", d_v)):
        _check_int(name, n)
    shapes = _pipeline_shapes(convention, T, D, d_k, d_v)
    rows = convention == "rows"
    if rows:
        names = ("X", "Q", "K", "V", "S", "weights", "out")
        dims = ("T × D", "T × d_k", "T × d_k", "T × d_v", "T_q × T_k", "T_q × T_k")
        dims += ("T × d_v",)
        symbols = ("$X$", "$Q = XW_q$", "$K = XW_k$", "$V = XW_v$")
        symbols += (r"$S = QK^\top/\sqrt{d_k}$", "weights", "out")
        notes = {"W": "rows sum to 1", "O": r"out $=$ weights $V$"}
        proj = ("$W_q$", "$W_k$", "$W_v$")
        proj_dims = ("D × d_k", "D × d_k", "D × d_v")
        softmax = "softmax\nof each row"
        title = "Self-attention, row convention (selfattn, PyTorch)"
    else:
        names = ("I", "Q", "K", "V", "A", "A_prime", "O")
        dims = ("D × T", "d_k × T", "d_k × T", "d_v × T", "T_k × T_q", "T_k × T_q")
        dims += ("d_v × T",)
        symbols = ("$I$", "$Q = W^qI$", "$K = W^kI$", "$V = W^vI$")
        symbols += (r"$A = K^\top Q/\sqrt{d_k}$", "$A'$", "$O$")
        notes = {"W": "columns sum to 1", "O": "$O = VA'$"}
        proj = ("$W^q$", "$W^k$", "$W^v$")
        proj_dims = ("d_k × D", "d_k × D", "d_v × D")
        softmax = "softmax\nof each column"
        title = "Self-attention, column convention (the lecture)"
    (X, Q, K, V, S, W, O) = (shapes[n] for n in names)
    p_shapes = [shapes[n] for n in ("W_q", "W_k", "W_v")]
    cell = min(0.32, 2.4 / max(T, D, d_k, d_v))
    high = max(s[0] for s in (X, Q, K, V, S, W, O)) * cell
    wid = {
        n: s[1] * cell for n, s in zip("XQKVSWO", (X, Q, K, V, S, W, O), strict=True)
    }
    xs = {"X": 0.0}
    xs["Q"] = xs["K"] = xs["V"] = wid["X"] / 2 + 3.6 + max(wid[n] for n in "QKV") / 2
    xs["S"] = xs["Q"] + max(wid[n] for n in "QKV") / 2 + 2.6 + wid["S"] / 2
    xs["W"] = xs["S"] + wid["S"] / 2 + 2.8 + wid["W"] / 2
    xs["O"] = xs["W"] + wid["W"] / 2 + 3.0 + wid["O"] / 2
    left, right = -wid["X"] / 2 - 0.6, xs["O"] + wid["O"] / 2 + 1.4
    upi = (right - left) / 10.0  # data units per inch of a 10-inch figure
    gap = high + _LABELS_IN * upi  # between the Q, K, V rows
    ys = {"X": 0.0, "Q": gap, "K": 0.0, "V": -gap, "S": gap / 2, "W": gap / 2}
    ys["O"] = (ys["W"] + ys["V"]) / 2
    bottom, top = -gap - high / 2 - 0.6 * upi, gap + high / 2 + 0.45 * upi
    fig, ax = _canvas(10.0, (left, right), (bottom, top))
    colors = dict(X=GREY, Q=BLUE, K=VERMILLION, V=GREEN, S=ORANGE, W=ORANGE, O=PURPLE)
    box = {}
    for i, key in enumerate("XQKVSWO"):
        box[key] = _matrix(
            ax,
            (xs[key], ys[key]),
            shapes[names[i]],
            cell,
            colors[key],
            symbol=symbols[i],
            dims=dims[i],
            note=notes.get(key, ""),
        )
    # 1) project: X -> Q, K, V
    for key, label, pd, ps in zip("QKV", proj, proj_dims, p_shapes, strict=True):
        start = (box["X"][2], ys["X"])
        end = (box[key][0], ys[key])
        text = f"{label}\n{tex(pd)}\n({ps[0]} × {ps[1]})"
        _arrow(ax, start, end, text, where=0.55)
    # 2) scores from Q and K, 3) softmax, 4) weighted sum of the values
    _arrow(ax, (box["Q"][2], ys["Q"]), (box["S"][0], ys["S"]))
    _arrow(ax, (box["K"][2], ys["K"]), (box["S"][0], ys["S"]))
    _arrow(ax, (box["S"][2], ys["S"]), (box["W"][0], ys["W"]), softmax, above=True)
    _arrow(ax, (box["W"][2], box["W"][3]), (box["O"][0], ys["O"]))  # clear of notes
    _arrow(ax, (box["V"][2], ys["V"]), (box["O"][0], ys["O"]))
    # which way the weights sum to 1
    x0, y0, x1, y1 = box["W"]
    if rows:
        start, end = (x0 + 0.05, y1 - cell / 2), (x1 - 0.05, y1 - cell / 2)
    else:
        start, end = (x0 + cell / 2, y1 - 0.05), (x0 + cell / 2, y0 + 0.05)
    ax.add_artist(
        FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, lw=1.5)
    )
    ax.set_title(title, size=FONT + 1)
    _legend(
        fig,
        [
            ("input", GREY),
            ("queries", BLUE),
            ("keys", VERMILLION),
            ("values", GREEN),
            ("scores, weights", ORANGE),
            ("output", PURPLE),
        ],
        ncol=6,
    )
    return fig


# --- multi-head attention ---------------------------------------------------


def _multi_head_shapes(T: int, D: int, H: int) -> dict[str, tuple[int, ...]]:
    """The shapes of every step, from a run of ``MultiHeadAttention(D, H)``."""
    from selfattn.modules import MultiHeadAttention

    gen = torch.Generator().manual_seed(0)
    mha = MultiHeadAttention(D, H, generator=gen)
    x = torch.randn(1, T, D, generator=gen)  # (1, T, D)
    with torch.no_grad():
        Q, V = mha.W_q(x), mha.W_v(x)  # (1, T, D) each (K alike)
        v = mha._split(V)  # (1, H, T, d_k)
        weights = mha.attention_weights(x)  # (1, H, T, T)
        heads = weights @ v  # (1, H, T, d_k)
        out = mha._merge(heads)  # (1, T, D): concat, then W_o
    return {
        "x": tuple(x.shape[1:]),
        "W_q": tuple(mha.W_q.weight.T.shape),  # (D, D)
        "Q": tuple(Q.shape[1:]),
        "q_h": tuple(mha._split(Q).shape[1:]),  # (H, T, d_k)
        "weights": tuple(weights.shape[1:]),  # (H, T, T)
        "heads": tuple(heads.shape[1:]),  # (H, T, d_k)
        "concat": (heads.shape[2], mha.W_o.in_features),  # (T, H d_k)
        "W_o": tuple(mha.W_o.weight.T.shape),  # (D, D)
        "out": tuple(out.shape[1:]),
    }


def _head_colors(H: int) -> list[str]:
    """One colour per head: Okabe-Ito (no yellow) up to 7 heads, viridis beyond."""
    okabe = [BLUE, VERMILLION, GREEN, ORANGE, SKY, PURPLE, BLACK]
    if H <= len(okabe):
        return okabe[:H]
    cmap = plt.get_cmap("viridis")
    return [cmap(h / (H - 1)) for h in range(H)]


def multi_head_flow(*, T: int = 4, D: int = 8, H: int = 2) -> Figure:
    r"""Draw multi-head attention: project, split into heads, attend, concat, ``W^O``.

    .. math::
        \operatorname{head}_h = \operatorname{softmax}\!\big(q_h k_h^\top /
        \sqrt{d_k}\big)\, v_h,\qquad
        \text{out} = [\operatorname{head}_1; \dots; \operatorname{head}_H]\, W^O

    ``x`` (``T × D``) is projected by :math:`W_q, W_k, W_v` (``D × D``) to
    :math:`Q, K, V`; the ``D`` columns of each are split into ``H`` heads of
    ``d_k = D / H`` columns (coloured by head); each head attends on its own
    (weights ``T × T``); the heads' outputs are concatenated back to
    ``T × D`` and mixed by :math:`W^O` (Vaswani et al., 2017, sec. 3.2.2).
    Heads are numbered 1 to ``H``; beyond 4 heads, heads 1, 2 and ``H`` are
    drawn. The shapes are those of a run of
    :class:`selfattn.modules.MultiHeadAttention` ``(D, H)`` (its projections, its
    ``_split``, ``attention_weights`` and ``_merge``) on a dummy input.

    Args:
        T: sequence length; D: model width; H: number of heads (must divide D).

    Returns:
        The figure.
    """
    T, D, H = _check_int("T", T), _check_int("D", D), _check_int("H", H)
    if D % H:
        raise ValueError(
            f"D={D} must be divisible by H={H} (each head gets d_k = D / H columns)"
        )
    shapes = _multi_head_shapes(T, D, H)
    d_k = shapes["q_h"][-1]
    colors = _head_colors(H)
    lanes = list(range(H)) if H <= 4 else [0, 1, None, H - 1]  # None: the dots
    cell = min(0.28, 2.4 / max(T, D))
    hT, wD = T * cell, shapes["Q"][1] * cell
    wT, wk = shapes["weights"][-1] * cell, shapes["heads"][-1] * cell
    xs = {"x": 0.0}
    xs["QKV"] = wD / 2 + 3.2 + wD / 2
    xs["W"] = xs["QKV"] + wD / 2 + 3.4 + wT / 2
    xs["head"] = xs["W"] + wT / 2 + 1.8 + wk / 2
    xs["concat"] = xs["head"] + wk / 2 + (2.2 if len(lanes) <= 2 else 3.2) + wD / 2
    xs["out"] = xs["concat"] + wD / 2 + 3.0 + wD / 2
    left, right = -wD / 2 - 0.5, xs["out"] + wD / 2 + 0.6
    upi = (right - left) / 11.0  # data units per inch of an 11-inch figure
    qkv_gap = lane_gap = hT + _LABELS_IN * upi
    lane_y = [(len(lanes) - 1) / 2 * lane_gap - n * lane_gap for n in range(len(lanes))]
    half = max(qkv_gap, lane_y[0]) + hT / 2 + 0.45 * upi
    fig, ax = _canvas(11.0, (left, right), (-half - 0.75 * upi, half), bottom=0.8)
    col_colors = [colors[c // d_k] for c in range(shapes["Q"][1])]
    box = {
        "x": _matrix(ax, (0, 0), shapes["x"], cell, GREY, symbol="$x$", dims="T × D")
    }
    # 1) project: x -> Q, K, V, whose columns fall into H heads
    for n, (name, w) in enumerate((("Q", "W_q"), ("K", "W_k"), ("V", "W_v"))):
        y = qkv_gap * (1 - n)
        box[name] = _matrix(
            ax,
            (xs["QKV"], y),
            shapes["Q"],
            cell,
            BLACK,
            symbol=f"${name} = xW_{name.lower()}$",
            dims="T × D",
            col_colors=col_colors,
        )
        pd = shapes["W_q"]
        label = f"${w}$\nD × D\n({pd[0]} × {pd[1]})"
        _arrow(ax, (box["x"][2], 0), (box[name][0], y), label, where=0.62)
    # 2) split: head h takes columns (h-1) d_k ... h d_k - 1 of Q, K and V
    bx = box["Q"][2] + 0.35
    ax.plot([bx, bx], [qkv_gap, -qkv_gap], color=BLACK, lw=1.3)
    for y in (qkv_gap, 0.0, -qkv_gap):
        ax.plot([box["Q"][2] + 0.05, bx], [y, y], color=BLACK, lw=1.3)
    for n, h in enumerate(lanes):
        y = lane_y[n]
        if h is None:
            ax.text(xs["W"], y, "⋮", ha="center", va="center", size=FONT + 6)
            continue
        W = _matrix(
            ax,
            (xs["W"], y),
            shapes["weights"][1:],
            cell,
            colors[h],
            symbol=f"head {h + 1}",
            dims="T × T",
        )
        _arrow(ax, (bx, 0), (W[0], y))
        Z = _matrix(
            ax, (xs["head"], y), shapes["heads"][1:], cell, colors[h], dims="T × d_k"
        )
        _arrow(ax, (W[2], y), (Z[0], y), f"$\\cdot v_{{{h + 1}}}$", above=True)
        spread = 0.8 * hT * (0.5 - n / max(len(lanes) - 1, 1))  # fan into concat
        _arrow(ax, (Z[2], y), (xs["concat"] - wD / 2, spread if len(lanes) > 1 else 0))
    # 3) concatenate the heads, 4) mix them with W^O
    C = _matrix(
        ax,
        (xs["concat"], 0),
        shapes["concat"],
        cell,
        BLACK,
        symbol="concat",
        dims="T × D",
        col_colors=col_colors,
    )
    O = _matrix(
        ax, (xs["out"], 0), shapes["out"], cell, GREY, symbol="out", dims="T × D"
    )
    wo = shapes["W_o"]
    label = f"$W^O$\n{tex('D × D')}\n({wo[0]} × {wo[1]})"
    _arrow(ax, (C[2], 0), (O[0], 0), label, above=True)
    formula = (
        f"split: head $h$ gets $d_k = D/H$ = {d_k} of the $D$ = {D} columns of "
        "$Q, K, V$ (its colour): $q_h, k_h, v_h$\n"
        r"in head $h$: weights $= \mathrm{softmax}(q_h k_h^\top/\sqrt{d_k})$, "
        r"output $=$ weights $\cdot\, v_h$"
    )
    ax.text(
        (xs["QKV"] + xs["out"]) / 2,
        -half - 0.15 * upi,
        formula,
        ha="center",
        va="top",
        size=SMALL,
    )
    ax.set_title("Multi-head attention (selfattn.MultiHeadAttention)", size=FONT + 1)
    shown = range(H) if H <= 8 else [h for h in lanes if h is not None]
    entries = [("input, output", GREY)] + [(f"head {h + 1}", colors[h]) for h in shown]
    _legend(fig, entries, ncol=min(len(entries), 5))
    return fig
