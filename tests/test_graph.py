"""selfattn.graph against dense attention and a nested-loop GAT reference."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from selfattn.graph import GAT, GraphAttentionLayer, edge_attention, gat_attention
from selfattn.masks import graph_mask


def _random_adjacency(N: int, p: float, rng: np.random.Generator) -> np.ndarray:
    A = (rng.random((N, N)) < p).astype(float)
    np.fill_diagonal(A, 0)
    return A


def _gat_loop(x, A, W, a, slope=0.2, self_loops=True):
    """Oracle: GAT (Velickovic et al., 2018, eqs. 1-4) with Python loops, float64."""
    x, W, a = (t.detach().double().numpy() for t in (x, W, a))
    H, _, Fo = W.shape
    N = x.shape[0]
    out = np.zeros((H, N, Fo))
    alpha = np.zeros((H, N, N))
    for h in range(H):
        z = x @ W[h]
        for i in range(N):
            nbrs = [j for j in range(N) if A[i, j] != 0 or (self_loops and i == j)]
            e = {}
            for j in nbrs:
                s = float(a[h] @ np.concatenate([z[i], z[j]]))
                e[j] = s if s > 0 else slope * s
            m = max(e.values()) if e else 0.0
            total = sum(math.exp(v - m) for v in e.values())
            for j in nbrs:
                alpha[h, i, j] = math.exp(e[j] - m) / total
                out[h, i] += alpha[h, i, j] * z[j]
    return out, alpha


@pytest.mark.parametrize("N, H, F_in, F_out, p", [(5, 1, 3, 2, 0.4), (9, 3, 4, 5, 0.2)])
def test_gat_attention_matches_loop(N, H, F_in, F_out, p, rng, gen):
    A = _random_adjacency(N, p, rng)
    x = torch.randn(N, F_in, generator=gen, dtype=torch.float64)
    W = torch.randn(H, F_in, F_out, generator=gen, dtype=torch.float64)
    a = torch.randn(H, 2 * F_out, generator=gen, dtype=torch.float64)
    out, w = gat_attention(x, graph_mask(A), W, a)
    ref_out, ref_w = _gat_loop(x, A, W, a)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-10, atol=1e-12)


def test_gat_weights_zero_off_edges_and_rows_sum_to_one(rng, gen):
    A = _random_adjacency(12, 0.25, rng)
    mask = graph_mask(A)
    x = torch.randn(2, 12, 6, generator=gen)  # a batch of two feature sets
    W = torch.randn(4, 6, 3, generator=gen)
    a = torch.randn(4, 6, generator=gen)
    out, w = gat_attention(x, mask, W, a)
    assert out.shape == (2, 4, 12, 3) and w.shape == (2, 4, 12, 12)
    assert (w[..., ~mask] == 0).all()  # exactly zero, not just small
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 4, 12))


def test_isolated_node_without_self_loop_gets_zero():
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 1
    x = torch.randn(3, 2, generator=torch.Generator().manual_seed(1))
    out, w = gat_attention(
        x, graph_mask(A, self_loops=False), torch.ones(1, 2, 2), torch.ones(1, 4)
    )
    assert torch.equal(w[0, 2], torch.zeros(3)) and torch.equal(
        out[0, 2], torch.zeros(2)
    )
    assert not torch.isnan(out).any()


@pytest.mark.parametrize("B, N, d", [(1, 4, 3), (2, 7, 8)])
def test_edge_attention_on_complete_graph_is_dense_attention(B, N, d, gen):
    q, k, v = (torch.randn(B, N, d, generator=gen) for _ in range(3))
    A = np.ones((N, N)) - np.eye(N)  # complete graph (+ self-loops in the mask)
    out, w = edge_attention(q, k, v, A)
    ref = F.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w, torch.softmax(q @ k.transpose(-2, -1) / d**0.5, -1))


def test_edge_attention_matches_masked_reference_and_zeros(rng, gen):
    G = nx.karate_club_graph()
    N = G.number_of_nodes()
    q, k, v = (torch.randn(N, 5, generator=gen) for _ in range(3))
    out, w = edge_attention(q, k, v, G)
    mask = graph_mask(G)
    scores = (q @ k.T / 5**0.5).masked_fill(~mask, float("-inf"))
    ref = torch.softmax(scores, -1)  # oracle: -inf fill, then torch softmax
    torch.testing.assert_close(w, ref)
    torch.testing.assert_close(out, ref @ v)
    assert (w[~mask] == 0).all()
    with pytest.raises(ValueError, match="nodes"):
        edge_attention(q[:5], k[:5], v[:5], G)


@pytest.mark.parametrize("concat", [True, False])
def test_layer_concat_and_average(concat, rng, gen):
    A = _random_adjacency(6, 0.5, rng)
    layer = GraphAttentionLayer(4, 3, 2, concat=concat, bias=False, generator=gen)
    x = torch.randn(6, 4, generator=gen)
    y, w = layer(x, graph_mask(A)), layer.attention_weights(x, graph_mask(A))
    ref_out, ref_w = _gat_loop(x, A, layer.W, layer.a)
    ref = np.concatenate(list(ref_out), axis=1) if concat else ref_out.mean(0)
    assert y.shape == ((6, 6) if concat else (6, 3))
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.detach().numpy(), ref_w, rtol=1e-5, atol=1e-6)


def test_layer_init_is_reproducible_and_gat_model_runs():
    a = GraphAttentionLayer(5, 2, 3, generator=torch.Generator().manual_seed(0))
    b = GraphAttentionLayer(5, 2, 3, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a.W, b.W) and torch.equal(a.a, b.a)
    model = GAT(34, 4, 2, num_heads=2, generator=torch.Generator().manual_seed(0))
    mask = graph_mask(nx.karate_club_graph())
    logits = model(torch.eye(34), mask)
    w1, w2 = model.attention_weights(torch.eye(34), mask)
    assert (
        logits.shape == (34, 2) and w1.shape == (2, 34, 34) and w2.shape == (1, 34, 34)
    )
    logits.sum().backward()
    assert model.layer1.W.grad is not None


def test_bad_input(gen):
    x = torch.randn(4, 3, generator=gen)
    mask = torch.ones(4, 4, dtype=torch.bool)
    with pytest.raises(ValueError, match="features"):
        gat_attention(x, mask, torch.randn(1, 5, 2), torch.randn(1, 4))
    with pytest.raises(ValueError, match="a must have shape"):
        gat_attention(x, mask, torch.randn(1, 3, 2), torch.randn(1, 3))
    with pytest.raises(ValueError, match="broadcast"):
        gat_attention(x, mask[:3, :3], torch.randn(1, 3, 2), torch.randn(1, 4))
    with pytest.raises(TypeError, match="bool"):
        gat_attention(x, mask.float(), torch.randn(1, 3, 2), torch.randn(1, 4))
    with pytest.raises(ValueError, match="positive"):
        GraphAttentionLayer(3, 0)


def test_gat_attention_weights_against_the_layers_in_turn(rng, gen):
    """GAT.attention_weights: layer 1's weights on x, layer 2's on ELU of
    layer 1's output; forward's logits are layer 2's output (eval mode)."""
    A = _random_adjacency(7, 0.4, rng)
    mask = graph_mask(A)
    model = GAT(5, 3, 4, num_heads=2, dropout=0.5, generator=gen).double().eval()
    x = torch.randn(7, 5, generator=gen, dtype=torch.float64)
    w1, w2 = model.attention_weights(x, mask)
    out1, ref_w1 = _gat_loop(x, A, model.layer1.W, model.layer1.a)
    h = F.elu(torch.from_numpy(np.concatenate(list(out1), axis=1)) + model.layer1.bias)
    out2, ref_w2 = _gat_loop(h, A, model.layer2.W, model.layer2.a)
    np.testing.assert_allclose(w1.detach().numpy(), ref_w1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w2.detach().numpy(), ref_w2, rtol=1e-10, atol=1e-12)
    logits = out2.mean(0) + model.layer2.bias.detach().numpy()
    np.testing.assert_allclose(model(x, mask).detach().numpy(), logits, rtol=1e-10)
    assert w1.shape == (2, 7, 7) and w2.shape == (1, 7, 7)
    for w in (w1, w2):  # self-loops: every row has a key, so it sums to 1
        torch.testing.assert_close(w.sum(-1), torch.ones_like(w[..., 0]))
