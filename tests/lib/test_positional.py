"""Positional encodings: the formula by explicit loop, the offset rotation, the
relative property of dot products and of RoPE, the learned table's limit;
dtypes, devices and empty tables; errors that name the argument.

The oracles are the formulas written as loops (``p_loop``: sin and cos of
``i / base^(2j/d)`` in Python floats; ``rope_loop``: one 2 x 2 rotation per
pair), never the library's own table.
"""

from __future__ import annotations

import re

import pytest
import torch
from oracles import p_loop, rope_loop

from selfattn.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    frequencies,
    offset_matrix,
    offset_rotation,
    sinusoidal_encoding,
)

# --- the sinusoidal table and its frequencies ---------------------------------


@pytest.mark.parametrize("num_positions, dim", [(1, 2), (10, 4), (50, 16), (7, 64)])
@pytest.mark.parametrize("base", [10000.0, 100.0])
def test_sinusoidal_formula_by_loop(num_positions, dim, base):
    P = sinusoidal_encoding(num_positions, dim, base, dtype=torch.float64)
    rows = [p_loop(i, dim, base) for i in range(num_positions)]
    expected = torch.tensor(rows, dtype=torch.float64)
    assert P.shape == (num_positions, dim)
    torch.testing.assert_close(P, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_sinusoidal_dtype(dtype):
    assert sinusoidal_encoding(3, 4).dtype == torch.float32  # the default
    P = sinusoidal_encoding(20, 8, dtype=dtype)
    assert P.dtype == dtype
    torch.testing.assert_close(
        P.double(), sinusoidal_encoding(20, 8, dtype=torch.float64).to(dtype).double()
    )


def test_first_row_and_frequencies():
    P = sinusoidal_encoding(2, 6, dtype=torch.float64)
    assert torch.equal(P[0], torch.tensor([0.0, 1.0] * 3, dtype=torch.float64))
    torch.testing.assert_close(
        frequencies(6),
        torch.tensor([1.0, 10000 ** (-1 / 3), 10000 ** (-2 / 3)]).double(),
    )


def test_sinusoidal_encoding_of_no_position_is_an_empty_table():
    P = sinusoidal_encoding(0, 4)
    assert P.shape == (0, 4) and P.dtype == torch.float32


def test_frequencies_for_the_smallest_dim_and_a_base_below_one():
    """d = 2: one pair, omega_0 = 1; a base in (0, 1) is allowed (frequencies
    then grow); odd widths are refused above."""
    torch.testing.assert_close(frequencies(2), torch.tensor([1.0], dtype=torch.float64))
    torch.testing.assert_close(
        frequencies(4, 0.25), torch.tensor([1.0, 2.0], dtype=torch.float64)
    )


# --- the offset rotation ------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 8, 32])
@pytest.mark.parametrize("delta", [1, 2, 5, 17, -3, 0.5])
def test_offset_rotation_maps_i_to_i_plus_delta(dim, delta):
    M = offset_rotation(delta, dim, dtype=torch.float64)  # (dim/2, 2, 2)
    assert M.shape == (dim // 2, 2, 2)
    for i in [0, 1, 3, 10, 99]:
        p_i = torch.tensor(p_loop(i, dim), dtype=torch.float64)
        p_next = torch.tensor(p_loop(i + delta, dim), dtype=torch.float64)
        p_i, p_next = p_i.view(dim // 2, 2, 1), p_next.view(dim // 2, 2)  # pairs
        torch.testing.assert_close((M @ p_i)[..., 0], p_next, rtol=0, atol=1e-10)


def test_offset_matrix_is_block_diagonal_rotation():
    dim, delta = 8, 3
    M = offset_matrix(delta, dim, dtype=torch.float64)
    blocks = offset_rotation(delta, dim, dtype=torch.float64)
    for j in range(dim // 2):
        assert torch.equal(M[2 * j : 2 * j + 2, 2 * j : 2 * j + 2], blocks[j])
    torch.testing.assert_close(M @ M.T, torch.eye(dim, dtype=torch.float64))
    P = sinusoidal_encoding(40, dim, dtype=torch.float64)
    torch.testing.assert_close(P[:-delta] @ M.T, P[delta:])  # rows of the table


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


@pytest.mark.parametrize("dim", [4, 16, 64])
def test_dot_products_depend_only_on_offset(dim):
    P = sinusoidal_encoding(60, dim, dtype=torch.float64)
    G = P @ P.T  # (60, 60) Gram matrix
    omega = frequencies(dim)
    for delta in [0, 1, 7, 30]:
        diag = torch.diagonal(G, offset=delta)  # all <p_i, p_{i+delta}>
        expected = torch.cos(delta * omega).sum()  # sum_j cos(delta w_j)
        torch.testing.assert_close(diag, expected.expand_as(diag))


# --- SinusoidalPositionalEncoding ---------------------------------------------


def test_sinusoidal_module_adds_table_at_any_length(gen):
    module = SinusoidalPositionalEncoding(8)
    for T in (3, 5000):
        x = torch.randn(2, T, 8, generator=gen)
        torch.testing.assert_close(module(x), x + sinusoidal_encoding(T, 8))
    x = torch.randn(4, 8, generator=gen, dtype=torch.float64)  # (T, D)
    assert module(x).dtype == torch.float64
    assert list(module.parameters()) == []


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


# --- LearnedPositionalEmbedding -----------------------------------------------


def test_learned_embedding(gen):
    emb = LearnedPositionalEmbedding(16, 4, generator=gen)
    again = LearnedPositionalEmbedding(
        16, 4, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(emb.weight, again.weight)  # randomness only via generator
    x = torch.randn(2, 10, 4, generator=gen)
    torch.testing.assert_close(emb(x), x + emb.weight[:10])
    assert torch.equal(emb.rows(16), emb.weight)
    emb(x).sum().backward()
    assert torch.equal(emb.weight.grad[:10], torch.full((10, 4), 2.0))
    assert torch.equal(emb.weight.grad[10:], torch.zeros(6, 4))


@pytest.mark.parametrize("T", [129, 1000])
def test_learned_embedding_refuses_positions_past_its_table(T):
    emb = LearnedPositionalEmbedding(128, 4)
    msg = rf"sequence length T={T} exceeds max_len=128 of this learned table"
    with pytest.raises(ValueError, match=msg):
        emb(torch.zeros(1, T, 4))
    with pytest.raises(ValueError, match=msg):
        emb.rows(T)


@pytest.mark.parametrize("T", [2.0, "3", None])
def test_learned_rows_wants_an_int(T):
    with pytest.raises(TypeError, match=f"^T must be an int, got {type(T).__name__}$"):
        LearnedPositionalEmbedding(4, 3).rows(T)


def test_learned_embedding_of_no_position(gen):
    table = LearnedPositionalEmbedding(4, 3, generator=gen)
    assert table.rows(0).shape == (0, 3)
    x = torch.zeros(2, 0, 3)
    assert table(x).shape == (2, 0, 3)
    torch.testing.assert_close(table.rows(2), table.weight[:2])


def test_learned_embedding_of_one_position_and_one_dimension(gen):
    assert LearnedPositionalEmbedding(1, 3, generator=gen).rows(1).shape == (1, 3)
    assert LearnedPositionalEmbedding(4, 1, generator=gen).rows(2).shape == (2, 1)


def test_learned_embedding_keeps_half_precision(gen):
    table = LearnedPositionalEmbedding(4, 3, generator=gen)
    x = torch.zeros(2, 3, 3, dtype=torch.float16)
    out = table(x)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out[0], table.weight[:3].detach().half())


def test_learned_embedding_starts_normal_with_std_0_02():
    """N(0, 0.02^2), as BERT's tables (Devlin et al., 2019)."""
    table = LearnedPositionalEmbedding(200, 100, generator=torch.Generator())
    w = table.weight.detach()
    assert abs(w.std().item() - 0.02) < 0.001 and abs(w.mean().item()) < 0.001


# --- RoPE ---------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 8, 16])
def test_rope_matches_explicit_rotations(gen, d):
    x = torch.randn(6, d, generator=gen, dtype=torch.float64)
    positions = torch.tensor([0, 1, 2, 5, 40, 1000])
    out = apply_rotary(x, positions)
    for t, m in enumerate(positions.tolist()):
        torch.testing.assert_close(out[t], rope_loop(x[t], m))
    torch.testing.assert_close(apply_rotary(x), apply_rotary(x, torch.arange(6)))
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))  # a rotation
    torch.testing.assert_close(apply_rotary(x, torch.zeros(6))[0], x[0])


@pytest.mark.parametrize("d", [4, 32])
@pytest.mark.parametrize("m, n", [(0, 0), (3, 1), (1, 3), (10, 40), (100, 7)])
@pytest.mark.parametrize("shift", [1, 13, 500])
def test_rope_dot_product_depends_only_on_offset(gen, d, m, n, shift):
    q, k = (torch.randn(1, d, generator=gen, dtype=torch.float64) for _ in range(2))

    def score(m, n):
        rq = apply_rotary(q, torch.tensor([m]))
        rk = apply_rotary(k, torch.tensor([n]))
        return (rq * rk).sum()

    torch.testing.assert_close(score(m, n), score(m + shift, n + shift))
    # <R_m q, R_n k> = q^T R_{n-m} k
    torch.testing.assert_close(
        score(m, n), (q * apply_rotary(k, torch.tensor([n - m]))).sum()
    )


def test_rope_batched_heads_and_low_precision(gen):
    x = torch.randn(2, 3, 5, 8, generator=gen)  # (B, H, T, d_k)
    out = apply_rotary(x)
    for b, h in [(0, 0), (1, 2)]:
        torch.testing.assert_close(out[b, h], apply_rotary(x[b, h]))
    for dtype in (torch.float16, torch.bfloat16):
        low = apply_rotary(x.to(dtype))
        assert low.dtype == dtype
        torch.testing.assert_close(low.float(), out, atol=3e-2, rtol=3e-2)


def rope_table(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Row m of ``x`` ``(T, d)`` rotated as position m by ``rope_loop``."""
    return torch.stack([rope_loop(x[m], m, base) for m in range(x.shape[0])])


def test_rope_with_another_base_matches_the_loop(gen):
    x = torch.randn(6, 8, generator=gen, dtype=torch.float64)
    out = apply_rotary(x, base=100.0)
    torch.testing.assert_close(out, rope_table(x, 100.0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rope_in_half_precision_is_rounded_once(gen, dtype):
    """Half precision is rotated in float32 and rounded once at the end, so
    every entry is within half a unit in the last place (plus float32's own
    error) of the exact rotation; rotating in half precision rounds three
    times (two products and a sum) and misses that bound."""
    x = torch.randn(64, 16, generator=gen).to(dtype)
    exact = rope_table(x.double())
    out = apply_rotary(x).double()
    eps = torch.finfo(dtype).eps  # spacing of [1, 2)
    half_ulp = exact.abs().clamp_min(torch.finfo(dtype).tiny) * eps / 2
    assert ((out - exact).abs() <= half_ulp * 1.001 + 1e-6).all()


# --- errors -------------------------------------------------------------------


def test_sinusoidal_encoding_names_a_negative_length():
    with pytest.raises(ValueError, match=r"\bnum_positions\b.*\bgot num_positions=-1$"):
        sinusoidal_encoding(-1, 4)


def test_learned_embedding_names_a_negative_length(gen):
    table = LearnedPositionalEmbedding(4, 3, generator=gen)
    with pytest.raises(ValueError, match=r"^T must be non-negative, got T=-1$"):
        table.rows(-1)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: SinusoidalPositionalEncoding(8)([[0.0]]),
            TypeError,
            r"\bx must\b.*\blist\b",
        ),
        (
            lambda: SinusoidalPositionalEncoding(8)(torch.zeros(8)),
            ValueError,
            r"\bx must\b.*\bshape \(8\)",
        ),
        (
            lambda: LearnedPositionalEmbedding(4, 8)(torch.zeros(8)),
            ValueError,
            r"\bx must\b.*\bshape \(8\)",
        ),
        (
            lambda: apply_rotary([[0.0]]),
            TypeError,
            r"\bx must\b.*\blist\b",
        ),
        (
            lambda: apply_rotary(torch.zeros(4)),
            ValueError,
            r"\bx must\b.*\bshape \(4\)",
        ),
        (
            lambda: LearnedPositionalEmbedding(0, 3),
            ValueError,
            r"^max_len must be positive, got max_len=0$",
        ),
        (
            lambda: LearnedPositionalEmbedding(4, 0),
            ValueError,
            r"^embed_dim must be positive, got embed_dim=0$",
        ),
    ],
)
def test_positional_errors_name_the_argument(call, error, match):
    """The argument's name and the shape or values seen."""
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("dim", [0, -2, 3])
def test_frequencies_name_a_bad_dim(dim):
    got = re.escape(f"embed_dim={dim}")
    with pytest.raises(ValueError, match=rf"\bembed_dim\b.*\bgot {got}\b"):
        frequencies(dim)
    with pytest.raises(TypeError, match=r"^embed_dim must be an int, got float$"):
        frequencies(2.0)


@pytest.mark.parametrize("base", [0.0, -1.0])
def test_frequencies_name_a_bad_base(base):
    got = re.escape(f"base={base}")
    with pytest.raises(ValueError, match=rf"\bbase must\b.*\bgot {got}\b"):
        frequencies(4, base)
