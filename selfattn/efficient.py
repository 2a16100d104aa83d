r"""Efficient attention: exact (local, chunked) and approximate (linear, low-rank).

Dense attention builds a ``(T_q, T_k)`` score matrix: time and memory
:math:`O(T^2)`. The functions here avoid that matrix in three ways.

* **Exact, same result, less memory.** :func:`local_attention` computes only
  the band ``|i - j| <= radius`` (restricted self-attention, Vaswani et al.,
  2017, Table 1). :func:`chunked_attention` computes *full* attention block by
  block with an online softmax (Milakov & Gimelshein, 2018; Rabe & Staats,
  2021), the idea behind FlashAttention (Dao et al., 2022): memory
  :math:`O(T d)` instead of :math:`O(T^2)`.
* **A different model, linear time.** :func:`linear_attention` replaces
  :math:`\exp(q^\top k)` by :math:`\phi(q)^\top \phi(k)` (Katharopoulos et al.,
  2020); causal, it is an RNN (:func:`linear_attention_recurrent`).
* **An approximation of softmax attention.** :func:`performer_attention`
  (random features, Choromanski et al., 2021) and :func:`linformer_attention`
  (low-rank projection along the sequence, Wang et al., 2020).

Shapes follow the package legend: ``q`` ``(..., T_q, d_k)``, ``k``
``(..., T_k, d_k)``, ``v`` ``(..., T_k, d_v)``; masks are bool, True = may attend.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from selfattn._checks import check_mask, check_qkv, check_tensor, shape_str
from selfattn.attention import scaled_dot_product_attention

__all__ = [
    "local_attention",
    "chunked_attention",
    "elu_feature_map",
    "linear_attention",
    "linear_attention_recurrent",
    "orthogonal_random_matrix",
    "performer_features",
    "performer_attention",
    "linformer_attention",
    "LinformerSelfAttention",
]

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _check_positive_int(name: str, n: object, *, allow_zero: bool = False) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 0 or (n == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {name}={n}")
    return n


def _identity(x: Tensor) -> Tensor:
    return x


def _check_same_length(q: Tensor, k: Tensor, why: str) -> int:
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{why} needs T_q == T_k, got q {shape_str(q)} and k {shape_str(k)}"
        )
    return q.shape[-2]


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


# --- linear attention (Katharopoulos et al., 2020) ---------------------------


def elu_feature_map(x: Tensor) -> Tensor:
    r"""Positive feature map :math:`\phi(x) = \operatorname{elu}(x) + 1`.

    From Katharopoulos et al. (2020); ``(..., d) -> (..., d)``.
    Computed as :math:`x + 1` for :math:`x > 0` and :math:`e^x` otherwise (the
    same function), so it stays strictly positive where ``elu(x) + 1`` would
    round to 0 in float32 (:math:`x < -17`).
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
    causal: bool = False,
    eps: float = 1e-6,
    *,
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

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        causal: position ``i`` sees ``j <= i`` only (needs T_q = T_k).
        eps: added to the denominator :math:`\phi(q_i)^\top z`.
        chunk_size: positions per chunk (any value gives the same result).

    Returns:
        ``(..., T_q, d_v)``.
    """
    check_qkv(q, k, v)
    _check_positive_int("chunk_size", chunk_size)
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

    Args:
        q, k: ``(..., T, d_k)``; v: ``(..., T, d_v)``; eps: as in
            :func:`linear_attention`.

    Returns:
        ``(..., T, d_v)``.
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


# --- Performer: positive orthogonal random features (Choromanski et al., 2021) --


def orthogonal_random_matrix(
    m: int,
    d: int,
    generator: torch.Generator,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    r"""``m`` random directions in :math:`\mathbb{R}^d`, orthogonal in blocks of ``d``.

    Each block of ``d`` rows is the orthogonal factor of the QR decomposition of
    a Gaussian ``(d, d)`` matrix (signs fixed so it is uniformly distributed);
    each row is then rescaled to a :math:`\chi(d)`-distributed norm, the norm of
    a Gaussian vector, so each row alone is distributed as :math:`N(0, I_d)`
    (Choromanski et al., 2021).

    Args:
        m: number of rows (random features); d: their dimension.
        generator: the source of randomness (explicit, for reproducibility).

    Returns:
        ``(m, d)``.
    """
    _check_positive_int("m", m)
    _check_positive_int("d", d)
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    opts = {"generator": generator, "dtype": dtype, "device": device}
    blocks = []
    for _ in range(-(-m // d)):
        Q, R = torch.linalg.qr(torch.randn(d, d, **opts))  # (d, d)
        Q = Q * torch.sign(torch.diagonal(R))  # Haar-distributed
        blocks.append(Q.T)  # rows orthonormal
    W = torch.cat(blocks)[:m]  # (m, d)
    norms = torch.randn(m, d, **opts).norm(dim=1, keepdim=True)  # (m, 1), chi(d)
    return W * norms


def _performer_log_features(x: Tensor, projection: Tensor) -> Tensor:
    """``log phi(x) = x W^T - |x|^2 / 2 - log(m) / 2``, shape ``(..., T, m)``."""
    m = projection.shape[0]
    sq = (x * x).sum(dim=-1, keepdim=True) / 2  # (..., T, 1)
    return x @ projection.to(x.dtype).T - sq - 0.5 * math.log(m)  # (..., T, m)


def _check_projection(projection: object, d: int) -> Tensor:
    check_tensor("projection", projection, min_dim=2)
    if projection.dim() != 2 or projection.shape[1] != d:
        raise ValueError(
            f"projection must have shape (m, d_k={d}), got {shape_str(projection)}"
        )
    return projection


def performer_features(x: Tensor, projection: Tensor) -> Tensor:
    r"""Positive random features: :math:`\phi(x) = \exp(W x - \|x\|^2/2) / \sqrt{m}`.

    For rows :math:`w \sim N(0, I_d)`,
    :math:`\mathbb{E}[\phi(x)^\top \phi(y)] = \exp(x^\top y)` and every feature is
    positive (Choromanski et al., 2021). :func:`performer_attention`
    first scales ``q`` and ``k`` by :math:`d_k^{-1/4}`, so that the estimate is
    of :math:`\exp(q^\top k / \sqrt{d_k})`, the softmax kernel.

    Args:
        x: ``(..., T, d)``.
        projection: ``(m, d)``, e.g. :func:`orthogonal_random_matrix`.

    Returns:
        ``(..., T, m)``, all entries > 0.
    """
    check_tensor("x", x, min_dim=1)
    _check_projection(projection, x.shape[-1])
    return torch.exp(_performer_log_features(x, projection))


def performer_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    num_features: int = 256,
    *,
    generator: torch.Generator | None = None,
    projection: Tensor | None = None,
    causal: bool = False,
    eps: float = 1e-6,
) -> Tensor:
    r"""FAVOR+: softmax attention estimated with positive random features.

    .. math::

        \text{out}_i \approx \frac{\hat\phi(q_i)^\top \sum_j \hat\phi(k_j) v_j^\top}
                                  {\hat\phi(q_i)^\top \sum_j \hat\phi(k_j)},\quad
        \hat\phi(x) = \phi(x / d_k^{1/4})

    with :math:`\phi` from :func:`performer_features` (Choromanski et al., 2021).
    For stability, each query's features are divided by their max and all key
    features by one common max; both constants cancel in the ratio (up to the
    ``eps`` added to the denominator).

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        num_features: ``m``, the number of random features, when drawing.
        generator: draws an :func:`orthogonal_random_matrix` ``(m, d_k)``.
        projection: or pass the ``(m, d_k)`` matrix yourself (then
            ``num_features`` and ``generator`` are ignored).
        causal: sums over :math:`j \le i` only (needs T_q = T_k).
        eps: added to the denominator.

    Returns:
        ``(..., T_q, d_v)``.
    """
    check_qkv(q, k, v)
    d_k = q.shape[-1]
    if projection is None:
        if generator is None:
            raise ValueError(
                "performer_attention needs generator= (to draw a projection) or "
                "projection= (an (m, d_k) matrix); got neither"
            )
        projection = orthogonal_random_matrix(
            num_features, d_k, generator, dtype=q.dtype, device=q.device
        )
    _check_projection(projection, d_k)
    if causal:
        _check_same_length(q, k, "causal performer_attention")
    c = d_k**-0.25
    log_q = _performer_log_features(q * c, projection)  # (..., T_q, m)
    log_k = _performer_log_features(k * c, projection)  # (..., T_k, m)
    log_q = log_q - log_q.detach().amax(dim=-1, keepdim=True)
    log_k = log_k - log_k.detach().amax(dim=(-2, -1), keepdim=True)
    return _kernel_attention(log_q.exp(), log_k.exp(), v, _identity, causal, eps, 128)


# --- Linformer: project keys and values along the sequence (Wang et al., 2020) -


def linformer_attention(
    q: Tensor, k: Tensor, v: Tensor, E: Tensor, F: Tensor
) -> Tensor:
    r"""Low-rank attention: keys and values projected from ``T_k`` to ``k_proj`` rows.

    .. math::

        \operatorname{softmax}\!\Big(\frac{q (E k)^\top}{\sqrt{d_k}}\Big)\, (F v)

    (Wang et al., 2020): the score matrix is ``(T_q, k_proj)``, so for a
    fixed ``k_proj`` time and memory are linear in ``T``. With ``E = F = I``
    (``k_proj = T_k``) it is dense attention.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        E, F: ``(k_proj, T_k)`` projections of the keys and of the values.

    Returns:
        ``(..., T_q, d_v)``.
    """
    check_qkv(q, k, v)
    T_k = k.shape[-2]
    for name, P in (("E", E), ("F", F)):
        check_tensor(name, P, min_dim=2)
        if P.dim() != 2 or P.shape[1] != T_k:
            raise ValueError(
                f"{name} must have shape (k_proj, T_k={T_k}), got {shape_str(P)}"
            )
    if E.shape[0] != F.shape[0]:
        raise ValueError(f"E {shape_str(E)} and F {shape_str(F)} need the same k_proj")
    k_proj = E.to(k.dtype) @ k  # (..., k_proj, d_k)
    v_proj = F.to(v.dtype) @ v  # (..., k_proj, d_v)
    return scaled_dot_product_attention(q, k_proj, v_proj)  # (..., T_q, d_v)


class LinformerSelfAttention(nn.Module):
    r"""Multi-head Linformer self-attention, ``(B, T, D) -> (B, T, D)``.

    From Wang et al. (2020). Projections ``W_q, W_k, W_v, W_o`` as in
    :class:`selfattn.MultiHeadAttention` (same parameter names), plus learned
    ``E, F`` of shape ``(k_proj, seq_len)`` shared by all heads (the paper's
    "headwise sharing"). A sequence shorter than ``seq_len`` uses the first
    ``T`` columns of ``E, F`` (as if padded with zero keys).

    Args:
        embed_dim: ``D``; seq_len: the longest ``T``; k_proj: projected length;
        num_heads: ``H`` (must divide ``D``); bias: biases in the projections.
        generator: draws the initial ``E, F`` (:math:`N(0, 1/k_{proj})`); the
            ``nn.Linear`` layers initialise themselves as PyTorch does.
    """

    def __init__(
        self,
        embed_dim: int,
        seq_len: int,
        k_proj: int,
        num_heads: int = 1,
        *,
        bias: bool = True,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        for name, n in (("embed_dim", embed_dim), ("seq_len", seq_len)):
            _check_positive_int(name, n)
        _check_positive_int("k_proj", k_proj)
        _check_positive_int("num_heads", num_heads)
        if embed_dim % num_heads != 0:
            raise ValueError(
                f"embed_dim={embed_dim} must be divisible by num_heads={num_heads}"
            )
        self.embed_dim, self.seq_len, self.num_heads = embed_dim, seq_len, num_heads
        self.d_k = embed_dim // num_heads
        self.W_q = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.W_o = nn.Linear(embed_dim, embed_dim, bias=bias)
        shape = (k_proj, seq_len)
        self.E = nn.Parameter(torch.randn(shape, generator=generator) / k_proj**0.5)
        self.F = nn.Parameter(torch.randn(shape, generator=generator) / k_proj**0.5)

    def forward(self, x: Tensor) -> Tensor:
        """x ``(B, T, D)`` with ``T <= seq_len`` -> ``(B, T, D)``."""
        check_tensor("x", x, min_dim=3)
        if x.dim() != 3 or x.shape[-1] != self.embed_dim or x.shape[1] > self.seq_len:
            raise ValueError(
                f"x must have shape (B, T <= {self.seq_len}, {self.embed_dim}), "
                f"got {shape_str(x)}"
            )
        B, T, D = x.shape

        def split(t: Tensor) -> Tensor:
            return t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B,H,T,d_k)

        q, k, v = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))
        out = linformer_attention(q, k, v, self.E[:, :T], self.F[:, :T])  # (B,H,T,d_k)
        return self.W_o(out.transpose(1, 2).reshape(B, T, D))  # (B, T, D)
