"""Properties of attention that hold for every input (hypothesis)."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from selfattn import (
    MultiHeadAttention,
    SelfAttention,
    graph_mask,
    masked_softmax,
    scaled_dot_product_attention,
)
from selfattn import reference as ref

SETTINGS = settings(deadline=None)
seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(1, 6)


def randn(seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def rand_mask(seed, *shape, p=0.5):
    g = torch.Generator().manual_seed(seed + 1)
    return torch.rand(*shape, generator=g) < p


@SETTINGS
@given(seed=seeds, B=sizes, T_q=sizes, T_k=sizes, d=sizes, p=st.floats(0.0, 1.0))
def test_weights_are_distributions(seed, B, T_q, T_k, d, p):
    q, k, v = randn(seed, B, T_q, d), randn(seed + 2, B, T_k, d), randn(seed, B, T_k, 2)
    mask = rand_mask(seed, B, T_q, T_k, p=p)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    has_key = mask.any(-1)
    assert (w >= 0).all()
    torch.testing.assert_close(w.sum(-1), has_key.double())  # 1, or 0 if no key
    assert torch.equal(w[~mask], torch.zeros_like(w[~mask]))  # masked: exactly 0
    assert torch.isfinite(out).all()
    assert torch.equal(out[~has_key], torch.zeros_like(out[~has_key]))


@SETTINGS
@given(
    seed=seeds, shape=st.lists(sizes, min_size=1, max_size=3), scale=st.floats(-50, 50)
)
def test_masked_softmax_masked_entries_exactly_zero(seed, shape, scale):
    scores = randn(seed, *shape) * scale
    mask = rand_mask(seed, *shape)
    w = masked_softmax(scores, mask)
    assert torch.equal(w[~mask], torch.zeros_like(w[~mask]))
    assert torch.isfinite(w).all() and (w >= 0).all()


@SETTINGS
@given(
    seed=seeds, B=st.integers(1, 3), T=st.integers(1, 7), heads=st.sampled_from([1, 2])
)
def test_self_attention_is_permutation_equivariant(seed, B, T, heads):
    """No positional encoding: permuting the tokens permutes the outputs."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, 4, generator=g, dtype=torch.float64)
    perm = torch.randperm(T, generator=g)
    for layer in (SelfAttention(4, 3).double(), MultiHeadAttention(4, heads).double()):
        with torch.no_grad():
            for p in layer.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
        torch.testing.assert_close(layer(x[:, perm]), layer(x)[:, perm])


@SETTINGS
@given(seed=seeds, N=st.integers(1, 8), self_loops=st.booleans())
def test_complete_graph_attention_is_dense(seed, N, self_loops):
    x = randn(seed, 2, N, 3)
    mask = graph_mask(np.ones((N, N)), self_loops=self_loops)
    assert mask.all()
    torch.testing.assert_close(
        scaled_dot_product_attention(x, x, x, mask),
        scaled_dot_product_attention(x, x, x),
    )


@SETTINGS
@given(seed=seeds, D=sizes, T=sizes, d_k=sizes, d_v=sizes, plain=st.booleans())
def test_column_and_row_references_agree(seed, D, T, d_k, d_v, plain):
    rng = np.random.default_rng(seed)
    I = rng.normal(size=(D, T))
    W_q, W_k, W_v = (rng.normal(size=(n, D)) for n in (d_k, d_k, d_v))
    scale = 1.0 if plain else None
    O, _, A_prime = ref.self_attention_columns(I, W_q, W_k, W_v, scale=scale)
    X, Wq, Wk, Wv = ref.columns_to_rows(I, W_q, W_k, W_v)
    out, w = ref.attention_rows(X @ Wq, X @ Wk, X @ Wv, scale=scale)
    np.testing.assert_allclose(out, O.T, atol=1e-10)
    np.testing.assert_allclose(w, A_prime.T, atol=1e-10)
