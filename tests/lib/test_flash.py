"""The FlashAttention backward pass of ``chunked_attention`` against oracles.

Oracles: ``torch.autograd.gradcheck`` (finite differences, float64) and the
gradients autograd finds through dense softmax attention written out
(``dense_attention``: ``torch.softmax`` on an explicitly masked score matrix),
not the library's dispatch. Memory: ``selfattn.lab.measure.peak_memory_bytes``
over forward and backward, which must stay far below one dense score matrix.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import dense_attention, qkv

from selfattn.efficient import chunked_attention
from selfattn.lab.measure import peak_memory_bytes

MiB = 2**20


def _qkv(gen, *lead, T_q, T_k=None, d_k=4, d_v=3, dtype=torch.float64):
    """``qkv`` (tests/oracles.py) with this file's widths, requiring gradients."""
    q, k, v = qkv(gen, *lead, T_q=T_q, T_k=T_k, d_k=d_k, d_v=d_v, dtype=dtype)
    return q.requires_grad_(), k.requires_grad_(), v.requires_grad_()


def _grads(out, inputs, dout):
    return torch.autograd.grad(out, inputs, dout)


def test_training_goes_through_flash_attention(gen):
    q, k, v = _qkv(gen, 2, T_q=5)
    out = chunked_attention(q, k, v, B_k=2)
    assert "FlashAttention" in type(out.grad_fn).__name__
    with torch.no_grad():
        plain = chunked_attention(q, k, v, B_k=2)
    assert plain.grad_fn is None
    assert torch.equal(out, plain)  # one forward loop for both


# --- gradcheck in float64 ---------------------------------------------------


def _random_mask(gen, shape, density=0.6):
    return torch.rand(shape, generator=gen) < density


