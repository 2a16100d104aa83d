"""selfattn.graph against independent oracles.

Oracles: a nested-loop GAT (Velickovic et al., 2018, eqs. 1-4) in float64;
``selfattn.reference.attention_loop`` (numpy, one query at a time) and
PyTorch's own attention, with the adjacency written out as a boolean mask;
the loop over a batch of graphs; hand-computed cases for the defaults,
dropout and initialisation.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from oracles import softmax_oracle

from selfattn import reference as ref
from selfattn.graph import GAT, GraphAttentionLayer, edge_attention, gat_attention
from selfattn.masks import graph_mask

PATH = [[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]]  # 0-1-2-3


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


# --- gat_attention ------------------------------------------------------------


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


def test_gat_attention_takes_a_mask_per_graph_of_a_batch(gen):
    """x (B, N, F) with one mask per graph, (B, 1, N, N): each graph of the
    batch is attended along its own edges (the loop over the batch is the
    oracle)."""
    x = torch.randn(3, 4, 5, generator=gen)
    W, a = torch.randn(2, 5, 2, generator=gen), torch.randn(2, 4, generator=gen)
    masks = torch.stack(
        [graph_mask(PATH), graph_mask(np.ones((4, 4))), torch.eye(4, dtype=torch.bool)]
    )
    out, w = gat_attention(x, masks[:, None], W, a)
    assert out.shape == (3, 2, 4, 2) and w.shape == (3, 2, 4, 4)
    for b in range(3):
        out_b, w_b = gat_attention(x[b], masks[b], W, a)
        torch.testing.assert_close(out[b], out_b)
        torch.testing.assert_close(w[b], w_b)


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


@pytest.mark.parametrize("arg", ["x", "W", "a"])
def test_gat_attention_names_a_non_tensor_argument(arg):
    args = {"x": torch.zeros(4, 3), "W": torch.zeros(1, 3, 2), "a": torch.zeros(1, 4)}
    args[arg] = [[0.0]]
    with pytest.raises(TypeError, match=rf"\b{arg} must\b.*\blist\b"):
        gat_attention(args["x"], graph_mask(PATH), args["W"], args["a"])


def test_gat_attention_needs_node_rows():
    with pytest.raises(ValueError, match=r"\bx must\b.*\bshape \(3\)"):
        gat_attention(
            torch.zeros(3), graph_mask(PATH), torch.zeros(1, 3, 2), torch.zeros(1, 4)
        )


@pytest.mark.parametrize(
    "x, W, a, match",
    [
        (
            torch.zeros(4, 3),
            torch.zeros(3, 2),
            torch.zeros(1, 4),
            r"\bW must\b.*\bshape \(3, 2\)",
        ),
        (
            torch.zeros(4, 3),
            torch.zeros(1, 3, 2),
            torch.zeros(4),
            r"\ba must\b.*\bshape \(4\)",
        ),
        (
            torch.zeros(2, 4, 3),
            torch.zeros(1, 5, 2),
            torch.zeros(1, 4),
            r"\bx has F=3\b.*\bW \(1, 5, 2\) expects 5\b",
        ),
        (
            torch.zeros(4, 3),
            torch.zeros(1, 3, 2),
            torch.zeros(1, 3),
            r"\ba must\b.*\(1, 4\), got \(1, 3\)",
        ),
    ],
)
def test_gat_attention_names_a_bad_shape(x, W, a, match):
    """The argument's name and the shapes seen (and expected)."""
    with pytest.raises(ValueError, match=match):
        gat_attention(x, graph_mask(PATH), W, a)


def test_gat_attention_mask_error_shows_the_scores_shape():
    with pytest.raises(ValueError, match=r"\bmask of shape \(3, 3\).*\(2, 4, 4\)"):
        gat_attention(
            torch.zeros(4, 3),
            torch.ones(3, 3, dtype=torch.bool),
            torch.zeros(2, 3, 2),
            torch.zeros(2, 4),
        )


