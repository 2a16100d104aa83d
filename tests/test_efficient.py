"""selfattn.efficient against independent oracles.

Oracles: dense softmax attention written out here (``_dense``) or PyTorch's
own ``scaled_dot_product_attention``, with an explicit mask (``window_mask``, a
random mask, ``causal_mask``); local and Linformer attention, which call
PyTorch's kernel on their blocks, are checked against ``_dense`` or the
explicit ``selfattn.scaled_dot_product_attention``. Explicit O(T^2) formulas
for linear attention, and Monte Carlo expectations for random features.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from selfattn import (
    causal_mask,
    window_mask,
)
from selfattn.efficient import (
    chunked_attention,
    elu_feature_map,
    linear_attention,
    linear_attention_recurrent,
    linformer_attention,
    local_attention,
    orthogonal_random_matrix,
    performer_attention,
    performer_features,
)


def _qkv(gen, *lead, T_q=20, T_k=None, d_k=8, d_v=None, dtype=torch.float64):
    T_k = T_q if T_k is None else T_k
    d_v = d_k if d_v is None else d_v
    q = torch.randn(*lead, T_q, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*lead, T_k, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*lead, T_k, d_v, generator=gen, dtype=dtype)
    return q, k, v


def _dense(q, k, v, mask=None, scale=None):
    """Oracle: softmax attention with an explicit mask; empty rows give 0."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (..., T_q, T_k)
    if mask is None:
        return torch.softmax(scores, dim=-1) @ v
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # empty rows: NaN -> 0
    return weights @ v


# --- local attention ----------------------------------------------------------


@pytest.mark.parametrize("radius", [0, 1, 3, 31, 32, 33, 100, 500])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [1, 37, 130])
def test_local_equals_window_masked_dense(gen, radius, causal, T):
    q, k, v = _qkv(gen, 2, 3, T_q=T, d_k=8, d_v=5)
    mask = window_mask(T, radius, causal=causal)
    expected = _dense(q, k, v, mask)  # not PyTorch's kernel, which local uses
    torch.testing.assert_close(
        local_attention(q, k, v, radius, causal=causal), expected
    )


def test_local_float32_and_no_batch(gen):
    q, k, v = _qkv(gen, T_q=70, dtype=torch.float32)
    expected = _dense(q, k, v, window_mask(70, 5))
    torch.testing.assert_close(local_attention(q, k, v, 5), expected)


def test_local_bad_input(gen):
    q, k, v = _qkv(gen, 2, T_q=10)
    with pytest.raises(ValueError, match="radius"):
        local_attention(q, k, v, -1)
    with pytest.raises(TypeError, match="radius"):
        local_attention(q, k, v, 1.5)
    q2, k2, v2 = _qkv(gen, 2, T_q=10, T_k=12)
    with pytest.raises(ValueError, match="T_q == T_k"):
        local_attention(q2, k2, v2, 2)


# --- chunked attention (online softmax) -------------------------------------


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
    q, k, v = _qkv(gen, 2, 3, T_q=T_q, T_k=T_k, d_k=4, d_v=3)
    mask = None
    if density is not None:
        shape = {"full": (2, 3, T_q, T_k), "row": (2, 1, 1, T_k), "col": (T_q, 1)}
        mask = torch.rand(shape[mask_shape], generator=gen) < density
    full = mask
    if causal:
        tri = causal_mask(T_q, T_k)
        full = tri if mask is None else mask & tri
    expected = _dense(q, k, v, full)
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
    q, k, v = _qkv(gen, 2, T_q=12, T_k=9)
    mask = torch.ones(2, 12, 9, dtype=torch.bool)
    mask[0, 3] = False  # query 3 of batch 0 sees nothing
    mask[1, :, :] = False  # batch 1 sees nothing at all
    out = chunked_attention(q, k, v, mask, B_k=B_k, B_q=B_q)
    assert not out.isnan().any()
    assert (out[0, 3] == 0).all() and (out[1] == 0).all()
    torch.testing.assert_close(out, _dense(q, k, v, mask))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_chunked_matches_torch_fused_with_scale(gen, dtype):
    q, k, v = _qkv(gen, 1, 4, T_q=300, d_k=16, dtype=dtype)
    for causal in (False, True):
        expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.3)
        out = chunked_attention(q, k, v, causal=causal, B_k=64, B_q=96, scale=0.3)
        torch.testing.assert_close(out, expected)


def test_chunked_bfloat16_close_to_float32(gen):
    q, k, v = _qkv(gen, 2, T_q=50, dtype=torch.float32)
    out = chunked_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), B_k=16)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), _dense(q, k, v), atol=3e-2, rtol=3e-2)


