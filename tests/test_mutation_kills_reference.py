"""The numpy oracle itself, checked where mutation testing found it unchecked.

Each test compares ``selfattn.reference`` with something written out by hand
(a small case computed on paper, or a loop), never with the torch library it
is the oracle for. See tests/MUTATION.md.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from selfattn import reference as ref


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


def test_column_to_row_weights_transposes_each_matrix_of_a_batch(rng):
    A_prime = rng.random((2, 3, 4))  # a batch of two (T_k=3, T_q=4) matrices
    rows = ref.column_to_row_weights(A_prime)
    assert rows.shape == (2, 4, 3)
    for b in range(2):
        for i in range(4):
            for j in range(3):
                assert rows[b, i, j] == A_prime[b, j, i]


def test_column_to_row_weights_names_its_argument():
    with pytest.raises(ValueError, match=r"^A_prime contains NaN \(shape \(2, 2\)\)"):
        ref.column_to_row_weights(np.array([[0.5, np.nan], [0.5, 1.0]]))


z = np.zeros

MESSAGES = [
    (
        lambda: ref.self_attention_columns(z(3), z((2, 3)), z((2, 3)), z((2, 3))),
        ValueError,
        "I must be 2-D, got shape (3,)",
    ),
    (lambda: ref.softmax([1.0, np.nan]), ValueError, "x contains NaN (shape (2,))"),
    (
        lambda: ref.masked_softmax(z((2, 3)), np.ones((2, 3))),
        TypeError,
        "mask must be boolean (True = may attend), got float64",
    ),
    (
        lambda: ref.masked_softmax(z((2, 3)), np.ones((3, 2), bool)),
        ValueError,
        "mask of shape (3, 2) does not broadcast to the scores' shape (2, 3) "
        "= (..., T_q, T_k)",
    ),
    (
        lambda: ref.self_attention_columns(z((3, 4)), z((2, 5)), z((2, 3)), z((2, 3))),
        ValueError,
        "W_q must have D=3 columns to multiply I (3, 4), got W_q (2, 5)",
    ),
    (
        lambda: ref.self_attention_columns(z((3, 4)), z((2, 3)), z((2, 3)), z((2, 4))),
        ValueError,
        "W_v must have D=3 columns to multiply I (3, 4), got W_v (2, 4)",
    ),
    (
        lambda: ref.self_attention_columns(z((3, 4)), z((2, 3)), z((1, 3)), z((2, 3))),
        ValueError,
        "W_q (2, 3) and W_k (1, 3) must have the same d_k rows",
    ),
    (
        lambda: ref.self_attention_columns(
            z((3, 4)), z((2, 3)), z((2, 3)), z((2, 3)), normalize="max"
        ),
        ValueError,
        "normalize must be 'softmax' or 'relu', got 'max'",
    ),
    (
        lambda: ref.attention_rows(z(3), z((5, 3)), z((5, 2))),
        ValueError,
        "Q must have at least 2 dimensions, got (3,)",
    ),
    (
        lambda: ref.attention_loop(z((2, 3)), z(3), z((5, 2))),
        ValueError,
        "K must have at least 2 dimensions, got (3,)",
    ),
    (
        lambda: ref.attention_rows(z((2, 3)), z((5, 4)), z((5, 2))),
        ValueError,
        "Q has d_k=3 but K has d_k=4 (Q (2, 3), K (5, 4))",
    ),
    (
        lambda: ref.attention_rows(z((2, 3)), z((5, 3)), z((4, 2))),
        ValueError,
        "K has T_k=5 rows but V has 4; every key needs a value (K (5, 3), V (4, 2))",
    ),
    (
        lambda: ref.attention_loop(z((2, 2, 3)), z((3, 5, 3)), z((3, 5, 2))),
        ValueError,
        "Q, K, V must share leading (batch) dimensions, got Q (2, 2, 3), "
        "K (3, 5, 3), V (3, 5, 2)",
    ),
    (
        lambda: ref.columns_to_rows(z((3, 4)), z(3), z((2, 3)), z((2, 3))),
        ValueError,
        "W_q must be 2-D, got shape (3,)",
    ),
    (
        lambda: ref.columns_to_rows(z((3, 4)), z((2, 3)), z((2, 3)), z(3)),
        ValueError,
        "W_v must be 2-D, got shape (3,)",
    ),
    (
        lambda: ref.columns_to_rows(z((3, 4)), z((2, 3)), z(3), z((2, 3))),
        ValueError,
        "W_k must be 2-D, got shape (3,)",
    ),
    (
        lambda: ref.columns_to_rows(z(3), z((2, 3)), z((2, 3)), z((2, 3))),
        ValueError,
        "I must be 2-D, got shape (3,)",
    ),
]


@pytest.mark.parametrize("call, error, message", MESSAGES)
def test_reference_errors_name_the_argument(call, error, message):
    """The whole message: the argument's name, the rule and the shapes seen."""
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call()
