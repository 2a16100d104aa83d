"""The numpy reference, the oracle of the library, checked against what is not
itself: the column and row conventions against each other, the nested loop,
cases computed by hand, plain numpy written out here, and torch (PyTorch's
attention and the selfattn layers).

Its own failures must be loud and exact: every error names the argument,
every result is float64 whatever the input's dtype, and the stabilising
maximum is taken per softmax row (inputs whose rows differ by 1000 overflow or
underflow otherwise).
"""

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


# --- softmax ------------------------------------------------------------------


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


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: ref.softmax(x),
        lambda x: ref.masked_softmax(x),
        lambda x: ref.masked_softmax(x, np.ones(x.shape, dtype=bool)),
    ],
)
def test_softmax_rows_that_differ_by_a_thousand(fn):
    """Each row is stabilised by its own maximum: with one global maximum the
    second row would be exp(-1000) = 0 everywhere, 0/0."""
    x = np.array([[1000.0, 1001.0, 999.0], [0.0, 1.0, -1.0]])
    row = np.exp([0.0, 1.0, -1.0]) / np.exp([0.0, 1.0, -1.0]).sum()
    np.testing.assert_allclose(fn(x), [row, row], rtol=1e-12)


def test_masked_softmax_keeps_the_axis_when_there_is_no_mask(rng):
    x = rng.standard_normal((3, 4))
    cols = np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)
    np.testing.assert_allclose(ref.masked_softmax(x, None, axis=0), cols, rtol=1e-12)


def test_masked_softmax_large_scores_and_empty_rows():
    """Masked entries are -inf (never +inf), the maximum is over allowed keys
    only, and a row with no allowed key is exactly zero (written, not left as
    whatever the output buffer held)."""
    x = np.array([[1000.0, 5000.0, 999.0], [1.0, 2.0, 3.0]])
    m = np.array([[True, False, True], [False, False, False]])
    w = ref.masked_softmax(x, m)
    e = np.exp([1.0, 0.0])
    np.testing.assert_allclose(w[0], [e[0] / e.sum(), 0.0, e[1] / e.sum()], rtol=1e-12)
    assert np.array_equal(w[1], np.zeros(3))


# --- the column convention ----------------------------------------------------


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


def _relu_columns(A: np.ndarray) -> np.ndarray:
    """max(0, A) divided by its column sums, one column at a time (0 stays 0)."""
    out = np.zeros_like(A)
    for j in range(A.shape[1]):
        col = np.maximum(A[:, j], 0.0)
        if col.sum() > 0:
            out[:, j] = col / col.sum()
    return out


def test_relu_columns_hand_computed():
    """I = identity, W_k = identity, W_q = diag: A = s K^T Q is known exactly.

    Column 0 sums to 0.5 (< 1: it must still be normalised), column 1 has no
    positive score (all zero), column 2 is an ordinary column.
    """
    I = np.eye(3)
    W_k = np.eye(3)
    W_q = np.array([[0.2, 0.0, 2.0], [0.3, -1.0, 1.0], [0.0, -2.0, 1.0]])
    res = ref.self_attention_columns(
        I, W_q, W_k, np.eye(3), scale=1.0, normalize="relu"
    )
    np.testing.assert_allclose(res.A, W_q)  # K^T Q = W_q here
    expected = np.array([[0.4, 0.0, 0.5], [0.6, 0.0, 0.25], [0.0, 0.0, 0.25]])
    np.testing.assert_allclose(res.A_prime, expected)
    np.testing.assert_allclose(res.O, expected)  # V = identity


def test_relu_columns_match_a_loop(rng):
    """Random scores with many non-positive entries, against the loop."""
    for _ in range(5):
        D, T = 3, 5
        I = rng.normal(size=(D, T))
        W_q, W_k, W_v = (rng.normal(size=(2, D)) for _ in range(3))
        res = ref.self_attention_columns(I, W_q, W_k, W_v, normalize="relu")
        np.testing.assert_allclose(res.A_prime, _relu_columns(res.A))
        np.testing.assert_allclose(res.O, (W_v @ I) @ _relu_columns(res.A))


