r"""The backward pass of FlashAttention: gradients in :math:`O(T d)` memory.

Autograd through a blocked forward pass keeps every score block for the
backward pass: :math:`O(T^2)` memory again. FlashAttention (Dao et al., 2022,
Algorithms 2 and 4) keeps only the output :math:`O` and, for each query, the
log-sum-exp of its scores :math:`L_i = m_i + \log \ell_i`, and in the backward
pass recomputes each block of weights :math:`P = e^{S - L}` from them. With
:math:`dO` the gradient of the output and
:math:`D_i = \sum_c dO_{ic} O_{ic}` (``rowsum(dO * O)``), the softmax backward
:math:`dS_{ij} = P_{ij} (dP_{ij} - \sum_{j'} P_{ij'} dP_{ij'})` needs only
:math:`D`, because :math:`\sum_{j'} P_{ij'} dP_{ij'} = \sum_{j'} P_{ij'}
(dO_i \cdot v_{j'}) = dO_i \cdot O_i`. Per pair of blocks::

    s = q_blk @ k_blk.T * scale      # (BH, b_q, b_k), -inf where masked
    p = exp(s - L_blk)               # the forward's weights, recomputed
    dv_blk += p.T @ do_blk           # (BH, b_k, d_v)
    dp = do_blk @ v_blk.T            # (BH, b_q, b_k)
    ds = p * (dp - D_blk)            # softmax backward
    dq_blk += ds @ k_blk * scale     # (BH, b_q, d_k)
    dk_blk += ds.T @ q_blk * scale   # (BH, b_k, d_k)

The work is about two and a half times the forward's (five block matmuls
instead of two, one of them computing the scores again), and nothing of size
:math:`T_q \times T_k` is ever stored. Masks and ``causal`` are applied
exactly as in the forward pass; a query with no allowed key has
:math:`L = -\infty`, weights 0 and a zero gradient.
:func:`~selfattn.efficient.chunked_attention` uses :class:`FlashAttention`
whenever autograd needs gradients.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from selfattn.efficient._blocks import flash_backward, online_softmax


class FlashAttention(torch.autograd.Function):
    r"""A pure-PyTorch teaching version of FlashAttention's recomputing backward pass.

    Not the fused GPU kernel of Dao et al. (2022): the same algorithm written
    with PyTorch operations and a Python loop over blocks, so that it can be
    read, checked with ``gradcheck`` and measured. ``FlashAttention.apply(q,
    k, v, mask, causal, scale, B_q, B_k)`` returns what
    :func:`~selfattn.efficient.chunked_attention` returns, saving for the
    backward pass only ``q, k, v``, the output and the per-query log-sum-exp
    ``(..., T_q)``. It does not check its input: call
    :func:`~selfattn.efficient.chunked_attention`, which does and then uses
    this class when gradients are needed.

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: ``None`` or bool ``(..., T_q, T_k)`` (expanded to the full
            shape; an expanded view costs no memory); True = may attend.
        causal: also forbid key ``j > i`` (top-left aligned).
        scale: multiplier of the scores.
        B_q, B_k: block sizes of both passes.

    Returns:
        ``(..., T_q, d_v)``.

    Examples:
        >>> from torch.autograd import gradcheck
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k, v = (torch.randn(1, 6, 2, generator=g, dtype=torch.float64,
        ...                        requires_grad=True) for _ in range(3))
        >>> def attention(q, k, v):  # causal, scale 0.7, blocks of 4 by 2
        ...     return FlashAttention.apply(q, k, v, None, True, 0.7, 4, 2)
        >>> gradcheck(attention, (q, k, v))
        True
    """

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, scale, B_q, B_k):
        config = (causal, scale, B_q, B_k)
        out, lse = online_softmax(q, k, v, mask, *config)
        ctx.save_for_backward(q, k, v, mask, out, lse)
        ctx.config = config
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, dout):
        q, k, v, mask, out, lse = ctx.saved_tensors
        dq, dk, dv = flash_backward(q, k, v, mask, out, lse, dout, *ctx.config)
        return dq, dk, dv, None, None, None, None, None
