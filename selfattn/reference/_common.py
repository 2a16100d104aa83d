"""The numpy oracle's shared pieces: checked float64 arrays, masks, softmax."""

from __future__ import annotations

import numpy as np

__all__ = ["softmax", "masked_softmax"]


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
