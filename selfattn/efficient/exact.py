"""Exact attention with less memory: local (banded) and chunked (online softmax).

Both return what dense attention returns (to float rounding); see the
package docstring of :mod:`selfattn.efficient`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from selfattn._checks import (
    LOW_PRECISION,
    check_flag,
    check_int,
    check_mask,
    check_qkv,
    default_scale,
)
from selfattn.efficient._blocks import online_softmax
from selfattn.efficient._common import _check_same_length
from selfattn.efficient.flash import FlashAttention


def local_attention(
    q: Tensor, k: Tensor, v: Tensor, radius: int, *, causal: bool = False
) -> Tensor:
    r"""Attention restricted to a window: query ``i`` sees keys ``|i - j| <= radius``.

    Exactly the output of ``scaled_dot_product_attention(q, k, v,
    window_mask(T, radius, causal=causal))`` (scale :math:`1/\sqrt{d_k}`), but
    the ``(T, T)`` matrix is never built: queries are taken in blocks of ``b``
    and each block is scored only against its band of ``b + 2 radius`` keys,
    so memory is :math:`O(T (b + \text{radius}))` and time
    :math:`O(T\, \text{radius}\, d)` ("restricted self-attention", Vaswani et
    al., 2017, Table 1).

    Taught in :doc:`/notebooks/speech-truncated-attention`.

    Args:
        q, k: ``(..., T, d_k)``; v: ``(..., T, d_v)`` (self-attention: T_q = T_k).
        radius: how many positions each side a query may look (``>= 0``).
        causal: look only backwards (``0 <= i - j <= radius``).

    Returns:
        ``(..., T, d_v)``.

    Examples:
        >>> from selfattn import scaled_dot_product_attention, window_mask
        >>> g = torch.Generator().manual_seed(0)
        >>> q = k = v = torch.randn(1, 10, 4, generator=g)
        >>> dense, _ = scaled_dot_product_attention(q, k, v, window_mask(10, 2))
        >>> torch.allclose(local_attention(q, k, v, 2), dense, atol=1e-6)
        True
    """
    check_qkv(q, k, v)
    T = _check_same_length(q, k, "local_attention (a window around each position)")
    check_int("radius", radius, minimum=0)
    check_flag("causal", causal)
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
            F.scaled_dot_product_attention(  # every row has its diagonal key
                q[..., qs:qe, :], k[..., ks:ke, :], v[..., ks:ke, :], attn_mask=band
            )  # (..., b, d_v)
        )
    if not outs:
        return q.new_zeros(q.shape[:-1] + (v.shape[-1],))
    return torch.cat(outs, dim=-2)  # (..., T, d_v)


def chunked_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    causal: bool = False,
    B_q: int = 512,
    B_k: int = 128,
    scale: float | None = None,
) -> Tensor:
    r"""Exact attention block by block with an online softmax: no ``(T_q, T_k)`` matrix.

    Each block of ``B_q`` queries visits the key blocks of ``B_k`` keys in
    turn (``selfattn.efficient._blocks.tiles``), keeping for every query
    a running max :math:`m`, denominator :math:`\ell` and numerator :math:`a`
    (Milakov & Gimelshein, 2018; Rabe & Staats, 2021; Dao et al., 2022)::

        m, l, a = -inf, 0, 0              # per query: max, denominator, numerator
        for k_blk, v_blk in key blocks:   # B_k keys at a time
            s = q_blk @ k_blk.T * scale   # (BH, B_q, B_k), -inf where masked
            m_new = max(m, rowmax(s))     # (BH, B_q, 1)
            p = exp(s - m_new)            # weights, not yet normalised
            c = exp(m - m_new)            # rescales what was summed so far
            l = l * c + rowsum(p)         # (BH, B_q, 1)
            a = a * c + p @ v_blk         # (BH, B_q, d_v)
            m = m_new
        out_blk = a / l                   # (BH, B_q, d_v)

    Multiplying by :math:`c = e^{m - m_{new}}` re-expresses the old sums
    relative to the new max, so the result is dense softmax attention (to
    float rounding) for any block sizes. A query that has met no allowed key
    yet has :math:`m = -\infty` and is shifted by 0 instead (``p`` and ``c``
    are then 0, not NaN); one with no allowed key at all ends with ``l = 0``
    and gets a zero output. Causal blocks above the diagonal are skipped.
    Memory is :math:`O(T d)` plus the score blocks. When autograd needs
    gradients the call goes through :class:`~selfattn.efficient.FlashAttention`,
    which recomputes the blocks in the backward pass, so training memory is
    :math:`O(T d)` too. Half-precision inputs are computed in float32 and the
    output cast back. Why the default blocks: ``benchmarks/README.md``.

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: bool, broadcastable to ``(..., T_q, T_k)``; True = may attend.
        causal: also forbid key ``j > i`` (top-left aligned, as PyTorch).
        B_q: queries per block (``> 0``); B_k: keys per block (``> 0``).
        scale: multiplier of the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(..., T_q, d_v)``; a query with no allowed key gets a zero output.

    Examples:
        >>> from selfattn import scaled_dot_product_attention
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k, v = torch.randn(3, 2, 50, 8, generator=g)
        >>> dense, _ = scaled_dot_product_attention(q, k, v, causal=True)
        >>> out = chunked_attention(q, k, v, causal=True, B_q=16, B_k=8)
        >>> torch.allclose(out, dense, atol=1e-6)
        True
    """
    check_qkv(q, k, v)
    check_int("B_q", B_q, minimum=1)
    check_int("B_k", B_k, minimum=1)
    check_flag("causal", causal)
    *lead, T_q, d_k = q.shape
    T_k = k.shape[-2]
    if mask is not None:
        check_mask(mask, q.shape[:-2] + (T_q, T_k))
        mask = mask.expand(*lead, T_q, T_k)  # a view, no memory
    scale = default_scale(d_k, scale)
    dtype = q.dtype
    if dtype in LOW_PRECISION:  # CPU matmuls in half precision: use float32
        q, k, v = q.float(), k.float(), v.float()
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        # keep no block for the backward pass: recompute them (flash.py)
        out = FlashAttention.apply(q, k, v, mask, causal, scale, B_q, B_k)
    else:
        out, _ = online_softmax(q, k, v, mask, causal, scale, B_q, B_k)
    return out.to(dtype)  # (..., T_q, d_v)
