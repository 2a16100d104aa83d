"""Graph attention where mutation testing found arguments unchecked.

Oracles: ``selfattn.reference.attention_loop`` (numpy, one query at a time)
with the adjacency written out as a boolean mask. See tests/MUTATION.md.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from selfattn import reference as ref
from selfattn.graph import GAT, GraphAttentionLayer, edge_attention, gat_attention
from selfattn.masks import graph_mask

PATH = [[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]]  # 0-1-2-3


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


def test_graph_attention_layer_defaults_to_one_head(gen):
    layer = GraphAttentionLayer(5, 3, generator=gen)
    x = torch.randn(4, 5, generator=gen)
    w = layer.attention_weights(x, graph_mask(PATH))
    assert w.shape == (1, 4, 4) and layer(x, graph_mask(PATH)).shape == (4, 3)


@pytest.mark.parametrize("sizes", [(0, 3, 1), (5, 0, 1), (5, 3, 0)])
def test_graph_attention_layer_names_a_bad_size(sizes):
    message = "in_dim, out_dim and num_heads must be positive, got {}, {}, {}"
    with pytest.raises(ValueError, match="^" + re.escape(message.format(*sizes)) + "$"):
        GraphAttentionLayer(*sizes)


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


@pytest.mark.parametrize("arg", ["x", "W", "a"])
def test_gat_attention_names_a_non_tensor_argument(arg):
    args = {"x": torch.zeros(4, 3), "W": torch.zeros(1, 3, 2), "a": torch.zeros(1, 4)}
    args[arg] = [[0.0]]
    with pytest.raises(TypeError, match=f"^{arg} must be a torch\\.Tensor, got list$"):
        gat_attention(args["x"], graph_mask(PATH), args["W"], args["a"])


def test_gat_attention_needs_node_rows():
    with pytest.raises(
        ValueError, match=r"^x must have at least 2 dimensions, got shape \(3\)$"
    ):
        gat_attention(
            torch.zeros(3), graph_mask(PATH), torch.zeros(1, 3, 2), torch.zeros(1, 4)
        )


@pytest.mark.parametrize(
    "x, W, a, message",
    [
        (
            torch.zeros(4, 3),
            torch.zeros(3, 2),
            torch.zeros(1, 4),
            "W must have at least 3 dimensions, got shape (3, 2)",
        ),
        (
            torch.zeros(4, 3),
            torch.zeros(1, 3, 2),
            torch.zeros(4),
            "a must have at least 2 dimensions, got shape (4)",
        ),
        (
            torch.zeros(2, 4, 3),
            torch.zeros(1, 5, 2),
            torch.zeros(1, 4),
            "x has F=3 features but W (1, 5, 2) expects 5",
        ),
        (
            torch.zeros(4, 3),
            torch.zeros(1, 3, 2),
            torch.zeros(1, 3),
            "a must have shape (H, 2F') = (1, 4), got (1, 3)",
        ),
    ],
)
def test_gat_attention_names_a_bad_shape(x, W, a, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        gat_attention(x, graph_mask(PATH), W, a)


def test_gat_attention_mask_error_shows_the_scores_shape():
    with pytest.raises(
        ValueError,
        match="^"
        + re.escape(
            "mask of shape (3, 3) does not broadcast to the scores' shape "
            "(2, 4, 4) = (..., T_q, T_k)"
        )
        + "$",
    ):
        gat_attention(
            torch.zeros(4, 3),
            torch.ones(3, 3, dtype=torch.bool),
            torch.zeros(2, 3, 2),
            torch.zeros(2, 4),
        )


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
