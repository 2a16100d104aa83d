"""selfattn.reference: what the full mutation run of 2026-11-24 found unchecked.

The reference is the oracle of the library, so its own failures must be loud
and exact: every error names the argument, every result is float64 whatever
the input's dtype, and the stabilising maximum is taken per softmax row
(inputs whose rows differ by 1000 overflow or underflow otherwise). Oracles:
hand-computed cases and plain numpy written out here. See tests/MUTATION.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from selfattn import reference as ref

RNG = np.random.default_rng(0)


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
    with pytest.raises(ValueError, match=f"^{name} contains NaN"):
        call()


@pytest.mark.parametrize("which", ["W_q", "W_k", "W_v"])
def test_self_attention_columns_names_a_projection_of_the_wrong_rank(which):
    I = np.ones((3, 4))  # D x T
    W = {"W_q": np.ones((2, 3)), "W_k": np.ones((2, 3)), "W_v": np.ones((2, 3))}
    W[which] = np.ones(3)  # 1-D
    with pytest.raises(ValueError, match=rf"^{which} must be 2-D, got shape \(3,\)$"):
        ref.self_attention_columns(I, W["W_q"], W["W_k"], W["W_v"])


def test_check_rows_names_v_and_reads_the_last_axis():
    with pytest.raises(ValueError, match=r"^V must have at least 2 dimensions"):
        ref.attention_rows(np.ones((2, 3)), np.ones((4, 3)), np.ones(4))
    Q, K = np.ones((2, 5, 4)), np.ones((2, 5, 3))  # batched: axis 1 is T, not d_k
    with pytest.raises(ValueError, match=r"^Q has d_k=4 but K has d_k=3 "):
        ref.attention_rows(Q, K, np.ones((2, 5, 2)))


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


def test_masked_softmax_keeps_the_axis_when_there_is_no_mask():
    x = RNG.standard_normal((3, 4))
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


def test_results_are_float64_whatever_the_input_dtype():
    Q = RNG.standard_normal((3, 4)).astype(np.float32)
    K = RNG.standard_normal((5, 4)).astype(np.float32)
    V = RNG.standard_normal((5, 2)).astype(np.float32)
    for out in (
        ref.softmax(Q),
        ref.masked_softmax(Q),
        ref.attention_rows(Q, K, V)[0],
        ref.attention_loop(Q, K, V)[0],
    ):
        assert np.asarray(out).dtype == np.float64
