"""Bad input raises ValueError / TypeError naming the argument and the shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from selfattn import (
    MultiHeadAttention,
    SelfAttention,
    graph_mask,
    length_mask,
    masked_softmax,
    relu_weights,
    scaled_dot_product_attention,
    window_mask,
)
from selfattn import reference as ref
from selfattn.masks import from_key_padding_mask
from selfattn.positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    offset_rotation,
    sinusoidal_encoding,
)
from selfattn.transformer import TransformerDecoderBlock

z = torch.zeros
nan = float("nan")


def sdpa(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), **kw):
    """Attention on zero tensors of the given shapes (or the tensors given)."""
    q, k, v = (z(*x) if isinstance(x, tuple) else x for x in (q, k, v))
    return scaled_dot_product_attention(q, k, v, **kw)


def with_nan(*shape):
    x = z(*shape)
    x.view(-1)[0] = nan
    return x


CASES = [
    # --- q, k, v ---
    (
        lambda: sdpa(k=(2, 5, 3)),
        ValueError,
        r"q has d_k=4 but k has d_k=3.*\(2, 3, 4\)",
    ),
    (lambda: sdpa(v=(2, 4, 6)), ValueError, r"k has T_k=5 .* v has 4.*\(2, 4, 6\)"),
    (lambda: sdpa(q=(3, 3, 4)), ValueError, r"leading.*q \(3, 3, 4\), k \(2, 5, 4\)"),
    (lambda: sdpa(q=(4,)), ValueError, r"q must have at least 2 dimensions.*\(4\)"),
    (lambda: sdpa(q=[[0.0]]), TypeError, r"q must be a torch.Tensor, got list"),
    (lambda: sdpa(k=z(2, 5, 4, dtype=torch.long)), TypeError, r"k must be a floating"),
    (lambda: sdpa(v=z(2, 5, 6).double()), TypeError, r"share a dtype"),
    (
        lambda: sdpa(q=with_nan(2, 3, 4)),
        ValueError,
        r"q contains NaN \(shape \(2, 3, 4\)\)",
    ),
    (lambda: sdpa(v=with_nan(2, 5, 6)), ValueError, r"v contains NaN"),
    # --- masks given to attention ---
    (
        lambda: sdpa(mask=z(3, 4, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(3, 4\).*\(2, 3, 5\)",
    ),
    (
        lambda: sdpa(mask=z(3, 5)),
        TypeError,
        r"mask must have dtype torch.bool.*float32",
    ),
    (
        lambda: sdpa(mask=[[True]]),
        TypeError,
        r"mask must be a bool torch.Tensor, got list",
    ),
    (
        lambda: masked_softmax(z(3, 4), z(3, 4, dtype=torch.int64)),
        TypeError,
        r"mask.*int64",
    ),
    (lambda: masked_softmax(with_nan(3, 4)), ValueError, r"scores contains NaN"),
    (
        lambda: masked_softmax(torch.tensor([float("inf")])),
        ValueError,
        r"scores contains \+inf",
    ),
    (
        lambda: relu_weights(z(3, 4), z(4, 3, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(4, 3\)",
    ),
    # --- modules ---
    (
        lambda: MultiHeadAttention(10, 3),
        ValueError,
        r"embed_dim=10 .* divisible by num_heads=3",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 5)),
        ValueError,
        r"query must have shape \(B, T, 8\), got \(2, 3, 5\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 4, 8), z(2, 5, 8)),
        ValueError,
        r"key \(2, 4, 8\), value \(2, 5, 8\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), mask=z(2, 3, 4, dtype=torch.bool)),
        ValueError,
        r"mask of shape \(2, 3, 4\).*\(2, 3, 3\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), mask=z(2, 3, 3)),
        TypeError,
        r"mask must have dtype torch.bool",
    ),
    (
        lambda: SelfAttention(4, 2)(z(2, 3)),
        ValueError,
        r"x must have at least 3 dimensions.*\(2, 3\)",
    ),
    (
        lambda: SelfAttention(4, 2)(with_nan(1, 3, 4)),
        ValueError,
        r"x contains NaN|q contains NaN",
    ),
    # --- mask builders ---
    (
        lambda: window_mask(5, -1),
        ValueError,
        r"radius must be non-negative, got radius=-1",
    ),
    (
        lambda: graph_mask(np.ones((3, 4))),
        ValueError,
        r"adjacency must be a square.*\(3, 4\)",
    ),
    (lambda: length_mask([2, 7], 5), ValueError, r"lengths must lie in \[0, T=5\]"),
    (lambda: length_mask([[1.0]], 5), ValueError, r"lengths must be a 1-D integer"),
    (
        lambda: length_mask(torch.tensor([True, False]), 3),
        ValueError,
        r"^lengths must be a 1-D integer sequence \(B,\), got shape \(2\) and "
        r"dtype torch.bool$",
    ),
    (
        lambda: from_key_padding_mask(z(2, 3)),
        TypeError,
        r"key_padding_mask must be a bool",
    ),
    # --- positional ---
    (
        lambda: sinusoidal_encoding(4, 7),
        ValueError,
        r"dim must be a positive even integer.*dim=7",
    ),
    (lambda: offset_rotation(1, 5), ValueError, r"dim=5"),
    (
        lambda: SinusoidalPositionalEncoding(8)(z(2, 3, 6)),
        ValueError,
        r"x must have width 8.*\(2, 3, 6\)",
    ),
    (
        lambda: LearnedPositionalEmbedding(128, 4)(z(1, 129, 4)),
        ValueError,
        r"T=129 exceeds max_len=128",
    ),
    (
        lambda: LearnedPositionalEmbedding(8, 4)(z(1, 3, 5)),
        ValueError,
        r"width 4.*\(1, 3, 5\)",
    ),
    (lambda: apply_rotary(z(2, 5, 7)), ValueError, r"even last dimension.*\(2, 5, 7\)"),
    (
        lambda: apply_rotary(z(5, 4), torch.arange(4)),
        ValueError,
        r"positions must end with T=5.*\(4\)",
    ),
    (lambda: apply_rotary(with_nan(5, 4)), ValueError, r"x contains NaN"),
    # --- numpy reference ---
    (
        lambda: ref.attention_rows(
            np.zeros((3, 4)), np.zeros((5, 2)), np.zeros((5, 2))
        ),
        ValueError,
        r"Q has d_k=4 but K has d_k=2",
    ),
    (
        lambda: ref.attention_loop(
            np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((4, 2))
        ),
        ValueError,
        r"K has T_k=5 rows but V has 4",
    ),
    (
        lambda: ref.attention_rows(
            np.full((3, 4), nan), np.zeros((5, 4)), np.zeros((5, 2))
        ),
        ValueError,
        r"Q contains NaN",
    ),
    (
        lambda: ref.attention_rows(
            np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((5, 2)), np.ones((3, 5))
        ),
        TypeError,
        r"mask must be boolean",
    ),
    (
        lambda: ref.attention_rows(
            np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((5, 2)), np.ones((5, 3), bool)
        ),
        ValueError,
        r"mask of shape \(5, 3\)",
    ),
    (
        lambda: ref.self_attention_columns(
            np.zeros((3, 4)), np.zeros((2, 3)), np.zeros((2, 5)), np.zeros((2, 3))
        ),
        ValueError,
        r"W_k must have D=3 columns.*\(2, 5\)",
    ),
    (
        lambda: ref.self_attention_columns(
            np.zeros((3, 4)),
            np.zeros((2, 3)),
            np.zeros((2, 3)),
            np.zeros((2, 3)),
            normalize="max",
        ),
        ValueError,
        r"normalize must be",
    ),
    # the decoder's cache is a KVCache, not MultiHeadAttention.step's (k, v)
    (
        lambda: TransformerDecoderBlock(4, 2, cross_attention=False).step(
            z(1, 1, 4), cache=(z(1, 2, 1, 2), z(1, 2, 1, 2))
        ),
        TypeError,
        r"cache must be the KVCache that a previous step returned, or None, got tuple",
    ),
    # flags and the scale: a string or a bool would read as something else
    (lambda: sdpa(causal="no"), TypeError, r"causal must be True or False, got 'no'"),
    (lambda: sdpa(scale=True), TypeError, r"scale must be a number or None, got True"),
    (lambda: sdpa(scale="2"), TypeError, r"scale must be a number or None"),
    (lambda: window_mask(4, 1, causal=1), TypeError, r"causal must be True or False"),
    (
        lambda: SelfAttention(4, 3)(z(1, 2, 4), causal="yes"),
        TypeError,
        r"causal must be True or False",
    ),
]


@pytest.mark.parametrize("call, error, match", CASES)
def test_bad_input_raises_helpful_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_relu_weights_rejects_positive_infinity_instead_of_returning_nan():
    from selfattn.attention import relu_weights

    scores = torch.tensor([[1.0, float("inf"), 0.5]])
    with pytest.raises(
        ValueError,
        match=r"^scores contain \+inf \(shape \(1, 3\)\); ReLU normalisation would "
        r"divide inf by inf\. Mask such entries or clamp the scores\.$",
    ):
        relu_weights(scores)
    w = relu_weights(torch.tensor([[1.0, float("-inf"), 3.0]]))
    assert torch.isfinite(w).all() and torch.allclose(w.sum(), torch.tensor(1.0))


# Every size argument's bool, float, zero and negative: tests/lib/test_bad_sizes.py.
