"""The single-head pipeline with the shapes of a real forward pass of
:mod:`selfattn`, in the library's row convention or the lecture's columns
(multi-head attention is :mod:`selfattn.lab.diagrams.heads`)."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure

import selfattn.lab.diagrams._draw as d
from selfattn import reference  # read at each call: a test stands in a wider one
from selfattn._checks import check_ints
from selfattn.attention import scaled_dot_product_attention
from selfattn.modules import SelfAttention


def _pipeline_shapes(convention: str, T: int, D: int, d_k: int, d_v: int) -> tuple:
    """The shapes of ``X Q K V S W O`` and the projections, from a run."""
    if convention == "rows":
        gen = torch.Generator().manual_seed(0)
        layer = SelfAttention(D, d_k, d_v, generator=gen)
        x = torch.randn(1, T, D, generator=gen)  # (1, T, D)
        with torch.no_grad():
            q, k, v = layer.W_q(x), layer.W_k(x), layer.W_v(x)  # (1, T, d)
            scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (1, T_q, T_k)
            out, weights = scaled_dot_product_attention(q, k, v)  # (1, T, d_v)
        named = dict(X=x, Q=q, K=k, V=v, S=scores, W=weights, O=out)
        proj = (layer.W_q.weight.T, layer.W_k.weight.T, layer.W_v.weight.T)
    else:
        rng = np.random.default_rng(0)
        I = rng.standard_normal((D, T))  # (D, T): the inputs as columns
        W_q, W_k = rng.standard_normal((2, d_k, D))  # (d_k, D) each
        W_v = rng.standard_normal((d_v, D))  # (d_v, D)
        res = reference.self_attention_columns(I, W_q, W_k, W_v)
        named = dict(X=I, Q=W_q @ I, K=W_k @ I, V=W_v @ I, S=res.A, W=res.A_prime)
        named |= dict(O=res.O)
        proj = (W_q, W_k, W_v)
    shapes = {key: tuple(a.shape[-2:]) for key, a in named.items()}
    return shapes, [tuple(w.shape) for w in proj]


TEXT = {  # what each convention calls the seven matrices X Q K V S W O
    "rows": dict(
        dims=("T × D", "T × d_k", "T × d_k", "T × d_v", "T_q × T_k", "T_q × T_k")
        + ("T × d_v",),
        symbols=("$X$", "$Q = XW_q$", "$K = XW_k$", "$V = XW_v$")
        + (r"$S = QK^\top/\sqrt{d_k}$", "weights", "out"),
        notes={"W": "rows sum to 1", "O": r"out $=$ weights $V$"},
        proj=("$W_q$", "$W_k$", "$W_v$"),
        proj_dims=("D × d_k", "D × d_k", "D × d_v"),
        softmax="softmax\nof each row",
        title="Self-attention, row convention (selfattn, PyTorch)",
    ),
    "columns": dict(
        dims=("D × T", "d_k × T", "d_k × T", "d_v × T", "T_k × T_q", "T_k × T_q")
        + ("d_v × T",),
        symbols=("$I$", "$Q = W^qI$", "$K = W^kI$", "$V = W^vI$")
        + (r"$A = K^\top Q/\sqrt{d_k}$", "$A'$", "$O$"),
        notes={"W": "columns sum to 1", "O": "$O = VA'$"},
        proj=("$W^q$", "$W^k$", "$W^v$"),
        proj_dims=("d_k × D", "d_k × D", "d_v × D"),
        softmax="softmax\nof each column",
        title="Self-attention, column convention (the lecture)",
    ),
}
LEGEND = [("input", "input"), ("queries", "query"), ("keys", "key")]
LEGEND += [("values", "value"), ("scores, weights", "score"), ("output", "output")]
COLOR = dict(X="input", Q="query", K="key", V="value", S="score", W="weight")
COLOR |= dict(O="output")


def _layout(size: dict[str, tuple[int, int]], cell: float):
    """The centres of the seven matrices, and the canvas's limits."""
    high = max(s[0] for s in size.values()) * cell
    wid = {key: s[1] * cell for key, s in size.items()}
    qkv = max(wid[n] for n in "QKV")
    xs = {"X": 0.0}
    xs["Q"] = xs["K"] = xs["V"] = wid["X"] / 2 + 3.6 + qkv / 2
    xs["S"] = xs["Q"] + qkv / 2 + 2.6 + wid["S"] / 2
    xs["W"] = xs["S"] + wid["S"] / 2 + 2.8 + wid["W"] / 2
    xs["O"] = xs["W"] + wid["W"] / 2 + 3.0 + wid["O"] / 2
    left, right = -wid["X"] / 2 - 0.6, xs["O"] + wid["O"] / 2 + 1.4
    upi = (right - left) / 10.0  # data units per inch of a 10-inch figure
    gap = high + d.LABELS_IN * upi  # between the Q, K, V rows
    ys = {"X": 0.0, "Q": gap, "K": 0.0, "V": -gap, "S": gap / 2, "W": gap / 2}
    ys["O"] = (ys["W"] + ys["V"]) / 2
    bottom, top = -gap - high / 2 - 0.6 * upi, gap + high / 2 + 0.45 * upi
    return xs, ys, (left, right, bottom, top)


