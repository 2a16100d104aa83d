"""Graph attention as modules: one GAT layer, and the two-layer network."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from selfattn._checks import check_int, check_rate
from selfattn._params import init_from
from selfattn.graph.functional import gat_attention

__all__ = ["GraphAttentionLayer", "GAT"]


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
        >>> from selfattn.masks import graph_mask
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
        for name, n in (
            ("in_dim", in_dim),
            ("out_dim", out_dim),
            ("num_heads", num_heads),
        ):
            check_int(name, n)
        check_rate("dropout", dropout)
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
        >>> from selfattn.masks import graph_mask
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
        for name, n in (("hidden_dim", hidden_dim), ("num_classes", num_classes)):
            check_int(name, n)  # before the layers, whose errors say out_dim
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
