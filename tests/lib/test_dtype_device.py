"""Every public attention function: any floating dtype, and no stray device.

The dtype matrix runs each function in float16, bfloat16, float32 and float64
and compares with the float64 result at a tolerance fitting the dtype; the
output keeps the input's dtype. Device propagation is checked on PyTorch's
``meta`` device (shapes and dtypes, no values): a function that creates a
tensor on the CPU while its input lives elsewhere fails there, as it would on
a GPU or Apple's MPS, when the two meet in an elementwise operation, ``where``,
``masked_fill`` or ``cat``. A limit of this check, measured with torch 2.13:
``meta @ cpu`` and indexing a meta tensor with a CPU mask do not raise, so a
stray CPU tensor that meets the input only in a matrix product escapes it
(``test_meta_does_not_catch_a_cpu_matmul_operand`` records this). (The
checks that need values are skipped on ``meta``.)
"""

from __future__ import annotations

import pytest
import torch
from oracles import softmax_oracle

from selfattn import masked_softmax, scaled_dot_product_attention
from selfattn.attention import attend
from selfattn.convolution import conv2d_as_attention, relative_position_mask
from selfattn.efficient import (
    chunked_attention,
    linear_attention,
    linformer_attention,
    local_attention,
    orthogonal_random_matrix,
    performer_attention,
)
from selfattn.graph import edge_attention, gat_attention
from selfattn.masks import window_mask
from selfattn.positional import apply_rotary, sinusoidal_encoding
from selfattn.scoring import cosine_score, dot_score, scaled_dot_score

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
TOL = {torch.float16: 2e-2, torch.bfloat16: 8e-2, torch.float32: 1e-5}
B, H, T, D = 2, 2, 12, 8


def _inputs(dtype, device="cpu"):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, H, T, D, generator=g, dtype=torch.float64) for _ in "qkv")
    return [t.to(device=device, dtype=dtype) for t in (q, k, v)]


def _projections(dtype, device="cpu"):
    g = torch.Generator().manual_seed(1)
    E = torch.randn(4, T, generator=g, dtype=torch.float64) / T**0.5
    return E.to(device=device, dtype=dtype)


def _features(dtype, device="cpu"):
    """One float64 draw of Performer's features, cast: the same in every dtype."""
    g = torch.Generator().manual_seed(2)
    W = orthogonal_random_matrix(16, D, generator=g, dtype=torch.float64)
    return W.to(device=device, dtype=dtype)


FUNCTIONS = {
    "scaled_dot_product_attention": lambda q, k, v: scaled_dot_product_attention(
        q, k, v, window_mask(T, 2, device=q.device)
    )[0],
    "sdpa_weights": lambda q, k, v: scaled_dot_product_attention(q, k, v, causal=True)[
        1
    ],
    "attend (the modules' path)": lambda q, k, v: attend(
        q, k, v, window_mask(T, 2, device=q.device)
    ),
    "masked_softmax": lambda q, k, v: masked_softmax(
        q @ k.transpose(-2, -1), window_mask(T, 1, device=q.device)
    ),
    "local_attention": lambda q, k, v: local_attention(q, k, v, 3),
    "chunked_attention": lambda q, k, v: chunked_attention(
        q, k, v, causal=True, B_k=5, B_q=7
    ),
    "linear_attention": lambda q, k, v: linear_attention(q, k, v, causal=True),
    "performer_attention": lambda q, k, v: performer_attention(
        q, k, v, projection=_features(q.dtype, q.device)
    ),
    "linformer_attention": lambda q, k, v: linformer_attention(
        q, k, v, _projections(q.dtype, q.device), _projections(q.dtype, q.device)
    ),
    "apply_rotary": lambda q, k, v: apply_rotary(q),
    "conv2d_as_attention": lambda q, k, v: conv2d_as_attention(
        q[:, :, :, :4].reshape(B, 2, 6, 8), k[0, :, :9, :2].reshape(2, 2, 3, 3)
    )[0],
}