def qkv_pipeline(
    convention: str = "rows", *, T: int = 4, D: int = 6, d_k: int = 3, d_v: int = 3
) -> Figure:
    r"""Draw single-head self-attention as a pipeline of matrices with their shapes.

    Input → :math:`Q, K, V` → scores → weights → output, each matrix a grid of
    its real shape, labelled with its symbol and its shape in symbols and in
    numbers, in either convention of the course (:mod:`selfattn.reference`):

    * ``"rows"`` (the library, PyTorch): :math:`X` is ``T × D``, :math:`Q = X
      W_q`, the weights are the softmax of each row of :math:`S = Q K^\top /
      \sqrt{d_k}` (``T_q × T_k``), :math:`\text{out} = \text{weights}\, V`.
    * ``"columns"`` (the lecture): :math:`I` is ``D × T``, :math:`Q = W^q I`,
      :math:`A'` is the softmax of each column of :math:`A = K^\top Q /
      \sqrt{d_k}` (``T_k × T_q``), :math:`O = V A'`.

    The shapes are those of a run of :class:`selfattn.modules.SelfAttention`
    (rows) or :func:`selfattn.reference.self_attention_columns` (columns).

    Args:
        convention: ``"rows"`` or ``"columns"``.
        T: sequence length; D: input width; d_k: query/key width;
            d_v: value width (all positive).

    Returns:
        The figure.
    """
    if convention not in ("rows", "columns"):
        raise ValueError(f"convention must be 'rows' or 'columns', got {convention!r}")
    check_ints(T=T, D=D, d_k=d_k, d_v=d_v)
    size, proj = _pipeline_shapes(convention, T, D, d_k, d_v)
    text = TEXT[convention]
    cell = min(0.32, 2.4 / max(T, D, d_k, d_v))
    xs, ys, (left, right, bottom, top) = _layout(size, cell)
    fig, ax = d.canvas(10.0, (left, right), (bottom, top))
    box = {}
    for key, symbol, dims in zip("XQKVSWO", text["symbols"], text["dims"], strict=True):
        at, names = (xs[key], ys[key]), dict(symbol=symbol, dims=dims)
        names["note"] = text["notes"].get(key, "")
        box[key] = d.matrix(ax, at, size[key], cell, COLOR[key], **names)
    # 1) project: X -> Q, K, V
    for n, key in enumerate("QKV"):
        ps = proj[n]
        label = f"{text['proj'][n]}\n{d.tex(text['proj_dims'][n])}\n({ps[0]} × {ps[1]})"
        d.arrow(ax, (box["X"][2], ys["X"]), (box[key][0], ys[key]), label, where=0.55)
    # 2) scores from Q and K, 3) softmax, 4) weighted sum of the values
    for key in "QK":
        d.arrow(ax, (box[key][2], ys[key]), (box["S"][0], ys["S"]))
    softmax = text["softmax"]
    d.arrow(ax, (box["S"][2], ys["S"]), (box["W"][0], ys["W"]), softmax, above=True)
    d.arrow(ax, (box["W"][2], box["W"][3]), (box["O"][0], ys["O"]))  # clear of notes
    d.arrow(ax, (box["V"][2], ys["V"]), (box["O"][0], ys["O"]))
    # which way the weights sum to 1
    x0, y0, x1, y1 = box["W"]
    if convention == "rows":
        start, end = (x0 + 0.05, y1 - cell / 2), (x1 - 0.05, y1 - cell / 2)
    else:
        start, end = (x0 + cell / 2, y1 - 0.05), (x0 + cell / 2, y0 + 0.05)
    d.arrow(ax, start, end, mutation_scale=10, lw=1.5)
    ax.set_title(text["title"], size=d.FONT + 1)
    d.legend(fig, LEGEND)
    return fig
