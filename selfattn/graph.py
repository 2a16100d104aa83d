r"""Attention on graphs: every node attends only to its neighbours.

A graph is a set of node vectors ``x`` ``(N, F)`` plus edges. The edges say
which pairs are related, so attention is computed only along them: the mask
of :func:`selfattn.masks.graph_mask` (True = may attend) sets every other
weight to exactly zero. Two scores are offered:

* **dot product** (:func:`edge_attention`): ordinary scaled dot-product
  self-attention restricted to edges; on a complete graph it *is* ordinary
  self-attention.
* **graph attention network, GAT** (Veličković et al., 2018), per head
  :math:`h`, with :math:`z_i = W_h x_i`:

  .. math::

      e_{ij} = \operatorname{LeakyReLU}\big(a_h^\top [\, z_i \,\|\, z_j \,]\big),
      \qquad
      \alpha_{ij} = \frac{\exp e_{ij}}{\sum_{l \in \mathcal{N}(i)} \exp e_{il}},
      \qquad
      x'_i = \sum_{j \in \mathcal{N}(i)} \alpha_{ij}\, z_j ,

  where :math:`\mathcal{N}(i)` are the neighbours of :math:`i` (itself
  included when the mask has self-loops). Heads are concatenated (hidden
  layers) or averaged (the output layer).

The implementation is dense, ``(N, N)`` per head: exact and simple, right for
graphs of up to a few thousand nodes; large sparse graphs need edge lists.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from selfattn._checks import check_mask, check_tensor, shape_str
from selfattn._params import init_from
from selfattn.attention import masked_softmax, scaled_dot_product_attention
from selfattn.masks import graph_mask

__all__ = ["edge_attention", "gat_attention", "GraphAttentionLayer", "GAT"]


def edge_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    adjacency,
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


class GraphAttentionLayer(nn.Module):
    r"""One GAT layer (Veličković et al., 2018) with ``H`` heads.

    .. math::
        x'_i = \big\Vert_{h=1}^{H} \sum_{j \in \mathcal{N}(i)} \alpha^h_{ij} W_h x_j
        \ \ \text{(concat)}\qquad\text{or}\qquad
        x'_i = \frac{1}{H} \sum_{h=1}^{H} \sum_{j \in \mathcal{N}(i)}
        \alpha^h_{ij} W_h x_j\ \ \text{(average)}

    plus an optional bias; the non-linearity (ELU in the paper) is left to
    the caller. Dropout, if any, acts on the attention weights in training;
    :meth:`~selfattn.graph.GraphAttentionLayer.attention_weights` returns them
    before dropout.

    Taught in :doc:`/notebooks/graph-attention`.

    Args:
        in_dim: the input width ``F``.
        out_dim: the output width ``F'`` of each head.
        num_heads: the number of heads ``H``.
        concat: True: concatenate the heads, output width ``H F'``;
            False: average them, output width ``F'``.
        negative_slope: of the LeakyReLU.
        dropout: dropout rate on the attention weights.
        bias: add a learned bias to the output.
        generator: for the Glorot-uniform initial values; optional.

    Examples:
        >>> layer = GraphAttentionLayer(3, 5, num_heads=2, generator=torch.Generator())
        >>> mask = graph_mask(torch.ones(4, 4))
        >>> layer(torch.randn(4, 3), mask).shape  # heads concatenated: 2 * 5
        torch.Size([4, 10])
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        num_heads: int = 1,
        *,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        bias: bool = True,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        if min(in_dim, out_dim, num_heads) < 1:
            raise ValueError(
                "in_dim, out_dim and num_heads must be positive, got "
                f"{in_dim}, {out_dim}, {num_heads}"
            )
        self.num_heads, self.out_dim, self.concat = num_heads, out_dim, concat
        self.negative_slope = negative_slope
        width = num_heads * out_dim if concat else out_dim
        self.bias = nn.Parameter(torch.zeros(width)) if bias else None
        self.drop = nn.Dropout(dropout)
        with init_from(self, generator):
            self.W = nn.Parameter(torch.empty(num_heads, in_dim, out_dim))
            self.a = nn.Parameter(torch.empty(num_heads, 2 * out_dim))

    def reset_parameters_from(self, generator: torch.Generator | None) -> None:
        """Draw ``W`` and ``a`` again: Glorot uniform, from ``generator``."""
        _, in_dim, out_dim = self.W.shape
        bound_W = math.sqrt(6.0 / (in_dim + out_dim))
        bound_a = math.sqrt(6.0 / (2 * out_dim + 1))
        self.W.uniform_(-bound_W, bound_W, generator=generator)
        self.a.uniform_(-bound_a, bound_a, generator=generator)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x ``(N, F)`` or ``(B, N, F)``, mask ``(N, N)`` -> ``(..., N, H F')``
        (concat) or ``(..., N, F')`` (average)."""
        return self._forward(x, mask)[0]

    def attention_weights(self, x: Tensor, mask: Tensor) -> Tensor:
        r"""The weights ``(..., H, N, N)`` of ``self(x, mask)``, before dropout:
        :math:`\alpha^h_{ij}`, zero off the edges; a row sums to 1, or to 0
        for a node with no neighbour."""
        return self._forward(x, mask)[1]

    def _forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """``(out, weights)``: the output of :meth:`forward` and the weights."""
        heads, weights = gat_attention(
            x, mask, self.W, self.a, negative_slope=self.negative_slope
        )
        if self.drop.p > 0 and self.training:  # dropout on the weights
            heads = self.drop(weights) @ torch.einsum("...nf,hfo->...hno", x, self.W)
        if self.concat:
            out = heads.transpose(-3, -2).flatten(-2)  # (..., N, H F')
        else:
            out = heads.mean(dim=-3)  # (..., N, F')
        if self.bias is not None:
            out = out + self.bias
        return out, weights


class GAT(nn.Module):
    r"""The two-layer graph attention network of Veličković et al. (2018).

    .. math::
        h = \operatorname{ELU}(\text{GAT}_{\text{concat}}(x)),\qquad
        \text{logits} = \text{GAT}_{\text{average}}(h)

    Taught in :doc:`/notebooks/graph-attention`.

    Args:
        in_dim: the node feature width.
        hidden_dim: the width of each head of layer 1.
        num_classes: the output width.
        num_heads: the heads of layer 1; layer 2 has a single head.
        dropout: rate on the inputs of both layers and on the weights.
        generator: for the initial values; optional.

    Examples:
        >>> gat = GAT(3, 4, 2, num_heads=2, generator=torch.Generator().manual_seed(0))
        >>> mask = graph_mask(torch.ones(5, 5))
        >>> gat(torch.randn(5, 3), mask).shape  # logits, one row per node
        torch.Size([5, 2])
    """

    def __init__(
        self,
        in_dim: int,
        hidden_dim: int,
        num_classes: int,
        num_heads: int = 4,
        *,
        dropout: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        with init_from(self, generator):
            self.layer1 = GraphAttentionLayer(
                in_dim, hidden_dim, num_heads, dropout=dropout
            )
            self.layer2 = GraphAttentionLayer(
                num_heads * hidden_dim, num_classes, 1, concat=False, dropout=dropout
            )
            self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x ``(N, F)``, mask ``(N, N)`` -> logits ``(N, C)``."""
        return self._forward(x, mask)[0]

    def attention_weights(self, x: Tensor, mask: Tensor) -> list[Tensor]:
        """The weights of both layers in ``self(x, mask)``, a list
        ``[(H, N, N), (1, N, N)]`` (before dropout; call in ``eval()`` mode
        for weights that do not depend on the dropout draws)."""
        return self._forward(x, mask)[1]

    def _forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, list[Tensor]]:
        """``(logits, [w1, w2])``: the output and the weights of both layers."""
        h, w1 = self.layer1._forward(self.drop(x), mask)  # (N, H F'), (H, N, N)
        h = F.elu(h)  # (N, H F')
        out, w2 = self.layer2._forward(self.drop(h), mask)  # (N, C), (1, N, N)
        return out, [w1, w2]
