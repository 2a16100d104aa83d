"""The numpy reference: column and row conventions agree with each other, with
the nested loop, and with torch (PyTorch's attention and the selfattn layers)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from selfattn import SelfAttention, relu_weights
from selfattn import reference as ref


def column_inputs(rng, D, T, d_k, d_v):
    I = rng.normal(size=(D, T))
    W_q, W_k = rng.normal(size=(d_k, D)), rng.normal(size=(d_k, D))
    W_v = rng.normal(size=(d_v, D))
    return I, W_q, W_k, W_v


def test_reference_does_not_use_torch():
    """The oracle is independent: numpy only, nothing of torch or of the rest
    of selfattn, in any of its modules."""
    imported = set()
    for path in Path(ref.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
    assert not any(m.split(".")[0] == "torch" for m in imported), imported
    outside = [m for m in imported if m.startswith("selfattn")
               and not m.startswith("selfattn.reference")]  # fmt: skip
    assert not outside, outside


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_matches_definition(rng, axis):
    x = rng.normal(size=(4, 5))
    e = np.exp(x)
    np.testing.assert_allclose(ref.softmax(x, axis), e / e.sum(axis, keepdims=True))
    big = ref.softmax(np.array([1e4, 0.0, -1e4]))
    np.testing.assert_allclose(big, [1.0, 0.0, 0.0])


def test_masked_softmax_zero_row_and_masked_entries(rng):
    x = rng.normal(size=(3, 4))
    mask = np.array([[True, False, True, True], [False] * 4, [True] * 4])
    w = ref.masked_softmax(x, mask)
    np.testing.assert_array_equal(w[~mask], 0.0)
    np.testing.assert_allclose(w.sum(-1), [1.0, 0.0, 1.0])
    e = np.exp(x[0, [0, 2, 3]])
    np.testing.assert_allclose(w[0, [0, 2, 3]], e / e.sum())


@pytest.mark.parametrize("D, T, d_k, d_v", [(3, 4, 2, 2), (6, 5, 4, 3), (4, 1, 4, 5)])
def test_column_matrices_entry_by_entry(rng, D, T, d_k, d_v):
    """A[i, j] = k^i . q^j; each column of A' sums to 1; b^j = sum_i A'[i,j] v^i."""
    I, W_q, W_k, W_v = column_inputs(rng, D, T, d_k, d_v)
    O, A, A_prime = ref.self_attention_columns(I, W_q, W_k, W_v, scale=1.0)
    a = [I[:, t] for t in range(T)]  # the inputs a^1..a^T
    q, k, v = ([W @ a_t for a_t in a] for W in (W_q, W_k, W_v))
    for i in range(T):
        for j in range(T):
            assert math.isclose(A[i, j], float(k[i] @ q[j]), abs_tol=1e-12)
    np.testing.assert_allclose(A_prime.sum(axis=0), np.ones(T))
    for j in range(T):
        b_j = sum(A_prime[i, j] * v[i] for i in range(T))
        np.testing.assert_allclose(O[:, j], b_j, atol=1e-12)


@pytest.mark.parametrize("D, T, d_k, d_v", [(3, 4, 2, 2), (6, 5, 4, 3), (8, 7, 8, 1)])
@pytest.mark.parametrize("scale", [None, 1.0, 0.25])
def test_column_equals_row_convention(rng, D, T, d_k, d_v, scale):
    I, W_q, W_k, W_v = column_inputs(rng, D, T, d_k, d_v)
    O, A, A_prime = ref.self_attention_columns(I, W_q, W_k, W_v, scale=scale)
    X, Wq_row, Wk_row, Wv_row = ref.columns_to_rows(I, W_q, W_k, W_v)
    np.testing.assert_array_equal(X, I.T)
    np.testing.assert_allclose(X @ Wq_row, (W_q @ I).T)  # Q(row) = Q(col)^T
    out, weights = ref.attention_rows(X @ Wq_row, X @ Wk_row, X @ Wv_row, scale=scale)
    np.testing.assert_allclose(out, O.T, atol=1e-12)  # out = O^T
    np.testing.assert_allclose(weights, ref.column_to_row_weights(A_prime), atol=1e-12)
    s = 1 / math.sqrt(d_k) if scale is None else scale
    np.testing.assert_allclose(s * (X @ Wq_row) @ (X @ Wk_row).T, A.T, atol=1e-12)


def test_default_scale_is_one_over_sqrt_dk(rng):
    I, W_q, W_k, W_v = column_inputs(rng, 5, 4, 4, 2)
    default = ref.self_attention_columns(I, W_q, W_k, W_v)
    explicit = ref.self_attention_columns(I, W_q, W_k, W_v, scale=0.5)
    np.testing.assert_allclose(default.A, explicit.A)
    plain = ref.self_attention_columns(I, W_q, W_k, W_v, scale=1.0)
    np.testing.assert_allclose(plain.A, (W_k @ I).T @ (W_q @ I))


def test_relu_normalisation_matches_library(rng):
    I, W_q, W_k, W_v = column_inputs(rng, 5, 6, 3, 2)
    O, A, A_prime = ref.self_attention_columns(I, W_q, W_k, W_v, normalize="relu")
    expected = relu_weights(torch.from_numpy(A.T)).numpy().T
    np.testing.assert_allclose(A_prime, expected, atol=1e-12)
    np.testing.assert_allclose(O, (W_v @ I) @ A_prime)
    assert (A_prime >= 0).all()


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("scale", [None, 0.5])
def test_rows_equal_loop_and_torch(rng, batch, masked, scale):
    Q, K = rng.normal(size=(*batch, 3, 4)), rng.normal(size=(*batch, 5, 4))
    V = rng.normal(size=(*batch, 5, 2))
    mask = rng.random((*batch, 3, 5)) < 0.6 if masked else None
    if masked:
        mask[..., 0] = True  # torch gives NaN for an empty row; we give zeros
    out, w = ref.attention_rows(Q, K, V, mask, scale)
    out_loop, w_loop = ref.attention_loop(Q, K, V, mask, scale)
    np.testing.assert_allclose(out, out_loop, atol=1e-12)
    np.testing.assert_allclose(w, w_loop, atol=1e-12)
    t = torch.from_numpy
    expected = F.scaled_dot_product_attention(
        t(Q), t(K), t(V), attn_mask=None if mask is None else t(mask), scale=scale
    )
    np.testing.assert_allclose(out, expected.numpy(), atol=1e-12)


def test_loop_fully_masked_row_is_zero(rng):
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    for oracle in (ref.attention_rows, ref.attention_loop):
        out, w = oracle(Q, K, V, mask)
        np.testing.assert_array_equal(out[1], 0.0)
        np.testing.assert_array_equal(w[1], 0.0)


@pytest.mark.parametrize("D, T, d_k, d_v", [(4, 5, 3, 2), (6, 3, 6, 6)])
def test_columns_match_selfattention_module(rng, D, T, d_k, d_v):
    """nn.Linear stores weight (out, in): exactly the lecture's W^q (d_k, D)."""
    I, W_q, W_k, W_v = column_inputs(rng, D, T, d_k, d_v)
    layer = SelfAttention(D, d_k, d_v).double()
    with torch.no_grad():
        for lin, W in ((layer.W_q, W_q), (layer.W_k, W_k), (layer.W_v, W_v)):
            lin.weight.copy_(torch.from_numpy(W))
    x = torch.from_numpy(I.T)[None]  # (1, T, D): X = I^T
    out, weights = layer(x), layer.attention_weights(x)
    O, A, A_prime = ref.self_attention_columns(I, W_q, W_k, W_v)
    np.testing.assert_allclose(out[0].detach().numpy(), O.T, atol=1e-12)
    np.testing.assert_allclose(weights[0].detach().numpy(), A_prime.T, atol=1e-12)
