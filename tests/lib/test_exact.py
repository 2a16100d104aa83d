"""selfattn.efficient.exact: local and chunked attention, which give dense
attention's result exactly, block by block.

Oracles: dense softmax attention written out (``dense_attention``) or
PyTorch's own ``scaled_dot_product_attention``, with an explicit mask
(``window_mask``, a random mask, ``causal_mask``). Local attention calls
PyTorch's kernel on its blocks, so it is checked against ``dense_attention``.
The backward pass of chunked attention is FlashAttention's (tests/lib/test_flash.py).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import dense_attention, qkv

from selfattn import causal_mask, window_mask
from selfattn.efficient import chunked_attention, local_attention, tiles

# --- local attention ----------------------------------------------------------


@pytest.mark.parametrize("radius", [0, 1, 3, 31, 32, 33, 100, 500])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [1, 37, 130])
def test_local_equals_window_masked_dense(gen, radius, causal, T):
    q, k, v = qkv(gen, 2, 3, T_q=T, d_k=8, d_v=5)
    mask = window_mask(T, radius, causal=causal)
    expected = dense_attention(q, k, v, mask)  # not PyTorch's kernel, which local uses
    torch.testing.assert_close(
        local_attention(q, k, v, radius, causal=causal), expected
    )


@pytest.mark.parametrize("causal", [False, True])
def test_local_of_an_empty_sequence_is_empty(gen, causal):
    q, k, v = qkv(gen, 2, 3, T_q=0, d_k=4, d_v=5)
    out = local_attention(q, k, v, 2, causal=causal)
    assert out.shape == (2, 3, 0, 5) and out.dtype == q.dtype


def test_local_float32_and_no_batch(gen):
    q, k, v = qkv(gen, T_q=70, dtype=torch.float32)
    expected = dense_attention(q, k, v, window_mask(70, 5))
    torch.testing.assert_close(local_attention(q, k, v, 5), expected)


def test_local_bad_input(gen):
    q, k, v = qkv(gen, 2, T_q=10)
    with pytest.raises(ValueError, match="radius"):
        local_attention(q, k, v, -1)
    with pytest.raises(TypeError, match="radius"):
        local_attention(q, k, v, 1.5)
    q2, k2, v2 = qkv(gen, 2, T_q=10, T_k=12)
    with pytest.raises(ValueError, match="T_q == T_k"):
        local_attention(q2, k2, v2, 2)


# --- chunked attention (online softmax) ---------------------------------------


@settings(deadline=None)
@given(
    T_q=st.integers(1, 40),
    T_k=st.integers(1, 40),
    B_k=st.integers(1, 48),
    B_q=st.integers(1, 48),
    causal=st.booleans(),
    density=st.sampled_from([None, 0.0, 0.1, 0.5, 1.0]),
    mask_shape=st.sampled_from(["full", "row", "col"]),
    seed=st.integers(0, 2**16),
)
def test_chunked_equals_dense(T_q, T_k, B_k, B_q, causal, density, mask_shape, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = qkv(gen, 2, 3, T_q=T_q, T_k=T_k, d_k=4, d_v=3)
    mask = None
    if density is not None:
        shape = {"full": (2, 3, T_q, T_k), "row": (2, 1, 1, T_k), "col": (T_q, 1)}
        mask = torch.rand(shape[mask_shape], generator=gen) < density
    full = mask
    if causal:
        tri = causal_mask(T_q, T_k)
        full = tri if mask is None else mask & tri
    expected = dense_attention(q, k, v, full)
    out = chunked_attention(
        q,
        k,
        v,
        mask,
        causal=causal,
        B_k=B_k,
        B_q=B_q,
    )
    assert not out.isnan().any()
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("B_k", [1, 5, 16, 128])
@pytest.mark.parametrize("B_q", [1, 4, 512])
def test_chunked_fully_masked_rows_are_zero(gen, B_k, B_q):
    q, k, v = qkv(gen, 2, T_q=12, T_k=9)
    mask = torch.ones(2, 12, 9, dtype=torch.bool)
    mask[0, 3] = False  # query 3 of batch 0 sees nothing
    mask[1, :, :] = False  # batch 1 sees nothing at all
    out = chunked_attention(q, k, v, mask, B_k=B_k, B_q=B_q)
    assert not out.isnan().any()
    assert (out[0, 3] == 0).all() and (out[1] == 0).all()
    torch.testing.assert_close(out, dense_attention(q, k, v, mask))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_chunked_matches_torch_fused_with_scale(gen, dtype):
    q, k, v = qkv(gen, 1, 4, T_q=300, d_k=16, dtype=dtype)
    for causal in (False, True):
        expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.3)
        out = chunked_attention(q, k, v, causal=causal, B_k=64, B_q=96, scale=0.3)
        torch.testing.assert_close(out, expected)


def test_chunked_bfloat16_close_to_float32(gen):
    q, k, v = qkv(gen, 2, T_q=50, dtype=torch.float32)
    out = chunked_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), B_k=16)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(
        out.float(), dense_attention(q, k, v), atol=3e-2, rtol=3e-2
    )


def test_chunked_bad_input(gen):
    q, k, v = qkv(gen, 2, T_q=10)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="B_k"):
            chunked_attention(q, k, v, B_k=bad)
    with pytest.raises(TypeError, match="B_k"):
        chunked_attention(q, k, v, B_k=2.0)
    with pytest.raises(ValueError, match="B_q"):
        chunked_attention(q, k, v, B_q=0)
    with pytest.raises(ValueError, match="d_k"):
        chunked_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="T_k"):
        chunked_attention(q, k, v[:, :4])
    with pytest.raises(TypeError, match="mask"):
        chunked_attention(q, k, v, torch.ones(10, 10))
    with pytest.raises(ValueError, match="mask"):
        chunked_attention(q, k, v, torch.ones(3, 10, 10, dtype=torch.bool))


# --- errors -------------------------------------------------------------------


z = torch.zeros


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), B_k=0),
            ValueError,
            r"\bB_k must\b.*\bB_k=0\b",
        ),
        (
            lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), B_q=1.5),
            TypeError,
            r"\bB_q must\b.*\bfloat\b",
        ),
        (
            lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), B_k=True),
            TypeError,
            r"\bB_k must\b.*\bbool\b",
        ),
        (
            lambda: local_attention(z(3, 4), z(3, 4), z(3, 4), -1),
            ValueError,
            r"\bradius must\b.*\bradius=-1\b",
        ),
        (
            lambda: local_attention(z(3, 4), z(5, 4), z(5, 4), 1),
            ValueError,
            r"\blocal_attention\b.*\bT_q == T_k\b.*\bq \(3, 4\) and k \(5, 4\)",
        ),
    ],
)
def test_exact_errors_name_the_argument(call, error, match):
    """The argument's name and the value or shapes seen."""
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("T, B_q, B_k", [(4, 2, 2), (10, 4, 3), (7, 7, 2)])
def test_causal_tiles_skip_the_blocks_above_the_diagonal(T, B_q, B_k):
    """A key block is visited iff it starts at or before the query block's last
    query (a nested loop over the blocks says which)."""
    expected = []
    for qs in range(0, T, B_q):
        qe = min(qs + B_q, T)
        keys = [(ks, min(ks + B_k, T)) for ks in range(0, T, B_k) if ks <= qe - 1]
        expected.append(((qs, qe), keys))
    assert list(tiles(T, T, B_q, B_k, causal=True)) == expected
    every = list(tiles(T, T, B_q, B_k))
    assert all(len(keys) == -(-T // B_k) for _, keys in every)
