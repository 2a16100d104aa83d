"""The library on a GPU: every module, the decoder block and its K/V cache on
CUDA against the CPU, in float64 and float32.

Each module is built once on the CPU in float64 from a seeded generator; a copy
is moved to the device and cast (``module.to(device, dtype)``) with its input,
as a learner does in Colab. The device's output must stay on the device, keep
the dtype and equal the CPU's float64 output: to rounding in float64, at
float32's tolerance in float32 (TF32 is switched off for the test, so the GPU's
float32 products keep float32's precision). Greedy decoding must pick the same
tokens, and cached decoding on the device must equal the whole prefix there.

Skipped where ``torch.cuda.is_available()`` is false, as in the course's CI.
``SELFATTN_TEST_DEVICE=cpu`` runs the same comparisons with the CPU as the
"device", to show that the file runs where no GPU is.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch

from selfattn import MultiHeadAttention, SelfAttention, TransformerEncoderBlock
from selfattn.attention import scaled_dot_product_attention
from selfattn.efficient import chunked_attention
from selfattn.graph import GAT, GraphAttentionLayer
from selfattn.masks import causal_mask, length_mask, window_mask
from selfattn.positional import LearnedPositionalEmbedding
from selfattn.scoring import AdditiveScore, BilinearScore
from selfattn.seq2seq import BahdanauSeq2Seq, EncoderDecoderTransformer
from selfattn.transformer import TransformerDecoderBlock
from selfattn.vision import ViT

DEVICE = os.environ.get("SELFATTN_TEST_DEVICE", "cuda")
pytestmark = pytest.mark.skipif(
    DEVICE == "cuda" and not torch.cuda.is_available(),
    reason="no CUDA device (torch.cuda.is_available() is False)",
)
DTYPES = [torch.float64, torch.float32]
TOL = {torch.float64: 1e-10, torch.float32: 1e-4}  # times the output's scale
B, T, T_k, D = 2, 6, 5, 8


@pytest.fixture(autouse=True)
def no_tf32():
    """float32 products in float32 (TF32 keeps only 10 bits of the mantissa)."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def inputs(*shapes, seed=0):
    gen = g(seed)
    return [torch.randn(*s, generator=gen, dtype=torch.float64) for s in shapes]


x, memory = inputs((B, T, D), (B, T_k, D))
images = inputs((B, 1, 8, 8), seed=1)[0]
src = torch.tensor([[3, 4, 5, 6, 7], [8, 3, 4, 0, 0]])
tgt = torch.tensor([[1, 7, 6, 5], [1, 4, 3, 8]])
ring = torch.roll(torch.eye(T, dtype=torch.bool), 1, dims=1)
ring = ring | ring.T | torch.eye(T, dtype=torch.bool)  # (T, T): a cycle graph
pad = length_mask([T_k, 3], T_k)  # (B, 1, T_k)

# name: (module built on the CPU, call(module, *tensors), the tensors)
CASES = {
    "SelfAttention": (SelfAttention(D, 4, generator=g(0)), lambda m, a: m(a), [x]),
    "MultiHeadAttention (cross, padded)": (
        MultiHeadAttention(D, 2, generator=g(1)),
        lambda m, a, b, p: m(a, b, b, mask=p),
        [x, memory, pad],
    ),
    "MultiHeadAttention (causal)": (
        MultiHeadAttention(D, 2, generator=g(2)),
        lambda m, a: m(a, causal=True),
        [x],
    ),
    "TransformerEncoderBlock": (
        TransformerEncoderBlock(D, 2, generator=g(3)),
        lambda m, a, w: m(a, w),
        [x, window_mask(T, 2)],
    ),
    "TransformerDecoderBlock": (
        TransformerDecoderBlock(D, 2, generator=g(4)),
        lambda m, a, b, p: m(a, b, memory_mask=p),
        [x, memory, pad],
    ),
    "TransformerDecoderBlock (no cross-attention)": (
        TransformerDecoderBlock(D, 2, cross_attention=False, generator=g(5)),
        lambda m, a: m(a),
        [x],
    ),
    "AdditiveScore": (
        AdditiveScore(D, D, 5, generator=g(7)),
        lambda m, a: m(a, a),
        [x],
    ),
    "BilinearScore": (BilinearScore(D, D, generator=g(8)), lambda m, a: m(a, a), [x]),
    "GraphAttentionLayer": (
        GraphAttentionLayer(D, 3, 2, generator=g(9)),
        lambda m, a, r: m(a[0], r),
        [x, ring],
    ),
    "GAT": (GAT(D, 3, 2, 2, generator=g(10)), lambda m, a, r: m(a[0], r), [x, ring]),
    "LearnedPositionalEmbedding": (
        LearnedPositionalEmbedding(T, D, generator=g(11)),
        lambda m, a: m(a),
        [x],
    ),
    "ViT": (
        ViT(8, 4, 1, 3, embed_dim=8, depth=1, num_heads=2, generator=g(12)),
        lambda m, im: m(im),
        [images],
    ),
    "EncoderDecoderTransformer": (
        EncoderDecoderTransformer(9, 9, embed_dim=D, num_layers=2, generator=g(14)),
        lambda m, s, t: m(s, t),
        [src, tgt],
    ),
    "BahdanauSeq2Seq": (
        BahdanauSeq2Seq(9, 9, embed_dim=6, hidden_dim=5, generator=g(15)),
        lambda m, s, t: m(s, t),
        [src, tgt],
    ),
}


