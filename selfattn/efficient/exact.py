"""Exact attention with less memory: local (banded) and chunked (online softmax).

Both return what dense attention returns (to float rounding); see the
package docstring of :mod:`selfattn.efficient`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from selfattn._checks import check_mask, check_qkv
from selfattn.attention import _attend
from selfattn.efficient._common import (
    _LOW_PRECISION,
    _check_positive_int,
    _check_same_length,
)

# --- exact: local (banded) attention -----------------------------------------


def local_attention(
    q: Tensor, k: Tensor, v: Tensor, radius: int, causal: bool = False
) -> Tensor:
    r"""Attention restricted to a window: query ``i`` sees keys ``|i - j| <= radius``.

    Exactly the output of ``scaled_dot_product_attention(q, k, v,
    window_mask(T, radius, causal=causal))`` (scale :math:`1/\sqrt{d_k}`), but
    the ``(T, T)`` matrix is never built: queries are taken in blocks of ``b``
    and each block is scored only against its band of ``b + 2 radius`` keys,
    so memory is :math:`O(T (b + \text{radius}))` and time
    :math:`O(T\, \text{radius}\, d)` ("restricted self-attention", Vaswani et
    al., 2017, Table 1).

    Args:
        q, k: ``(..., T, d_k)``; v: ``(..., T, d_v)`` (self-attention: T_q = T_k).
        radius: how many positions each side a query may look (``>= 0``).
        causal: look only backwards (``0 <= i - j <= radius``).

    Returns:
        ``(..., T, d_v)``.
    """
    check_qkv(q, k, v)
    T = _check_same_length(q, k, "local_attention (a window around each position)")
    _check_positive_int("radius", radius, allow_zero=True)
    block = min(max(T, 1), max(32, min(radius, 256)))  # queries per block
    outs = []
    for qs in range(0, T, block):
        qe = min(qs + block, T)
        ks, ke = max(0, qs - radius), qe if causal else min(T, qe + radius)
        i = torch.arange(qs, qe, device=q.device)[:, None]  # (b, 1)
        j = torch.arange(ks, ke, device=q.device)[None, :]  # (1, band)
        band = (i - j).abs() <= radius  # (b, band), the diagonal is always in
        if causal:
            band = band & (j <= i)
        outs.append(
            _attend(  # PyTorch's fused kernel: every row has a key (the diagonal)
                q[..., qs:qe, :], k[..., ks:ke, :], v[..., ks:ke, :], band
            )  # (..., b, d_v)
        )
    if not outs:
        return q.new_zeros(q.shape[:-1] + (v.shape[-1],))
    return torch.cat(outs, dim=-2)  # (..., T, d_v)


# --- exact: chunked attention with an online softmax -------------------------


def chunked_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    chunk_size: int = 128,
    query_chunk_size: int = 512,
    scale: float | None = None,
) -> Tensor:
    r"""Exact attention block by block with an online softmax: no ``(T_q, T_k)`` matrix.

    Each block of ``b_q`` queries visits the key blocks in turn, keeping for
    every query a running max :math:`m`, denominator :math:`\ell` and numerator
    :math:`a` (Milakov & Gimelshein, 2018; Rabe & Staats, 2021; Dao et al.,
    2022)::

        m, l, a = -inf, 0, 0              # per query: max, denominator, numerator
        for k_blk, v_blk in key blocks:   # b_k keys at a time
            s = q_blk @ k_blk.T * scale   # (BH, b_q, b_k), -inf where masked
            m_new = max(m, rowmax(s))     # (BH, b_q, 1)
            p = exp(s - m_new)            # weights, not yet normalised
            c = exp(m - m_new)            # rescales what was summed so far
            l = l * c + rowsum(p)         # (BH, b_q, 1)
            a = a * c + p @ v_blk         # (BH, b_q, d_v)
            m = m_new
        out_blk = a / l                   # (BH, b_q, d_v)

    Multiplying by :math:`c = e^{m - m_{new}}` re-expresses the old sums
    relative to the new max, so the result is dense softmax attention (to
    float rounding) for any block sizes. A query that has met no allowed key
    yet has :math:`m = -\infty` and is shifted by 0 instead (``p`` and
    ``c`` are then 0, not NaN); one with no allowed key at all ends with
    ``l = 0`` and gets a zero output. Causal blocks above the diagonal are
    skipped.

    Memory is :math:`O(T d)`: the output, the running sums of one query block
    and one score block. The default block, 512 queries by 128 keys, is
    256 KiB of float32 scores per head, so the elementwise steps between the
    two matmuls run from cache, yet the blocks are few enough that Python's
    per-operation overhead stays small. When autograd needs gradients the call
    goes through :class:`~selfattn.efficient.FlashAttention`, which
    saves only the output and the per-query log-sum-exp and recomputes the
    blocks in the backward pass, so training memory is :math:`O(T d)` too.
    Half-precision inputs are computed in float32 and the output cast back.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: bool, broadcastable to ``(..., T_q, T_k)``; True = may attend.
        causal: also forbid key ``j > i`` (top-left aligned, as PyTorch).
        chunk_size: keys per block ``b_k`` (``> 0``).
        query_chunk_size: queries per block ``b_q`` (``> 0``).
        scale: multiplier of the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(..., T_q, d_v)``; a query with no allowed key gets a zero output.
    """
    check_qkv(q, k, v)
    _check_positive_int("chunk_size", chunk_size)
    _check_positive_int("query_chunk_size", query_chunk_size)
    *lead, T_q, d_k = q.shape
    T_k = k.shape[-2]
    if mask is not None:
        check_mask(mask, q.shape[:-2] + (T_q, T_k))
        mask = mask.expand(*lead, T_q, T_k)  # a view, no memory
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    dtype = q.dtype
    if dtype in _LOW_PRECISION:  # CPU matmuls in half precision: use float32
        q, k, v = q.float(), k.float(), v.float()
    blocks = (query_chunk_size, chunk_size)
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        # keep no block for the backward pass: recompute them (flash.py)
        from selfattn.efficient.flash import FlashAttention  # (flash imports us)

        out = FlashAttention.apply(q, k, v, mask, causal, scale, *blocks)
    else:
        out, _ = _online_softmax(q, k, v, mask, causal, scale, *blocks)
    return out.to(dtype)  # (..., T_q, d_v)


def _online_softmax(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    causal: bool,
    scale: float,
    query_chunk_size: int,
    chunk_size: int,
) -> tuple[Tensor, Tensor]:
    r"""The loop of :func:`chunked_attention`, also returning each query's log-sum-exp.

    Args:
        q, k, v, causal, scale, query_chunk_size, chunk_size: as in
            :func:`chunked_attention` (checked there; ``scale`` a number).
        mask: ``None`` or bool ``(..., T_q, T_k)`` (expanded to the full shape).

    Returns:
        ``(out, lse)``: ``(..., T_q, d_v)`` and ``(..., T_q)`` with
        :math:`L_i = m_i + \log \ell_i = \log \sum_j e^{s_{ij}}` over the
        allowed keys (:math:`-\infty` for a query with none), all that the
        backward pass needs to recompute the weights :math:`e^{s_{ij} - L_i}`.
    """
    *lead, T_q, d_k = q.shape
    T_k, d_v = k.shape[-2], v.shape[-1]
    BH = math.prod(lead)
    q, k, v = q.reshape(BH, T_q, d_k), k.reshape(BH, T_k, d_k), v.reshape(BH, T_k, d_v)
    out = q.new_empty(BH, T_q, d_v)  # (BH, T_q, d_v)
    lse = q.new_empty(BH, T_q, 1)  # (BH, T_q, 1)
    for qs in range(0, T_q, query_chunk_size):
        qe = min(qs + query_chunk_size, T_q)
        q_blk = q[:, qs:qe] * scale  # (BH, b_q, d_k)
        m = q.new_full((BH, qe - qs, 1), -math.inf)  # running max
        l = q.new_zeros(BH, qe - qs, 1)  # running denominator
        a = q.new_zeros(BH, qe - qs, d_v)  # running numerator
        for ks in range(0, min(T_k, qe) if causal else T_k, chunk_size):
            k_blk, v_blk = k[:, ks : ks + chunk_size], v[:, ks : ks + chunk_size]
            s = _block_scores(q_blk, k_blk, mask, causal, qs, ks)  # (BH, b_q, b_k)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (BH, b_q, 1)
            p = _exp_minus_(s, m_new)  # (BH, b_q, b_k), in s's storage
            c = _exp_minus(m, m_new)  # (BH, b_q, 1): rescales the old sums
            l = l * c + p.sum(dim=-1, keepdim=True)
            a = a * c + p @ v_blk  # (BH, b_q, d_v)
            m = m_new
        out[:, qs:qe] = a / torch.where(l > 0, l, 1.0)  # a query with no key: 0
        lse[:, qs:qe] = m + torch.log(l)  # -inf for a query with no key
    return out.reshape(*lead, T_q, d_v), lse.reshape(*lead, T_q)


def _block_scores(
    q_blk: Tensor, k_blk: Tensor, mask: Tensor | None, causal: bool, qs: int, ks: int
) -> Tensor:
    """Scores of queries ``qs, qs+1, ...`` against keys ``ks, ks+1, ...``; -inf where
    the mask or ``causal`` forbids the pair.

    Args:
        q_blk: ``(BH, b_q, d_k)``, already multiplied by the scale;
            k_blk: ``(BH, b_k, d_k)``.
        mask: ``None`` or bool ``(..., T_q, T_k)``, its batch dims multiplying
            to ``BH``; causal: also forbid key ``j > i``; qs, ks: where the
            blocks start.

    Returns:
        ``(BH, b_q, b_k)``.
    """
    s = q_blk @ k_blk.transpose(1, 2)  # (BH, b_q, b_k)
    b_q, b_k = s.shape[1:]
    if mask is not None:
        allowed = mask[..., qs : qs + b_q, ks : ks + b_k].reshape(s.shape)
        s.masked_fill_(~allowed, -math.inf)
    if causal and ks + b_k - 1 > qs:  # a block crossing the diagonal
        i = torch.arange(qs, qs + b_q, device=s.device)[:, None]  # (b_q, 1)
        j = torch.arange(ks, ks + b_k, device=s.device)  # (b_k,)
        s.masked_fill_(j > i, -math.inf)  # (BH, b_q, b_k)
    return s


def _exp_minus(x: Tensor, m: Tensor) -> Tensor:
    r"""``exp(x - m)``, shifting by 0 where ``m = -inf``.

    ``m`` is a row's max (or log-sum-exp) over the allowed keys; it is
    :math:`-\infty` only when no key was allowed, and then every ``x`` of the
    row is :math:`-\infty` too: ``exp(-inf - 0) = 0``, where
    ``exp(-inf + inf)`` would be NaN.
    """
    return torch.exp(x - m.nan_to_num(neginf=0.0))


def _exp_minus_(s: Tensor, m: Tensor) -> Tensor:
    """:func:`_exp_minus` in place: overwrites the score block ``s`` with ``p``.

    The one speed trick of the loops. A block of scores is used only to make
    ``p``, so ``p`` can take its storage: a step allocates one
    ``(BH, b_q, b_k)`` block instead of three (each fresh block of a few MiB
    costs page faults). On a 2-core CPU at T = 2048 this took 10-15 % off the
    forward pass and off forward + backward. ``s`` must be a block nobody else
    holds, as :func:`_block_scores` returns.
    """
    return s.sub_(m.nan_to_num(neginf=0.0)).exp_()
