"""Seeds and argument checks shared by the data sets."""

from __future__ import annotations

from typing import Any

import numpy as np

PAD_TAG = -100  # tag of padding positions: ``F.cross_entropy``'s ignore_index


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    """A numpy generator from an explicit seed (never the global state)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))
    raise TypeError(
        f"seed must be an int or a numpy.random.Generator, got {type(seed).__name__}"
    )


def _positive(name: str, value: Any) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {name}={value}")