def test_chunked_gradcheck(gen):
    q, k, v = (t.requires_grad_() for t in _qkv(gen, 2, T_q=7, T_k=6, d_k=3))
    mask = torch.rand(2, 7, 6, generator=gen) < 0.6
    mask[0, 2] = False  # a fully masked row: zero output, zero gradient
    assert torch.autograd.gradcheck(
        lambda q, k, v: chunked_attention(q, k, v, mask, B_k=4, B_q=3),
        (q, k, v),
    )
    assert torch.autograd.gradcheck(
        lambda q, k, v: chunked_attention(q, k, v, causal=True, B_k=3, B_q=2),
        (q, k, v),
    )


def test_chunked_bad_input(gen):
    q, k, v = _qkv(gen, 2, T_q=10)
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


# --- linear attention -------------------------------------------------------


def _linear_oracle(q, k, v, causal, eps=1e-6):
    """O(T^2): out_i = sum_j K(q_i, k_j) v_j / (sum_j K(q_i, k_j) + eps)."""
    kernel = elu_feature_map(q) @ elu_feature_map(k).transpose(-2, -1)  # (..,T_q,T_k)
    if causal:
        kernel = kernel * causal_mask(q.shape[-2], k.shape[-2])
    return (kernel @ v) / (kernel.sum(dim=-1, keepdim=True) + eps)


def test_elu_feature_map_positive(gen):
    x = torch.randn(1000, generator=gen) * 10
    assert (elu_feature_map(x) > 0).all()
    torch.testing.assert_close(elu_feature_map(x), torch.where(x > 0, x + 1, x.exp()))


@pytest.mark.parametrize("T_q,T_k", [(1, 1), (17, 17), (9, 30)])
@pytest.mark.parametrize("chunk_size", [1, 4, 128])
def test_linear_noncausal_equals_quadratic_formula(gen, T_q, T_k, chunk_size):
    q, k, v = _qkv(gen, 2, 3, T_q=T_q, T_k=T_k, d_v=5)
    out = linear_attention(q, k, v, chunk_size=chunk_size)
    torch.testing.assert_close(out, _linear_oracle(q, k, v, False))


@pytest.mark.parametrize("T", [1, 5, 64, 65, 150])
@pytest.mark.parametrize("chunk_size", [1, 7, 64])
def test_linear_causal_equals_quadratic_formula(gen, T, chunk_size):
    q, k, v = _qkv(gen, 2, T_q=T, d_v=3)
    out = linear_attention(q, k, v, causal=True, chunk_size=chunk_size)
    torch.testing.assert_close(out, _linear_oracle(q, k, v, True))


@pytest.mark.parametrize("T", [1, 33, 100])
def test_recurrent_equals_parallel_causal(gen, T):
    q, k, v = _qkv(gen, 2, 2, T_q=T, d_k=6, d_v=4)
    torch.testing.assert_close(
        linear_attention_recurrent(q, k, v), linear_attention(q, k, v, causal=True)
    )


def test_linear_gradcheck(gen):
    q, k, v = (t.requires_grad_() for t in _qkv(gen, 2, T_q=9, d_k=3))
    for causal in (False, True):
        assert torch.autograd.gradcheck(
            lambda q, k, v, c=causal: linear_attention(q, k, v, causal=c, chunk_size=4),
            (q, k, v),
        )


def test_linear_bad_input(gen):
    q, k, v = _qkv(gen, 2, T_q=8, T_k=10)
    with pytest.raises(ValueError, match="T_q == T_k"):
        linear_attention(q, k, v, causal=True)
    with pytest.raises(ValueError, match="T_q == T_k"):
        linear_attention_recurrent(q, k, v)
    with pytest.raises(ValueError, match="chunk_size"):
        linear_attention(q, q, q, causal=True, chunk_size=0)
    with pytest.raises(TypeError, match="dtype"):
        linear_attention(q, k.float(), v)


# --- Performer ----------------------------------------------------------------


@pytest.mark.parametrize("m,d", [(16, 16), (20, 8), (5, 8)])
def test_orthogonal_random_matrix_blocks(m, d):
    W = orthogonal_random_matrix(m, d, torch.Generator().manual_seed(1))
    assert W.shape == (m, d)
    for start in range(0, m, d):
        block = W[start : start + d]
        unit = block / block.norm(dim=1, keepdim=True)
        torch.testing.assert_close(unit @ unit.T, torch.eye(len(block)))
    again = orthogonal_random_matrix(m, d, torch.Generator().manual_seed(1))
    torch.testing.assert_close(W, again)  # reproducible from the generator


