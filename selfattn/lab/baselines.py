"""Baselines the chapters compare attention with: models that are not attention.

:class:`SmallCNN` is the image chapter's convolutional network, the baseline
with a built-in locality prior against :class:`selfattn.vision.ViT`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_images
from selfattn._params import init_from

__all__ = ["SmallCNN"]


class SmallCNN(nn.Module):
    """Two 3x3 convolutions with ReLU and 2x2 max pooling, then a linear layer.

    ``(B, C, H, W)`` -> ``(B, num_classes)``; ``H`` and ``W`` divisible by 4.

    Args:
        in_channels: ``C``; num_classes: outputs; image_size: ``H = W``;
        channels: widths of the two convolutions.
        generator: draws the initial weights; None = torch's global generator.
    """

    def __init__(
        self,
        in_channels: int,
        num_classes: int,
        *,
        image_size: int = 8,
        channels: tuple[int, int] = (16, 32),
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        with init_from(self, generator):
            c1, c2 = channels
            self.features = nn.Sequential(
                nn.Conv2d(in_channels, c1, 3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(2),  # (B, c1, H/2, W/2)
                nn.Conv2d(c1, c2, 3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(2),  # (B, c2, H/4, W/4)
            )
            self.head = nn.Linear(c2 * (image_size // 4) ** 2, num_classes)

    def forward(self, images: Tensor) -> Tensor:
        """images ``(B, C, H, W)`` -> logits ``(B, num_classes)``."""
        return self.head(self.features(check_images(images)).flatten(1))
