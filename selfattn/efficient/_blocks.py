r"""The blocks of exact attention: one tile iterator, the online softmax and
FlashAttention's backward pass.

:func:`tiles` is the loop header of all three: the forward pass
(:func:`online_softmax`), the backward pass (:func:`flash_backward`) and the
figure that draws the tiles (:func:`selfattn.lab.diagrams.online_softmax_tiling`)
iterate the same blocks. :func:`selfattn.efficient.chunked_attention` checks its
input and calls these; nothing here checks anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import torch
from torch import Tensor

from selfattn._checks import check_int

Span = tuple[int, int]  # [start, end) of a block of positions


def tiles(
    T_q: int, T_k: int, B_q: int, B_k: int, *, causal: bool = False
) -> Iterator[tuple[Span, list[Span]]]:
    """The blocks exact attention visits: each block of queries, with its key blocks.

    Queries come in blocks of ``B_q``; each visits the key blocks of ``B_k``
    keys in order. With ``causal``, key blocks that start after the block's
    last query are skipped (every score in them is masked).

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        T_q, T_k: numbers of queries and keys (0 or more); B_q, B_k: block
            sizes (positive).
        causal: skip the key blocks above the diagonal.

    Yields:
        ``((qs, qe), [(ks, ke), ...])``: the query block ``qs:qe`` and, in
        order, the key blocks ``ks:ke`` it is scored against.

    Examples:
        >>> [(q, k) for q, k in tiles(4, 4, 2, 2, causal=True)]
        [((0, 2), [(0, 2)]), ((2, 4), [(0, 2), (2, 4)])]
    """
    T_q, T_k = check_int("T_q", T_q, minimum=0), check_int("T_k", T_k, minimum=0)
    B_q, B_k = check_int("B_q", B_q), check_int("B_k", B_k)
    for qs in range(0, T_q, B_q):
        qe = min(qs + B_q, T_q)
        last = min(T_k, qe) if causal else T_k
        yield (qs, qe), [(ks, min(ks + B_k, T_k)) for ks in range(0, last, B_k)]


def online_softmax(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    causal: bool,
    scale: float,
    B_q: int,
    B_k: int,
) -> tuple[Tensor, Tensor]:
    r"""Exact attention block by block, also returning each query's log-sum-exp.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        mask: ``None`` or bool ``(..., T_q, T_k)`` (expanded to the full shape).
        causal, scale, B_q, B_k: as in :func:`selfattn.efficient.chunked_attention`.

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
    for (qs, qe), keys in tiles(T_q, T_k, B_q, B_k, causal=causal):
        q_blk = q[:, qs:qe] * scale  # (BH, b_q, d_k)
        m = q.new_full((BH, qe - qs, 1), -math.inf)  # running max
        l = q.new_zeros(BH, qe - qs, 1)  # running denominator
        a = q.new_zeros(BH, qe - qs, d_v)  # running numerator
        for ks, ke in keys:
            s = block_scores(q_blk, k[:, ks:ke], mask, causal, qs, ks)  # (BH, b_q, b_k)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (BH, b_q, 1)
            p = exp_minus_(s, m_new)  # (BH, b_q, b_k), in s's storage
            c = exp_minus(m, m_new)  # (BH, b_q, 1): rescales the old sums
            l = l * c + p.sum(dim=-1, keepdim=True)
            a = a * c + p @ v[:, ks:ke]  # (BH, b_q, d_v)
            m = m_new
        out[:, qs:qe] = a / torch.where(l > 0, l, 1.0)  # a query with no key: 0
        lse[:, qs:qe] = m + torch.log(l)  # -inf for a query with no key
    return out.reshape(*lead, T_q, d_v), lse.reshape(*lead, T_q)


def flash_backward(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    out: Tensor,
    lse: Tensor,
    dout: Tensor,
    causal: bool,
    scale: float,
    B_q: int,
    B_k: int,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""Gradients of attention from its output and log-sum-exp, block by block.

    See :mod:`selfattn.efficient.flash` for the algorithm (Dao et al., 2022,
    Algorithms 2 and 4).

    Args:
        q, k, v, mask, causal, scale, B_q, B_k: as in :func:`online_softmax`.
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
    for (qs, qe), keys in tiles(T_q, T_k, B_q, B_k, causal=causal):
        q_blk = q[:, qs:qe] * scale  # (BH, b_q, d_k)
        do_blk, L_blk, D_blk = dout[:, qs:qe], L[:, qs:qe], D[:, qs:qe]
        dq_blk = torch.zeros_like(q_blk)  # (BH, b_q, d_k)
        for ks, ke in keys:
            k_blk, v_blk = k[:, ks:ke], v[:, ks:ke]  # (BH, b_k, d_k), (BH, b_k, d_v)
            s = block_scores(q_blk, k_blk, mask, causal, qs, ks)  # (BH, b_q, b_k)
            p = exp_minus_(s, L_blk)  # (BH, b_q, b_k), the forward's weights
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


def block_scores(
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


def exp_minus(x: Tensor, m: Tensor) -> Tensor:
    r"""``exp(x - m)``, shifting by 0 where ``m = -inf``.

    ``m`` is a row's max (or log-sum-exp) over the allowed keys; it is
    :math:`-\infty` only when no key was allowed, and then every ``x`` of the
    row is :math:`-\infty` too: ``exp(-inf - 0) = 0``, where
    ``exp(-inf + inf)`` would be NaN.
    """
    return torch.exp(x - m.nan_to_num(neginf=0.0))


def exp_minus_(s: Tensor, m: Tensor) -> Tensor:
    """:func:`exp_minus` in place: overwrites the score block ``s`` with ``p``.

    A block of scores is used only to make ``p``, so ``p`` takes its storage:
    one ``(BH, b_q, b_k)`` block is allocated per step instead of three
    (benchmarks/README.md measures what it saves). ``s`` must be a block
    nobody else holds, as :func:`block_scores` returns.
    """
    return s.sub_(m.nan_to_num(neginf=0.0)).exp_()
