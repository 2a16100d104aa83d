"""The seed argument and the padding tag shared by the data sets."""

from __future__ import annotations

import numpy as np

PAD_TAG = -100  # tag of padding positions: ``F.cross_entropy``'s ignore_index


def _rng(generator: np.random.Generator | int) -> np.random.Generator:
    """A numpy generator from an explicit seed (never the global state)."""
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    raise TypeError(
        "generator must be a numpy.random.Generator or an int seed, got "
        f"{type(generator).__name__}"
    )
