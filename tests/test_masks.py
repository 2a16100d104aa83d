"""Masks against their definitions (explicit loops), and in use with attention."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from selfattn import (
    causal_mask,
    graph_mask,
    length_mask,
    scaled_dot_product_attention,
    window_mask,
)
from selfattn.masks import from_key_padding_mask


def loop_mask(T_q, T_k, allowed):
    return torch.tensor([[allowed(i, j) for j in range(T_k)] for i in range(T_q)])


@pytest.mark.parametrize("T_q, T_k", [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask(T_q, T_k):
    expected = loop_mask(T_q, T_k, lambda i, j: j <= i)
    assert torch.equal(causal_mask(T_q, T_k), expected)
    assert causal_mask(T_q, T_k).dtype == torch.bool


def test_causal_mask_matches_torch_is_causal(gen):
    q, k, v = (torch.randn(2, 5, 3, generator=gen) for _ in range(3))
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, causal_mask(5))[0],
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
    )


@pytest.mark.parametrize("lengths", [[3, 1, 4], [0, 4], torch.tensor([2])])
def test_padding_mask(lengths):
    T = 4
    m = length_mask(lengths, T)
    lens = list(torch.as_tensor(lengths).tolist())
    assert m.shape == (len(lens), 1, T)
    for b, n in enumerate(lens):
        assert m[b, 0].tolist() == [j < n for j in range(T)]


def test_from_key_padding_mask_inverts_torch_polarity():
    lens = torch.tensor([3, 1, 4])
    key_padding_mask = torch.arange(4)[None, :] >= lens[:, None]  # True = ignore
    m = from_key_padding_mask(key_padding_mask)
    assert m.shape == (3, 1, 4)
    assert torch.equal(m, length_mask(lens, 4))


@pytest.mark.parametrize("T", [1, 5, 8])
@pytest.mark.parametrize("radius", [0, 1, 3, 10])
@pytest.mark.parametrize("causal", [False, True])
def test_window_mask(T, radius, causal):
    def allowed(i, j):
        return abs(i - j) <= radius and (not causal or j <= i)

    assert torch.equal(window_mask(T, radius, causal=causal), loop_mask(T, T, allowed))


def test_window_radius_zero_attends_only_to_itself(gen):
    q, k, v = (torch.randn(2, 6, 4, generator=gen) for _ in range(3))
    out, w = scaled_dot_product_attention(q, k, v, window_mask(6, 0))
    torch.testing.assert_close(out, v)
    torch.testing.assert_close(w, torch.eye(6).expand(2, 6, 6))


def test_window_wider_than_sequence_is_dense(gen):
    q, k, v = (torch.randn(6, 4, generator=gen) for _ in range(3))
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, window_mask(6, 5)),
        scaled_dot_product_attention(q, k, v),
    )


def adjacency_forms(A):
    """The same adjacency as numpy, torch, nested list and networkx graph."""
    G = nx.from_numpy_array(A, create_using=nx.DiGraph)
    return [A, torch.from_numpy(A), A.tolist(), G]


@pytest.mark.parametrize("form", range(4))
@pytest.mark.parametrize("self_loops", [True, False])
def test_graph_mask(rng, form, self_loops):
    A = (rng.random((5, 5)) < 0.4).astype(float)
    m = graph_mask(adjacency_forms(A)[form], self_loops=self_loops)

    def allowed(i, j):
        return A[i, j] != 0 or (self_loops and i == j)

    assert torch.equal(m, loop_mask(5, 5, allowed))


def test_graph_mask_follows_edge_direction():
    G = nx.DiGraph([(0, 1), (1, 2)])  # edge i -> j: node i may attend node j
    m = graph_mask(G, self_loops=False)
    assert m[0, 1] and not m[1, 0] and m[1, 2] and not m[0, 2]


def test_graph_mask_undirected_is_symmetric():
    m = graph_mask(nx.cycle_graph(6))
    assert torch.equal(m, m.T)
    assert torch.equal(m.sum(1), torch.full((6,), 3))  # two neighbours and itself


def test_isolated_node_without_self_loop_gets_zero_output(gen):
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 1  # node 2 is isolated
    x = torch.randn(3, 4, generator=gen)
    out, w = scaled_dot_product_attention(x, x, x, graph_mask(A, self_loops=False))
    assert torch.equal(out[2], torch.zeros(4)) and torch.equal(w[2], torch.zeros(3))
    assert not torch.isnan(out).any()
