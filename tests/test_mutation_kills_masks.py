"""Masks at their boundaries and their error messages, against nested loops.

Written where mutation testing found them unchecked; see tests/MUTATION.md.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch

from selfattn.masks import (
    causal_mask,
    from_key_padding_mask,
    graph_mask,
    length_mask,
    window_mask,
)


def _loop(n_rows, n_cols, allowed):
    return torch.tensor(
        [[allowed(i, j) for j in range(n_cols)] for i in range(n_rows)],
        dtype=torch.bool,
    ).reshape(n_rows, n_cols)


@pytest.mark.parametrize("T_q, T_k", [(0, 0), (1, 1), (3, 5), (5, 3), (4, None)])
def test_causal_mask_against_a_loop(T_q, T_k):
    m = causal_mask(T_q, T_k)
    expected = _loop(T_q, T_q if T_k is None else T_k, lambda i, j: j <= i)
    assert m.dtype == torch.bool and torch.equal(m, expected)


@pytest.mark.parametrize("T, radius", [(0, 0), (1, 0), (5, 0), (6, 1), (6, 2), (4, 9)])
@pytest.mark.parametrize("causal", [False, True])
def test_window_mask_against_a_loop(T, radius, causal):
    m = window_mask(T, radius, causal=causal)
    if causal:
        expected = _loop(T, T, lambda i, j: 0 <= i - j <= radius)
    else:
        expected = _loop(T, T, lambda i, j: abs(i - j) <= radius)
    assert m.dtype == torch.bool and torch.equal(m, expected)


def test_padding_mask_at_lengths_zero_and_full():
    m = length_mask([0, 3, 1], 3)
    expected = torch.tensor([[[0, 0, 0]], [[1, 1, 1]], [[1, 0, 0]]], dtype=torch.bool)
    assert m.shape == (3, 1, 3) and torch.equal(m, expected)


def test_graph_mask_from_a_directed_networkx_graph():
    G = nx.DiGraph([(0, 1), (2, 1)])  # nodes in order 0, 1, 2
    expected = torch.tensor([[1, 1, 0], [0, 1, 0], [0, 1, 1]], dtype=torch.bool)
    assert torch.equal(graph_mask(G), expected)
    assert torch.equal(graph_mask(G, self_loops=False), expected & ~torch.eye(3).bool())


def test_graph_mask_from_weights_and_tensors():
    A = np.array([[0.0, 0.5], [-2.0, 0.0]])  # any non-zero weight is an edge
    no_loops = torch.tensor([[0, 1], [1, 0]], dtype=torch.bool)
    assert torch.equal(graph_mask(A, self_loops=False), no_loops)
    assert torch.equal(graph_mask(torch.from_numpy(A)), torch.ones(2, 2).bool())


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: causal_mask(-1), ValueError, r"^T_q must be non-negative, got -1$"),
        (lambda: causal_mask(2, -3), ValueError, r"^T_k must be non-negative, got -3$"),
        (
            lambda: length_mask(torch.tensor([[1], [2]]), 3),
            ValueError,
            r"^lengths must be a 1-D integer sequence \(B,\), got shape \(2, 1\) "
            r"and dtype torch\.int64$",
        ),
        (
            lambda: length_mask(torch.tensor([1.0, 2.0]), 3),
            ValueError,
            r"^lengths must be a 1-D integer sequence \(B,\), got shape \(2\) "
            r"and dtype torch\.float32$",
        ),
        (
            lambda: length_mask([1, 4], 3),
            ValueError,
            r"^lengths must lie in \[0, T=3\], got \[1, 4\]$",
        ),
        (
            lambda: length_mask([-1, 2], 3),
            ValueError,
            r"^lengths must lie in \[0, T=3\], got \[-1, 2\]$",
        ),
        (
            lambda: window_mask(4, -1),
            ValueError,
            r"^radius must be non-negative, got radius=-1$",
        ),
        (lambda: window_mask(-2, 1), ValueError, r"^T must be non-negative, got T=-2$"),
        (
            lambda: graph_mask(np.zeros((2, 3))),
            ValueError,
            r"^adjacency must be a square \(N, N\) matrix, got shape \(2, 3\)$",
        ),
        (
            lambda: graph_mask(np.zeros(3)),
            ValueError,
            r"^adjacency must be a square \(N, N\) matrix, got shape \(3\)$",
        ),
        (
            lambda: from_key_padding_mask(torch.zeros(2, 3)),
            TypeError,
            r"^key_padding_mask must be a bool torch\.Tensor \(B, T_k\), got "
            r"torch\.float32$",
        ),
        (
            lambda: from_key_padding_mask([[True]]),
            TypeError,
            r"^key_padding_mask must be a bool torch\.Tensor \(B, T_k\), got list$",
        ),
        (
            lambda: from_key_padding_mask(torch.zeros(1, 2, 3, dtype=torch.bool)),
            ValueError,
            r"^key_padding_mask must have shape \(B, T_k\), got \(1, 2, 3\)$",
        ),
    ],
)
def test_mask_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_graph_mask_of_a_tensor_stays_on_its_device():
    """A tensor adjacency is used as it is (no detour through numpy, which
    would fail for a tensor on a GPU, or here on ``meta``)."""
    m = graph_mask(torch.ones(3, 3, device="meta"))
    assert m.device.type == "meta" and m.shape == (3, 3) and m.dtype == torch.bool


def test_causal_mask_is_made_on_the_requested_device():
    m = causal_mask(3, 4, device="meta")
    assert m.device.type == "meta" and m.shape == (3, 4) and m.dtype == torch.bool
