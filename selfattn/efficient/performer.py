"""Performer: softmax attention approximated with positive orthogonal random
features (Choromanski et al., 2021).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from selfattn._checks import (
    LOW_PRECISION,
    check_int,
    check_qkv,
    check_tensor,
    shape_str,
)
from selfattn.efficient._common import _check_same_length, _identity
from selfattn.efficient.linear import _kernel_attention


def orthogonal_random_matrix(
    r: int,
    d: int,
    *,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    r"""``r`` random directions in :math:`\mathbb{R}^d`, orthogonal in blocks of ``d``.

    Each block of ``d`` rows is the orthogonal factor of the QR decomposition of
    a Gaussian ``(d, d)`` matrix (signs fixed so it is uniformly distributed);
    each row is then rescaled to a :math:`\chi(d)`-distributed norm, the norm of
    a Gaussian vector, so each row alone is distributed as :math:`N(0, I_d)`
    (Choromanski et al., 2021).

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        r: number of rows (random features); d: their dimension.
        generator: the source of randomness (explicit, for reproducibility).
            The matrix is drawn on the generator's device and then moved to
            ``device``, so a CPU generator serves inputs on any device.
        dtype, device: of the result (default float32, the generator's device).

    Returns:
        ``(r, d)``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> P = orthogonal_random_matrix(4, 4, generator=g)
        >>> G = P @ P.T  # orthogonal rows, of chi-distributed lengths
        >>> torch.allclose(G - torch.diag(G.diag()), torch.zeros(4, 4), atol=1e-5)
        True
    """
    check_int("r", r)
    check_int("d", d)
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    # QR has no float16 / bfloat16 kernel: draw and orthogonalise in float32
    # (or float64 when asked), cast at the end.
    work = torch.float32 if dtype in LOW_PRECISION else dtype
    opts = {"generator": generator, "dtype": work, "device": generator.device}
    blocks = []
    for _ in range(-(-r // d)):
        Q, R = torch.linalg.qr(torch.randn(d, d, **opts))  # (d, d)
        Q = Q * torch.sign(torch.diagonal(R))  # Haar-distributed
        blocks.append(Q.T)  # rows orthonormal
    W = torch.cat(blocks)[:r]  # (r, d)
    norms = torch.randn(r, d, **opts).norm(dim=1, keepdim=True)  # (r, 1), chi(d)
    return (W * norms).to(device=device, dtype=dtype)


def _performer_log_features(x: Tensor, projection: Tensor) -> Tensor:
    """``log phi(x) = x W^T - |x|^2 / 2 - log(r) / 2``, shape ``(..., T, r)``."""
    r = projection.shape[0]
    sq = (x * x).sum(dim=-1, keepdim=True) / 2  # (..., T, 1)
    return x @ projection.to(x.dtype).T - sq - 0.5 * math.log(r)  # (..., T, r)


def _check_projection(projection: object, d: int) -> Tensor:
    check_tensor("projection", projection, min_dim=2)
    if projection.dim() != 2 or projection.shape[1] != d:
        raise ValueError(
            f"projection must have shape (r, d_k={d}), got {shape_str(projection)}"
        )
    return projection


def performer_features(x: Tensor, projection: Tensor) -> Tensor:
    r"""Positive random features (Performer, FAVOR+).

    .. math:: \varphi(x) = e^{x W^\top - \|x\|^2/2} / \sqrt{r}

    For rows :math:`\omega_l \sim N(0, I_d)` of ``W`` (``projection``),
    :math:`\mathbb{E}[\varphi(x) \varphi(y)^\top] = e^{x y^\top}` and every
    feature is positive (Choromanski et al., 2021). :func:`performer_attention`
    first scales ``q`` and ``k`` by :math:`d_k^{-1/4}`, so that the estimate is
    of :math:`e^{q k^\top / \sqrt{d_k}}`, the softmax kernel.

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        x: ``(..., T, d)``.
        projection: ``(r, d)``, e.g. :func:`orthogonal_random_matrix`.

    Returns:
        ``(..., T, r)``, all entries > 0.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> P = orthogonal_random_matrix(8, 4, generator=g)
        >>> phi = performer_features(torch.randn(5, 4), P)
        >>> phi.shape, bool((phi > 0).all())  # positive random features
        (torch.Size([5, 8]), True)
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

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        num_features: ``r``, the number of random features, when drawing.
        generator: draws an :func:`orthogonal_random_matrix` ``(r, d_k)`` in
            float32 and casts it to q's dtype, so a generator in a given state
            gives the same features in every dtype.
        projection: or pass the ``(r, d_k)`` matrix yourself (then
            ``num_features`` and ``generator`` are ignored).
        causal: sums over :math:`j \le i` only (needs T_q = T_k).
        eps: added to the denominator.

    Returns:
        ``(..., T_q, d_v)``.

    Examples:
        >>> from selfattn import scaled_dot_product_attention
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k, v = (torch.randn(1, 8, 4, generator=g) / 2 for _ in range(3))
        >>> P = orthogonal_random_matrix(4096, 4, generator=g)  # many: a close match
        >>> dense = scaled_dot_product_attention(q, k, v)[0]
        >>> approx = performer_attention(q, k, v, projection=P)
        >>> bool((approx - dense).abs().max() < 0.05)
        True
    """
    check_qkv(q, k, v)
    check_int("num_features", num_features)
    d_k = q.shape[-1]
    if projection is None:
        if generator is None:
            raise ValueError(
                "performer_attention needs generator= (to draw a projection) or "
                "projection= (an (r, d_k) matrix); got neither"
            )
        # drawn in float32 (every device has it), then cast: one generator
        # gives the same features whatever q's dtype
        projection = orthogonal_random_matrix(
            num_features, d_k, generator=generator, dtype=torch.float32, device=q.device
        ).to(q.dtype)
    _check_projection(projection, d_k)
    if causal:
        _check_same_length(q, k, "causal performer_attention")
    c = d_k**-0.25
    log_q = _performer_log_features(q * c, projection)  # (..., T_q, r)
    log_k = _performer_log_features(k * c, projection)  # (..., T_k, r)
    log_q = log_q - log_q.detach().amax(dim=-1, keepdim=True)
    log_k = log_k - log_k.detach().amax(dim=(-2, -1), keepdim=True)
    return _kernel_attention(log_q.exp(), log_k.exp(), v, _identity, causal, eps, 128)
