r"""Images as sets of vectors: patches and a tiny Vision Transformer.

* :func:`patchify` cuts images ``(B, C, H, W)`` into ``N`` patches of
  ``p x p`` pixels, each flattened to a vector of ``C p^2`` numbers: the
  "words" of a Vision Transformer (Dosovitskiy et al., 2021). With ``p = 1``
  every pixel is a token: a ``5 x 10`` RGB image is a set of 50 vectors of 3.
* :class:`ViT`: patch embedding, class token, learned positions, pre-norm
  Transformer encoder blocks, linear classifier.

Self-attention that *is* a convolution is :mod:`selfattn.convolution`; the
chapter's convolutional baseline, :class:`selfattn.lab.baselines.SmallCNN`,
is the course bench's.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_images, check_int, shape_str
from selfattn._params import init_from
from selfattn.positional import LearnedPositionalEmbedding
from selfattn.transformer import TransformerEncoderBlock

__all__ = [
    "patchify",
    "ViT",
]


def patchify(images: Tensor, patch: int) -> Tensor:
    r"""Cut images into non-overlapping ``patch x patch`` squares, flattened.

    Patch ``n = r (W/p) + c`` is the square in patch-row ``r``, patch-column
    ``c`` (row-major, like reading); its vector lists channel by channel the
    pixels row by row: ``out[b, n] = images[b, :, rp:(r+1)p, cp:(c+1)p].flatten()``.

    Taught in :doc:`/notebooks/images-attention-convolution`.

    Args:
        images: ``(B, C, H, W)``; ``H`` and ``W`` divisible by ``patch``.
        patch: the side ``p`` of a patch (1 = one token per pixel).

    Returns:
        ``(B, N, C p^2)`` with ``N = (H / p)(W / p)``.

    Examples:
        >>> image = torch.arange(16.0).reshape(1, 1, 4, 4)
        >>> patchify(image, 2)[0]  # four 2x2 patches, each flattened
        tensor([[ 0.,  1.,  4.,  5.],
                [ 2.,  3.,  6.,  7.],
                [ 8.,  9., 12., 13.],
                [10., 11., 14., 15.]])
    """
    B, C, H, W = check_images(images).shape
    if H % check_int("patch", patch) or W % patch:
        raise ValueError(
            f"patch={patch} must be a positive int dividing H={H} and W={W} "
            f"(images {shape_str(images)})"
        )
    p = patch
    x = images.reshape(B, C, H // p, p, W // p, p)  # (B, C, H/p, p, W/p, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, H/p, W/p, C, p, p)
    return x.reshape(B, (H // p) * (W // p), C * p * p)  # (B, N, C p^2)


class ViT(nn.Module):
    r"""A tiny Vision Transformer (Dosovitskiy et al., 2021): patches as words.

    .. math::
        z_0 = [\,x_{\text{cls}};\ x_1 E;\ \dots;\ x_N E\,] + E_{\text{pos}},\quad
        z_\ell = \operatorname{Block}(z_{\ell-1}),\quad
        \text{logits} = \operatorname{LN}(z_L^{0})\, W_{\text{head}}
        \ \ (\text{or the mean of } z_L^{1..N})

    Taught in :doc:`/notebooks/images-attention-convolution`.

    Args:
        image_size: the side of the square images, in pixels.
        patch: the side ``p`` of a square patch; it must divide ``image_size``.
        in_channels: the number of image channels ``C``.
        num_classes: the number of outputs.
        embed_dim: the model width ``D``.
        depth: the number of encoder blocks.
        num_heads: the number of heads per block.
        ff_dim: the hidden width of the blocks' FFN, default ``4 D`` (as
            :class:`~selfattn.transformer.TransformerEncoderBlock`).
        dropout: dropout rate in the blocks.
        pool: ``"cls"`` classifies the class token's output, as in the
            paper. ``"mean"`` classifies the average of the patch outputs,
            the global average pooling head of the paper's appendix; the
            class token is then still attended to but not read out.
        generator: draws every initial weight (the position table included);
            None = torch's global generator.

    Examples:
        >>> vit = ViT(8, 4, 1, 10, embed_dim=16, depth=1, num_heads=2,
        ...           generator=torch.Generator())
        >>> vit(torch.randn(3, 1, 8, 8)).shape  # 4 patches + the class token inside
        torch.Size([3, 10])
    """

    def __init__(
        self,
        image_size: int,
        patch: int,
        in_channels: int,
        num_classes: int,
        *,
        embed_dim: int = 32,
        depth: int = 2,
        num_heads: int = 4,
        ff_dim: int | None = None,
        dropout: float = 0.0,
        pool: str = "cls",
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        sizes = dict(image_size=image_size, patch=patch, in_channels=in_channels)
        sizes.update(num_classes=num_classes, embed_dim=embed_dim, depth=depth)
        for name, n in sizes.items():  # num_heads and ff_dim: by the blocks
            check_int(name, n)
        with init_from(self, generator):
            if pool not in ("cls", "mean"):
                raise ValueError(f"pool must be 'cls' or 'mean', got {pool!r}")
            self.pool = pool
            if image_size % patch:
                raise ValueError(f"patch={patch} must divide image_size={image_size}")
            self.image_size, self.in_channels = image_size, in_channels
            self.patch, self.num_patches = patch, (image_size // patch) ** 2
            D = embed_dim
            self.embed = nn.Linear(in_channels * patch * patch, D)
            self.cls = nn.Parameter(torch.zeros(1, 1, D))
            self.pos = LearnedPositionalEmbedding(self.num_patches + 1, D)
            self.blocks = nn.ModuleList(
                TransformerEncoderBlock(D, num_heads, ff_dim, dropout)
                for _ in range(depth)
            )
            self.norm = nn.LayerNorm(D)
            self.head = nn.Linear(D, num_classes)

    def _tokens(self, images: Tensor) -> Tensor:
        """images ``(B, C, H, W)`` -> :math:`z_0` ``(B, N + 1, D)``."""
        C, S = self.in_channels, self.image_size
        if check_images(images).shape[1:] != (C, S, S):
            raise ValueError(
                f"images must have shape (B, {C}, {S}, {S}) (in_channels={C}, "
                f"image_size={S}), got {shape_str(images)}"
            )
        x = self.embed(patchify(images, self.patch))  # (B, N, D)
        cls = self.cls.expand(x.shape[0], -1, -1)  # (B, 1, D)
        return self.pos(torch.cat([cls, x], dim=1))  # (B, N + 1, D)

    def forward(self, images: Tensor) -> Tensor:
        """images ``(B, C, H, W)`` -> logits ``(B, num_classes)``."""
        z = self._tokens(images)  # (B, N + 1, D)
        for block in self.blocks:
            z = block(z)  # (B, N + 1, D)
        summary = z[:, 0] if self.pool == "cls" else z[:, 1:].mean(dim=1)  # (B, D)
        return self.head(self.norm(summary))  # (B, num_classes)

    def attention_weights(self, images: Tensor) -> list[Tensor]:
        """The weights of every block in ``self(images)``: a list of ``depth``
        tensors ``(B, heads, N + 1, N + 1)``; token 0 is the class token.

        Call in ``eval()`` mode (or with ``dropout=0``) for weights that do
        not depend on the dropout draws.
        """
        z = self._tokens(images)  # (B, N + 1, D)
        weights = []
        for block in self.blocks:
            weights.append(block.attention_weights(z))  # (B, heads, N + 1, N + 1)
            z = block(z)  # (B, N + 1, D)
        return weights
