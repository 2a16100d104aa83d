r"""Angular locality-sensitive hashing, the bucketing of Reformer's LSH attention.

Reformer (Kitaev et al., 2020, sec. 2) avoids the ``(T_q, T_k)`` score matrix
by hashing queries and keys into buckets and letting each query attend only to
the keys of its own bucket, where the large scores are likely to be. This module
gives the hashing, :func:`~selfattn.efficient.angular_lsh`; the attention
pattern it allows is drawn by :func:`selfattn.lab.diagrams.lsh_buckets`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from selfattn._checks import check_int


def _check_buckets(n_buckets: object) -> int:
    """``n_buckets`` as an even int ``>= 2``; errors name the argument."""
    if check_int("n_buckets", n_buckets, minimum=2) % 2:
        raise ValueError(
            f"n_buckets must be even (argmax over [xR; -xR], R with n_buckets / 2 "
            f"columns), got n_buckets={n_buckets}"
        )
    return int(n_buckets)


def _rotation(d: int, n_buckets: int, generator: torch.Generator | None) -> Tensor:
    """The random projection ``R`` ``(d, n_buckets / 2)``, standard normal entries."""
    return torch.randn(d, n_buckets // 2, generator=generator, dtype=torch.float64)


def angular_lsh(
    x: Tensor, n_buckets: int, *, generator: torch.Generator | None = None
) -> Tensor:
    r"""Angular locality-sensitive hashing, as in Reformer (Kitaev et al., 2020).

    .. math:: h(x) = \operatorname{argmax}\,[\,xR\,;\,-xR\,]

    with :math:`R \in \mathbb{R}^{d \times b/2}` a random matrix of standard
    normal entries (a random rotation, projected) and :math:`[u; v]` the
    concatenation along the last axis, so there are :math:`b` buckets. Vectors
    at a small angle tend to share a bucket, vectors far apart rarely do, and
    the bucket depends only on the direction of :math:`x` (scaling it by a
    positive number changes nothing). Reformer lets a query attend only to
    the keys of its own bucket. ``R`` is drawn afresh on every call: pass
    generators in the same state to hash two sets with the same ``R``.

    Shapes: ``x`` ``(..., d)`` times ``R`` ``(d, b/2)`` gives ``xR``
    ``(..., b/2)``; ``[xR; -xR]`` is ``(..., b)``, and its argmax over the
    last axis is ``(...,)``. Bucket ``c < b/2`` is the direction
    :math:`+r_c` (column ``c`` of ``R``), bucket ``c + b/2`` is :math:`-r_c`,
    so :math:`h(-x) = (h(x) + b/2) \bmod b`.

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        x: ``(..., d)`` float tensor, e.g. keys ``(B, T, d_k)``.
        n_buckets: :math:`b`, even and at least 2.
        generator: draws ``R`` (a CPU ``torch.Generator``); required, as
            for :func:`~selfattn.efficient.performer_attention` (the library
            never draws from torch's global generator).

    Returns:
        ``(...,)`` int64 bucket ids in ``[0, n_buckets)``.

    Examples:
        >>> x = torch.tensor([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0]])
        >>> h = angular_lsh(x, 4, generator=torch.Generator().manual_seed(0))
        >>> bool(h[0] == h[1]), bool(h[0] == h[2])  # same direction, opposite
        (True, False)
    """
    if not isinstance(x, Tensor) or not x.is_floating_point():
        raise TypeError(
            f"x must be a float torch.Tensor (..., d), got "
            f"{getattr(x, 'dtype', type(x).__name__)}"
        )
    if x.dim() < 1 or x.shape[-1] < 1:
        raise ValueError(
            f"x must have shape (..., d) with d >= 1, got {tuple(x.shape)}"
        )
    n_buckets = _check_buckets(n_buckets)
    if generator is None:
        raise ValueError(
            "angular_lsh needs generator= (a torch.Generator, to draw R); the "
            "library never draws from torch's global generator"
        )
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    R = _rotation(x.shape[-1], n_buckets, generator).to(x.device)  # (d, b/2)
    xR = x.double() @ R  # (..., b/2)
    return torch.cat([xR, -xR], dim=-1).argmax(dim=-1)  # (...,)
