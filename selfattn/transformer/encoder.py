r"""The Transformer's encoder block: self-attention and a feed-forward network."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn import _torch_compat
from selfattn._checks import check_int, check_rate, check_sequence, ff_width
from selfattn._params import init_from
from selfattn.modules import MultiHeadAttention

__all__ = ["TransformerEncoderBlock"]


class TransformerEncoderBlock(nn.Module):
    r"""A pre-norm Transformer encoder block (Vaswani et al., 2017; Ba et al., 2016).

    .. math::
        h = x + \operatorname{MHA}(\operatorname{LN}(x)),\qquad
        y = h + \operatorname{FFN}(\operatorname{LN}(h))

    Taught in :doc:`/notebooks/sequence-labelling`.

    Args:
        embed_dim: ``D``; num_heads: ``H``; ff_dim: hidden width of the
            feed-forward network (None: ``4 D``; positive); dropout: after
            attention and FFN.
        generator: draws the initial weights (PyTorch's default
            distribution); None = torch's global generator. Dropout masks
            still come from the global generator.

    Examples:
        >>> block = TransformerEncoderBlock(8, 2, generator=torch.Generator())
        >>> block(torch.randn(3, 5, 8)).shape
        torch.Size([3, 5, 8])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        ff_dim: int | None = None,
        dropout: float = 0.0,
        *,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        ff_dim = ff_width(ff_dim, check_int("embed_dim", embed_dim))  # None: 4 D
        check_rate("dropout", dropout)
        with init_from(self, generator):
            self.embed_dim = embed_dim
            self.norm1 = nn.LayerNorm(embed_dim)
            self.attn = MultiHeadAttention(embed_dim, num_heads)
            self.norm2 = nn.LayerNorm(embed_dim)
            self.ffn = nn.Sequential(
                nn.Linear(embed_dim, ff_dim), nn.GELU(), nn.Linear(ff_dim, embed_dim)
            )
            self.drop = nn.Dropout(dropout)

    def forward(
        self, x: Tensor, mask: Tensor | None = None, *, causal: bool = False
    ) -> Tensor:
        """x ``(B, T, D)`` -> ``(B, T, D)``; ``mask`` and ``causal`` as in
        :class:`~selfattn.modules.MultiHeadAttention`."""
        check_sequence("x", x, self.embed_dim)
        a = self.attn(self.norm1(x), mask=mask, causal=causal)  # (B, T, D)
        h = x + self.drop(a)  # (B, T, D)
        return h + self.drop(self.ffn(self.norm2(h)))  # (B, T, D)

    def attention_weights(
        self, x: Tensor, mask: Tensor | None = None, *, causal: bool = False
    ) -> Tensor:
        """The weights ``(B, H, T, T)`` of the block's attention in ``self(x)``:
        those of ``self.attn`` on the normalised input ``LN(x)``."""
        check_sequence("x", x, self.embed_dim)
        return self.attn.attention_weights(self.norm1(x), mask=mask, causal=causal)

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> TransformerEncoderBlock:
        """Copy a ``torch.nn.TransformerEncoderLayer`` built with
        ``norm_first=True`` and ``activation="gelu"``: its weights and its
        ``layer_norm_eps`` (same outputs with dropout 0 or in eval mode;
        batch first whatever ``layer`` says).

        PyTorch's masks mark what to *ignore*; here
        ``mask = ~src_mask & ~src_key_padding_mask[:, None, :]``.

        Examples:
            >>> layer = nn.TransformerEncoderLayer(8, 2, 16, activation="gelu",
            ...                                    norm_first=True, batch_first=True)
            >>> block = TransformerEncoderBlock.from_torch(layer.eval())
            >>> x = torch.randn(1, 3, 8)
            >>> torch.allclose(block(x), layer(x), atol=1e-6)
            True
        """
        return _torch_compat.block_from_torch(
            cls, layer, nn.TransformerEncoderLayer, _torch_compat.ENCODER
        )