def test_orthogonal_random_matrix_norms_are_chi():
    d = 8
    W = orthogonal_random_matrix(4000, d, torch.Generator().manual_seed(2))
    sq = (W * W).sum(dim=1)  # chi^2(d): mean d, variance 2d
    assert abs(sq.mean().item() - d) < 4 * math.sqrt(2 * d / 4000)
    with pytest.raises(TypeError, match="generator"):
        orthogonal_random_matrix(4, 4, None)
    with pytest.raises(ValueError, match="^r must"):
        orthogonal_random_matrix(0, 4, torch.Generator())


def test_performer_features_positive_and_unbiased(gen):
    d = 4
    x = torch.randn(6, d, generator=gen, dtype=torch.float64) * 0.5
    y = torch.randn(6, d, generator=gen, dtype=torch.float64) * 0.5
    estimates = []
    for seed in range(200):
        W = orthogonal_random_matrix(
            64, d, torch.Generator().manual_seed(seed), dtype=torch.float64
        )
        phi_x, phi_y = performer_features(x, W), performer_features(y, W)
        assert (phi_x > 0).all() and (phi_y > 0).all()
        estimates.append(phi_x @ phi_y.T)  # (6, 6) estimate of exp(x y^T)
    est = torch.stack(estimates)  # (200, 6, 6)
    truth = torch.exp(x @ y.T)
    standard_error = est.std(dim=0) / math.sqrt(len(estimates))
    assert ((est.mean(dim=0) - truth).abs() < 5 * standard_error + 1e-3).all()


def test_performer_error_decreases_with_features(gen):
    q, k, v = _qkv(gen, 2, T_q=32, d_k=16)
    q, k = 0.5 * q, 0.5 * k
    exact = _dense(q, k, v)

    def mean_error(m):
        errors = [
            (
                performer_attention(
                    q, k, v, m, generator=torch.Generator().manual_seed(s)
                )
                - exact
            )
            .abs()
            .mean()
            for s in range(6)
        ]
        return torch.stack(errors).mean().item()

    err_16, err_1024 = mean_error(16), mean_error(1024)
    assert err_1024 < 0.5 * err_16  # ~ 1/sqrt(m): expect about 8x smaller


def test_performer_projection_argument_and_causal(gen):
    q, k, v = _qkv(gen, 2, T_q=20, d_k=8)
    W = orthogonal_random_matrix(32, 8, gen, dtype=torch.float64)
    out = performer_attention(q, k, v, projection=W, eps=0.0)
    # the same estimator written out: normalised positive-feature kernel
    c = 8**-0.25
    kernel = performer_features(q * c, W) @ performer_features(k * c, W).mT
    torch.testing.assert_close(out, kernel @ v / kernel.sum(-1, keepdim=True))
    kernel_causal = kernel * causal_mask(20)
    torch.testing.assert_close(
        performer_attention(q, k, v, projection=W, causal=True, eps=0.0),
        kernel_causal @ v / kernel_causal.sum(-1, keepdim=True),
    )
    with pytest.raises(ValueError, match="generator"):
        performer_attention(q, k, v)
    with pytest.raises(ValueError, match="projection"):
        performer_attention(q, k, v, projection=W[:, :4])


# --- Linformer -------------------------------------------------------------


@pytest.mark.parametrize("T_q,T_k", [(10, 10), (7, 12)])
def test_linformer_identity_projection_is_dense(gen, T_q, T_k):
    q, k, v = _qkv(gen, 2, 3, T_q=T_q, T_k=T_k, d_v=5)
    eye = torch.eye(T_k, dtype=torch.float64)
    expected = _dense(q, k, v)
    torch.testing.assert_close(linformer_attention(q, k, v, eye, eye), expected)


def test_linformer_projects_keys_and_values(gen):
    q, k, v = _qkv(gen, 2, T_q=10, T_k=12)
    E = torch.randn(4, 12, generator=gen, dtype=torch.float64)
    Fp = torch.randn(4, 12, generator=gen, dtype=torch.float64)
    expected = _dense(
        q, torch.einsum("pt,btd->bpd", E, k), torch.einsum("pt,btd->bpd", Fp, v)
    )
    torch.testing.assert_close(linformer_attention(q, k, v, E, Fp), expected)
    with pytest.raises(ValueError, match="E"):
        linformer_attention(q, k, v, E[:, :5], Fp)
    with pytest.raises(ValueError, match="k_proj"):
        linformer_attention(q, k, v, E, Fp[:3])