def test_an_all_negative_column_gives_exact_zeros():
    """A query whose every score is negative gets weights 0, not garbage."""
    for trial in range(20):
        I = np.eye(4)
        W_q = -np.abs(np.arange(1.0, 17.0).reshape(4, 4)) - trial  # all negative
        res = ref.self_attention_columns(
            I, W_q, np.eye(4), np.eye(4), scale=1.0, normalize="relu"
        )
        assert np.array_equal(res.A_prime, np.zeros((4, 4)))
        assert np.array_equal(res.O, np.zeros((4, 4)))


# --- columns to rows ----------------------------------------------------------


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


def test_column_to_row_weights_transposes_each_matrix_of_a_batch(rng):
    A_prime = rng.random((2, 3, 4))  # a batch of two (T_k=3, T_q=4) matrices
    rows = ref.column_to_row_weights(A_prime)
    assert rows.shape == (2, 4, 3)
    for b in range(2):
        for i in range(4):
            for j in range(3):
                assert rows[b, i, j] == A_prime[b, j, i]


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


# --- the row convention and the loop ------------------------------------------


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
    # the queries after the empty one are still computed
    out_loop, w_loop = ref.attention_loop(Q, K, V, mask)
    out, w = ref.attention_rows(Q, K, V, mask)
    np.testing.assert_allclose(out_loop[2], out[2], atol=1e-12)
    np.testing.assert_allclose(w_loop[2].sum(), 1.0)


def test_results_are_float64_whatever_the_input_dtype(rng):
    Q = rng.standard_normal((3, 4)).astype(np.float32)
    K = rng.standard_normal((5, 4)).astype(np.float32)
    V = rng.standard_normal((5, 2)).astype(np.float32)
    for out in (
        ref.softmax(Q),
        ref.masked_softmax(Q),
        ref.attention_rows(Q, K, V)[0],
        ref.attention_loop(Q, K, V)[0],
    ):
        assert np.asarray(out).dtype == np.float64


# --- errors -------------------------------------------------------------------


def test_column_to_row_weights_names_its_argument():
    with pytest.raises(ValueError, match=r"\bA_prime contains NaN\b.*\(2, 2\)"):
        ref.column_to_row_weights(np.array([[0.5, np.nan], [0.5, 1.0]]))


z = np.zeros


