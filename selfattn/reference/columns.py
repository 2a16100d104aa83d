"""The oracle in the lecture's column convention: inputs are the columns of ``I``."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from selfattn.reference._common import _array, softmax

__all__ = [
    "ColumnAttention",
    "self_attention_columns",
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
    A: np.ndarray  # (T_k, T_q): column i = scores of query i
    A_prime: np.ndarray  # (T_k, T_q): A normalised column by column


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
    A = s * (K.T @ Q)  # (T_k, T_q): A[j, i] = s * k^j . q^i
    A_prime = softmax(A, axis=0) if normalize == "softmax" else _relu_normalize(A, 0)
    O = V @ A_prime  # (d_v, T): column i = sum_j A'[j, i] v^j = b^i
    return ColumnAttention(O, A, A_prime)


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

    The same matrix transposed: column ``i`` of ``A'`` is row ``i`` of the
    weights (the attention distribution of query ``i``). Works both ways.

    Taught in :doc:`/notebooks/matrix-view`.

    Examples:
        >>> A_cols = np.array([[0.9, 0.2], [0.1, 0.8]])  # column i: query i's weights
        >>> column_to_row_weights(A_cols)  # row i: query i's weights
        array([[0.9, 0.1],
               [0.2, 0.8]])
    """
    return np.swapaxes(_array("A_prime", A_prime), -1, -2)
