"""selfattn.lab.seeding: one base seed from the environment, every seed derived."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from selfattn.lab import seeding


@pytest.fixture
def base(monkeypatch):
    def set_base(value: str | None) -> None:
        if value is None:
            monkeypatch.delenv(seeding.ENV_VAR, raising=False)
        else:
            monkeypatch.setenv(seeding.ENV_VAR, value)

    return set_base


def test_default_base_is_zero_and_offsets_are_the_seeds(base):
    base(None)
    assert seeding.base_seed() == 0
    assert seeding.seeds(4) == [0, 1, 2, 3]
    assert seeding.seed(7) == 7


def test_base_from_environment_shifts_every_seed(base):
    base("2")
    assert seeding.base_seed() == 2
    assert seeding.seeds(3, start=5) == [
        2 * seeding.STRIDE + 5,
        2 * seeding.STRIDE + 6,
        2 * seeding.STRIDE + 7,
    ]


def test_different_bases_never_share_a_seed(base):
    """Offsets below STRIDE keep the seed sets of two bases disjoint."""
    sets = []
    for b in ("0", "1", "2"):
        base(b)
        sets.append(set(seeding.seeds(100)))
    assert not (sets[0] & sets[1]) and not (sets[1] & sets[2])


def test_generators_follow_the_seed(base):
    base("1")
    a = torch.rand(3, generator=seeding.generator(4))
    b = torch.rand(3, generator=torch.Generator().manual_seed(seeding.STRIDE + 4))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    x = seeding.rng(4).random(3)
    y = np.random.default_rng(seeding.STRIDE + 4).random(3)
    np.testing.assert_array_equal(x, y)


def test_manual_seed_seeds_the_global_rng(base):
    base("3")
    assert seeding.seed_global(2) == 3 * seeding.STRIDE + 2
    a = torch.rand(2)
    torch.manual_seed(3 * seeding.STRIDE + 2)
    torch.testing.assert_close(a, torch.rand(2), rtol=0, atol=0)


@pytest.mark.parametrize("value", ["x", "1.5", "-1"])
def test_bad_environment_value_names_the_variable(base, value):
    base(value)
    with pytest.raises(ValueError, match="SELFATTN_SEED"):
        seeding.base_seed()


def test_blank_environment_value_means_default(base):
    base("  ")
    assert seeding.base_seed() == 0


@pytest.mark.parametrize("offset", [-1, seeding.STRIDE])
def test_offset_out_of_range(base, offset):
    base(None)
    with pytest.raises(ValueError, match="offset"):
        seeding.seed(offset)


def test_offset_must_be_an_int(base):
    base(None)
    with pytest.raises(TypeError, match="offset"):
        seeding.seed(1.0)
    with pytest.raises(ValueError, match="n must"):
        seeding.seeds(-1)