# --- edge_attention -----------------------------------------------------------


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
    expected = softmax_oracle(q @ k.T / 5**0.5, mask)
    torch.testing.assert_close(w, expected)
    torch.testing.assert_close(out, expected @ v)
    assert (w[~mask] == 0).all()
    with pytest.raises(ValueError, match="nodes"):
        edge_attention(q[:5], k[:5], v[:5], G)


def test_edge_attention_without_self_loops_matches_the_loop(gen):
    q, k, v = (torch.randn(4, 3, generator=gen, dtype=torch.float64) for _ in "qkv")
    out, w = edge_attention(q, k, v, PATH, self_loops=False)
    mask = np.array(PATH) != 0  # no diagonal: a node may not attend to itself
    out_ref, w_ref = ref.attention_loop(q.numpy(), k.numpy(), v.numpy(), mask)
    np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.numpy(), out_ref, rtol=1e-12, atol=1e-15)
    assert torch.all(w.diagonal() == 0)


def test_edge_attention_with_self_loops_matches_the_loop(gen):
    q, k, v = (torch.randn(2, 4, 3, generator=gen, dtype=torch.float64) for _ in "qkv")
    out, w = edge_attention(q, k, v, PATH, scale=0.7)
    mask = (np.array(PATH) != 0) | np.eye(4, dtype=bool)
    out_ref, w_ref = ref.attention_loop(
        q.numpy(), k.numpy(), v.numpy(), mask, scale=0.7
    )
    np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.numpy(), out_ref, rtol=1e-12, atol=1e-15)


def test_edge_attention_moves_the_mask_to_the_input_device():
    """The adjacency is a Python list (made on the CPU); the input is on meta."""
    q = torch.empty(2, 4, 3, device="meta")
    out, w = edge_attention(q, q, q, PATH)
    assert out.device.type == "meta" and w.shape == (2, 4, 4)


# --- GraphAttentionLayer ------------------------------------------------------


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


def test_layer_passes_its_negative_slope_on(rng, gen):
    """A slope other than the default 0.2 reaches the LeakyReLU of eq. 1."""
    A = _random_adjacency(6, 0.5, rng)
    layer = GraphAttentionLayer(4, 3, 2, negative_slope=0.7, generator=gen)
    x = torch.randn(6, 4, generator=gen)
    _, ref_w = _gat_loop(x, A, layer.W, layer.a, slope=0.7)
    w = layer.attention_weights(x, graph_mask(A))
    np.testing.assert_allclose(w.detach().numpy(), ref_w, rtol=1e-5, atol=1e-6)


def test_graph_attention_layer_defaults_to_one_head(gen):
    layer = GraphAttentionLayer(5, 3, generator=gen)
    x = torch.randn(4, 5, generator=gen)
    w = layer.attention_weights(x, graph_mask(PATH))
    assert w.shape == (1, 4, 4) and layer(x, graph_mask(PATH)).shape == (4, 3)


def test_graph_attention_layer_average_has_a_bias_of_one_head_width(gen):
    """concat=False averages H heads: output and bias are F' wide, not H F'."""
    layer = GraphAttentionLayer(5, 3, 2, concat=False, generator=gen)
    with torch.no_grad():
        layer.bias.copy_(torch.tensor([1.0, 2.0, 3.0]))
    x = torch.randn(4, 5, generator=gen)
    heads, _ = gat_attention(x, graph_mask(PATH), layer.W, layer.a)
    out = layer(x, graph_mask(PATH))
    torch.testing.assert_close(out, heads.mean(0) + torch.tensor([1.0, 2.0, 3.0]))


def test_graph_attention_layer_without_bias_learns_only_w_and_a(gen):
    layer = GraphAttentionLayer(5, 3, 2, bias=False, generator=gen)
    assert layer.bias is None
    assert sorted(name for name, _ in layer.named_parameters()) == ["W", "a"]


