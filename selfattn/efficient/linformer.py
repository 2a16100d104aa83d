"""Linformer: keys and values projected to a fixed length along the sequence
(Wang et al., 2020).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_qkv, check_tensor, shape_str
from selfattn.attention import _attend, scaled_dot_product_attention
from selfattn.efficient._common import _check_positive_int
from selfattn.modules import MultiHeadAttention

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
    return _attend(q, k_proj, v_proj)  # (..., T_q, d_v)


class LinformerSelfAttention(MultiHeadAttention):
    r"""Multi-head Linformer self-attention, ``(B, T, D) -> (B, T, D)``.

    From Wang et al. (2020): a :class:`selfattn.modules.MultiHeadAttention`
    (whose projections ``W_q, W_k, W_v, W_o`` and head split it inherits) in
    which every head attends to keys and values compressed along the
    sequence by learned ``E, F`` of shape ``(k_proj, seq_len)``, shared by all
    heads (the paper's "headwise sharing"):

    .. math::

        \operatorname{head}_h = \operatorname{softmax}\!\Big(
        \frac{q_h (E k_h)^\top}{\sqrt{d_k}}\Big)\, (F v_h),
        \qquad q_h = x W^Q_h,\ k_h = x W^K_h,\ v_h = x W^V_h .

    A sequence shorter than ``seq_len`` uses the first ``T`` columns of
    ``E, F`` (as if padded with zero keys). Self-attention only: the call
    takes ``x`` alone (no key, value or mask).

    Args:
        embed_dim: ``D``; seq_len: the longest ``T``; k_proj: projected length;
        num_heads: ``H`` (must divide ``D``); bias: biases in the projections.
        generator: draws every initial weight: the projections (PyTorch's
            default distribution, as :class:`~selfattn.modules.MultiHeadAttention`),
            then ``E, F`` (:math:`N(0, 1/k_{proj})`); None = torch's global
            generator.
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
        for name, n in (
            ("embed_dim", embed_dim),
            ("seq_len", seq_len),
            ("k_proj", k_proj),
            ("num_heads", num_heads),
        ):
            _check_positive_int(name, n)
        super().__init__(embed_dim, num_heads, bias=bias, generator=generator)
        self.seq_len = seq_len
        shape = (k_proj, seq_len)
        self.E = nn.Parameter(torch.randn(shape, generator=generator) / k_proj**0.5)
        self.F = nn.Parameter(torch.randn(shape, generator=generator) / k_proj**0.5)

    def _heads(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Per-head ``q, k, v`` ``(B, H, T, d_k)`` and the ``E, F`` for ``T``."""
        check_tensor("x", x, min_dim=3)
        if x.dim() != 3 or x.shape[-1] != self.embed_dim or x.shape[1] > self.seq_len:
            raise ValueError(
                f"x must have shape (B, T <= {self.seq_len}, {self.embed_dim}), "
                f"got {shape_str(x)}"
            )
        T = x.shape[1]
        q, k, v, _ = self._project(x, None, None, None)  # (B, H, T, d_k)
        return q, k, v, self.E[:, :T], self.F[:, :T]  # E, F: (k_proj, T)

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """Not available: PyTorch has no Linformer layer to copy ``E, F`` from."""
        raise NotImplementedError(
            "LinformerSelfAttention.from_torch: nn.MultiheadAttention has no "
            "E, F projections; build LinformerSelfAttention(embed_dim, seq_len, "
            "k_proj, num_heads) and copy W_q, W_k, W_v, W_o by hand if needed"
        )

    def forward(self, x: Tensor) -> Tensor:
        """x ``(B, T, D)`` with ``T <= seq_len`` -> ``(B, T, D)``."""
        heads = linformer_attention(*self._heads(x))  # (B, H, T, d_k)
        return self._merge(heads)  # (B, T, D)

    def attention_weights(self, x: Tensor) -> Tensor:
        """The weights ``(B, H, T, k_proj)`` of ``self(x)``: how each query
        spreads its attention over the ``k_proj`` compressed keys ``E k``."""
        q, k, v, E, F = self._heads(x)
        return scaled_dot_product_attention(q, E @ k, F @ v)[1]  # (B, H, T, k_proj)