def _matches_float64(name, out, expected, dtype, *, relative=False):
    """``out`` keeps ``dtype``, is finite and equals the float64 ``expected``
    at the dtype's tolerance (times the output's scale when ``relative``)."""
    assert out.dtype == dtype, f"{name} returned {out.dtype} for {dtype} input"
    assert torch.isfinite(out).all(), f"{name} gave non-finite values in {dtype}"
    if dtype != torch.float64:
        tol = TOL[dtype]
        if relative:
            tol *= max(1.0, float(expected.abs().max()))
        torch.testing.assert_close(out.double(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_dtype_matches_float64(name, dtype):
    fn = FUNCTIONS[name]
    expected = fn(*_inputs(torch.float64))
    _matches_float64(name, fn(*_inputs(dtype)), expected, dtype)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_output_stays_on_the_input_device(name):
    """On ``meta`` (no values), a CPU tensor made inside the function would
    meet a meta tensor and raise, as it would beside a GPU or MPS input."""
    q, k, v = _inputs(torch.float32, device="meta")
    out = FUNCTIONS[name](q, k, v)
    assert out.device.type == "meta"


def test_orthogonal_random_matrix_in_half_precision():
    """QR has no float16 kernel: the draw is made in float32 and cast."""
    for dtype in (torch.float16, torch.bfloat16):
        W = orthogonal_random_matrix(
            12, D, generator=torch.Generator().manual_seed(0), dtype=dtype
        )
        assert W.dtype == dtype and torch.isfinite(W).all()


def test_masks_and_tables_follow_the_requested_device():
    assert relative_position_mask(3, 4, (1, 0), device="meta").device.type == "meta"
    assert window_mask(5, 1, device="meta").device.type == "meta"
    assert sinusoidal_encoding(5, 8, device="meta").device.type == "meta"


def test_masked_softmax_broadcast_mask_on_any_dim():
    """A lower-rank mask broadcasts on every ``dim`` (it raised IndexError)."""
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(2, 3, 4, generator=g)
    mask = torch.tensor([[True, False, True, True]] * 3)  # (3, 4)
    for dim in (0, 1, -1):
        w = masked_softmax(scores, mask, dim=dim)
        torch.testing.assert_close(w, softmax_oracle(scores, mask, dim=dim))


def test_performer_draws_on_the_generators_device_and_moves_the_result():
    """A CPU generator serves inputs elsewhere (here: meta); values as on the CPU."""
    from selfattn.efficient import orthogonal_random_matrix, performer_attention

    g = torch.Generator().manual_seed(0)
    on_meta = orthogonal_random_matrix(8, 4, generator=g, device="meta")
    assert on_meta.device.type == "meta" and on_meta.shape == (8, 4)
    q = torch.randn(2, 5, 4, device="meta")
    out = performer_attention(q, q, q, generator=torch.Generator().manual_seed(0))
    assert out.device.type == "meta" and out.shape == (2, 5, 4)
    a = orthogonal_random_matrix(8, 4, generator=torch.Generator().manual_seed(1))
    b = orthogonal_random_matrix(
        8, 4, generator=torch.Generator().manual_seed(1), device="cpu"
    )
    assert torch.equal(a, b)


def test_performer_draws_the_same_features_in_every_dtype():
    """A generator in a given state gives one projection (drawn in float32,
    then cast), so the estimate differs across dtypes by rounding only."""
    q, k, v = _inputs(torch.float64)
    out = performer_attention(q, k, v, 16, generator=torch.Generator().manual_seed(3))
    W = orthogonal_random_matrix(16, D, generator=torch.Generator().manual_seed(3))
    assert W.dtype == torch.float32
    torch.testing.assert_close(
        out, performer_attention(q, k, v, projection=W.double()), rtol=0, atol=0
    )
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        low = performer_attention(
            *(t.to(dtype) for t in (q, k, v)),
            16,
            generator=torch.Generator().manual_seed(3),
        )
        tol = TOL[dtype]
        torch.testing.assert_close(low.double(), out, rtol=tol, atol=tol)


# --- modules, scoring and graph functions: the same matrix ----------------
# Each is built once in float64 from a seeded generator, then copied and cast
# (``module.to(dtype)``) with its input, as a user would; the output must keep
# the dtype and match the float64 output at the dtype's tolerance.


def _modules():
    from selfattn.graph import GAT, GraphAttentionLayer
    from selfattn.modules import MultiHeadAttention, SelfAttention
    from selfattn.scoring import AdditiveScore, BilinearScore
    from selfattn.transformer import TransformerEncoderBlock

    def g(seed):
        return torch.Generator().manual_seed(seed)

    ring = torch.roll(torch.eye(T, dtype=torch.bool), 1, dims=1)  # (T, T)
    ring = ring | ring.T | torch.eye(T, dtype=torch.bool)
    return {
        "SelfAttention": (SelfAttention(D, 4, generator=g(0)), lambda m, x: m(x)),
        "MultiHeadAttention (causal)": (
            MultiHeadAttention(D, 2, generator=g(1)),
            lambda m, x: m(x, causal=True),
        ),
        "TransformerEncoderBlock": (
            TransformerEncoderBlock(D, 2, generator=g(2)),
            lambda m, x: m(x, window_mask(T, 2, device=x.device)),
        ),
        "AdditiveScore": (AdditiveScore(D, D, 5, generator=g(3)), lambda m, x: m(x, x)),
        "BilinearScore": (BilinearScore(D, D, generator=g(4)), lambda m, x: m(x, x)),
        "GraphAttentionLayer": (
            GraphAttentionLayer(D, 3, 2, generator=g(5)),
            lambda m, x: m(x[0], ring.to(x.device)),
        ),
        "GAT": (
            GAT(D, 3, 2, 2, generator=g(6)),
            lambda m, x: m(x[0], ring.to(x.device)),
        ),
    }


MODULES = sorted(_modules())


def _module_input(dtype, device="cpu"):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    return x.to(device=device, dtype=dtype)


@torch.no_grad()
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", MODULES)
def test_every_module_in_every_dtype_matches_float64(name, dtype):
    module, call = _modules()[name]
    module = module.double().eval()
    expected = call(module, _module_input(torch.float64))
    out = call(module.to(dtype), _module_input(dtype))
    _matches_float64(name, out, expected, dtype, relative=True)


@torch.no_grad()
@pytest.mark.parametrize("name", MODULES)
def test_every_module_stays_on_the_input_device(name):
    module, call = _modules()[name]
    out = call(module.to("meta").eval(), _module_input(torch.float32, "meta"))
    assert out.device.type == "meta"


SCORING_AND_GRAPH = {
    "dot_score": lambda q, k, v: dot_score(q, k),
    "scaled_dot_score": lambda q, k, v: scaled_dot_score(q, k),
    "cosine_score": lambda q, k, v: cosine_score(q, k),
    "edge_attention": lambda q, k, v: edge_attention(
        q, k, v, torch.ones(T, T).triu(1).to(q.device)
    )[0],
    "gat_attention": lambda q, k, v: gat_attention(
        q[0, 0], window_mask(T, 1, device=q.device), k[0, :, :D, :3], v[0, :, 0, :6]
    )[0],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(SCORING_AND_GRAPH))
def test_scoring_and_graph_functions_in_every_dtype(name, dtype):
    fn = SCORING_AND_GRAPH[name]
    expected = fn(*_inputs(torch.float64))
    _matches_float64(name, fn(*_inputs(dtype)), expected, dtype, relative=True)
    meta = fn(*_inputs(torch.float32, device="meta"))
    assert meta.device.type == "meta"


def test_meta_does_not_catch_a_cpu_matmul_operand():
    """The limit stated at the top: if torch starts to raise here, the device
    checks above got stronger and this note can go."""
    m, c = torch.randn(3, 4, device="meta"), torch.randn(3, 4)
    assert (m @ c.T).device.type == "meta"
    with pytest.raises(RuntimeError):
        m + c
