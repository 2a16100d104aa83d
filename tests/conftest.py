"""Shared pytest fixtures: explicit, seeded random generators (no global seeding)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

# The tests use tiny tensors: thread start-up costs more than it saves, and on a
# shared CI runner intra-op threads contend (a 5 s file took 45 s). One thread.
torch.set_num_threads(1)


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh numpy generator, seeded the same way in every test."""
    return np.random.default_rng(0)


@pytest.fixture
def gen() -> torch.Generator:
    """A fresh torch CPU generator, seeded the same way in every test."""
    return torch.Generator().manual_seed(0)
