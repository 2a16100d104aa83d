"""Positional encodings: the formula by explicit loop, the offset rotation, the
relative property of dot products and of RoPE, and the learned table's limit."""

from __future__ import annotations

import math

import pytest
import torch

from selfattn.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    frequencies,
    offset_matrix,
    offset_rotation,
    sinusoidal_encoding,
)


def p_loop(i: float, dim: int, base: float = 10000.0) -> list[float]:
    """p[i, 2j] = sin(i / base^(2j/d)), p[i, 2j+1] = cos(i / base^(2j/d))."""
    row = []
    for j in range(dim // 2):
        angle = i / base ** (2 * j / dim)
        row += [math.sin(angle), math.cos(angle)]
    return row


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


@pytest.mark.parametrize("dim", [4, 16, 64])
def test_dot_products_depend_only_on_offset(dim):
    P = sinusoidal_encoding(60, dim, dtype=torch.float64)
    G = P @ P.T  # (60, 60) Gram matrix
    omega = frequencies(dim)
    for delta in [0, 1, 7, 30]:
        diag = torch.diagonal(G, offset=delta)  # all <p_i, p_{i+delta}>
        expected = torch.cos(delta * omega).sum()  # sum_j cos(delta w_j)
        torch.testing.assert_close(diag, expected.expand_as(diag))


def test_sinusoidal_module_adds_table_at_any_length(gen):
    module = SinusoidalPositionalEncoding(8)
    for T in (3, 5000):
        x = torch.randn(2, T, 8, generator=gen)
        torch.testing.assert_close(module(x), x + sinusoidal_encoding(T, 8))
    x = torch.randn(4, 8, generator=gen, dtype=torch.float64)  # (T, D)
    assert module(x).dtype == torch.float64
    assert list(module.parameters()) == []


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


# --- RoPE ------------------------------------------------------------------------


def rope_loop(x: torch.Tensor, m: float, base: float = 10000.0) -> torch.Tensor:
    """Rotate pair (2j, 2j+1) of the vector x by the angle m * w_j, one at a time."""
    d = x.shape[-1]
    out = torch.empty_like(x)
    for j in range(d // 2):
        a = m / base ** (2 * j / d)
        R = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
        out[2 * j : 2 * j + 2] = torch.tensor(R, dtype=x.dtype) @ x[2 * j : 2 * j + 2]
    return out


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
