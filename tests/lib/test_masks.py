"""selfattn.masks against their definitions (explicit loops, one entry at a
time), at their boundaries (empty, zero and full lengths, directed graphs,
devices), and in use with attention."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from oracles import loop_mask

from selfattn import (
    causal_mask,
    graph_mask,
    length_mask,
    scaled_dot_product_attention,
    window_mask,
)
from selfattn.masks import from_key_padding_mask

# --- causal_mask --------------------------------------------------------------


@pytest.mark.parametrize("T_q, T_k", [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask(T_q, T_k):
    expected = loop_mask(T_q, T_k, lambda i, j: j <= i)
    assert torch.equal(causal_mask(T_q, T_k), expected)
    assert causal_mask(T_q, T_k).dtype == torch.bool


@pytest.mark.parametrize("T_q, T_k", [(0, 0), (1, 1), (3, 5), (5, 3), (4, None)])
def test_causal_mask_against_a_loop(T_q, T_k):
    m = causal_mask(T_q, T_k)
    expected = loop_mask(T_q, T_q if T_k is None else T_k, lambda i, j: j <= i)
    assert m.dtype == torch.bool and torch.equal(m, expected)


def test_causal_mask_matches_torch_is_causal(gen):
    q, k, v = (torch.randn(2, 5, 3, generator=gen) for _ in range(3))
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, causal_mask(5))[0],
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
    )


def test_causal_mask_is_made_on_the_requested_device():
    m = causal_mask(3, 4, device="meta")
    assert m.device.type == "meta" and m.shape == (3, 4) and m.dtype == torch.bool


# --- length_mask and from_key_padding_mask ------------------------------------


@pytest.mark.parametrize("lengths", [[3, 1, 4], [0, 4], torch.tensor([2])])
def test_length_mask(lengths):
    T = 4
    m = length_mask(lengths, T)
    lens = list(torch.as_tensor(lengths).tolist())
    assert m.shape == (len(lens), 1, T)
    for b, n in enumerate(lens):
        assert m[b, 0].tolist() == [j < n for j in range(T)]


def test_length_mask_at_lengths_zero_and_full():
    m = length_mask([0, 3, 1], 3)
    expected = torch.tensor([[[0, 0, 0]], [[1, 1, 1]], [[1, 0, 0]]], dtype=torch.bool)
    assert m.shape == (3, 1, 3) and torch.equal(m, expected)


def test_from_key_padding_mask_inverts_torch_polarity():
    lens = torch.tensor([3, 1, 4])
    key_padding_mask = torch.arange(4)[None, :] >= lens[:, None]  # True = ignore
    m = from_key_padding_mask(key_padding_mask)
    assert m.shape == (3, 1, 4)
    assert torch.equal(m, length_mask(lens, 4))


# --- window_mask --------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 5, 8])
@pytest.mark.parametrize("radius", [0, 1, 3, 10])
@pytest.mark.parametrize("causal", [False, True])
def test_window_mask(T, radius, causal):
    def allowed(i, j):
        return abs(i - j) <= radius and (not causal or j <= i)

    assert torch.equal(window_mask(T, radius, causal=causal), loop_mask(T, T, allowed))


@pytest.mark.parametrize("T, radius", [(0, 0), (1, 0), (5, 0), (6, 1), (6, 2), (4, 9)])
@pytest.mark.parametrize("causal", [False, True])
def test_window_mask_against_a_loop(T, radius, causal):
    m = window_mask(T, radius, causal=causal)
    if causal:
        expected = loop_mask(T, T, lambda i, j: 0 <= i - j <= radius)
    else:
        expected = loop_mask(T, T, lambda i, j: abs(i - j) <= radius)
    assert m.dtype == torch.bool and torch.equal(m, expected)


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


# --- graph_mask ---------------------------------------------------------------


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


def test_graph_mask_from_a_directed_networkx_graph():
    G = nx.DiGraph([(0, 1), (2, 1)])  # nodes in order 0, 1, 2
    expected = torch.tensor([[1, 1, 0], [0, 1, 0], [0, 1, 1]], dtype=torch.bool)
    assert torch.equal(graph_mask(G), expected)
    assert torch.equal(graph_mask(G, self_loops=False), expected & ~torch.eye(3).bool())


def test_graph_mask_from_any_object_with_nodes_and_edges():
    """Not only networkx: an object with ``nodes`` and ``edges`` and no
    ``is_directed`` is an undirected graph (each edge counts both ways)."""

    class Graph:
        nodes = ("a", "b", "c")
        edges = (("a", "b"), ("c", "b"))

    expected = torch.tensor([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=torch.bool)
    assert torch.equal(graph_mask(Graph(), self_loops=False), expected)


def test_graph_mask_from_weights_and_tensors():
    A = np.array([[0.0, 0.5], [-2.0, 0.0]])  # any non-zero weight is an edge
    no_loops = torch.tensor([[0, 1], [1, 0]], dtype=torch.bool)
    assert torch.equal(graph_mask(A, self_loops=False), no_loops)
    assert torch.equal(graph_mask(torch.from_numpy(A)), torch.ones(2, 2).bool())


def test_graph_mask_of_a_tensor_stays_on_its_device():
    """A tensor adjacency is used as it is (no detour through numpy, which
    would fail for a tensor on a GPU, or here on ``meta``)."""
    m = graph_mask(torch.ones(3, 3, device="meta"))
    assert m.device.type == "meta" and m.shape == (3, 3) and m.dtype == torch.bool


def test_isolated_node_without_self_loop_gets_zero_output(gen):
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 1  # node 2 is isolated
    x = torch.randn(3, 4, generator=gen)
    out, w = scaled_dot_product_attention(x, x, x, graph_mask(A, self_loops=False))
    assert torch.equal(out[2], torch.zeros(4)) and torch.equal(w[2], torch.zeros(3))
    assert not torch.isnan(out).any()


# --- errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: causal_mask(-1), ValueError, r"\bT_q\b.*\bgot T_q=-1$"),
        (lambda: causal_mask(2, -3), ValueError, r"\bT_k\b.*\bgot T_k=-3$"),
        (
            lambda: length_mask(torch.tensor([[1], [2]]), 3),
            ValueError,
            r"\blengths\b.*\(B,\), got shape \(2, 1\) and dtype torch\.int64\b",
        ),
        (
            lambda: length_mask(torch.tensor([1.0, 2.0]), 3),
            ValueError,
            r"\blengths\b.*\(B,\), got shape \(2\) and dtype torch\.float32\b",
        ),
        (
            lambda: length_mask([1, 4], 3),
            ValueError,
            r"\blengths\b.*\[0, T=3\], got \[1, 4\]",
        ),
        (
            lambda: length_mask([-1, 2], 3),
            ValueError,
            r"\blengths\b.*\[0, T=3\], got \[-1, 2\]",
        ),
        (lambda: window_mask(4, -1), ValueError, r"\bradius\b.*\bradius=-1\b"),
        (lambda: window_mask(-2, 1), ValueError, r"\bT must\b.*\bT=-2\b"),
        (
            lambda: graph_mask(np.zeros((2, 3))),
            ValueError,
            r"\badjacency\b.*\(N, N\).*\bshape \(2, 3\)",
        ),
        (
            lambda: graph_mask(np.zeros(3)),
            ValueError,
            r"\badjacency\b.*\(N, N\).*\bshape \(3\)",
        ),
        (
            lambda: from_key_padding_mask(torch.zeros(2, 3)),
            TypeError,
            r"\bkey_padding_mask\b.*\(B, T_k\), got torch\.float32\b",
        ),
        (
            lambda: from_key_padding_mask([[True]]),
            TypeError,
            r"\bkey_padding_mask\b.*\(B, T_k\), got list\b",
        ),
        (
            lambda: from_key_padding_mask(torch.zeros(1, 2, 3, dtype=torch.bool)),
            ValueError,
            r"\bkey_padding_mask\b.*\(B, T_k\), got \(1, 2, 3\)",
        ),
    ],
)
def test_mask_errors_name_the_argument(call, error, match):
    """The argument's name, the shape it must have and what it got."""
    with pytest.raises(error, match=match):
        call()
