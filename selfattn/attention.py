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
returns what it computes, ``(out, weights)``; :func:`masked_softmax` and
:func:`relu_weights` are the normalisations. The modules of
:mod:`selfattn.modules` need only ``out`` in their ``forward``: :func:`attend`
gives it through PyTorch's fused kernel, with the same checks and semantics;
their ``attention_weights`` method calls the explicit function.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from selfattn._checks import (
    LOW_PRECISION,
    check_flag,
    check_mask,
    check_no_nan,
    check_qkv,
    check_tensor,
    default_scale,
    shape_str,
)

__all__ = ["scaled_dot_product_attention", "masked_softmax", "relu_weights", "attend"]


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

    Taught in :doc:`/notebooks/self-attention-qkv` (the formula) and
    :doc:`/notebooks/scoring-functions` (why the scale).

    Examples:
        >>> q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # two queries, d_k = 2
        >>> k = v = torch.eye(2)
        >>> out, weights = scaled_dot_product_attention(q, k, v)
        >>> weights.sum(dim=-1)
        tensor([1., 1.])
        >>> scaled_dot_product_attention(q, k, v, causal=True)[1]
        tensor([[1.0000, 0.0000],
                [0.3302, 0.6698]])
    """
    full, scale = _checked_mask_and_scale(q, k, v, mask, causal, scale)
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., T_q, T_k)
    weights = masked_softmax(scores, full)  # (..., T_q, T_k)
    out = weights @ v  # (..., T_q, d_v)
    return out, weights


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

    Taught in :doc:`/notebooks/scoring-functions`.

    Examples:
        >>> scores = torch.tensor([[0.0, 0.0, 5.0], [1.0, 2.0, 3.0]])
        >>> mask = torch.tensor([[True, True, False], [False, False, False]])
        >>> masked_softmax(scores, mask)
        tensor([[0.5000, 0.5000, 0.0000],
                [0.0000, 0.0000, 0.0000]])
    """
    check_tensor("scores", scores)
    check_no_nan("scores", scores)
    if not scores.is_meta and torch.isposinf(scores).any():
        raise ValueError(
            f"scores contains +inf (shape {shape_str(scores)}); the softmax of "
            "+inf is undefined"
        )
    if mask is not None:
        check_mask(mask, scores.shape)
        mask = mask.expand(scores.shape)  # so any `dim` indexes the mask too
    work = scores.float() if scores.dtype in LOW_PRECISION else scores
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

    Taught in :doc:`/notebooks/scoring-functions`.

    Examples:
        >>> relu_weights(torch.tensor([[-1.0, 1.0, 3.0]]))
        tensor([[0.0000, 0.2500, 0.7500]])
    """
    check_tensor("scores", scores)
    check_no_nan("scores", scores)
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


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """The output of :func:`scaled_dot_product_attention`, by PyTorch's fused kernel.

    What the modules' ``forward`` calls: the same checks and the same
    semantics, without forming the weights in Python. Rows with no allowed
    key, and tensors on the ``meta`` device (no values), take the explicit
    path instead: the library defines a fully masked row's output as zero,
    and PyTorch's kernels have not always agreed on such rows (NaN before
    2.5 on the CPU; the backends differ), so the library does not rely on
    theirs.

    Taught in :doc:`/notebooks/multi-head-attention` (the modules' forward).

    Args and shapes: as :func:`scaled_dot_product_attention`.

    Returns:
        ``out`` ``(..., T_q, d_v)`` only.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> q = k = v = torch.randn(2, 5, 4, generator=g)
        >>> torch.allclose(attend(q, k, v), scaled_dot_product_attention(q, k, v)[0])
        True
    """
    full, s = _checked_mask_and_scale(q, k, v, mask, causal, scale)
    no_empty_row = full is None or (not q.is_meta and bool(full.any(dim=-1).all()))
    if no_empty_row:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=full, scale=s)
    return scaled_dot_product_attention(q, k, v, mask, causal=causal, scale=scale)[0]


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
    check_flag("causal", causal)
    T_q, T_k = q.shape[-2], k.shape[-2]
    if mask is not None:
        check_mask(mask, q.shape[:-2] + (T_q, T_k))
    scale = default_scale(q.shape[-1], scale)
    return _combined_mask(mask, causal, T_q, T_k, q.device), scale
