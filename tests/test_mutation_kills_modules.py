"""modules.py where mutation testing found behaviour unchecked: whole error
messages (they must name the argument and the shapes seen). See
tests/MUTATION.md.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from selfattn import reference as ref
from selfattn.modules import MultiHeadAttention, SelfAttention

z = torch.zeros
MHA_ONLY = (
    "from_torch supports nn.MultiheadAttention with kdim == vdim == embed_dim, "
    "add_bias_kv=False and add_zero_attn=False"
)

MESSAGES = [
    (
        lambda: MultiHeadAttention(10, 3),
        ValueError,
        "embed_dim=10 must be divisible by num_heads=3 "
        "(each head gets embed_dim // num_heads dimensions)",
    ),
    (
        lambda: MultiHeadAttention(8, 0),
        ValueError,
        "embed_dim=8 must be divisible by num_heads=0 "
        "(each head gets embed_dim // num_heads dimensions)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 5)),
        ValueError,
        "query must have shape (B, T, 8), got (2, 3, 5)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 3, 6)),
        ValueError,
        "key must have shape (B, T, 8), got (2, 3, 6)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 4, 8), z(2, 3, 4)),
        ValueError,
        "value must have shape (B, T, 8), got (2, 3, 4)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(3, 4, 8)),
        ValueError,
        "query, key, value must share the batch size and key/value the length, "
        "got query (2, 3, 8), key (3, 4, 8), value (3, 4, 8)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 4, 8), z(2, 5, 8)),
        ValueError,
        "query, key, value must share the batch size and key/value the length, "
        "got query (2, 3, 8), key (2, 4, 8), value (2, 5, 8)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(
            z(2, 3, 8), mask=z(2, 3, 3, 3, dtype=torch.bool)
        ),
        ValueError,
        "mask of shape (2, 3, 3, 3) does not broadcast to the scores' shape "
        "(2, 2, 3, 3) = (..., T_q, T_k)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(8)),
        ValueError,
        "query must have at least 3 dimensions, got shape (8)",
    ),
    (
        lambda: SelfAttention(4, 2)(z(1, 2, 3, 4)),
        ValueError,
        "x must have shape (B, T, 4), got (1, 2, 3, 4)",
    ),
    (
        lambda: MultiHeadAttention.from_torch(torch.nn.Linear(2, 2)),
        TypeError,
        "module must be torch.nn.MultiheadAttention, got Linear",
    ),
    (
        lambda: MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(4, 2, kdim=3)
        ),
        ValueError,
        MHA_ONLY,
    ),
    (
        lambda: MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(4, 2, add_bias_kv=True)
        ),
        ValueError,
        MHA_ONLY,
    ),
    (
        lambda: MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(4, 2, add_zero_attn=True)
        ),
        ValueError,
        MHA_ONLY,
    ),
]


@pytest.mark.parametrize("call, error, message", MESSAGES)
def test_module_errors_name_the_argument(call, error, message):
    """The whole message: the argument's name, the rule and the shapes seen."""
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        call()


def test_self_attention_with_bias_matches_the_numpy_reference(gen):
    """bias=True: q = x W_q^T + b_q (likewise k, v), then the row formula."""
    layer = SelfAttention(4, 3, 2, bias=True, generator=gen).double()
    with torch.no_grad():
        for lin in (layer.W_q, layer.W_k, layer.W_v):
            lin.bias.normal_(generator=gen)
    x = torch.randn(2, 5, 4, generator=gen, dtype=torch.float64)
    X = x.numpy()
    q, k, v = (
        X @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
        for lin in (layer.W_q, layer.W_k, layer.W_v)
    )
    out, w = ref.attention_rows(q, k, v)
    np.testing.assert_allclose(layer(x).detach().numpy(), out, rtol=1e-10)
    np.testing.assert_allclose(
        layer.attention_weights(x).detach().numpy(), w, rtol=1e-10
    )
