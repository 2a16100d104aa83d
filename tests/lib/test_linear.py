"""selfattn.efficient.linear: linear attention (Katharopoulos et al., 2020)
against its explicit O(T^2) formula, the recurrent form against the parallel
one, gradcheck, and errors that name the argument."""

from __future__ import annotations

import pytest
import torch
from oracles import qkv

from selfattn import causal_mask
from selfattn.efficient import (
    elu_feature_map,
    linear_attention,
    linear_attention_recurrent,
)


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
    q, k, v = qkv(gen, 2, 3, T_q=T_q, T_k=T_k, d_v=5)
    out = linear_attention(q, k, v, chunk_size=chunk_size)
    torch.testing.assert_close(out, _linear_oracle(q, k, v, False))


@pytest.mark.parametrize("T", [1, 5, 64, 65, 150])
@pytest.mark.parametrize("chunk_size", [1, 7, 64])
def test_linear_causal_equals_quadratic_formula(gen, T, chunk_size):
    q, k, v = qkv(gen, 2, T_q=T, d_v=3)
    out = linear_attention(q, k, v, causal=True, chunk_size=chunk_size)
    torch.testing.assert_close(out, _linear_oracle(q, k, v, True))


@pytest.mark.parametrize("T", [0, 1, 33, 100])
@pytest.mark.parametrize("lead", [(), (3,), (2, 2)], ids=["T,d", "B,T,d", "B,H,T,d"])
def test_recurrent_equals_parallel_causal(gen, T, lead):
    """Any number of leading dims (the state S is (..., d_k, d_v)), and an
    empty sequence (T = 0: an empty output of the right shape)."""
    q, k, v = qkv(gen, *lead, T_q=T, d_k=6, d_v=4)
    out = linear_attention_recurrent(q, k, v)
    assert out.shape == (*lead, T, 4)
    torch.testing.assert_close(out, linear_attention(q, k, v, causal=True))


def test_linear_gradcheck(gen):
    q, k, v = (t.requires_grad_() for t in qkv(gen, 2, T_q=9, d_k=3))
    for causal in (False, True):
        assert torch.autograd.gradcheck(
            lambda q, k, v, c=causal: linear_attention(q, k, v, causal=c, chunk_size=4),
            (q, k, v),
        )


def test_linear_bad_input(gen):
    q, k, v = qkv(gen, 2, T_q=8, T_k=10)
    with pytest.raises(ValueError, match="T_q == T_k"):
        linear_attention(q, k, v, causal=True)
    with pytest.raises(
        ValueError, match="^linear_attention_recurrent needs T_q == T_k"
    ):
        linear_attention_recurrent(q, k, v)
    with pytest.raises(ValueError, match="chunk_size"):
        linear_attention(q, q, q, causal=True, chunk_size=0)
    with pytest.raises(TypeError, match="dtype"):
        linear_attention(q, k.float(), v)


def test_linear_errors_name_the_argument():
    """The function, the rule and the shapes seen."""
    z = torch.zeros
    with pytest.raises(
        ValueError,
        match=r"\bcausal linear_attention\b.*\bT_q == T_k\b.*"
        r"\bq \(3, 4\) and k \(5, 4\)",
    ):
        linear_attention(z(3, 4), z(5, 4), z(5, 4), causal=True)


@pytest.mark.parametrize("causal", [False, True])
def test_linear_stays_on_the_inputs_device(causal):
    """On PyTorch's ``meta`` device (shapes, no data): every tensor the
    function makes (the causal mask of a chunk too) lives on the inputs'
    device, or the product would raise."""
    q = torch.randn(2, 40, 4, device="meta")
    out = linear_attention(q, q, q, causal=causal, chunk_size=16)
    assert out.device.type == "meta" and out.shape == (2, 40, 4)
