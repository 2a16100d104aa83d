"""Linear attention and its recurrent form (Katharopoulos et al., 2020).

A kernel feature map replaces the softmax, so the sums over keys can be
formed once (non-causal) or carried as a running state (causal: an RNN).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from selfattn._checks import check_int, check_qkv
from selfattn.efficient._common import _check_same_length


def elu_feature_map(x: Tensor) -> Tensor:
    r"""Positive feature map :math:`\phi(x) = \operatorname{elu}(x) + 1`.

    From Katharopoulos et al. (2020); ``(..., d) -> (..., d)``.
    Computed as :math:`x + 1` for :math:`x > 0` and :math:`e^x` otherwise (the
    same function), so it stays strictly positive where ``elu(x) + 1`` would
    round to 0 in float32 (:math:`x < -17`).

    Taught in :doc:`/notebooks/attention-vs-rnn`.

    Examples:
        >>> elu_feature_map(torch.tensor([-1.0, 0.0, 2.0]))  # elu(x) + 1 > 0
        tensor([0.3679, 1.0000, 3.0000])
    """
    return torch.where(x > 0, x + 1.0, torch.exp(x.clamp(max=0.0)))


def _kernel_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    phi: Callable[[Tensor], Tensor],
    causal: bool,
    eps: float,
    chunk_size: int,
) -> Tensor:
    r"""``out_i = phi(q_i)^T S / (phi(q_i)^T z + eps)``, chunk by chunk.

    :math:`S = \sum_j \phi(k_j) v_j^\top`, :math:`z = \sum_j \phi(k_j)`
    (causal: over :math:`j \le i`), with ``z`` riding along as a column of ones
    appended to ``v``: :math:`\phi(K)^\top [V, 1] = [S, z]`. The sequence is cut
    into chunks of ``C`` positions and ``phi`` is applied one chunk at a time,
    so everything a step touches stays in cache and time is linear in ``T``.
    Non-causal: accumulate the state over all key chunks, then read it out
    for each query chunk. Causal: per chunk, a small masked ``(C, C)`` matmul
    for the pairs inside the chunk, one matmul with the running state for all
    earlier chunks, then the chunk is added to the state. No ``(T, m, d_v)``
    tensor of prefix sums is ever built.
    """
    *lead, T_q, d_k = q.shape
    T_k, d_v = k.shape[-2], v.shape[-1]
    if T_k == 0:  # no keys: nothing to attend to
        return q.new_zeros(*lead, T_q, d_v)
    Q = q.reshape(-1, T_q, d_k)  # (BH, T_q, d_k)
    K = k.reshape(-1, T_k, d_k)  # (BH, T_k, d_k)
    V = v.reshape(-1, T_k, d_v)  # (BH, T_k, d_v)
    ones = V.new_ones(V.shape[0], min(chunk_size, T_k), 1)
    out = V.new_empty(V.shape[0], T_q, d_v)  # (BH, T_q, d_v)

    def values(s: int, e: int) -> Tensor:
        return torch.cat([V[:, s:e], ones[:, : e - s]], dim=-1)  # (BH, C, d_v+1)

    def read_out(num_den: Tensor, s: int, e: int) -> None:
        out[:, s:e] = num_den[..., :-1] / (num_den[..., -1:] + eps)  # (BH, C, d_v)

    S = 0.0  # the state [S, z], (BH, m, d_v+1) after the first chunk
    if not causal:
        for s in range(0, T_k, chunk_size):
            e = min(s + chunk_size, T_k)
            S = S + phi(K[:, s:e]).transpose(1, 2) @ values(s, e)  # (BH, m, d_v+1)
        for s in range(0, T_q, chunk_size):
            e = min(s + chunk_size, T_q)
            read_out(phi(Q[:, s:e]) @ S, s, e)  # (BH, C, d_v+1)
        return out.reshape(*lead, T_q, d_v)

    future = torch.ones(chunk_size, chunk_size, dtype=torch.bool, device=v.device)
    future = future.triu(diagonal=1)  # (C, C), True where j > i
    for s in range(0, T_q, chunk_size):
        e = min(s + chunk_size, T_q)
        Qc, Kc, Vc = phi(Q[:, s:e]), phi(K[:, s:e]), values(s, e)  # (BH, C, .)
        # 1) inside the chunk: position i sees j <= i
        A = torch.bmm(Qc, Kc.transpose(1, 2))  # (BH, C, C)
        num_den = torch.bmm(A.masked_fill_(future[: e - s, : e - s], 0.0), Vc)
        # 2) all earlier chunks, through the state: phi(q_i)^T [S, z]
        if s > 0:
            num_den = torch.baddbmm(num_den, Qc, S)  # (BH, C, d_v+1)
        read_out(num_den, s, e)
        S = S + Kc.transpose(1, 2) @ Vc  # add this chunk to the state
    return out.reshape(*lead, T_q, d_v)


def linear_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    causal: bool = False,
    eps: float = 1e-6,
    chunk_size: int = 128,
) -> Tensor:
    r"""Linear attention: the kernel :math:`\phi(q)^\top \phi(k)` replaces softmax.

    .. math::

        \text{out}_i = \frac{\phi(q_i)^\top S}{\phi(q_i)^\top z},\quad
        S = \sum_j \phi(k_j) v_j^\top,\quad z = \sum_j \phi(k_j),
        \quad \phi(x) = \operatorname{elu}(x) + 1

    (Katharopoulos et al., 2020), with ``eps`` added to the denominator; causal:
    the sums run over :math:`j \le i`. Time :math:`O(T d^2)`, linear in ``T``:
    no ``(T, T)`` matrix. The sequence is processed in chunks of ``chunk_size``
    positions so each step works in cache; causal, a chunk sees itself through
    a small masked ``(C, C)`` matmul and all earlier chunks through the running
    state :math:`S, z`. No ``1/sqrt(d_k)`` scale: this is not softmax attention.

    Taught in :doc:`/notebooks/attention-vs-rnn` and
    :doc:`/notebooks/efficient-attention`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        causal: position ``i`` sees ``j <= i`` only (needs T_q = T_k).
        eps: added to the denominator :math:`\phi(q_i)^\top z`.
        chunk_size: positions per chunk (any value gives the same result).

    Returns:
        ``(..., T_q, d_v)``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k, v = (torch.randn(1, 5, 3, generator=g) for _ in range(3))
        >>> A = elu_feature_map(q) @ elu_feature_map(k).mT  # the (T, T) it never forms
        >>> torch.allclose(linear_attention(q, k, v), A @ v / A.sum(-1, keepdim=True),
        ...                atol=1e-5)
        True
    """
    check_qkv(q, k, v)
    check_int("chunk_size", chunk_size)
    if causal:
        _check_same_length(q, k, "causal linear_attention")
    return _kernel_attention(q, k, v, elu_feature_map, causal, eps, chunk_size)


def linear_attention_recurrent(
    q: Tensor, k: Tensor, v: Tensor, eps: float = 1e-6
) -> Tensor:
    r"""Causal linear attention as an RNN, one step per position.

    The paper's title says it: transformers are RNNs (Katharopoulos et al., 2020):

    .. math::

        S_t = S_{t-1} + \phi(k_t) v_t^\top,\quad z_t = z_{t-1} + \phi(k_t),\quad
        \text{out}_t = \frac{\phi(q_t)^\top S_t}{\phi(q_t)^\top z_t + \epsilon}

    The state :math:`(S_t, z_t)` has a fixed size ``(d_k, d_v) + (d_k,)``
    however long the sequence: this is why autoregressive decoding is cheap.
    Equals ``linear_attention(q, k, v, causal=True)``.

    Taught in :doc:`/notebooks/attention-vs-rnn`.

    Args:
        q, k: ``(..., T, d_k)``; v: ``(..., T, d_v)``; eps: as in
            :func:`linear_attention`.

    Returns:
        ``(..., T, d_v)``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k, v = (torch.randn(1, 6, 3, generator=g) for _ in range(3))
        >>> torch.allclose(linear_attention_recurrent(q, k, v),
        ...                linear_attention(q, k, v, causal=True), atol=1e-5)
        True
    """
    check_qkv(q, k, v)
    T = _check_same_length(q, k, "linear_attention_recurrent")
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)  # (..., T, d_k)
    S = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))  # (..., d_k, d_v)
    z = q.new_zeros(q.shape[:-2] + (q.shape[-1],))  # (..., d_k)
    outs = []
    for t in range(T):
        S = S + phi_k[..., t, :, None] * v[..., t, None, :]  # (..., d_k, d_v)
        z = z + phi_k[..., t, :]  # (..., d_k)
        num = (phi_q[..., t, :, None] * S).sum(dim=-2)  # (..., d_v)
        den = (phi_q[..., t, :] * z).sum(dim=-1, keepdim=True)  # (..., 1)
        outs.append(num / (den + eps))
    if not outs:
        return q.new_zeros(q.shape[:-1] + (v.shape[-1],))
    return torch.stack(outs, dim=-2)  # (..., T, d_v)
