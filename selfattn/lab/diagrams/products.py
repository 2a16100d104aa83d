r"""Which row meets which column: the score product :math:`A = K^\top Q / \sqrt{d_k}`,
drawn as a hand calculation (Falk's scheme), every number computed."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
from selfattn.reference import self_attention_columns

_MAX_SIDE = 10  # cells per side that still show their numbers
_FILL = {  # (in the coloured row, in the coloured column): the cell's fill
    (True, True): d.fill(d.BLACK, 0.25),
    (True, False): d.fill("key", 0.35),
    (False, True): d.fill("query", 0.35),
    (False, False): "white",
}


def _grid(ax, x0, top, values, *, row=None, col=None, rows=(), cols=(), right=False):
    """Unit cells with numbers, top-left at ``(x0, top)``: row ``row`` and column
    ``col`` coloured (their crossing outlined), ``rows`` and ``cols`` labelled."""
    n_rows, n_cols = values.shape
    for (r, c), value in np.ndenumerate(values):
        x, y, fc = x0 + c, top - r - 1, _FILL[r == row, c == col]
        ax.add_artist(Rectangle((x, y), 1, 1, fc=fc, ec=d.GREY, lw=0.6))
        d.text(ax, x + 0.5, y + 0.5, f"{value:.2f}", d.SMALL - 1)
    xy = (x0, top - n_rows)
    ax.add_artist(Rectangle(xy, n_cols, n_rows, fc="none", ec=d.BLACK, lw=1.4))
    x, ha = (x0 + n_cols + 0.12, "left") if right else (x0 - 0.12, "right")
    for r, label in enumerate(rows):
        d.text(ax, x, top - r - 0.5, label, ha=ha)
    for c, label in enumerate(cols):
        d.text(ax, x0 + c + 0.5, top + 0.12, label, va="bottom")
    if row is not None and col is not None:  # the entry itself
        xy = (x0 + col, top - row - 1)
        ax.add_artist(Rectangle(xy, 1, 1, fc="none", ec=d.BLACK, lw=3.0, zorder=5))


def _checked(I, W_q, W_k, i: int, j: int) -> tuple:
    """The arguments of :func:`score_product` as float arrays, once checked."""
    I, W_q, W_k = (np.asarray(a, dtype=float) for a in (I, W_q, W_k))
    for name, a in (("I", I), ("W_q", W_q), ("W_k", W_k)):
        if a.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {a.shape}")
    D, T = I.shape
    if W_q.shape[1] != D or W_k.shape != W_q.shape:
        raise ValueError(
            f"W_q and W_k must both be (d_k, D) with D={D} (the rows of I), got "
            f"W_q {W_q.shape} and W_k {W_k.shape}"
        )
    d_k = W_q.shape[0]
    if max(T, d_k) > _MAX_SIDE:
        raise ValueError(
            f"at most {_MAX_SIDE} positions and query dimensions can show their "
            f"numbers, got T={T}, d_k={d_k}"
        )
    i, j = check_int("i", i), check_int("j", j)
    for name, n in (("i", i), ("j", j)):
        if n > T:
            raise ValueError(f"{name} must be at most T={T} (numbered from 1), got {n}")
    return I, W_q, W_k, i, j


def score_product(
    I: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, *, i: int, j: int
) -> Figure:
    r"""Draw :math:`A = K^\top Q / \sqrt{d_k}` with row :math:`j` of
    :math:`K^\top` meeting column :math:`i` of :math:`Q` in :math:`A_{j,i}`.

    In the lecture's columns (:math:`Q = W^q I`, :math:`K = W^k I`), :math:`Q`
    (``d_k × T``) is drawn above :math:`A` (``T × T``, keys down, queries across)
    and :math:`K^\top` (``T × d_k``) to its left, so each entry of :math:`A` sits
    where its key row and its query column meet; :math:`A_{j,i} = \alpha_{i,j}` is
    written out below as its dot product.

    Args:
        I: the inputs as columns ``(D, T)``; W_q, W_k: the lecture's
            :math:`W^q, W^k`, ``(d_k, D)`` each; ``T, d_k <= 10`` (every cell
            shows its number).
        i, j: the query and the key, numbered from 1 as in the maths.

    Returns:
        The figure.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> fig = score_product(rng.normal(size=(4, 5)), rng.normal(size=(3, 4)),
        ...                     rng.normal(size=(3, 4)), i=2, j=4)
        >>> len(fig.axes)
        1
    """
    I, W_q, W_k, i, j = _checked(I, W_q, W_k, i, j)
    T, d_k = I.shape[1], W_q.shape[0]
    Q, K = W_q @ I, W_k @ I  # (d_k, T) each: columns q^i, k^j
    A = self_attention_columns(I, W_q, W_k, W_k).A  # (T_k, T_q), scaled
    dot = float(K[:, j - 1] @ Q[:, i - 1])
    if not math.isclose(A[j - 1, i - 1], dot / math.sqrt(d_k), abs_tol=1e-12):
        raise AssertionError("the library's A disagrees with k^j . q^i / sqrt(d_k)")
    gap = 1.6  # between K^T and A, and between Q and A
    x_A, y_A = d_k + gap, T  # A: top-left corner; K^T left of it, Q above it
    xlim, ylim = (-1.2, x_A + T + 1.4), (-3.0, T + gap + d_k + 1.0)
    fig, ax = d.canvas(7.5, xlim, ylim, top=0.45, bottom=0.55)
    keys, queries = ([f"${x}^{{{n}}}$" for n in range(1, T + 1)] for x in "kq")
    _grid(ax, 0.0, y_A, K.T, row=j - 1, rows=keys)
    _grid(ax, x_A, y_A + gap + d_k, Q, col=i - 1, cols=queries)
    names = [f"key {n}" for n in range(1, T + 1)]
    _grid(ax, x_A, y_A, A, row=j - 1, col=i - 1, rows=names, right=True)
    d.text(ax, d_k / 2, y_A + 0.55, f"$K^\\top$\n({T} × {d_k})", d.FONT, va="bottom")
    left_of_Q = (x_A - 0.3, y_A + gap + d_k / 2)
    d.text(ax, *left_of_Q, f"$Q$\n({d_k} × {T})", d.FONT, ha="right")
    product = r"$A = K^\top Q / \sqrt{d_k}$" + f" ({T} × {T})"
    d.text(ax, x_A + T / 2, -0.25, product, d.FONT, va="top")
    terms = " + ".join(f"({K[c, j - 1]:.2f})({Q[c, i - 1]:.2f})" for c in range(d_k))
    root = math.sqrt(d_k)
    entry = f"$A_{{{j},{i}}} = k^{{{j}}} \\cdot q^{{{i}}} / \\sqrt{{{d_k}}}$"
    entry += f" = [{terms}] / {root:.2f}\n= {dot:.2f} / {root:.2f}"
    d.text(ax, (x_A + T) / 2, -1.2, f"{entry} = {A[j - 1, i - 1]:.2f}", va="top")
    ax.set_title(f"Row {j} of $K^\\top$ meets column {i} of $Q$", size=d.FONT + 1)
    key = [
        (f"row {j} of $K^\\top$: the key $k^{{{j}}}$", "key"),
        (f"column {i} of $Q$: the query $q^{{{i}}}$", "query"),
        (f"$A_{{{j},{i}}} = \\alpha_{{{i},{j}}}$", d.BLACK),
    ]
    d.legend(fig, key, ncol=3)
    return fig
