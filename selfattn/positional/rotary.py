r"""Rotary position embedding, RoPE (Su et al., 2024): position as a rotation
of queries and keys."""

from __future__ import annotations

import torch
from torch import Tensor

from selfattn._checks import LOW_PRECISION, check_no_nan, check_tensor, shape_str
from selfattn.positional.sinusoidal import frequencies

__all__ = ["apply_rotary"]


def apply_rotary(
    x: Tensor, positions: Tensor | None = None, base: float = 10000.0
) -> Tensor:
    r"""Rotary position embedding (RoPE; Su et al., 2024) of queries or keys.

    Each pair :math:`(x_{2f}, x_{2f+1})` of the vector at position :math:`m`
    is rotated by the angle :math:`m\,\omega_f`:

    .. math::
        \begin{pmatrix} x'_{2f} \\ x'_{2f+1} \end{pmatrix}
        = \begin{pmatrix} \cos m\omega_f & -\sin m\omega_f \\
                          \sin m\omega_f & \cos m\omega_f \end{pmatrix}
          \begin{pmatrix} x_{2f} \\ x_{2f+1} \end{pmatrix}

    so :math:`\langle R_m q, R_n k\rangle = q^\top R_{n-m} k` depends only on
    the offset. Apply to ``q`` and ``k`` (not ``v``) before the scores.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        x: ``(..., T, d)`` with ``d`` even (e.g. ``(B, H, T, d_k)``).
        positions: ``(T,)`` (or broadcastable to ``(..., T)``) position of each
            row; default ``0 .. T-1``.
        base: wavelength scale of :math:`\omega_f = \text{base}^{-2f/d}`.
    Returns:
        A tensor of the shape and dtype of ``x``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)
        >>> s = apply_rotary(q) @ apply_rotary(k).T  # scores depend on offsets only:
        >>> later = torch.arange(6) + 5  # the same tokens, five positions on
        >>> shifted = apply_rotary(q, later) @ apply_rotary(k, later).T
        >>> torch.allclose(s, shifted, atol=1e-5)
        True
    """
    check_tensor("x", x, min_dim=2)
    check_no_nan("x", x)
    T, d = x.shape[-2], x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"x must have an even last dimension d, got {shape_str(x)}")
    if positions is None:
        positions = torch.arange(T)
    positions = torch.as_tensor(positions)
    if positions.dim() == 0 or positions.shape[-1] != T:
        raise ValueError(
            f"positions must end with T={T} entries, got shape {shape_str(positions)} "
            f"for x {shape_str(x)}"
        )
    work = torch.float32 if x.dtype in LOW_PRECISION else x.dtype
    # Angles in float64 on the CPU (some devices, e.g. Apple's MPS, have no
    # float64), then moved: (..., T, d/2).
    omega = frequencies(d, base)  # (d/2,)
    angles = positions.to("cpu", torch.float64)[..., None] * omega
    angles = angles.to(device=x.device, dtype=work)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., 0::2].to(work), x[..., 1::2].to(work)  # (..., T, d/2) each
    rotated = (x1 * cos - x2 * sin, x1 * sin + x2 * cos)  # new (x_2f, x_2f+1)
    out = torch.stack(rotated, dim=-1)  # (..., T, d/2, 2)
    return out.flatten(-2).to(x.dtype)  # (..., T, d), pairs interleaved back