CASES = {
    # name: (lead, T_q, T_k, mask shape or None, causal, query_chunk, key_chunk)
    "plain": ((2,), 7, 6, None, False, 3, 4),
    "one_block": ((2,), 7, 6, None, False, 16, 16),
    "one_by_one": ((1,), 4, 5, None, False, 1, 1),
    "causal": ((2,), 9, 9, None, True, 2, 3),
    "causal_T_q<T_k": ((2,), 5, 8, None, True, 3, 3),
    "causal_T_q>T_k": ((2,), 8, 5, None, True, 3, 2),
    "mask_empty_row": ((2,), 7, 6, (2, 7, 6), False, 3, 4),
    "mask_and_causal": ((2, 2), 7, 7, (2, 2, 7, 7), True, 4, 3),
    "mask_per_key": ((2, 3), 6, 5, (2, 1, 1, 5), False, 4, 2),
    "mask_2d": ((), 6, 9, (6, 9), False, 4, 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(gen, name):
    lead, T_q, T_k, mask_shape, causal, b_q, b_k = CASES[name]
    q, k, v = _qkv(gen, *lead, T_q=T_q, T_k=T_k)
    mask = None if mask_shape is None else _random_mask(gen, mask_shape)
    if name == "mask_empty_row":
        mask[0, 2] = False  # query 2 of batch 0 sees nothing
        mask[1, :, 4:] = False  # a whole key block hidden from batch 1
    if name == "mask_and_causal":
        mask[1, 0, 3] = False  # query 3 of one head sees nothing

    def f(q, k, v):
        return chunked_attention(q, k, v, mask, causal=causal, B_q=b_q, B_k=b_k)

    assert torch.autograd.gradcheck(f, (q, k, v))


def test_gradcheck_with_scale(gen):
    q, k, v = _qkv(gen, 2, T_q=6, T_k=7)
    assert torch.autograd.gradcheck(
        lambda q, k, v: chunked_attention(q, k, v, scale=0.7, B_k=3, B_q=4),
        (q, k, v),
    )


def test_chunked_gradcheck(gen):
    q, k, v = (t.requires_grad_() for t in qkv(gen, 2, T_q=7, T_k=6, d_k=3))
    mask = torch.rand(2, 7, 6, generator=gen) < 0.6
    mask[0, 2] = False  # a fully masked row: zero output, zero gradient
    assert torch.autograd.gradcheck(
        lambda q, k, v: chunked_attention(q, k, v, mask, B_k=4, B_q=3),
        (q, k, v),
    )
    assert torch.autograd.gradcheck(
        lambda q, k, v: chunked_attention(q, k, v, causal=True, B_k=3, B_q=2),
        (q, k, v),
    )


def test_fully_masked_rows_have_zero_gradient(gen):
    q, k, v = _qkv(gen, 2, T_q=6, T_k=5)
    mask = torch.ones(2, 6, 5, dtype=torch.bool)
    mask[0, 1] = False  # one query sees nothing
    mask[1] = False  # batch 1 sees nothing at all
    out = chunked_attention(q, k, v, mask, B_k=2, B_q=4)
    dq, dk, dv = _grads(out, (q, k, v), torch.ones_like(out))
    for grad in (dq, dk, dv):
        assert torch.isfinite(grad).all()
    assert (dq[0, 1] == 0).all() and (dq[1] == 0).all()
    assert (dk[1] == 0).all() and (dv[1] == 0).all()


@settings(deadline=None)
@given(
    T_q=st.integers(1, 24),
    T_k=st.integers(1, 24),
    B_k=st.integers(1, 30),
    B_q=st.integers(1, 30),
    causal=st.booleans(),
    density=st.sampled_from([None, 0.0, 0.2, 0.7]),
    seed=st.integers(0, 2**16),
)
def test_gradients_equal_dense(T_q, T_k, B_k, B_q, causal, density, seed):
    gen = torch.Generator().manual_seed(seed)
    q, k, v = _qkv(gen, 2, 2, T_q=T_q, T_k=T_k)
    mask = None if density is None else _random_mask(gen, (2, 2, T_q, T_k), density)
    dout = torch.randn(2, 2, T_q, 3, generator=gen, dtype=torch.float64)
    out = chunked_attention(
        q,
        k,
        v,
        mask,
        causal=causal,
        B_k=B_k,
        B_q=B_q,
    )
    expected = dense_attention(q, k, v, mask, causal=causal)
    torch.testing.assert_close(out, expected)
    grads = _grads(out, (q, k, v), dout)
    for grad, want in zip(grads, _grads(expected, (q, k, v), dout), strict=True):
        assert torch.isfinite(grad).all()
        torch.testing.assert_close(grad, want)


# --- larger sizes in float32 ------------------------------------------------


@pytest.mark.parametrize(
    "masked,causal,blocks",
    [
        (False, False, {}),  # the default 512 x 128 blocks
        (False, True, {}),
        (True, False, {"B_q": 96, "B_k": 64}),
        (True, True, {"B_q": 100, "B_k": 37}),
    ],
)
def test_float32_forward_and_gradients_equal_dense(gen, masked, causal, blocks):
    q, k, v = _qkv(gen, 2, 3, T_q=700, T_k=600, d_k=32, d_v=24, dtype=torch.float32)
    mask = _random_mask(gen, (2, 1, 700, 600), 0.8) if masked else None
    if masked:
        mask[0, 0, 5] = False  # an empty query row
    dout = torch.randn(2, 3, 700, 24, generator=gen)
    out = chunked_attention(q, k, v, mask, causal=causal, **blocks)
    grads = _grads(out, (q, k, v), dout)
    # the oracle in float64, so its own rounding does not count
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    expected = dense_attention(q64, k64, v64, mask, causal=causal)
    torch.testing.assert_close(out, expected.float())
    want = _grads(expected, (q64, k64, v64), dout.double())
    for grad, w in zip(grads, want, strict=True):
        torch.testing.assert_close(grad, w.float())


def _max_error(got: torch.Tensor, ref: torch.Tensor) -> float:
    return (got.float() - ref).abs().max().item()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_precision_gradients(gen, dtype):
    """flash-attention's rule (STYLE rule 10), not a tuned tolerance: against
    a float32 reference, the blocked pass in half precision errs at most
    twice as much as dense attention computed in the same half precision,
    for the output and for each gradient."""
    q, k, v = _qkv(gen, 2, T_q=40, T_k=33, d_k=8, d_v=8, dtype=torch.float32)
    dout = torch.randn(2, 40, 8, generator=gen)
    q_h, k_h, v_h = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))
    out = chunked_attention(q_h, k_h, v_h, causal=True, B_k=16)
    assert out.dtype == dtype
    grads = _grads(out, (q_h, k_h, v_h), dout.to(dtype))
    q_d, k_d, v_d = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))
    dense_h = dense_attention(q_d, k_d, v_d, causal=True)
    grads_dense_h = _grads(dense_h, (q_d, k_d, v_d), dout.to(dtype))
    expected = dense_attention(q, k, v, causal=True)
    want = _grads(expected, (q, k, v), dout)
    assert _max_error(out, expected) <= 2 * _max_error(dense_h, expected)
    for grad, dense_grad, w in zip(grads, grads_dense_h, want, strict=True):
        assert grad.dtype == dtype
        assert _max_error(grad, w) <= 2 * _max_error(dense_grad, w)


# --- memory -------------------------------------------------------------------


def test_training_memory_is_linear_in_T(gen):
    """Forward + backward at T = 4096 stays far below one dense score matrix.

    Counted beyond the inputs (allocated before the call): the output, the
    three gradients, and what the blocks need. A dense score matrix for
    ``H = 2`` heads is ``2 T^2`` floats = 128 MiB; autograd through the blocks
    would keep all of them.
    """
    H, T, d = 2, 4096, 64
    q, k, v = _qkv(gen, 1, H, T_q=T, d_k=d, d_v=d, dtype=torch.float32)
    dout = torch.randn(1, H, T, d, generator=gen)

    def train_step():
        chunked_attention(q, k, v).backward(dout)

    peak = peak_memory_bytes(train_step)
    assert peak is not None, "the profiler's trace export has no event list"
    assert q.grad is not None and torch.isfinite(q.grad).all()
    out_and_grads = 4 * H * T * d * 4  # bytes
    dense_scores = H * T * T * 4
    extra = peak - out_and_grads
    assert extra < 8 * MiB, f"{extra / MiB:.1f} MiB beyond output and gradients"
    assert peak < dense_scores / 8