ERRORS = [
    (
        lambda: ref.self_attention_columns(z(3), z((2, 3)), z((2, 3)), z((2, 3))),
        ValueError,
        r"\bI must\b.*\bshape \(3,\)",
    ),
    (
        lambda: ref.softmax([1.0, np.nan]),
        ValueError,
        r"\bx contains NaN\b.*\(2,\)",
    ),
    (
        lambda: ref.masked_softmax(z((2, 3)), np.ones((2, 3))),
        TypeError,
        r"\bmask must\b.*\bfloat64\b",
    ),
    (
        lambda: ref.masked_softmax(z((2, 3)), np.ones((3, 2), bool)),
        ValueError,
        r"\bmask of shape \(3, 2\).*\(2, 3\)",
    ),
    (
        lambda: ref.self_attention_columns(z((3, 4)), z((2, 5)), z((2, 3)), z((2, 3))),
        ValueError,
        r"\bW_q\b.*\bD=3\b.*\bI \(3, 4\), got W_q \(2, 5\)",
    ),
    (
        lambda: ref.self_attention_columns(z((3, 4)), z((2, 3)), z((2, 3)), z((2, 4))),
        ValueError,
        r"\bW_v\b.*\bD=3\b.*\bI \(3, 4\), got W_v \(2, 4\)",
    ),
    (
        lambda: ref.self_attention_columns(z((3, 4)), z((2, 3)), z((1, 3)), z((2, 3))),
        ValueError,
        r"\bW_q \(2, 3\) and W_k \(1, 3\).*\bd_k\b",
    ),
    (
        lambda: ref.self_attention_columns(
            z((3, 4)), z((2, 3)), z((2, 3)), z((2, 3)), normalize="max"
        ),
        ValueError,
        r"\bnormalize\b.*\bgot 'max'",
    ),
    (
        lambda: ref.attention_rows(z(3), z((5, 3)), z((5, 2))),
        ValueError,
        r"\bQ must\b.*\(3,\)",
    ),
    (
        lambda: ref.attention_loop(z((2, 3)), z(3), z((5, 2))),
        ValueError,
        r"\bK must\b.*\(3,\)",
    ),
    (
        lambda: ref.attention_rows(z((2, 3)), z((5, 4)), z((5, 2))),
        ValueError,
        r"\bQ has d_k=3 but K has d_k=4\b.*\bQ \(2, 3\), K \(5, 4\)",
    ),
    (
        lambda: ref.attention_rows(z((2, 3)), z((5, 3)), z((4, 2))),
        ValueError,
        r"\bK has T_k=5\b.*\bV has 4\b.*\bK \(5, 3\), V \(4, 2\)",
    ),
    (
        lambda: ref.attention_loop(z((2, 2, 3)), z((3, 5, 3)), z((3, 5, 2))),
        ValueError,
        r"\bQ, K, V must\b.*\bQ \(2, 2, 3\), K \(3, 5, 3\), V \(3, 5, 2\)",
    ),
    (
        lambda: ref.columns_to_rows(z((3, 4)), z(3), z((2, 3)), z((2, 3))),
        ValueError,
        r"\bW_q must\b.*\bshape \(3,\)",
    ),
    (
        lambda: ref.columns_to_rows(z((3, 4)), z((2, 3)), z((2, 3)), z(3)),
        ValueError,
        r"\bW_v must\b.*\bshape \(3,\)",
    ),
    (
        lambda: ref.columns_to_rows(z((3, 4)), z((2, 3)), z(3), z((2, 3))),
        ValueError,
        r"\bW_k must\b.*\bshape \(3,\)",
    ),
    (
        lambda: ref.columns_to_rows(z(3), z((2, 3)), z((2, 3)), z((2, 3))),
        ValueError,
        r"\bI must\b.*\bshape \(3,\)",
    ),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_reference_errors_name_the_argument(call, error, match):
    """The argument's name and the shapes seen (and expected)."""
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: ref.masked_softmax([[1.0, np.nan]]), "x"),
        (
            lambda: ref.attention_rows(
                np.ones((2, 3)), [[np.nan] * 3], np.ones((1, 2))
            ),
            "K",
        ),
        (
            lambda: ref.attention_rows(
                np.ones((2, 3)), np.ones((1, 3)), [[np.nan] * 2]
            ),
            "V",
        ),
        (
            lambda: ref.attention_loop(
                [[np.nan] * 3], np.ones((1, 3)), np.ones((1, 2))
            ),
            "Q",
        ),
        (
            lambda: ref.attention_loop(
                np.ones((2, 3)), [[np.nan] * 3], np.ones((1, 2))
            ),
            "K",
        ),
        (
            lambda: ref.attention_loop(
                np.ones((2, 3)), np.ones((1, 3)), [[np.nan] * 2]
            ),
            "V",
        ),
    ],
)
def test_nan_errors_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"\b{name} contains NaN\b"):
        call()


@pytest.mark.parametrize("which", ["W_q", "W_k", "W_v"])
def test_self_attention_columns_names_a_projection_of_the_wrong_rank(which):
    I = np.ones((3, 4))  # D x T
    W = {"W_q": np.ones((2, 3)), "W_k": np.ones((2, 3)), "W_v": np.ones((2, 3))}
    W[which] = np.ones(3)  # 1-D
    with pytest.raises(ValueError, match=rf"\b{which} must\b.*\bshape \(3,\)"):
        ref.self_attention_columns(I, W["W_q"], W["W_k"], W["W_v"])


def test_check_rows_names_v_and_reads_the_last_axis():
    with pytest.raises(ValueError, match=r"\bV must\b.*\(4,\)"):
        ref.attention_rows(np.ones((2, 3)), np.ones((4, 3)), np.ones(4))
    Q, K = np.ones((2, 5, 4)), np.ones((2, 5, 3))  # batched: axis 1 is T, not d_k
    with pytest.raises(
        ValueError,
        match=r"\bQ has d_k=4 but K has d_k=3\b.*\(2, 5, 4\), K \(2, 5, 3\)",
    ):
        ref.attention_rows(Q, K, np.ones((2, 5, 2)))
