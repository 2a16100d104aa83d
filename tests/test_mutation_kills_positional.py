"""Positional encodings where mutation testing found arguments unchecked.

The oracle is the formula written as a loop (``p_loop``: sin and cos of
``i / base^(2j/d)`` in Python floats), never the library's own table.
See tests/MUTATION.md.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from test_positional import p_loop  # the nested-loop oracle of the encoding

from selfattn.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    frequencies,
    offset_matrix,
    sinusoidal_encoding,
)


@pytest.mark.parametrize("delta", [1, 3, -2])
def test_offset_matrix_with_another_base_maps_i_to_i_plus_delta(delta):
    """``M(delta) @ p_i == p_{i+delta}`` holds for the base it was built with."""
    dim, base = 6, 50.0
    M = offset_matrix(delta, dim, base, dtype=torch.float64)
    for i in range(4):
        p_i = torch.tensor(p_loop(i, dim, base), dtype=torch.float64)
        expected = torch.tensor(p_loop(i + delta, dim, base), dtype=torch.float64)
        torch.testing.assert_close(M @ p_i, expected, rtol=0, atol=1e-12)


def test_offset_matrix_dtype_is_the_requested_one():
    assert offset_matrix(1, 4).dtype == torch.float32  # the default
    for dtype in (torch.float64, torch.bfloat16):
        assert offset_matrix(1, 4, dtype=dtype).dtype == dtype


def test_sinusoidal_module_uses_its_base_and_the_input_dtype():
    """float64 input: the table is added at float64 precision, with ``base``."""
    dim, base, T = 8, 30.0, 5
    x = torch.zeros(2, T, dim, dtype=torch.float64)
    out = SinusoidalPositionalEncoding(dim, base)(x)
    expected = torch.tensor(
        [p_loop(i, dim, base) for i in range(T)], dtype=torch.float64
    )
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, expected.expand(2, T, dim), rtol=0, atol=1e-12)


def test_sinusoidal_module_keeps_half_precision():
    x = torch.zeros(1, 3, 4, dtype=torch.float16)
    out = SinusoidalPositionalEncoding(4)(x)
    assert out.dtype == torch.float16
    expected = torch.tensor([p_loop(i, 4) for i in range(3)], dtype=torch.float64)
    torch.testing.assert_close(out[0].double(), expected, rtol=0, atol=1e-3)


def test_sinusoidal_module_stays_on_the_input_device():
    """A table made on the CPU would meet the meta input and raise."""
    out = SinusoidalPositionalEncoding(8)(torch.empty(2, 5, 8, device="meta"))
    assert out.device.type == "meta" and out.shape == (2, 5, 8)


def test_sinusoidal_encoding_of_no_position_is_an_empty_table():
    P = sinusoidal_encoding(0, 4)
    assert P.shape == (0, 4) and P.dtype == torch.float32


def test_sinusoidal_encoding_names_a_negative_length():
    with pytest.raises(
        ValueError, match=r"^num_positions must be non-negative, got -1$"
    ):
        sinusoidal_encoding(-1, 4)


def test_learned_embedding_of_no_position(gen):
    table = LearnedPositionalEmbedding(4, 3, generator=gen)
    assert table.rows(0).shape == (0, 3)
    x = torch.zeros(2, 0, 3)
    assert table(x).shape == (2, 0, 3)
    torch.testing.assert_close(table.rows(2), table.weight[:2])


def test_learned_embedding_names_a_negative_length(gen):
    table = LearnedPositionalEmbedding(4, 3, generator=gen)
    with pytest.raises(
        ValueError, match=r"^sequence length must be non-negative, got T=-1$"
    ):
        table.rows(-1)


def test_learned_embedding_keeps_half_precision(gen):
    table = LearnedPositionalEmbedding(4, 3, generator=gen)
    x = torch.zeros(2, 3, 3, dtype=torch.float16)
    out = table(x)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out[0], table.weight[:3].detach().half())


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: SinusoidalPositionalEncoding(8)([[0.0]]),
            TypeError,
            "x must be a torch.Tensor, got list",
        ),
        (
            lambda: SinusoidalPositionalEncoding(8)(torch.zeros(8)),
            ValueError,
            "x must have at least 2 dimensions, got shape (8)",
        ),
        (
            lambda: LearnedPositionalEmbedding(4, 8)(torch.zeros(8)),
            ValueError,
            "x must have at least 2 dimensions, got shape (8)",
        ),
        (
            lambda: apply_rotary([[0.0]]),
            TypeError,
            "x must be a torch.Tensor, got list",
        ),
        (
            lambda: apply_rotary(torch.zeros(4)),
            ValueError,
            "x must have at least 2 dimensions, got shape (4)",
        ),
        (
            lambda: LearnedPositionalEmbedding(0, 3),
            ValueError,
            "max_len and embed_dim must be positive, got max_len=0, embed_dim=3",
        ),
        (
            lambda: LearnedPositionalEmbedding(4, 0),
            ValueError,
            "max_len and embed_dim must be positive, got max_len=4, embed_dim=0",
        ),
    ],
)
def test_positional_errors_name_the_argument(call, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call()


def test_learned_embedding_of_one_position_and_one_dimension(gen):
    assert LearnedPositionalEmbedding(1, 3, generator=gen).rows(1).shape == (1, 3)
    assert LearnedPositionalEmbedding(4, 1, generator=gen).rows(2).shape == (2, 1)


def test_learned_embedding_starts_normal_with_std_0_02():
    """N(0, 0.02^2), as BERT's tables (Devlin et al., 2019)."""
    table = LearnedPositionalEmbedding(200, 100, generator=torch.Generator())
    w = table.weight.detach()
    assert abs(w.std().item() - 0.02) < 0.001 and abs(w.mean().item()) < 0.001


