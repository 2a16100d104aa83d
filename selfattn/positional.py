r"""Positional encodings: telling a permutation-equivariant layer about order.

Self-attention treats its input as a set: permute the tokens and the outputs
are permuted the same way. Position must be added to the input.

* Sinusoidal (Vaswani et al., 2017), with :math:`\omega_j = 1/\text{base}^{2j/d}`:

  .. math::

      p_{i, 2j} = \sin(i\,\omega_j),\qquad p_{i, 2j+1} = \cos(i\,\omega_j),
      \qquad i = 0, 1, \dots

  A fixed offset :math:`\delta` is a rotation of every pair
  :math:`(p_{i,2j}, p_{i,2j+1})`, independent of :math:`i`
  (:func:`offset_rotation`).
* Learned: a table of ``max_len`` trainable vectors; it cannot encode a
  position it has no row for (:class:`LearnedPositionalEmbedding`).
* Rotary, RoPE (Su et al., 2024): rotate the pairs of queries and keys by
  :math:`m\,\omega_j`, so :math:`\langle \text{rope}(q, m),
  \text{rope}(k, n)\rangle` depends only on :math:`m - n`
  (:func:`apply_rotary`).

Angles are computed in float64 and cast, so the tables are exact to the
precision of the requested dtype.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import LOW_PRECISION, check_no_nan, check_tensor, shape_str
from selfattn._params import init_from

__all__ = [
    "frequencies",
    "sinusoidal_encoding",
    "offset_rotation",
    "offset_matrix",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    "apply_rotary",
]


def _check_dim(embed_dim: int) -> None:
    if not isinstance(embed_dim, int) or embed_dim <= 0 or embed_dim % 2 != 0:
        raise ValueError(
            "embed_dim must be a positive even integer (sin/cos pairs), "
            f"got embed_dim={embed_dim}"
        )


def frequencies(embed_dim: int, base: float = 10000.0) -> Tensor:
    r"""The angular frequencies :math:`\omega_j = \text{base}^{-2j/d}`, float64.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        embed_dim: the encoding width ``d`` (even); base: the wavelength scale.
    Returns:
        ``(embed_dim // 2,)``, from :math:`\omega_0 = 1` down towards ``1 / base``.

    Examples:
        >>> frequencies(4, base=100.0)  # omega_j = 100^(-2j/4)
        tensor([1.0000, 0.1000], dtype=torch.float64)
    """
    _check_dim(embed_dim)
    if base <= 0:
        raise ValueError(f"base must be positive, got base={base}")
    j = torch.arange(embed_dim // 2, dtype=torch.float64)
    return base ** (-2.0 * j / embed_dim)  # (embed_dim/2,)


def sinusoidal_encoding(
    num_positions: int,
    embed_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    r"""The sinusoidal table :math:`P` (Vaswani et al., 2017, sec. 3.5).

    .. math:: P_{i, 2j} = \sin(i / \text{base}^{2j/d}),\qquad
              P_{i, 2j+1} = \cos(i / \text{base}^{2j/d})

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        num_positions: how many positions ``i = 0 .. num_positions - 1``.
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
    if num_positions < 0:
        raise ValueError(f"num_positions must be non-negative, got {num_positions}")
    omega = frequencies(embed_dim, base)  # (embed_dim/2,)
    i = torch.arange(num_positions, dtype=torch.float64)
    angles = i[:, None] * omega[None, :]  # (num_positions, embed_dim/2)
    P = torch.empty(num_positions, embed_dim, dtype=torch.float64)
    P[:, 0::2] = torch.sin(angles)  # even columns 2j
    P[:, 1::2] = torch.cos(angles)  # odd columns 2j+1
    return P.to(dtype=dtype, device=device)


def offset_rotation(
    delta: float,
    embed_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    r"""The 2x2 maps :math:`M_j(\delta)` taking position ``i`` to ``i + delta``.

    .. math::
        M_j(\delta) = \begin{pmatrix} \cos\delta\omega_j & \sin\delta\omega_j \\
                      -\sin\delta\omega_j & \cos\delta\omega_j \end{pmatrix},\qquad
        M_j(\delta) \begin{pmatrix} p_{i,2j} \\ p_{i,2j+1} \end{pmatrix}
        = \begin{pmatrix} p_{i+\delta,2j} \\ p_{i+\delta,2j+1} \end{pmatrix}

    for every ``i`` (the angle-sum formulas); ``M_j`` does not depend on ``i``.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        delta: the offset (any real, may be negative); embed_dim: even width; base.
        dtype: of the result.
    Returns:
        ``(embed_dim // 2, 2, 2)``, block ``j`` acting on the pair ``(2j, 2j+1)``.

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


class LearnedPositionalEmbedding(nn.Module):
    """A trainable vector per position, up to ``max_len`` (as in Devlin et al., 2019).

    Unlike the sinusoidal table it has no row for a position beyond
    ``max_len - 1``: longer sequences raise a ``ValueError``.

    Taught in :doc:`/notebooks/positional-encoding` and :doc:`/notebooks/sequence-
    labelling`.

    Args:
        max_len: number of positions in the table; embed_dim: width ``D``.
        generator: for the initial values (normal, std 0.02); optional.

    Examples:
        >>> table = LearnedPositionalEmbedding(16, 4, generator=torch.Generator())
        >>> x = torch.randn(2, 10, 4)
        >>> torch.equal(table(x), x + table.rows(10))
        True
    """

    def __init__(
        self, max_len: int, embed_dim: int, *, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        if max_len <= 0 or embed_dim <= 0:
            raise ValueError(
                "max_len and embed_dim must be positive, got "
                f"max_len={max_len}, embed_dim={embed_dim}"
            )
        with init_from(self, generator):
            self.max_len, self.embed_dim = max_len, embed_dim
            self.weight = nn.Parameter(torch.empty(max_len, embed_dim))

    def reset_parameters_from(self, generator: torch.Generator | None) -> None:
        """Draw the table again: normal, std 0.02, from ``generator``."""
        with torch.no_grad():
            nn.init.normal_(self.weight, std=0.02, generator=generator)

    def forward(self, x: Tensor) -> Tensor:
        """x ``(B, T, D)`` or ``(T, D)`` -> ``x + E[:T]`` of the same shape."""
        _check_x(x, self.embed_dim)
        return x + self.rows(x.shape[-2]).to(x.dtype)  # (..., T, D)

    def rows(self, T: int) -> Tensor:
        """The table's first ``T`` rows ``E[:T]``, ``(T, D)``: the codes of
        positions ``0, ..., T - 1``."""
        if isinstance(T, bool) or not isinstance(T, int):
            raise TypeError(f"T must be an int, got {type(T).__name__}")
        if T > self.max_len:
            raise ValueError(
                f"sequence length T={T} exceeds max_len={self.max_len} of this "
                "learned table; use a longer table or a sinusoidal/rotary encoding"
            )
        if T < 0:
            raise ValueError(f"sequence length must be non-negative, got T={T}")
        return self.weight[:T]  # (T, D)


def apply_rotary(
    x: Tensor, positions: Tensor | None = None, base: float = 10000.0
) -> Tensor:
    r"""Rotary position embedding (RoPE; Su et al., 2024) of queries or keys.

    Each pair :math:`(x_{2j}, x_{2j+1})` of the vector at position :math:`m`
    is rotated by the angle :math:`m\,\omega_j`:

    .. math::
        \begin{pmatrix} x'_{2j} \\ x'_{2j+1} \end{pmatrix}
        = \begin{pmatrix} \cos m\omega_j & -\sin m\omega_j \\
                          \sin m\omega_j & \cos m\omega_j \end{pmatrix}
          \begin{pmatrix} x_{2j} \\ x_{2j+1} \end{pmatrix}

    so :math:`\langle R_m q, R_n k\rangle = q^\top R_{n-m} k` depends only on
    the offset. Apply to ``q`` and ``k`` (not ``v``) before the scores.

    Taught in :doc:`/notebooks/positional-encoding`.

    Args:
        x: ``(..., T, d)`` with ``d`` even (e.g. ``(B, H, T, d_k)``).
        positions: ``(T,)`` (or broadcastable to ``(..., T)``) position of each
            row; default ``0 .. T-1``.
        base: wavelength scale of :math:`\omega_j = \text{base}^{-2j/d}`.
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
    rotated = (x1 * cos - x2 * sin, x1 * sin + x2 * cos)  # new (x_2j, x_2j+1)
    out = torch.stack(rotated, dim=-1)  # (..., T, d/2, 2)
    return out.flatten(-2).to(x.dtype)  # (..., T, d), pairs interleaved back
