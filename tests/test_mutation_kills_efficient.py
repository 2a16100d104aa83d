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


# --- error messages of every efficient function -----------------------------

z = torch.zeros
MESSAGES = [
    (
        lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), B_k=0),
        ValueError,
        "B_k must be positive, got B_k=0",
    ),
    (
        lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), B_q=1.5),
        TypeError,
        "B_q must be an int, got float",
    ),
    (
        lambda: chunked_attention(z(3, 4), z(3, 4), z(3, 4), B_k=True),
        TypeError,
        "B_k must be an int, got bool",
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
        lambda: performer_attention(
            z(3, 4), z(5, 4), z(5, 4), 8, causal=True, generator=torch.Generator()
        ),
        ValueError,
        "causal performer_attention needs T_q == T_k, got q (3, 4) and k (5, 4)",
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


# --- Performer ----------------------------------------------------------------


def _performer_ref(q, k, v, W):
    """The FAVOR+ ratio written out in float64 from performer_features, with
    no stabilising constants (float64 has the range for these inputs)."""
    c = q.shape[-1] ** -0.25
    fq = performer_features(q.double() * c, W.double())  # (..., T_q, r)
    fk = performer_features(k.double() * c, W.double())  # (..., T_k, r)
    num = fq @ (fk.transpose(-2, -1) @ v.double())  # (..., T_q, d_v)
    return num / (fq @ fk.sum(-2, keepdim=True).transpose(-2, -1))


def test_performer_default_draw_is_256_float32_features(gen):
    q, k, v = (torch.randn(2, 6, 4, generator=gen) for _ in range(3))
    out = performer_attention(q, k, v, generator=torch.Generator().manual_seed(5))
    W = orthogonal_random_matrix(256, 4, torch.Generator().manual_seed(5))
    torch.testing.assert_close(out, performer_attention(q, k, v, projection=W))
    # the draw is float32 whatever the default dtype (one generator, one draw)
    default = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        q64, k64, v64 = q.double(), k.double(), v.double()
        out64 = performer_attention(
            q64, k64, v64, generator=torch.Generator().manual_seed(5)
        )
    finally:
        torch.set_default_dtype(default)
    torch.testing.assert_close(
        out64, performer_attention(q64, k64, v64, projection=W.double())
    )


def test_performer_matches_the_written_out_ratio(gen):
    """The default eps (1e-6) barely moves the ratio (denominators of order
    one after the stabilising division)."""
    q, k, v = (torch.randn(2, 3, 7, 4, generator=gen) for _ in range(3))
    W = orthogonal_random_matrix(32, 4, gen)
    out = performer_attention(q.double(), k.double(), v.double(), projection=W)
    torch.testing.assert_close(out, _performer_ref(q, k, v, W), rtol=1e-3, atol=1e-4)


def test_performer_stabilises_each_query_row_and_each_key_set(gen):
    """Float32, rows of very different norms. A long row x (|x c| = 17) has
    features of about exp(x w - |x c|^2 / 2) < exp(-90), below float32's
    range, unless each query row is divided by its own largest feature and
    each batch's keys by their own largest. Batch 0 has one long query and
    short keys, batch 1 short queries and long keys."""
    d = 4
    W = orthogonal_random_matrix(16, d, gen)
    q, k = torch.randn(2, 5, d, generator=gen), torch.randn(2, 6, d, generator=gen)
    v = torch.randn(2, 6, 3, generator=gen)
    long = 17 / d**-0.25  # |x| with |x c| = 17
    q = q / q.norm(dim=-1, keepdim=True)  # unit rows
    k = k / k.norm(dim=-1, keepdim=True)
    q[0, 0] *= long
    k[1] *= long
    out = performer_attention(q, k, v, projection=W)
    assert out.dtype == torch.float32 and torch.isfinite(out).all()
    torch.testing.assert_close(
        out.double(), _performer_ref(q, k, v, W), rtol=1e-3, atol=1e-4
    )