def test_graph_attention_layer_is_glorot_uniform():
    """W ~ U(-b, b), b = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010):
    fan_in = F, fan_out = F' for each head's W; a is a (2F', 1) vector, so
    its bound is sqrt(6 / (2F' + 1)). Drawn values fill the interval."""
    F_in, F_out, H = 40, 2, 64  # small F': a's bound differs from 6/(2F'+2)'s
    layer = GraphAttentionLayer(F_in, F_out, H, generator=torch.Generator())
    for p, bound in (
        (layer.W, math.sqrt(6 / (F_in + F_out))),
        (layer.a, math.sqrt(6 / (2 * F_out + 1))),
    ):
        assert p.min() >= -bound and p.max() <= bound
        assert p.min() < -0.95 * bound and p.max() > 0.95 * bound
        assert abs(p.mean()) < 0.1 * bound  # symmetric about 0


def test_gat_attention_dropout_acts_in_training_only():
    """graph.py: `heads = self.drop(weights) @ ...` in train mode."""
    g = torch.Generator().manual_seed(0)
    layer = GraphAttentionLayer(4, 3, num_heads=2, dropout=0.5, generator=g)
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    mask = torch.ones(6, 6, dtype=torch.bool)
    layer.eval()
    eval_out = layer(x, mask)
    torch.testing.assert_close(layer(x, mask), eval_out)  # eval: deterministic
    layer.train()
    torch.manual_seed(0)
    train_out = layer(x, mask)
    assert not torch.allclose(train_out, eval_out), "dropout had no effect"
    layer.drop.p = 0.0
    torch.testing.assert_close(layer(x, mask), eval_out)  # p = 0: no change


@pytest.mark.parametrize(
    "sizes, name",
    [((0, 3, 1), "in_dim"), ((5, 0, 1), "out_dim"), ((5, 3, 0), "num_heads")],
)
def test_graph_attention_layer_names_a_bad_size(sizes, name):
    with pytest.raises(ValueError, match=rf"^{name} must be positive, got {name}=0$"):
        GraphAttentionLayer(*sizes)


# --- GAT ----------------------------------------------------------------------


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


def test_gat_passes_its_dropout_to_both_layers():
    model = GAT(5, 3, 4, num_heads=2, dropout=0.3)
    assert model.layer1.drop.p == model.layer2.drop.p == model.drop.p == 0.3


def test_gat_defaults_four_heads_and_no_dropout():
    """The defaults: 4 heads in layer 1 (and 1 in layer 2), dropout 0 (so a
    model in training mode computes what it computes in eval mode)."""
    model = GAT(5, 3, 2, generator=torch.Generator().manual_seed(0))
    mask = graph_mask(PATH)
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    w1, w2 = model.attention_weights(x, mask)
    assert w1.shape == (4, 4, 4) and w2.shape == (1, 4, 4)
    model.train()
    torch.manual_seed(0)  # whatever the global RNG holds, no dropout draws
    train_out = model(x, mask)
    torch.testing.assert_close(train_out, model.eval()(x, mask))


def test_gat_draws_every_layer_from_its_generator():
    """Two models from equal generators are equal, whatever the global RNG."""
    torch.manual_seed(1)
    a = GAT(5, 3, 2, num_heads=2, generator=torch.Generator().manual_seed(7))
    torch.manual_seed(2)
    b = GAT(5, 3, 2, num_heads=2, generator=torch.Generator().manual_seed(7))
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q), name


def test_gat_applies_its_dropout_to_the_attention_of_both_layers():
    """dropout=1.0 drops every attention weight of both layers in training, so
    each layer outputs its bias alone: layer 1 -> ELU(b1), layer 2 -> b2."""
    model = GAT(5, 3, 2, num_heads=2, dropout=1.0, generator=torch.Generator())
    with torch.no_grad():
        model.layer1.bias.copy_(torch.arange(6.0))
        model.layer2.bias.copy_(torch.tensor([0.5, -0.5]))
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    out = model.train()(x, graph_mask(PATH))
    torch.testing.assert_close(out, torch.tensor([[0.5, -0.5]]).expand(4, 2))
