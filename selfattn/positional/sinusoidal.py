r"""Sinusoidal positional encoding (Vaswani et al., 2017) and its offset rotations."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_int, check_tensor, shape_str

__all__ = [
    "frequencies",
    "sinusoidal_encoding",
    "offset_rotation",
    "offset_matrix",
    "SinusoidalPositionalEncoding",
]


def _check_dim(embed_dim: int) -> None:
    if check_int("embed_dim", embed_dim) % 2 != 0:
        raise ValueError(
            "embed_dim must be a positive even integer (sin/cos pairs), "
            f"got embed_dim={embed_dim}"
        )


def frequencies(embed_dim: int, base: float = 10000.0) -> Tensor:
    r"""The angular frequencies :math:`\omega_f = \text{base}^{-2f/d}`, float64.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        embed_dim: the encoding width ``d`` (even); base: the wavelength scale.
    Returns:
        ``(embed_dim // 2,)``, from :math:`\omega_0 = 1` down towards ``1 / base``.

    Examples:
        >>> frequencies(4, base=100.0)  # omega_f = 100^(-2f/4)
        tensor([1.0000, 0.1000], dtype=torch.float64)
    """
    _check_dim(embed_dim)
    if base <= 0:
        raise ValueError(f"base must be positive, got base={base}")
    f = torch.arange(embed_dim // 2, dtype=torch.float64)
    return base ** (-2.0 * f / embed_dim)  # (embed_dim/2,)


def sinusoidal_encoding(
    num_positions: int,
    embed_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    r"""The sinusoidal table :math:`P` (Vaswani et al., 2017, sec. 3.5).

    .. math:: P_{i, 2f} = \sin(i / \text{base}^{2f/d}),\qquad
              P_{i, 2f+1} = \cos(i / \text{base}^{2f/d})

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        num_positions: how many positions ``i = 0 .. num_positions - 1`` (0
            or more).
        embed_dim: the width ``d``; must be even (ValueError otherwise).
        base: the wavelength scale, 10000 in the paper.
        dtype: of the result, float32 by default; device: of the result.
    Returns:
        ``P`` of shape ``(num_positions, embed_dim)``; add ``P[:T]`` to ``x``
        ``(B, T, embed_dim)``.

    Examples:
        >>> sinusoidal_encoding(2, 4)  # rows: positions 0 and 1; (sin, cos) pairs
        tensor([[0.0000, 1.0000, 0.0000, 1.0000],
                [0.8415, 0.5403, 0.0100, 0.9999]])
    """
    check_int("num_positions", num_positions, minimum=0)
    omega = frequencies(embed_dim, base)  # (embed_dim/2,)
    i = torch.arange(num_positions, dtype=torch.float64)
    angles = i[:, None] * omega[None, :]  # (num_positions, embed_dim/2)
    P = torch.empty(num_positions, embed_dim, dtype=torch.float64)
    P[:, 0::2] = torch.sin(angles)  # even columns 2f
    P[:, 1::2] = torch.cos(angles)  # odd columns 2f+1
    return P.to(dtype=dtype, device=device)


def offset_rotation(
    delta: float,
    embed_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    r"""The 2x2 maps :math:`M_f(\delta)` taking position ``i`` to ``i + delta``.

    .. math::
        M_f(\delta) = \begin{pmatrix} \cos\delta\omega_f & \sin\delta\omega_f \\
                      -\sin\delta\omega_f & \cos\delta\omega_f \end{pmatrix},\qquad
        M_f(\delta) \begin{pmatrix} p_{i,2f} \\ p_{i,2f+1} \end{pmatrix}
        = \begin{pmatrix} p_{i+\delta,2f} \\ p_{i+\delta,2f+1} \end{pmatrix}

    for every ``i`` (the angle-sum formulas); ``M_f`` does not depend on ``i``.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        delta: the offset (any real, may be negative); embed_dim: even width; base.
        dtype: of the result.
    Returns:
        ``(embed_dim // 2, 2, 2)``, block ``f`` acting on the pair ``(2f, 2f+1)``.

    Examples:
        >>> R = offset_rotation(3.0, 8, dtype=torch.float64)  # four 2x2 blocks
        >>> P = sinusoidal_encoding(10, 8, dtype=torch.float64)
        >>> torch.allclose((R @ P[2].view(4, 2, 1)).flatten(), P[5])  # p_5 = R p_2
        True
    """
    theta = float(delta) * frequencies(embed_dim, base)  # (embed_dim/2,)
    c, s = torch.cos(theta), torch.sin(theta)
    M = torch.stack([torch.stack([c, s], -1), torch.stack([-s, c], -1)], -2)
    return M.to(dtype)  # (embed_dim/2, 2, 2)


def offset_matrix(
    delta: float,
    embed_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    r"""The blocks of :func:`offset_rotation` as one ``(embed_dim, embed_dim)`` matrix.

    Block diagonal, so ``M @ P[i] == P[i + delta]`` for a column vector, or
    ``P[:-delta] @ M.T == P[delta:]`` for the rows of the table.

    Taught in :doc:`/notebooks/positional-encoding`.

    Returns:
        ``(embed_dim, embed_dim)``.

    Examples:
        >>> P = sinusoidal_encoding(10, 8, dtype=torch.float64)
        >>> torch.allclose(offset_matrix(4.0, 8, dtype=torch.float64) @ P[1], P[5])
        True
    """
    return torch.block_diag(*offset_rotation(delta, embed_dim, base, dtype=dtype))


def _check_x(x: Tensor, embed_dim: int) -> None:
    check_tensor("x", x, min_dim=2)
    if x.shape[-1] != embed_dim:
        raise ValueError(
            f"x must have width {embed_dim} in its last dimension "
            f"(..., T, {embed_dim}), "
            f"got shape {shape_str(x)}"
        )


class SinusoidalPositionalEncoding(nn.Module):
    """Add the sinusoidal table to ``x``: ``x + P[:T]``, for any length ``T``.

    No parameters and no maximum length: the table is computed on the fly in
    the dtype and device of ``x``.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        embed_dim: the model width ``D`` (even); base: wavelength scale.

    Examples:
        >>> add_positions = SinusoidalPositionalEncoding(4)
        >>> out = add_positions(torch.zeros(1, 3, 4))  # zeros + P[:3]
        >>> torch.equal(out[0], sinusoidal_encoding(3, 4))
        True
    """

    def __init__(self, embed_dim: int, base: float = 10000.0) -> None:
        super().__init__()
        _check_dim(embed_dim)
        self.embed_dim, self.base = embed_dim, base

    def forward(self, x: Tensor) -> Tensor:
        """x ``(B, T, D)`` or ``(T, D)`` -> ``x + P[:T]`` of the same shape."""
        _check_x(x, self.embed_dim)
        T = x.shape[-2]
        P = sinusoidal_encoding(
            T, self.embed_dim, self.base, dtype=x.dtype, device=x.device
        )
        return x + P  # (..., T, D)
