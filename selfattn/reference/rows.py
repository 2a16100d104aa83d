"""The oracle in the row convention (PyTorch's): a token is a row of ``X``."""

from __future__ import annotations

import math

import numpy as np

from selfattn.reference._common import _array, _mask, masked_softmax

__all__ = ["attention_rows", "attention_loop"]


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
