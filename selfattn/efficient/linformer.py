"""Linformer: keys and values projected to a fixed length along the sequence
(Wang et al., 2020).
"""

from __future__ import annotations

from torch import Tensor

from selfattn._checks import check_qkv, check_tensor, shape_str
from selfattn.attention import attend


def linformer_attention(
    q: Tensor, k: Tensor, v: Tensor, E: Tensor, F: Tensor
) -> Tensor:
    r"""Low-rank attention: keys and values projected from ``T_k`` to ``k_proj`` rows.

    .. math::

        \operatorname{softmax}\!\Big(\frac{q (E k)^\top}{\sqrt{d_k}}\Big)\, (F v)

    (Wang et al., 2020): the score matrix is ``(T_q, k_proj)``, so for a
    fixed ``k_proj`` time and memory are linear in ``T``. With ``E = F = I``
    (``k_proj = T_k``) it is dense attention.

    Taught in :doc:`/notebooks/efficient-attention`.

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``.
        E, F: ``(k_proj, T_k)`` projections of the keys and of the values.

    Returns:
        ``(..., T_q, d_v)``.

    Examples:
        >>> import torch
        >>> from selfattn import scaled_dot_product_attention
        >>> g = torch.Generator().manual_seed(0)
        >>> q, k, v = (torch.randn(1, 6, 4, generator=g) for _ in range(3))
        >>> E = torch.eye(6)  # no compression: dense attention again
        >>> torch.allclose(linformer_attention(q, k, v, E, E),
        ...                scaled_dot_product_attention(q, k, v)[0], atol=1e-6)
        True
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
    return attend(q, k_proj, v_proj)  # (..., T_q, d_v)
