r"""Scoring functions: how relevant is key :math:`k_j` to query :math:`q_i`?

Stage one of attention. Each function maps queries ``(..., T_q, d_q)`` and
keys ``(..., T_k, d_k)`` to scores ``(..., T_q, T_k)``; stage two (a softmax,
see :mod:`selfattn.attention`) turns a row of scores into weights.

* dot: :math:`q^\top k` (Luong et al., 2015);
* scaled dot: :math:`q^\top k / \sqrt{d_k}` (Vaswani et al., 2017);
* cosine: :math:`q^\top k / (\lVert q\rVert\,\lVert k\rVert)` (lecture notes);
* additive (MLP): :math:`w_v^\top \tanh(W_q q + W_k k)` (Bahdanau et al., 2015);
* bilinear ("general"): :math:`q^\top W k` (Luong et al., 2015).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from selfattn._checks import check_int, check_no_nan, check_tensor, shape_str
from selfattn._params import init_from

__all__ = [
    "dot_score",
    "scaled_dot_score",
    "cosine_score",
    "AdditiveScore",
    "BilinearScore",
]


def _check_qk(q: Tensor, k: Tensor, *, same_width: bool = True) -> None:
    check_tensor("q", q, min_dim=2)
    check_tensor("k", k, min_dim=2)
    if same_width and q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q has width {q.shape[-1]} but k has width {k.shape[-1]} "
            f"(q {shape_str(q)}, k {shape_str(k)})"
        )
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(
            f"q and k must share leading dimensions, got q {shape_str(q)}, "
            f"k {shape_str(k)}"
        )
    check_no_nan("q", q)
    check_no_nan("k", k)


def dot_score(q: Tensor, k: Tensor) -> Tensor:
    r"""Dot-product scores :math:`s_{ij} = q_i^\top k_j`.

    Taught in :doc:`/notebooks/scoring-functions`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``.
    Returns:
        ``(..., T_q, T_k)``.

    Examples:
        >>> q, k = torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0], [1.0, 0.0]])
        >>> dot_score(q, k)
        tensor([[11.,  1.]])
    """
    _check_qk(q, k)
    return q @ k.transpose(-2, -1)  # (..., T_q, T_k)


def scaled_dot_score(q: Tensor, k: Tensor) -> Tensor:
    r"""Scaled dot-product scores :math:`s_{ij} = q_i^\top k_j / \sqrt{d_k}`.

    If the entries of q and k are independent with mean 0 and variance 1,
    :math:`q^\top k` has variance :math:`d_k`; dividing by :math:`\sqrt{d_k}`
    brings it back to 1, so the softmax does not saturate as ``d_k`` grows.

    Taught in :doc:`/notebooks/scoring-functions`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``.
    Returns:
        ``(..., T_q, T_k)``.

    Examples:
        >>> scaled_dot_score(torch.tensor([[1.0, 1.0, 1.0, 1.0]]), torch.ones(1, 4))
        tensor([[2.]])
    """
    return dot_score(q, k) / math.sqrt(q.shape[-1])


def cosine_score(q: Tensor, k: Tensor, eps: float = 1e-8) -> Tensor:
    r"""Cosine similarity :math:`s_{ij} = \cos\angle(q_i, k_j)`.

    .. math:: s_{ij} = \frac{q_i^\top k_j}{\lVert q_i\rVert\,\lVert k_j\rVert}

    Scores lie in [-1, 1]; a zero vector gets score 0 (norms are clamped to
    ``eps``).

    Taught in :doc:`/notebooks/scoring-functions`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``.
        eps: smallest norm used in the division.
    Returns:
        ``(..., T_q, T_k)``.

    Examples:
        >>> q, k = torch.tensor([[3.0, 0.0]]), torch.tensor([[2.0, 0.0], [0.0, 5.0]])
        >>> cosine_score(q, k)
        tensor([[1., 0.]])
    """
    _check_qk(q, k)
    qn = q / q.norm(dim=-1, keepdim=True).clamp_min(eps)
    kn = k / k.norm(dim=-1, keepdim=True).clamp_min(eps)
    return qn @ kn.transpose(-2, -1)  # (..., T_q, T_k)


class AdditiveScore(nn.Module):
    r"""Additive (MLP) scores :math:`s_{ij} = w_v^\top \tanh(W_q q_i + W_k k_j)`.

    From Bahdanau et al. (2015); queries and keys may have different widths.

    Taught in :doc:`/notebooks/scoring-functions`.

    Args:
        d_q: query width; d_k: key width; hidden_dim: width of the hidden
            layer (``hidden_dim`` as in ``GAT`` and ``BahdanauSeq2Seq``).
        generator: draws the initial weights (PyTorch's default
            distribution); None uses the global RNG.

    Examples:
        >>> g = torch.Generator()
        >>> score = AdditiveScore(d_q=3, d_k=5, hidden_dim=4, generator=g)
        >>> score(torch.randn(2, 3), torch.randn(6, 5)).shape  # (T_q, T_k)
        torch.Size([2, 6])
    """

    def __init__(
        self,
        d_q: int,
        d_k: int,
        hidden_dim: int,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        for name, n in (("d_q", d_q), ("d_k", d_k), ("hidden_dim", hidden_dim)):
            check_int(name, n)
        with init_from(self, generator):
            self.W_q = nn.Linear(d_q, hidden_dim, bias=False)
            self.W_k = nn.Linear(d_k, hidden_dim, bias=False)
            self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        """q ``(..., T_q, d_q)``, k ``(..., T_k, d_k)`` -> ``(..., T_q, T_k)``."""
        _check_qk(q, k, same_width=False)
        if q.shape[-1] != self.W_q.in_features or k.shape[-1] != self.W_k.in_features:
            raise ValueError(
                f"AdditiveScore expects q width {self.W_q.in_features} and k width "
                f"{self.W_k.in_features}, got q {shape_str(q)}, k {shape_str(k)}"
            )
        hq = self.W_q(q).unsqueeze(-2)  # (..., T_q, 1, hidden_dim)
        hk = self.W_k(k).unsqueeze(-3)  # (..., 1, T_k, hidden_dim)
        return self.w_v(torch.tanh(hq + hk)).squeeze(-1)  # (..., T_q, T_k)


class BilinearScore(nn.Module):
    r"""Bilinear ("general") scores :math:`s_{ij} = q_i^\top W k_j`.

    From Luong et al. (2015); queries and keys may have different widths.

    Taught in :doc:`/notebooks/scoring-functions`.

    Args:
        d_q: query width; d_k: key width.
        generator: draws the initial ``W`` (Glorot uniform); None uses the
            global RNG.

    Examples:
        >>> score = BilinearScore(d_q=3, d_k=5, generator=torch.Generator())
        >>> q, k = torch.randn(2, 3), torch.randn(6, 5)
        >>> torch.allclose(score(q, k), q @ score.W @ k.T)
        True
    """

    def __init__(
        self, d_q: int, d_k: int, *, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        check_int("d_q", d_q)
        check_int("d_k", d_k)
        with init_from(self, generator):
            self.W = nn.Parameter(torch.empty(d_q, d_k))

    def reset_parameters_from(self, generator: torch.Generator | None) -> None:
        """Draw ``W`` again: Glorot uniform, from ``generator``."""
        nn.init.xavier_uniform_(self.W, generator=generator)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        """q ``(..., T_q, d_q)``, k ``(..., T_k, d_k)`` -> ``(..., T_q, T_k)``."""
        _check_qk(q, k, same_width=False)
        if q.shape[-1] != self.W.shape[0] or k.shape[-1] != self.W.shape[1]:
            raise ValueError(
                f"BilinearScore expects q width {self.W.shape[0]} and k width "
                f"{self.W.shape[1]}, got q {shape_str(q)}, k {shape_str(k)}"
            )
        return (q @ self.W) @ k.transpose(-2, -1)  # (..., T_q, T_k)
