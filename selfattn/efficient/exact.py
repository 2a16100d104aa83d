"""Exact attention with less memory: local (banded) and chunked (online softmax).

Both return what dense attention returns (to float rounding); see the
package docstring of :mod:`selfattn.efficient`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from selfattn._checks import check_mask, check_qkv
from selfattn.attention import scaled_dot_product_attention
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

    Exactly ``scaled_dot_product_attention(q, k, v, window_mask(T, radius,
    causal=causal))`` (scale :math:`1/\sqrt{d_k}`), but the ``(T, T)`` matrix is
    never built: queries are taken in blocks of ``b`` and each block is scored
    only against its band of ``b + 2 radius`` keys, so memory is
    :math:`O(T (b + \text{radius}))` and time :math:`O(T\, \text{radius}\, d)`
    ("restricted self-attention", Vaswani et al., 2017, Table 1).

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
            scaled_dot_product_attention(
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

    For each block of queries, the key blocks are visited in turn keeping a
    running max :math:`m`, denominator :math:`\ell` and numerator :math:`a`
    (Milakov & Gimelshein, 2018; Rabe & Staats, 2021; Dao et al., 2022)::

        s = q_blk @ k_blk.T * scale              # (BH, b_q, b_k), fits in cache
        m_new = max(m, rowmax(s))
        p = exp(s - m_new)
        l = l * exp(m - m_new) + rowsum(p)
        a = a * exp(m - m_new) + p @ v_blk       # (BH, b_q, d_v)
        out_blk = a / l                          # after the last key block

    Rescaling by :math:`e^{m - m_{new}}` makes the result identical (to float
    rounding) to dense softmax attention for any block sizes. Extra memory is
    :math:`O(T d)` plus one score block; causal blocks above the diagonal are
    skipped. The default block, 512 queries by 128 keys, is 256 KiB of float32
    scores per head (2 MiB for 8 heads, shared by the threads' L2 caches), so
    the elementwise steps between the two matmuls run from cache, yet there are
    few enough blocks that Python's per-operation overhead stays small. (The
    memory
    saving is for the forward pass: autograd keeps every block for the backward
    pass, which FlashAttention instead recomputes.)

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
    T_k, d_v = k.shape[-2], v.shape[-1]
    if mask is not None:
        check_mask(mask, q.shape[:-2] + (T_q, T_k))
        mask = mask.expand(*lead, T_q, T_k)  # a view, no memory
    if q.dtype in _LOW_PRECISION:  # CPU matmuls in half precision: use float32
        out = chunked_attention(
            q.float(), k.float(), v.float(), mask,
            causal=causal, chunk_size=chunk_size,
            query_chunk_size=query_chunk_size, scale=scale,
        )  # fmt: skip
        return out.to(q.dtype)
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    q3 = q.reshape(-1, T_q, d_k)  # (BH, T_q, d_k)
    kT = k.reshape(-1, T_k, d_k).transpose(1, 2)  # (BH, d_k, T_k)
    v3 = v.reshape(-1, T_k, d_v)  # (BH, T_k, d_v)
    BH = q3.shape[0]
    out = q3.new_zeros(BH, T_q, d_v)  # (BH, T_q, d_v)
    can_be_empty = mask is not None
    # Without autograd, every score block reuses one buffer: allocating a fresh
    # block each time costs page faults. (Autograd needs each block kept.)
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    block_numel = BH * min(query_chunk_size, T_q) * min(chunk_size, T_k)
    buffer = None if needs_grad else q3.new_empty(block_numel)
    for qs in range(0, T_q, query_chunk_size):
        qe = min(qs + query_chunk_size, T_q)
        q_blk = q3[:, qs:qe] * scale  # (BH, b_q, d_k)
        k_end = min(T_k, qe) if causal else T_k
        m = l = a = None
        for ks in range(0, k_end, chunk_size):
            ke = min(ks + chunk_size, k_end)
            blk = (BH, qe - qs, ke - ks)
            s_out = None if buffer is None else buffer[: math.prod(blk)].view(blk)
            s = torch.bmm(q_blk, kT[:, :, ks:ke], out=s_out)  # (BH, b_q, b_k)
            allowed = None
            if mask is not None:
                allowed = mask[..., qs:qe, ks:ke].reshape(-1, qe - qs, ke - ks)
            if causal and ke - 1 > qs:  # a block crossing the diagonal
                i = torch.arange(qs, qe, device=q.device)[:, None]
                tri = i >= torch.arange(ks, ke, device=q.device)  # (b_q, b_k)
                allowed = tri if allowed is None else allowed & tri
            if allowed is not None:
                s = s.masked_fill_(~allowed, float("-inf"))
            with torch.no_grad():  # the max cancels out: no gradient through it
                m_new = s.amax(dim=-1, keepdim=True)  # (BH, b_q, 1)
                if m is not None:
                    m_new = torch.maximum(m, m_new)
                # a row with no allowed key so far has m = -inf: shift by 0
                shift = m_new.nan_to_num(neginf=0.0) if can_be_empty else m_new
            p = s.sub_(shift).exp_()  # (BH, b_q, b_k), masked entries exactly 0
            if a is None:
                l = p.sum(dim=-1, keepdim=True)  # (BH, b_q, 1)
                a = torch.bmm(p, v3[:, ks:ke])  # (BH, b_q, d_v)
            else:
                alpha = torch.exp(m - shift)  # (BH, b_q, 1), rescales old sums
                l = l * alpha + p.sum(dim=-1, keepdim=True)
                a = a.mul_(alpha).baddbmm_(p, v3[:, ks:ke])  # (BH, b_q, d_v)
            m = m_new
        if a is not None:
            out[:, qs:qe] = a / torch.where(l > 0, l, 1.0)  # empty rows stay 0
    return out.reshape(*lead, T_q, d_v)
