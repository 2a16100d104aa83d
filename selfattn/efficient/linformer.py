"""Linformer: keys and values projected to a fixed length along the sequence
(Wang et al., 2020).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_qkv, check_tensor, shape_str
from selfattn.attention import scaled_dot_product_attention
from selfattn.efficient._common import _check_positive_int

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
    :class:`selfattn.modules.MultiHeadAttention` (same parameter names), plus learned
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
