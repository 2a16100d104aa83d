"""Shared pytest fixtures: explicit, seeded random generators (no global seeding).

Hypothesis profiles: ``ci`` (the default) is derandomised, so a run can never
flake on a rare example that another run would not draw; ``explore``
(``HYPOTHESIS_PROFILE=explore``, or ``make explore``) draws many fresh
examples to look for new counterexamples.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hypothesis import settings

settings.register_profile("ci", derandomize=True, max_examples=30, deadline=None)
settings.register_profile("explore", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

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
