"""Attention along the edges of a graph, as functions: dot-product and GAT scores."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike
from torch import Tensor

from selfattn._checks import check_mask, check_tensor, shape_str
from selfattn.attention import masked_softmax, scaled_dot_product_attention
from selfattn.masks import GraphLike, graph_mask

__all__ = ["edge_attention", "gat_attention"]


def edge_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    adjacency: ArrayLike | GraphLike,
    *,
    self_loops: bool = True,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Scaled dot-product self-attention along the edges of a graph only.

    .. math:: w_{ij} = \frac{[j \in \mathcal{N}(i)]\, e^{q_i \cdot k_j / \sqrt{d_k}}}
        {\sum_{l \in \mathcal{N}(i)} e^{q_i \cdot k_l / \sqrt{d_k}}}

    Equivalent to ``scaled_dot_product_attention(q, k, v,
    graph_mask(adjacency, self_loops))``: weights off the neighbourhood are
    exactly zero, and a node with no neighbour (and no self-loop) gets a
    zero output.

    Taught in :doc:`/notebooks/graph-attention`.

    Args:
        q, k: ``(..., N, d_k)``; v: ``(..., N, d_v)``, one row per node.
        adjacency: ``(N, N)`` array/tensor (non-zero = edge ``i -> j``) or a
            networkx graph.
        self_loops: let every node attend to itself too.
        scale: multiplier of the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(out, weights)``: ``out`` ``(..., N, d_v)`` and ``weights``
        ``(..., N, N)``, zero off the edges; a row sums to 1, or is all zero
        for a node with nothing to attend to.

    Examples:
        >>> x = torch.eye(3)  # three nodes, one-hot features
        >>> A = torch.tensor([[0, 1, 0], [1, 0, 1], [0, 1, 0]])  # a path 0 - 1 - 2
        >>> out, w = edge_attention(x, x, x, A, self_loops=False)
        >>> w[0]  # node 0 has one neighbour: all its weight goes there
        tensor([0., 1., 0.])
    """
    mask = graph_mask(adjacency, self_loops=self_loops).to(q.device)
    if mask.shape[-1] != q.shape[-2]:
        raise ValueError(
            f"adjacency has {mask.shape[-1]} nodes but q has {q.shape[-2]} rows "
            f"(q {shape_str(q)}); one row per node"
        )
    return scaled_dot_product_attention(q, k, v, mask, scale=scale)


def gat_attention(
    x: Tensor,
    mask: Tensor,
    W: Tensor,
    a: Tensor,
    *,
    negative_slope: float = 0.2,
) -> tuple[Tensor, Tensor]:
    r"""Graph attention (Veličković et al., 2018, eqs. 1-4), all heads at once.

    .. math::
        z = x W_h,\quad
        e_{ij} = \operatorname{LeakyReLU}(a_{h,1}^\top z_i + a_{h,2}^\top z_j),
        \quad \alpha = \operatorname{masked\_softmax}(e, \text{mask}),
        \quad \text{out} = \alpha z

    Splitting :math:`a_h = [a_{h,1}; a_{h,2}]` turns :math:`a_h^\top [z_i \| z_j]`
    into the sum of a per-query and a per-key term, so no ``(N, N, 2F')``
    tensor of pairs is ever built.

    Taught in :doc:`/notebooks/graph-attention`.

    Args:
        x: node features ``(N, F)`` or ``(B, N, F)``.
        mask: bool ``(N, N)`` (or broadcastable to ``(B, H, N, N)``); True =
            edge ``i -> j``, e.g. :func:`selfattn.masks.graph_mask`.
        W: ``(H, F, F')`` one projection per head.
        a: ``(H, 2 F')`` one attention vector per head, ``[a_1; a_2]``.
        negative_slope: of the LeakyReLU (0.2 in the paper).

    Returns:
        ``(out, weights)``: ``(..., H, N, F')`` per-head outputs (before any
        non-linearity) and ``(..., H, N, N)`` weights, zero off the edges.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> x = torch.randn(4, 3, generator=g)  # 4 nodes, 3 features
        >>> W, a = torch.randn(2, 3, 5, generator=g), torch.randn(2, 10, generator=g)
        >>> mask = graph_mask(torch.ones(4, 4) - torch.eye(4))  # complete, self-loops
        >>> heads, w = gat_attention(x, mask, W, a)
        >>> heads.shape, w.shape, torch.allclose(w.sum(-1), torch.ones(2, 4))
        (torch.Size([2, 4, 5]), torch.Size([2, 4, 4]), True)
    """
    check_tensor("x", x, min_dim=2)
    check_tensor("W", W, min_dim=3)
    check_tensor("a", a, min_dim=2)
    H, F_in, F_out = W.shape
    if x.shape[-1] != F_in:
        raise ValueError(
            f"x has F={x.shape[-1]} features but W {shape_str(W)} expects {F_in}"
        )
    if a.shape != (H, 2 * F_out):
        raise ValueError(
            f"a must have shape (H, 2F') = ({H}, {2 * F_out}), got {shape_str(a)}"
        )
    N = x.shape[-2]
    check_mask(mask, x.shape[:-2] + (H, N, N))
    z = torch.einsum("...nf,hfo->...hno", x, W)  # (..., H, N, F')
    s_dst = (z * a[:, None, :F_out]).sum(-1)  # (..., H, N)  a_1 . z_i
    s_src = (z * a[:, None, F_out:]).sum(-1)  # (..., H, N)  a_2 . z_j
    e = F.leaky_relu(s_dst[..., :, None] + s_src[..., None, :], negative_slope)
    weights = masked_softmax(e, mask)  # (..., H, N, N)
    return weights @ z, weights  # (..., H, N, F')
