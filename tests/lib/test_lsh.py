"""selfattn.efficient.lsh: Reformer's hashing against a nested-loop oracle.

The oracle draws the same ``R`` from a generator in the same state and picks,
for each vector, the direction among +r_c and -r_c with the largest dot
product, one loop at a time. Properties: buckets ignore positive scaling,
``-x`` lands in the opposite bucket, nearby vectors share buckets more often.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from selfattn.efficient import angular_lsh


def seeded(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def nested_loop_lsh(x: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Bucket of each row of ``x`` ``(n, d)``: the best of +r_0, ..., -r_0, ..."""
    half = R.shape[1]
    buckets = np.empty(len(x), dtype=np.int64)
    for i, row in enumerate(x):
        best, best_c = -np.inf, -1
        for c in range(2 * half):
            sign = 1.0 if c < half else -1.0
            dot = sign * sum(row[a] * R[a, c % half] for a in range(len(row)))
            if dot > best:  # the first of equal maxima, as argmax
                best, best_c = dot, c
        buckets[i] = best_c
    return buckets


@pytest.mark.parametrize("d, n_buckets", [(1, 2), (2, 4), (5, 6), (16, 8)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_angular_lsh_matches_a_nested_loop(d, n_buckets, dtype):
    x = torch.randn(3, 20, d, generator=seeded(5), dtype=dtype)  # (B, T, d)
    R = torch.randn(d, n_buckets // 2, generator=seeded(), dtype=torch.float64)
    expected = nested_loop_lsh(x.double().reshape(-1, d).numpy(), R.numpy())
    got = angular_lsh(x, n_buckets, generator=seeded())  # (B, T)
    assert got.shape == (3, 20)
    np.testing.assert_array_equal(got.reshape(-1).numpy(), expected)


def test_angular_lsh_gives_buckets_in_range():
    x = torch.randn(3, 50, 6, generator=seeded(1))
    buckets = angular_lsh(x, 8, generator=seeded())
    assert buckets.shape == (3, 50) and buckets.dtype == torch.int64
    assert buckets.min() >= 0 and buckets.max() < 8
    assert len(buckets.unique()) > 1


@pytest.mark.parametrize("scale", [0.5, 3.0, 1e3])
def test_angular_lsh_ignores_positive_scaling(scale):
    x = torch.randn(200, 5, generator=seeded(2), dtype=torch.float64)
    h = angular_lsh(x, 6, generator=seeded())
    assert torch.equal(angular_lsh(scale * x, 6, generator=seeded()), h)


def test_angular_lsh_sends_the_opposite_vector_to_the_opposite_bucket():
    """argmax [xR; -xR] for -x is the same argmax, shifted by n_buckets / 2."""
    x = torch.randn(200, 4, generator=seeded(3))
    h = angular_lsh(x, 8, generator=seeded())
    h_neg = angular_lsh(-x, 8, generator=seeded())
    assert torch.equal(h_neg, (h + 4) % 8)


def test_angular_lsh_puts_nearby_points_together_more_often():
    gen = seeded(4)
    x = torch.nn.functional.normalize(torch.randn(2000, 16, generator=gen), dim=-1)
    near = x + 0.05 * torch.randn(2000, 16, generator=gen)
    far = torch.randn(2000, 16, generator=gen)
    h = angular_lsh(torch.cat([x, near, far]), 8, generator=seeded())
    h_x, h_near, h_far = h.split(2000)
    same_near = (h_x == h_near).float().mean().item()
    same_far = (h_x == h_far).float().mean().item()
    assert same_near > 0.8 and same_far < 0.3, (same_near, same_far)


@pytest.mark.parametrize("n_buckets", [3, 0, 1])
def test_angular_lsh_needs_an_even_number_of_buckets(n_buckets):
    with pytest.raises(ValueError, match="n_buckets"):
        angular_lsh(torch.ones(2, 3), n_buckets, generator=seeded())


@pytest.mark.parametrize(
    "x, got",
    [(torch.ones(2, 3, dtype=torch.long), "torch.int64"), ([1.0, 2.0], "list")],
    ids=["int tensor", "list"],
)
def test_angular_lsh_needs_a_float_tensor(x, got):
    """The message names what it got: the dtype of a tensor, else the type."""
    with pytest.raises(
        TypeError, match=f"^x must be a float torch.Tensor .*, got {got}$"
    ):
        angular_lsh(x, 4)


def test_angular_lsh_of_one_vector():
    """x may be a single (d,) vector: its bucket, as row 0 of a batch."""
    x = torch.randn(3, 5, generator=seeded(1))
    batch = angular_lsh(x, 8, generator=seeded())
    assert angular_lsh(x[0], 8, generator=seeded()).shape == ()
    assert angular_lsh(x[0], 8, generator=seeded()) == batch[0]


@pytest.mark.parametrize("n_buckets", [2.0, True, "4"])
def test_angular_lsh_needs_an_int_number_of_buckets(n_buckets):
    got = type(n_buckets).__name__
    with pytest.raises(TypeError, match=f"^n_buckets must be an int, got {got}$"):
        angular_lsh(torch.ones(2, 3), n_buckets, generator=seeded())


def test_angular_lsh_needs_a_generator():
    """Randomness is explicit (STYLE.md, rule 5), as in performer_attention:
    without a generator it refuses rather than draw from the global stream."""
    message = (
        "angular_lsh needs generator= (a torch.Generator, to draw R); the "
        "library never draws from torch's global generator"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        angular_lsh(torch.ones(2, 3), 4)
    with pytest.raises(
        TypeError, match="^generator must be a torch.Generator, got int$"
    ):
        angular_lsh(torch.ones(2, 3), 4, generator=0)


def test_angular_lsh_needs_a_vector_dimension():
    with pytest.raises(ValueError, match="d >= 1"):
        angular_lsh(torch.ones(2, 0), 4, generator=seeded())


def test_angular_lsh_stays_on_the_input_s_device():
    """On PyTorch's ``meta`` device: the rotation, drawn on the CPU by the
    generator, is moved to x's device, or the product would raise."""
    x = torch.randn(3, 5, device="meta")
    assert angular_lsh(x, 8, generator=seeded()).device.type == "meta"
