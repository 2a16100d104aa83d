"""scikit-learn's bundled 8x8 handwritten digits, split deterministically."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from selfattn.lab.data._common import _rng


@dataclass
class ImageSplit:
    """Images ``(N, C, H, W)`` in ``[0, 1]`` with labels, split into train/test."""

    X_train: Tensor
    y_train: Tensor
    X_test: Tensor
    y_test: Tensor
    class_names: tuple[str, ...] = field(default=tuple("0123456789"))


def digits(
    *, test_fraction: float = 0.25, generator: np.random.Generator | int
) -> ImageSplit:
    """scikit-learn's 1,797 handwritten digits (8x8, bundled: no download).

    Pixel intensities 0..16 are scaled to ``[0, 1]``. The split is stratified:
    of each digit's images, a fraction ``test_fraction`` (rounded) goes to the
    test set, chosen by ``generator``; indices are kept in their original order.

    Args:
        test_fraction: share of each class held out, in ``(0, 1)``.
        generator: an int or a ``numpy.random.Generator``.

    Returns:
        An :class:`ImageSplit` with ``X_*`` of shape ``(n, 1, 8, 8)`` float32
        and ``y_*`` of shape ``(n,)`` int64.
    """
    from sklearn.datasets import load_digits  # here: 2 s to import, one chapter

    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    rng = _rng(generator)
    data = load_digits()
    X = torch.tensor(data.images / 16.0, dtype=torch.float32)[:, None]  # (N, 1, 8, 8)
    y = torch.tensor(data.target, dtype=torch.long)
    test = np.zeros(len(y), dtype=bool)
    for c in range(10):
        idx = np.flatnonzero(data.target == c)
        test[rng.permutation(idx)[: round(test_fraction * len(idx))]] = True
    test_t = torch.from_numpy(test)
    return ImageSplit(X[~test_t], y[~test_t], X[test_t], y[test_t])
