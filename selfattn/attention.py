r"""Scaled dot-product attention and the normalisations it rests on.

The three stages of attention (score, normalise, weighted sum) in their
standard form (Vaswani et al., 2017, eq. 1):

.. math::

    \operatorname{Attention}(Q, K, V)
        = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{d_k}}\Big) V .

Row convention, batch first: a query is a row of ``q``. Masks are boolean and
True means *may attend*. A query row with no allowed key gets all-zero weights
and a zero output (never NaN).

:func:`scaled_dot_product_attention` computes the formula step by step and
returns what it computes, ``(out, weights)``. The modules of
:mod:`selfattn.modules` need only ``out`` in their ``forward``; they get it
from PyTorch's fused kernel through a private helper of this module, and the
weights from the explicit function (their ``attention_weights`` method).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from selfattn._checks import (
    check_finite,
    check_mask,
    check_qkv,
    check_tensor,
    shape_str,
)

__all__ = ["masked_softmax", "relu_weights", "scaled_dot_product_attention"]

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def masked_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    r"""Softmax over ``dim`` that gives masked entries exactly zero weight.

    .. math:: w_j = \frac{m_j\, e^{s_j}}{\sum_l m_l\, e^{s_l}}

    where :math:`m_j \in \{0, 1\}` is the mask. A score of ``-inf`` counts as
    masked. A row in which every entry is masked gets all-zero weights (not
    NaN, and a zero gradient). The input is never modified. Float16 /
    bfloat16 scores are normalised in float32 and cast back.

    Args:
        scores: attention scores, e.g. ``(..., T_q, T_k)``.
        mask: bool, broadcastable to ``scores``; True = may attend.
        dim: the dimension to normalise over (the keys).

    Returns:
        Weights of the shape and dtype of ``scores``; each row sums to 1, or
        to 0 where the row is fully masked.
    """
    check_tensor("scores", scores)
    check_finite("scores", scores)
    if not scores.is_meta and torch.isposinf(scores).any():
        raise ValueError(
            f"scores contains +inf (shape {shape_str(scores)}); the softmax of "
            "+inf is undefined"
        )
    if mask is not None:
        check_mask(mask, scores.shape)
        mask = mask.expand(scores.shape)  # so any `dim` indexes the mask too
    work = scores.float() if scores.dtype in _LOW_PRECISION else scores
    neg_inf = torch.isneginf(work)
    if work.is_meta or neg_inf.any():  # -inf is a masked entry: fold it in
        mask = ~neg_inf if mask is None else mask & ~neg_inf
    if mask is None:
        return torch.softmax(work, dim=dim).to(scores.dtype)
    any_allowed = mask.any(dim=dim, keepdim=True)
    # -inf at masked entries; a fully masked row is replaced by zeros so the
    # softmax stays finite (forward and backward), then zeroed by the mask.
    filled = work.masked_fill(~mask, float("-inf"))
    filled = torch.where(any_allowed, filled, torch.zeros_like(filled))
    weights = torch.softmax(filled, dim=dim) * mask
    return weights.to(scores.dtype)


def relu_weights(
    scores: Tensor, mask: Tensor | None = None, dim: int = -1, normalize: bool = True
) -> Tensor:
    r"""ReLU instead of softmax: :math:`w_j = \max(0, s_j) / \sum_l \max(0, s_l)`.

    The lecture notes remark that softmax is not the only choice of
    normalisation. With ``normalize=False`` the weights are just
    :math:`\max(0, s_j)`. A row whose positive part is all zero (or which is
    fully masked) gets all-zero weights.

    Args:
        scores: ``(..., T_q, T_k)``.
        mask: bool, broadcastable to ``scores``; True = may attend.
        dim: the dimension to normalise over.
        normalize: divide by the row sum so non-zero rows sum to 1.

    Returns:
        Non-negative weights of the shape of ``scores``.
    """
    check_tensor("scores", scores)
    check_finite("scores", scores)
    if normalize and not scores.is_meta and torch.isposinf(scores).any():
        raise ValueError(
            f"scores contain +inf (shape {shape_str(scores)}); ReLU normalisation "
            "would divide inf by inf. Mask such entries or clamp the scores."
        )
    w = torch.relu(scores)
    if mask is not None:
        check_mask(mask, scores.shape)
        w = w * mask
    if not normalize:
        return w
    total = w.sum(dim=dim, keepdim=True)
    return torch.where(total > 0, w / torch.where(total > 0, total, 1.0), 0.0)


def _combined_mask(
    mask: Tensor | None, causal: bool, T_q: int, T_k: int, device: torch.device
) -> Tensor | None:
    """The user's mask and the causal mask in one, at least ``(1, T_k)``-shaped
    (PyTorch's kernel rejects a 1-D mask for 4-D inputs)."""
    if mask is not None and mask.dim() < 2:
        mask = mask.reshape((1,) * (2 - mask.dim()) + tuple(mask.shape))
    if not causal:
        return mask
    tril = torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril()
    return tril if mask is None else mask & tril


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    r"""softmax(q kᵀ · scale) v, with scale = 1/√d_k by default (Vaswani et al., 2017).

    .. math:: \operatorname{Attention}(q, k, v)
        = \operatorname{softmax}\!\Big(\frac{q k^\top}{\sqrt{d_k}}\Big) v

    Computed as written, and returning both what it computes::

        scores = q @ k.transpose(-2, -1) * scale          # (..., T_q, T_k)
        weights = masked_softmax(scores, mask)             # rows sum to 1
        out = weights @ v                                  # (..., T_q, d_v)

    The output equals that of
    :func:`torch.nn.functional.scaled_dot_product_attention` (with
    ``attn_mask=mask``) wherever every query has a key to attend to.

    Args:
        q: queries ``(..., T_q, d_k)``.
        k: keys ``(..., T_k, d_k)``.
        v: values ``(..., T_k, d_v)``.
        mask: bool, broadcastable to ``(..., T_q, T_k)``; True = may attend.
        causal: also forbid query ``i`` to attend key ``j > i`` (top-left
            aligned, as PyTorch's ``is_causal``).
        scale: multiplier of the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(out, weights)``: ``out`` ``(..., T_q, d_v)`` and ``weights``
        ``(..., T_q, T_k)``, each row summing to 1. A query with no allowed
        key gets zero weights and a zero output (not NaN).
    """
    full, scale = _checked_mask_and_scale(q, k, v, mask, causal, scale)
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., T_q, T_k)
    weights = masked_softmax(scores, full)  # (..., T_q, T_k)
    out = weights @ v  # (..., T_q, d_v)
    return out, weights


def _checked_mask_and_scale(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    causal: bool,
    scale: float | None,
) -> tuple[Tensor | None, float]:
    """Check the arguments; return the combined (user & causal) mask and scale."""
    check_qkv(q, k, v)
    T_q, T_k = q.shape[-2], k.shape[-2]
    if mask is not None:
        check_mask(mask, q.shape[:-2] + (T_q, T_k))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return _combined_mask(mask, causal, T_q, T_k, q.device), scale


def _attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """The output of :func:`scaled_dot_product_attention`, fast: the modules' path.

    Dispatches to PyTorch's fused kernel when every query row has a key to
    attend to; otherwise (a fully masked row, for which PyTorch < 2.5 returns
    NaN) and on the ``meta`` device (values unknown) it takes the explicit
    path. Returns ``(..., T_q, d_v)``.
    """
    full, s = _checked_mask_and_scale(q, k, v, mask, causal, scale)
    no_empty_row = full is None or (not q.is_meta and bool(full.any(dim=-1).all()))
    if no_empty_row:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=full, scale=s)
    return scaled_dot_product_attention(q, k, v, mask, causal=causal, scale=scale)[0]
