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

import math

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from selfattn.efficient.exact import _block_scores, _exp_minus_, _online_softmax


class FlashAttention(torch.autograd.Function):
    r"""Exact attention whose backward pass recomputes the blocks (Dao et al., 2022).

    ``FlashAttention.apply(q, k, v, mask, causal, scale, query_chunk_size,
    chunk_size)`` returns what :func:`~selfattn.efficient.chunked_attention`
    returns, saving for the backward pass only ``q, k, v``, the output and
    the per-query log-sum-exp ``(..., T_q)``. It does not check its input: call
    :func:`~selfattn.efficient.chunked_attention`, which does and then uses
    this class when gradients are needed.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: ``None`` or bool ``(..., T_q, T_k)`` (expanded to the full
            shape; an expanded view costs no memory); True = may attend.
        causal: also forbid key ``j > i`` (top-left aligned).
        scale: multiplier of the scores.
        query_chunk_size, chunk_size: block sizes ``b_q``, ``b_k`` of both passes.

    Returns:
        ``(..., T_q, d_v)``.
    """

    @staticmethod
    def forward(ctx, q, k, v, mask, causal, scale, query_chunk_size, chunk_size):
        config = (causal, scale, query_chunk_size, chunk_size)
        out, lse = _online_softmax(q, k, v, mask, *config)
        ctx.save_for_backward(q, k, v, mask, out, lse)
        ctx.config = config
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, dout):
        q, k, v, mask, out, lse = ctx.saved_tensors
        dq, dk, dv = _flash_backward(q, k, v, mask, out, lse, dout, *ctx.config)
        return dq, dk, dv, None, None, None, None, None


def _flash_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    out: Tensor,
    lse: Tensor,
    dout: Tensor,
    causal: bool,
    scale: float,
    query_chunk_size: int,
    chunk_size: int,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""Gradients of attention from its output and log-sum-exp, block by block.

    Args:
        q, k, v, mask, causal, scale, query_chunk_size, chunk_size: as in
            :class:`FlashAttention`.
        out: ``(..., T_q, d_v)`` and lse: ``(..., T_q)``, from the forward pass.
        dout: ``(..., T_q, d_v)``, the gradient of the loss with respect to ``out``.

    Returns:
        ``(dq, dk, dv)``, shaped as ``q``, ``k``, ``v``.
    """
    *lead, T_q, d_k = q.shape
    T_k, d_v = k.shape[-2], v.shape[-1]
    BH = math.prod(lead)
    q, k, v = q.reshape(BH, T_q, d_k), k.reshape(BH, T_k, d_k), v.reshape(BH, T_k, d_v)
    dout = dout.reshape(BH, T_q, d_v)  # (BH, T_q, d_v)
    L = lse.reshape(BH, T_q, 1)  # (BH, T_q, 1)
    D = (dout * out.reshape(BH, T_q, d_v)).sum(dim=-1, keepdim=True)  # (BH, T_q, 1)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for qs in range(0, T_q, query_chunk_size):
        qe = min(qs + query_chunk_size, T_q)
        q_blk = q[:, qs:qe] * scale  # (BH, b_q, d_k)
        do_blk, L_blk, D_blk = dout[:, qs:qe], L[:, qs:qe], D[:, qs:qe]
        dq_blk = torch.zeros_like(q_blk)  # (BH, b_q, d_k)
        for ks in range(0, min(T_k, qe) if causal else T_k, chunk_size):
            ke = min(ks + chunk_size, T_k)
            k_blk, v_blk = k[:, ks:ke], v[:, ks:ke]  # (BH, b_k, d_k), (BH, b_k, d_v)
            s = _block_scores(q_blk, k_blk, mask, causal, qs, ks)  # (BH, b_q, b_k)
            p = _exp_minus_(s, L_blk)  # (BH, b_q, b_k), the forward's weights
            dv[:, ks:ke] += p.transpose(1, 2) @ do_blk  # (BH, b_k, d_v)
            dp = do_blk @ v_blk.transpose(1, 2)  # (BH, b_q, b_k)
            ds = p * (dp - D_blk)  # (BH, b_q, b_k)
            dq_blk += ds @ k_blk  # (BH, b_q, d_k)
            dk[:, ks:ke] += ds.transpose(1, 2) @ q_blk  # q_blk holds the scale
        dq[:, qs:qe] = dq_blk * scale
    return (
        dq.reshape(*lead, T_q, d_k),
        dk.reshape(*lead, T_k, d_k),
        dv.reshape(*lead, T_k, d_v),
    )
