r"""Numpy reference implementations: the oracle, in both conventions.

Independent of torch, written for clarity, computed in float64. The library
(:mod:`selfattn.attention`) is tested against these functions.

**Column convention** (the lecture notes). The inputs :math:`a^1, \dots, a^T`
are the *columns* of :math:`I \in \mathbb{R}^{D \times T}`:

.. math::

    Q = W^q I,\quad K = W^k I,\quad V = W^v I,\qquad
    A = K^\top Q\ \ (T_k \times T_q),\qquad
    A' = \operatorname{softmax}_{\text{columns}}(A),\qquad O = V A'.

Column ``j`` of ``A`` holds the scores of query ``j``; each column of ``A'``
sums to 1; column ``j`` of ``O`` is the output :math:`b^j`.

**Row convention** (PyTorch, and the rest of this library). A token is a
*row* of :math:`X \in \mathbb{R}^{T \times D}`: ``Q = X W_q``, weights
``softmax_rows(Q K^T)``, ``out = weights V``.

**Correspondence.** With :math:`X = I^\top` and
:math:`W_q = (W^q)^\top` (likewise ``W_k``, ``W_v``), every row quantity is
the transpose of its column twin:
:math:`Q_{\text{row}} = X W_q = (W^q I)^\top = Q_{\text{col}}^\top`,
:math:`Q_{\text{row}} K_{\text{row}}^\top = Q^\top K = (K^\top Q)^\top = A^\top`,
weights :math:`= A'^\top` and :math:`\text{out} = A'^\top V^\top = (V A')^\top
= O^\top`.

**Scale.** Everywhere in ``selfattn``, ``scale=None`` means
:math:`1/\sqrt{d_k}` (Vaswani et al., 2017). The lecture's matrix view uses
plain dot products: pass ``scale=1.0`` to reproduce it.

**Masks** are boolean, True = may attend; a query with no allowed key gets
zero weights and a zero output.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "ColumnAttention",
    "softmax",
    "masked_softmax",
    "self_attention_columns",
    "attention_rows",
    "attention_loop",
    "columns_to_rows",
    "column_to_row_weights",
]


class ColumnAttention(NamedTuple):
    """Result of :func:`self_attention_columns` (lecture notation).

    Taught in :doc:`/notebooks/matrix-view`.

    Examples:
        >>> W = np.ones((2, 3))  # W^q = W^k = W^v, (d, D)
        >>> res = self_attention_columns(np.eye(3), W, W, W)  # a ColumnAttention
        >>> res.O.shape, res.A_prime.shape  # (d_v, T), (T_k, T_q)
        ((2, 3), (3, 3))
    """

    O: np.ndarray  # (d_v, T): outputs b^1..b^T as columns
    A: np.ndarray  # (T_k, T_q): column j = scores of query j
    A_prime: np.ndarray  # (T_k, T_q): A normalised column by column


def _array(name: str, x: object, ndim: int | None = None) -> np.ndarray:
    """``x`` as a float64 array, checked for dimensions and NaN."""
    a = np.asarray(x, dtype=np.float64)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if np.isnan(a).any():
        raise ValueError(f"{name} contains NaN (shape {a.shape})")
    return a


def _mask(mask: object, shape: tuple[int, ...]) -> np.ndarray:
    """A bool mask broadcast to ``shape`` (True = may attend)."""
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"mask must be boolean (True = may attend), got {m.dtype}")
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {m.shape} does not broadcast to the scores' shape "
            f"{shape} = (..., T_q, T_k)"
        ) from None


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax :math:`e^{x_i - m} / \sum_l e^{x_l - m}`.

    Taught in :doc:`/notebooks/self-attention-qkv`.

    Args:
        x: any array; axis: the axis that sums to 1 (``0`` for the columns of
            the lecture's ``A``).
    Returns:
        An array of the shape of ``x``.

    Examples:
        >>> softmax(np.array([[0.0, np.log(3.0)]]), axis=-1)
        array([[0.25, 0.75]])
    """
    x = _array("x", x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def masked_softmax(
    x: np.ndarray, mask: np.ndarray | None = None, axis: int = -1
) -> np.ndarray:
    """Softmax over ``axis`` with masked entries at exactly 0 (True = keep).

    A slice with no allowed entry is all zeros, never NaN.

    Taught in :doc:`/notebooks/scoring-functions`.

    Args:
        x: scores; mask: bool, broadcastable to ``x``; axis: normalised axis.
    Returns:
        An array of the shape of ``x``.

    Examples:
        >>> masked_softmax(np.array([[1.0, 2.0, 3.0]]), np.array([[True, True, False]]))
        array([[0.26894142, 0.73105858, 0.        ]])
    """
    x = _array("x", x)
    if mask is None:
        return softmax(x, axis)
    m = _mask(mask, x.shape)
    filled = np.where(m, x, -np.inf)
    top = filled.max(axis=axis, keepdims=True)
    e = np.where(m, np.exp(filled - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _relu_normalize(x: np.ndarray, axis: int) -> np.ndarray:
    """``max(0, x)`` divided by its sum over ``axis`` (all-zero stays zero)."""
    r = np.maximum(x, 0.0)
    total = r.sum(axis=axis, keepdims=True)
    return np.divide(r, total, out=np.zeros_like(r), where=total > 0)


def self_attention_columns(
    I: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    scale: float | None = None,
    normalize: str = "softmax",
) -> ColumnAttention:
    r"""Self-attention in the lecture's column convention: :math:`O = V A'`.

    .. math:: Q = W^q I,\ K = W^k I,\ V = W^v I,\ A = s\, K^\top Q,\
        A' = \operatorname{softmax}_{\text{columns}}(A),\ O = V A'

    Taught in :doc:`/notebooks/self-attention-qkv` and :doc:`/notebooks/matrix-view`.

    Args:
        I: inputs as columns ``(D, T)``.
        W_q: ``(d_k, D)``; W_k: ``(d_k, D)``; W_v: ``(d_v, D)``.
        scale: the factor :math:`s`; ``None`` means :math:`1/\sqrt{d_k}`,
            ``1.0`` gives the lecture's plain dot products.
        normalize: ``"softmax"``, or ``"relu"`` (:math:`\max(0, A)` divided
            by its column sum; an all-zero column stays zero).

    Returns:
        ``ColumnAttention(O, A, A_prime)``: ``O`` ``(d_v, T)``, ``A`` and
        ``A_prime`` ``(T, T)`` (keys down, queries across).

    Examples:
        >>> I = np.eye(3)  # three inputs as columns
        >>> O, A, A_prime = self_attention_columns(I, np.eye(3), np.eye(3), np.eye(3))
        >>> O.shape, np.allclose(A_prime.sum(axis=0), 1)  # each column sums to 1
        ((3, 3), True)
    """
    I = _array("I", I, ndim=2)
    W_q, W_k, W_v = _array("W_q", W_q, 2), _array("W_k", W_k, 2), _array("W_v", W_v, 2)
    D = I.shape[0]
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.shape[1] != D:
            raise ValueError(
                f"{name} must have D={D} columns to multiply I {I.shape}, "
                f"got {name} {W.shape}"
            )
    if W_q.shape[0] != W_k.shape[0]:
        raise ValueError(
            f"W_q {W_q.shape} and W_k {W_k.shape} must have the same d_k rows"
        )
    if normalize not in ("softmax", "relu"):
        raise ValueError(f"normalize must be 'softmax' or 'relu', got {normalize!r}")
    s = 1.0 / math.sqrt(W_q.shape[0]) if scale is None else float(scale)

    Q, K, V = W_q @ I, W_k @ I, W_v @ I  # (d_k, T), (d_k, T), (d_v, T)
    A = s * (K.T @ Q)  # (T_k, T_q): A[i, j] = s * k^i . q^j
    A_prime = softmax(A, axis=0) if normalize == "softmax" else _relu_normalize(A, 0)
    O = V @ A_prime  # (d_v, T): column j = sum_i A'[i, j] v^i = b^j
    return ColumnAttention(O, A, A_prime)


def _check_rows(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if x.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions, got {x.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q has d_k={Q.shape[-1]} but K has d_k={K.shape[-1]} "
            f"(Q {Q.shape}, K {K.shape})"
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K has T_k={K.shape[-2]} rows but V has {V.shape[-2]}; every key "
            f"needs a value (K {K.shape}, V {V.shape})"
        )
    if not (Q.shape[:-2] == K.shape[:-2] == V.shape[:-2]):
        raise ValueError(
            "Q, K, V must share leading (batch) dimensions, got "
            f"Q {Q.shape}, K {K.shape}, V {V.shape}"
        )


def attention_rows(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Attention in the row convention: ``softmax(Q K^T * scale) V``.

    Taught in :doc:`/notebooks/matrix-view`.

    Args:
        Q: ``(..., T_q, d_k)``; K: ``(..., T_k, d_k)``; V: ``(..., T_k, d_v)``.
        mask: bool, broadcastable to ``(..., T_q, T_k)``; True = may attend.
        scale: ``None`` means :math:`1/\sqrt{d_k}`.

    Returns:
        ``(out, weights)``: ``(..., T_q, d_v)`` and ``(..., T_q, T_k)``.

    Examples:
        >>> x = np.random.default_rng(0).normal(size=(4, 3))
        >>> out, w = attention_rows(x, x, x)
        >>> out.shape, np.allclose(w.sum(axis=-1), 1)
        ((4, 3), True)
    """
    Q, K, V = _array("Q", Q), _array("K", K), _array("V", V)
    _check_rows(Q, K, V)
    s = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else float(scale)
    scores = s * (Q @ np.swapaxes(K, -1, -2))  # (..., T_q, T_k)
    weights = masked_softmax(scores, mask, axis=-1)  # (..., T_q, T_k)
    return weights @ V, weights  # (..., T_q, d_v)


def attention_loop(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The slowest, most obvious attention: one query at a time, explicit sums.

    For each query :math:`i`: :math:`s_j = \text{scale} \sum_c q_{ic} k_{jc}`
    over allowed keys :math:`j`, :math:`w_j = e^{s_j - m} / \sum_l e^{s_l - m}`
    and :math:`o_i = \sum_j w_j v_j`. Same arguments and results as
    :func:`attention_rows`.

    Taught in :doc:`/notebooks/matrix-view`.

    Examples:
        >>> x = np.random.default_rng(0).normal(size=(4, 3))
        >>> np.allclose(attention_loop(x, x, x)[0], attention_rows(x, x, x)[0])
        True
    """
    Q, K, V = _array("Q", Q), _array("K", K), _array("V", V)
    _check_rows(Q, K, V)
    (T_q, d_k), T_k, d_v = Q.shape[-2:], K.shape[-2], V.shape[-1]
    s = 1.0 / math.sqrt(d_k) if scale is None else float(scale)
    full = np.ones(Q.shape[:-1] + (T_k,), dtype=bool) if mask is None else mask
    full = _mask(full, Q.shape[:-1] + (T_k,))
    out = np.zeros(Q.shape[:-1] + (d_v,))
    weights = np.zeros(Q.shape[:-1] + (T_k,))
    for b in np.ndindex(Q.shape[:-2]):  # every batch/head index
        for i in range(T_q):
            allowed = [j for j in range(T_k) if full[b + (i, j)]]
            if not allowed:
                continue  # no key: zero weights, zero output
            score = {}
            for j in allowed:
                score[j] = s * sum(Q[b + (i, c)] * K[b + (j, c)] for c in range(d_k))
            m = max(score.values())
            total = sum(math.exp(score[j] - m) for j in allowed)
            for j in allowed:
                w = math.exp(score[j] - m) / total
                weights[b + (i, j)] = w
                for c in range(d_v):
                    out[b + (i, c)] += w * V[b + (j, c)]
    return out, weights


def columns_to_rows(
    I: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Column-convention inputs to row convention: transpose every matrix.

    :math:`X = I^\top`, :math:`W_q = (W^q)^\top`, ... so that
    ``X @ W_q == (W^q @ I).T``.

    Taught in :doc:`/notebooks/matrix-view`.

    Args:
        I: ``(D, T)``; W_q, W_k: ``(d_k, D)``; W_v: ``(d_v, D)``.
    Returns:
        ``(X, W_q, W_k, W_v)``: ``(T, D)``, ``(D, d_k)``, ``(D, d_k)``, ``(D, d_v)``.

    Examples:
        >>> I, W = np.arange(6.0).reshape(2, 3), np.ones((4, 2))  # D=2, T=3, d=4
        >>> X, W_q, W_k, W_v = columns_to_rows(I, W, W, W)
        >>> np.array_equal(X @ W_q, (W @ I).T)
        True
    """
    named = (("I", I), ("W_q", W_q), ("W_k", W_k), ("W_v", W_v))
    return tuple(_array(name, a, ndim=2).T for name, a in named)


def column_to_row_weights(A_prime: np.ndarray) -> np.ndarray:
    """The lecture's ``A'`` ``(T_k, T_q)`` as row-convention weights ``(T_q, T_k)``.

    The same matrix transposed: column ``j`` of ``A'`` is row ``j`` of the
    weights (the attention distribution of query ``j``). Works both ways.

    Taught in :doc:`/notebooks/matrix-view`.

    Examples:
        >>> A_cols = np.array([[0.9, 0.2], [0.1, 0.8]])  # column j: query j's weights
        >>> column_to_row_weights(A_cols)  # row i: query i's weights
        array([[0.9, 0.1],
               [0.2, 0.8]])
    """
    return np.swapaxes(_array("A_prime", A_prime), -1, -2)
