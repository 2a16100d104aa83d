"""selfattn.efficient where mutation testing found behaviour unchecked.

Oracles: dense attention written out in float64 (softmax of the scores from
``torch.softmax``, never the library's dispatch), or a hand-computed case.
See tests/MUTATION.md.
"""

from __future__ import annotations

import re

import pytest
import torch

from selfattn.efficient import (
    LinformerSelfAttention,
    chunked_attention,
    linear_attention,
    linformer_attention,
    local_attention,
    orthogonal_random_matrix,
    performer_attention,
)
from selfattn.efficient.performer import performer_features


def _dense(q, k, v):
    """softmax(q k^T / sqrt(d)) v in float64, written out."""
    w = torch.softmax(
        q.double() @ k.double().transpose(-2, -1) / q.shape[-1] ** 0.5, -1
    )
    return w @ v.double(), w


# --- Linformer --------------------------------------------------------------


def test_linformer_module_defaults_to_one_head(gen):
    layer = LinformerSelfAttention(8, 6, 3, generator=gen)
    x = torch.randn(2, 5, 8, generator=gen)
    w = layer.attention_weights(x)
    assert w.shape == (2, 1, 5, 3)
    q, k = layer.W_q(x), layer.W_k(x)  # one head: the whole width
    _, expected = _dense(q, layer.E[:, :5] @ k, layer.E[:, :5] @ k)
    torch.testing.assert_close(w[:, 0].double(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "args, match",
    [
        ((0, 6, 3), r"^embed_dim must be positive, got embed_dim=0$"),
        ((8, 0, 3), r"^seq_len must be positive, got seq_len=0$"),
        ((8, 6, 0), r"^k_proj must be positive, got k_proj=0$"),
        ((8, 6, 3, 0), r"^num_heads must be positive, got num_heads=0$"),
    ],
)
def test_linformer_module_names_a_bad_size(args, match):
    with pytest.raises(ValueError, match=match):
        LinformerSelfAttention(*args)


@pytest.mark.parametrize(
    "x, error, match",
    [
        ([[0.0]], TypeError, r"^x must be a torch\.Tensor, got list$"),
        (torch.zeros(5, 8), ValueError, r"^x must have at least 3 dimensions"),
        (torch.zeros(1, 2, 5, 8), ValueError, r"^x must have shape \(B, T <= 6, 8\)"),
        (torch.zeros(2, 5, 4), ValueError, r"^x must have shape \(B, T <= 6, 8\)"),
        (torch.zeros(2, 7, 8), ValueError, r"^x must have shape \(B, T <= 6, 8\)"),
    ],
)
def test_linformer_module_names_a_bad_input(x, error, match, gen):
    layer = LinformerSelfAttention(8, 6, 3, generator=gen)
    with pytest.raises(error, match=match):
        layer(x)


# --- error messages of every efficient function -----------------------------

z = torch.zeros
MESSAGES = [
    (
        lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), chunk_size=0),
        ValueError,
        "chunk_size must be positive, got chunk_size=0",
    ),
    (
        lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), query_chunk_size=1.5),
        TypeError,
        "query_chunk_size must be an int, got float",
    ),
    (
        lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), chunk_size=True),
        TypeError,
        "chunk_size must be an int, got bool",
    ),
    (
        lambda: local_attention(z(3, 4), z(3, 4), z(3, 4), -1),
        ValueError,
        "radius must be non-negative, got radius=-1",
    ),
    (
        lambda: local_attention(z(3, 4), z(5, 4), z(5, 4), 1),
        ValueError,
        "local_attention (a window around each position) needs T_q == T_k, "
        "got q (3, 4) and k (5, 4)",
    ),
    (
        lambda: linear_attention(z(3, 4), z(5, 4), z(5, 4), causal=True),
        ValueError,
        "causal linear_attention needs T_q == T_k, got q (3, 4) and k (5, 4)",
    ),
    (
        lambda: performer_attention(z(3, 4), z(3, 4), z(3, 4)),
        ValueError,
        "performer_attention needs generator= (to draw a projection) or "
        "projection= (an (r, d_k) matrix); got neither",
    ),
    (
        lambda: performer_attention(z(3, 4), z(3, 4), z(3, 4), projection=z(5, 3)),
        ValueError,
        "projection must have shape (r, d_k=4), got (5, 3)",
    ),
    (
        lambda: orthogonal_random_matrix(4, 2, 3),
        TypeError,
        "generator must be a torch.Generator, got int",
    ),
    (
        lambda: performer_features([1.0], z(2, 1)),
        TypeError,
        "x must be a torch.Tensor, got list",
    ),
    (
        lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(2, 4), z(2, 5)),
        ValueError,
        "E must have shape (k_proj, T_k=5), got (2, 4)",
    ),
    (
        lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(2, 5), z(2, 5, 1)),
        ValueError,
        "F must have shape (k_proj, T_k=5), got (2, 5, 1)",
    ),
    (
        lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(2, 5), z(3, 5)),
        ValueError,
        "E (2, 5) and F (3, 5) need the same k_proj",
    ),
]


@pytest.mark.parametrize("call, error, message", MESSAGES)
def test_efficient_errors_name_the_argument(call, error, message):
    """The whole message: the argument's name, the rule and the shapes seen."""
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call()
