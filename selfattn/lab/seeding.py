"""One base seed per run, and every seed a chapter uses derived from it.

A chapter's claims must hold for any seed, not only for the one whose outputs
are committed. So a notebook never types a seed: it asks this module for one.
The base seed comes from the environment variable ``SELFATTN_SEED`` (default
0); ``make test`` executes every notebook with two other base seeds and checks
that every assert still holds.

Derivation: the seed with offset ``k`` is ``base * STRIDE + k``, so with the
default base 0 the seeds are simply 0, 1, 2, ... and every offset below
``STRIDE`` gives a different stream for every base. Typical use in a
notebook::

    from selfattn.lab import seeding
    gen = seeding.generator()          # torch.Generator, offset 0
    rng = seeding.rng()                # numpy Generator, offset 0
    seeding.seed_global(3)             # torch's global RNG (module init)
    runs = seeding.seeds(5)            # five derived seeds for five runs
"""

from __future__ import annotations

import os

import numpy as np
import torch

from selfattn._checks import check_int

__all__ = [
    "ENV_VAR",
    "STRIDE",
    "base_seed",
    "generator",
    "seed_global",
    "rng",
    "seed",
    "seeds",
]

ENV_VAR = "SELFATTN_SEED"
STRIDE = 10_000


def base_seed() -> int:
    """The base seed of this run: ``int($SELFATTN_SEED)``, or 0 when unset.

    Raises:
        ValueError: if the variable is set to something that is not a
            non-negative integer.
    """
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"{ENV_VAR} must be a non-negative integer, got {text!r}"
        ) from None
    if value < 0:
        raise ValueError(f"{ENV_VAR} must be a non-negative integer, got {value}")
    return value


def seed(offset: int = 0) -> int:
    """The seed with this ``offset``: ``base_seed() * STRIDE + offset``.

    Args:
        offset: which of the run's seeds, ``0 <= offset < STRIDE``. Use a
            different offset for each independent source of randomness.
    """
    if check_int("offset", offset, minimum=0) >= STRIDE:
        raise ValueError(f"offset must be in [0, {STRIDE}), got {offset}")
    return base_seed() * STRIDE + offset


def seeds(n: int, start: int = 0) -> list[int]:
    """``n`` derived seeds, offsets ``start, ..., start + n - 1`` (one per run)."""
    check_int("n", n, minimum=0)
    return [seed(start + i) for i in range(n)]


def generator(offset: int = 0) -> torch.Generator:
    """A fresh CPU ``torch.Generator`` seeded with ``seed(offset)``."""
    return torch.Generator().manual_seed(seed(offset))


def rng(offset: int = 0) -> np.random.Generator:
    """A fresh numpy ``Generator`` seeded with ``seed(offset)``."""
    return np.random.default_rng(seed(offset))


def seed_global(offset: int = 0) -> int:
    """Seed torch's *global* RNG with ``seed(offset)`` and return that seed.

    Only for what draws from the global RNG (``nn.Module`` initialisation,
    dropout); pass a :func:`generator` wherever a function accepts one.
    """
    value = seed(offset)
    torch.manual_seed(value)
    return value