def _rope_loop(x: torch.Tensor, base: float) -> torch.Tensor:
    """Rotate each pair (x_2j, x_2j+1) at position m by m / base^(2j/d), float64."""
    T, d = x.shape
    out = torch.empty(T, d, dtype=torch.float64)
    for m in range(T):
        for j in range(d // 2):
            t = m / base ** (2 * j / d)
            a, b = x[m, 2 * j].item(), x[m, 2 * j + 1].item()
            out[m, 2 * j] = a * math.cos(t) - b * math.sin(t)
            out[m, 2 * j + 1] = a * math.sin(t) + b * math.cos(t)
    return out


def test_rope_with_another_base_matches_the_loop(gen):
    x = torch.randn(6, 8, generator=gen, dtype=torch.float64)
    out = apply_rotary(x, base=100.0)
    torch.testing.assert_close(out, _rope_loop(x, 100.0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rope_in_half_precision_is_rounded_once(gen, dtype):
    """Half precision is rotated in float32 and rounded once at the end, so
    every entry is within half a unit in the last place (plus float32's own
    error) of the exact rotation; rotating in half precision rounds three
    times (two products and a sum) and misses that bound."""
    x = torch.randn(64, 16, generator=gen).to(dtype)
    exact = _rope_loop(x.double(), 10000.0)
    out = apply_rotary(x).double()
    eps = torch.finfo(dtype).eps  # spacing of [1, 2)
    half_ulp = exact.abs().clamp_min(torch.finfo(dtype).tiny) * eps / 2
    assert ((out - exact).abs() <= half_ulp * 1.001 + 1e-6).all()


@pytest.mark.parametrize("dim", [0, -2, 3, 2.0])
def test_frequencies_name_a_bad_dim(dim):
    message = (
        "embed_dim must be a positive even integer (sin/cos pairs), "
        f"got embed_dim={dim}"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        frequencies(dim)


@pytest.mark.parametrize("base", [0.0, -1.0])
def test_frequencies_name_a_bad_base(base):
    with pytest.raises(ValueError, match=f"^base must be positive, got base={base}$"):
        frequencies(4, base)


def test_frequencies_for_the_smallest_dim_and_a_base_below_one():
    """d = 2: one pair, omega_0 = 1; a base in (0, 1) is allowed (frequencies
    then grow); odd widths are refused above."""
    torch.testing.assert_close(frequencies(2), torch.tensor([1.0], dtype=torch.float64))
    torch.testing.assert_close(
        frequencies(4, 0.25), torch.tensor([1.0, 2.0], dtype=torch.float64)
    )