def on(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``t`` on the device; floating tensors cast to ``dtype``."""
    return t.to(DEVICE, dtype) if t.is_floating_point() else t.to(DEVICE)


def assert_matches(out: torch.Tensor, expected: torch.Tensor, dtype) -> None:
    assert out.device.type == torch.device(DEVICE).type, out.device
    assert out.dtype == dtype
    tol = TOL[dtype] * max(1.0, float(expected.abs().max()))
    torch.testing.assert_close(out.cpu().double(), expected, rtol=tol, atol=tol)


@torch.no_grad()
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_module_on_the_device_matches_the_cpu(name, dtype):
    module, call, tensors = CASES[name]
    module = module.double().eval()
    expected = call(module, *tensors)  # CPU, float64
    moved = copy.deepcopy(module).to(DEVICE, dtype)
    assert_matches(call(moved, *(on(t, dtype) for t in tensors)), expected, dtype)


@torch.no_grad()
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_attention_functions_on_the_device(dtype):
    q, k, v = inputs((B, 2, T, D), (B, 2, T_k, D), (B, 2, T_k, D), seed=2)
    mask = causal_mask(T, T_k)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    out_d, w_d = scaled_dot_product_attention(
        on(q, dtype), on(k, dtype), on(v, dtype), mask.to(DEVICE)
    )
    assert_matches(out_d, out, dtype)
    assert_matches(w_d, w, dtype)
    tiled = chunked_attention(on(q, dtype), on(k, dtype), on(v, dtype), B_q=2, B_k=2)
    assert_matches(tiled, scaled_dot_product_attention(q, k, v)[0], dtype)


@torch.no_grad()
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("cross", [True, False])
def test_cached_decoding_on_the_device(dtype, cross):
    """Step by step with the K/V cache on the device == the whole prefix on
    the device == the CPU in float64."""
    block = TransformerDecoderBlock(D, 2, cross_attention=cross, generator=g(16))
    block = block.double().eval()
    mem = memory if cross else None
    expected = block(x, mem)  # CPU, float64, all positions at once
    block = block.to(DEVICE, dtype)
    x_d, mem_d = on(x, dtype), None if mem is None else on(mem, dtype)
    steps, cache = [], None
    for t in range(T):
        out, cache = block.step(x_d[:, t : t + 1], mem_d if t == 0 else None, cache)
        steps.append(out)
    assert cache.k.device.type == torch.device(DEVICE).type
    assert_matches(torch.cat(steps, dim=1), expected, dtype)
    assert_matches(block(x_d, mem_d), expected, dtype)


@torch.no_grad()
def test_greedy_decoding_picks_the_same_tokens_on_the_device():
    for model in (
        EncoderDecoderTransformer(9, 9, embed_dim=D, num_layers=2, generator=g(17)),
        BahdanauSeq2Seq(9, 9, embed_dim=6, hidden_dim=5, generator=g(18)),
    ):
        model = model.double().eval()
        tokens = model.generate(src, 6, bos_id=1, eos_id=2)
        moved = model.to(DEVICE)
        on_device = moved.generate(src.to(DEVICE), 6, bos_id=1, eos_id=2)
        assert on_device.device.type == torch.device(DEVICE).type
        assert torch.equal(on_device.cpu(), tokens)
