"""selfattn.attention against PyTorch's own attention and softmax, the numpy
reference and formulas written out here (hand-computed gradients included);
numerics, and errors that name the argument."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from oracles import softmax_oracle
from torch.autograd import gradcheck

import selfattn.attention as attention_module
from selfattn import MultiHeadAttention, SelfAttention, masked_softmax, relu_weights
from selfattn import reference as ref
from selfattn import scaled_dot_product_attention as sdpa
from selfattn.attention import attend

# The two ways to the output: the explicit function (which also returns the
# weights) and the modules' fast path (PyTorch's fused kernel where it can).
OUTPUT_PATHS = {
    "explicit": lambda *args, **kw: sdpa(*args, **kw)[0],
    "fast": attend,
}


def randn(gen, *shape, dtype=torch.float64):
    return torch.randn(*shape, generator=gen, dtype=dtype)


def random_mask(gen, *shape, p=0.5, every_row=True):
    """Random bool mask; with ``every_row`` each query keeps at least key 0."""
    m = torch.rand(*shape, generator=gen) < p
    if every_row:
        m[..., 0] = True
    return m


# --- masked_softmax and relu_weights ------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 4, 6), (2, 3, 4, 5)])
def test_masked_softmax_matches_torch_softmax(gen, shape):
    scores = randn(gen, *shape)
    mask = random_mask(gen, *shape)
    torch.testing.assert_close(masked_softmax(scores), torch.softmax(scores, -1))
    torch.testing.assert_close(
        masked_softmax(scores, mask), softmax_oracle(scores, mask)
    )


def test_masked_softmax_other_dim_and_broadcast_mask(gen):
    scores = randn(gen, 2, 4, 6)
    mask = random_mask(gen, 6)  # (T_k,) broadcasts over batch and queries
    torch.testing.assert_close(
        masked_softmax(scores, mask), softmax_oracle(scores, mask)
    )
    torch.testing.assert_close(masked_softmax(scores, dim=1), torch.softmax(scores, 1))


def test_masked_softmax_fully_masked_row_is_zero_and_input_untouched(gen):
    scores = randn(gen, 3, 5)
    before = scores.clone()
    mask = random_mask(gen, 3, 5)
    mask[1] = False
    w = masked_softmax(scores, mask)
    assert torch.equal(w[1], torch.zeros(5, dtype=w.dtype))
    torch.testing.assert_close(w.sum(-1), torch.tensor([1.0, 0.0, 1.0]).double())
    assert torch.equal(scores, before)


def test_masked_softmax_neg_inf_scores_count_as_masked():
    scores = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3])
    w = masked_softmax(scores)
    assert not w.isnan().any()
    assert w[0, 1] == 0 and torch.equal(w[1], torch.zeros(3))
    torch.testing.assert_close(w[0], torch.softmax(torch.tensor([0.0, -1e30, 1.0]), 0))


@pytest.mark.parametrize("big", [1e2, 1e3, 1e4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_masked_softmax_huge_scores_stay_finite(big, dtype):
    scores = torch.tensor([[big, -big, 0.0], [-big, -big, -big]], dtype=dtype)
    w = masked_softmax(scores, torch.tensor([True, True, False]))
    assert torch.isfinite(w).all()
    expected = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]], dtype=dtype)
    torch.testing.assert_close(w, expected)


def test_relu_weights_match_explicit(gen):
    scores = randn(gen, 4, 6)
    mask = random_mask(gen, 4, 6)
    r = scores.clamp_min(0) * mask
    total = r.sum(-1, keepdim=True)
    expected = torch.where(total > 0, r / total, torch.zeros_like(r))
    torch.testing.assert_close(relu_weights(scores, mask), expected)
    torch.testing.assert_close(relu_weights(scores, normalize=False), scores.relu())
    assert torch.equal(relu_weights(-scores.abs()), torch.zeros_like(scores))


def test_relu_weights_gradient_of_a_row_with_no_positive_score_is_zero():
    """A row whose positive part is all zero has weights 0 and gradient 0.

    The safe division ``w / where(total > 0, total, 1)`` keeps the backward
    pass finite: dividing by the zero total would give 0/0 = NaN in the
    gradient even though the forward pass hides it with ``where``.
    """
    scores = torch.tensor([[-1.0, -2.0, 0.0], [1.0, 3.0, -1.0]], requires_grad=True)
    w = relu_weights(scores)
    torch.testing.assert_close(
        w.detach(), torch.tensor([[0.0, 0.0, 0.0], [0.25, 0.75, 0.0]])
    )
    (w * torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])).sum().backward()
    assert torch.isfinite(scores.grad).all()
    # row 1: d/ds_j of sum_i c_i s_i / S = (c_j - sum_i c_i w_i) / S on s_j > 0
    expected = torch.tensor([[0.0, 0.0, 0.0], [(1 - 1.75) / 4, (2 - 1.75) / 4, 0.0]])
    torch.testing.assert_close(scores.grad, expected)


def test_relu_weights_gradient_of_a_fully_masked_row_is_zero():
    """Positive scores, all masked: weights 0 and gradient 0 (not NaN from the
    0/0 the forward pass hides; the mask's zeros do not cancel a NaN)."""
    scores = torch.tensor([[1.0, 2.0, 3.0], [1.0, 3.0, -1.0]], requires_grad=True)
    mask = torch.tensor([[False, False, False], [True, True, False]])
    w = relu_weights(scores, mask)
    torch.testing.assert_close(
        w.detach(), torch.tensor([[0.0, 0.0, 0.0], [0.25, 0.75, 0.0]])
    )
    (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    expected = torch.tensor([[0.0, 0.0, 0.0], [(1 - 1.75) / 4, (2 - 1.75) / 4, 0.0]])
    torch.testing.assert_close(scores.grad, expected)


@pytest.mark.parametrize(
    "scores, error, match",
    [
        ([[1.0, 2.0]], TypeError, r"\bscores must\b.*\blist\b"),
        (
            torch.tensor([[1.0, float("nan")]]),
            ValueError,
            r"\bscores contains NaN\b.*\(1, 2\)",
        ),
        (
            torch.tensor([[1.0, float("inf")]]),
            ValueError,
            r"\bscores contain \+inf\b.*\(1, 2\)",
        ),
    ],
)
def test_relu_weights_errors_name_the_argument(scores, error, match):
    """The argument's name and the shape of what it got."""
    with pytest.raises(error, match=match):
        relu_weights(scores)


@pytest.mark.parametrize(
    "scores, error, match",
    [
        ([1.0], TypeError, r"\bscores must\b.*\blist\b"),
        (torch.tensor([1, 2]), TypeError, r"\bscores must\b.*\btorch\.int64\b"),
        (
            torch.tensor([[1.0, float("inf")]]),
            ValueError,
            r"^scores contains \+inf \(shape \(1, 2\)\); the softmax of \+inf is "
            r"undefined$",
        ),
    ],
)
def test_masked_softmax_errors_name_the_argument(scores, error, match):
    """The argument's name and the shape or dtype of what it got."""
    with pytest.raises(error, match=match):
        masked_softmax(scores)


# --- scaled_dot_product_attention against torch ------------------------------

SHAPES = [  # (batch dims, T_q, T_k, d_k, d_v)
    ((), 4, 4, 8, 8),
    ((2,), 3, 5, 4, 6),
    ((2, 3), 5, 5, 8, 4),
    ((1, 2), 1, 7, 2, 3),
]


@pytest.mark.parametrize("batch, T_q, T_k, d_k, d_v", SHAPES)
@pytest.mark.parametrize("mask_kind", ["none", "full", "keys"])
@pytest.mark.parametrize("scale", [None, 1.0, 0.1])
def test_sdpa_matches_torch(gen, batch, T_q, T_k, d_k, d_v, mask_kind, scale):
    q, k = randn(gen, *batch, T_q, d_k), randn(gen, *batch, T_k, d_k)
    v = randn(gen, *batch, T_k, d_v)
    mask = {
        "none": None,
        "full": random_mask(gen, *batch, T_q, T_k),
        "keys": random_mask(gen, T_k),  # broadcast: same keys for every query
    }[mask_kind]
    full = None if mask is None else mask.expand(*batch, T_q, T_k)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=full, scale=scale)
    out, w = sdpa(q, k, v, mask, scale=scale)
    torch.testing.assert_close(out, expected)
    s = 1 / math.sqrt(d_k) if scale is None else scale
    torch.testing.assert_close(w, softmax_oracle(q @ k.transpose(-2, -1) * s, mask))


@pytest.mark.parametrize("T_q, T_k", [(4, 4), (3, 6), (6, 6)])
@pytest.mark.parametrize("with_mask", [False, True])
def test_sdpa_causal_matches_torch_is_causal(gen, T_q, T_k, with_mask):
    q, k, v = randn(gen, 2, T_q, 4), randn(gen, 2, T_k, 4), randn(gen, 2, T_k, 3)
    mask = random_mask(gen, 2, T_q, T_k) if with_mask else None
    tril = torch.ones(T_q, T_k, dtype=torch.bool).tril()
    if with_mask:
        full = mask & tril
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=full)
    else:
        expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out, w = sdpa(q, k, v, mask, causal=True)
    torch.testing.assert_close(out, expected)
    assert (w.triu(1) == 0).all()  # no weight on the future


@pytest.mark.parametrize("mask_kind", ["none", "mask", "causal"])
def test_sdpa_matches_numpy_references(gen, mask_kind):
    q, k, v = randn(gen, 2, 4, 3), randn(gen, 2, 5, 3), randn(gen, 2, 5, 2)
    mask = {
        "none": None,
        "mask": random_mask(gen, 2, 4, 5, every_row=False),
        "causal": torch.ones(4, 5, dtype=torch.bool).tril(),
    }[mask_kind]
    out, w = sdpa(q, k, v, mask)
    m = None if mask is None else mask.numpy()
    for oracle in (ref.attention_rows, ref.attention_loop):
        o_ref, w_ref = oracle(q.numpy(), k.numpy(), v.numpy(), m)
        np.testing.assert_allclose(out.numpy(), o_ref, atol=1e-12)
        np.testing.assert_allclose(w.numpy(), w_ref, atol=1e-12)


@pytest.mark.parametrize("batch, T_q, T_k, d_k, d_v", SHAPES)
@pytest.mark.parametrize("mask_kind", ["none", "every_row", "empty_row", "keys"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_fast_path_matches_the_explicit_function(
    gen, batch, T_q, T_k, d_k, d_v, mask_kind, causal, scale
):
    """The modules' path (fused kernel, or the fallback) against the explicit
    formula: softmax written out, never PyTorch's kernel."""
    q, k = randn(gen, *batch, T_q, d_k), randn(gen, *batch, T_k, d_k)
    v = randn(gen, *batch, T_k, d_v)
    mask = {
        "none": None,
        "every_row": random_mask(gen, *batch, T_q, T_k),
        "empty_row": random_mask(gen, *batch, T_q, T_k, every_row=False),
        "keys": random_mask(gen, T_k),
    }[mask_kind]
    if mask_kind == "empty_row":
        mask[..., 0, :] = False  # query 0 may attend nothing
    expected, _ = sdpa(q, k, v, mask, causal=causal, scale=scale)
    out = attend(q, k, v, mask, causal=causal, scale=scale)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("causal", [False, True])
def test_dispatched_path_against_the_numpy_reference(causal):
    """``attend``'s fused-kernel path, checked against something that is not
    the kernel."""
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((5, 4)) for _ in range(3))
    mask = rng.random((5, 5)) < 0.7
    mask[:, 0] = True  # every row has a key, so the library dispatches
    if causal:
        mask &= np.tril(np.ones((5, 5), dtype=bool))
    out = attend(*(torch.from_numpy(a) for a in (Q, K, V)), torch.from_numpy(mask))
    expected = ref.attention_rows(Q, K, V, mask)
    expected = expected[0] if isinstance(expected, tuple) else expected
    np.testing.assert_allclose(out.numpy(), expected, rtol=0, atol=1e-12)


def test_fully_masked_rows_do_not_reach_the_fused_kernel(monkeypatch):
    """attention.py's guard in ``attend`` (the modules' fast path): PyTorch's
    kernels have not always agreed on a query with no key (NaN before 2.5 on
    the CPU, below the floor; the backends differ), so the library never
    hands them one.

    The fused kernel is replaced by one that does what old releases did; the
    library must not call it for such a mask, and must give zeros: in
    ``attend`` itself and in the modules' ``forward``.
    """
    real = torch.nn.functional.scaled_dot_product_attention
    calls = []

    def old_sdpa(q, k, v, attn_mask=None, **kw):
        calls.append(attn_mask)
        out = real(q, k, v, attn_mask=attn_mask, **kw)
        if attn_mask is not None:
            empty = ~attn_mask.any(dim=-1, keepdim=True)
            out = out.masked_fill(empty, float("nan"))
        return out

    monkeypatch.setattr(attention_module.F, "scaled_dot_product_attention", old_sdpa)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 3, generator=g) for _ in "qkv")
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False  # query 2 may attend nothing
    out = attend(q, k, v, mask)
    assert torch.isfinite(out).all()
    assert torch.equal(out[0, 2], torch.zeros(3))
    layer = SelfAttention(3, 3, generator=torch.Generator().manual_seed(1))
    assert torch.equal(layer(q, mask)[0, 2], torch.zeros(3))
    mha = MultiHeadAttention(4, 2, bias=False)
    x = torch.randn(1, 4, 4, generator=g)
    assert torch.equal(mha(x, mask=mask)[0, 2], torch.zeros(4))  # W_o(0) = 0
    assert calls == []  # the kernel was never asked
    # a batch of masks: one query of one sequence has no key (any row counts,
    # not any column of a row's batch)
    q2, k2, v2 = (torch.randn(2, 4, 3, generator=g) for _ in "qkv")
    batched = torch.ones(2, 4, 4, dtype=torch.bool)
    batched[1, 2] = False
    assert torch.equal(attend(q2, k2, v2, batched)[1, 2], torch.zeros(3))
    assert calls == []
    attend(q, k, v, torch.ones(4, 4, dtype=torch.bool))
    assert len(calls) == 1  # where every row has a key, the kernel is used


def test_sdpa_fully_masked_row_gives_zero_not_nan(gen):
    q, k, v = randn(gen, 2, 4, 3), randn(gen, 2, 5, 3), randn(gen, 2, 5, 2)
    mask = random_mask(gen, 2, 4, 5)
    mask[0, 2] = False
    out, w = sdpa(q, k, v, mask)
    assert torch.equal(out[0, 2], torch.zeros(2, dtype=out.dtype))
    assert torch.equal(w[0, 2], torch.zeros(5, dtype=w.dtype))
    torch.testing.assert_close(attend(q, k, v, mask), out)  # the modules' path
    other = torch.ones(2, 4, dtype=torch.bool)
    other[0, 2] = False
    torch.testing.assert_close(w.sum(-1), other.double())
    # the other rows agree with torch
    ok = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~other[..., None])
    torch.testing.assert_close(out[other], ok[other])


# --- gradients ---------------------------------------------------------------


def _req(x):
    return x.detach().clone().requires_grad_(True)


@pytest.mark.parametrize("mask_kind", ["none", "mask", "empty_row"])
def test_gradcheck_masked_softmax(gen, mask_kind):
    scores = _req(randn(gen, 3, 5))
    mask = None if mask_kind == "none" else random_mask(gen, 3, 5)
    if mask_kind == "empty_row":
        mask[1] = False
    assert gradcheck(lambda s: masked_softmax(s, mask), (scores,))


@pytest.mark.parametrize("mask_kind", ["none", "mask", "empty_row", "causal"])
@pytest.mark.parametrize("path", ["explicit (out, weights)", "fast"])
def test_gradcheck_sdpa(gen, mask_kind, path):
    q, k, v = (_req(randn(gen, 2, n, 3)) for n in (4, 5, 5))
    mask = None if mask_kind in ("none", "causal") else random_mask(gen, 2, 4, 5)
    if mask_kind == "empty_row":
        mask[1, 0] = False
    fn = attend if path == "fast" else sdpa

    def f(q, k, v):
        return fn(q, k, v, mask, causal=mask_kind == "causal")

    assert gradcheck(f, (q, k, v))


def test_fully_masked_row_gradient_is_finite_and_zero(gen):
    q, k, v = (_req(randn(gen, 4, 3)) for _ in range(3))
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False
    for path in OUTPUT_PATHS.values():
        q.grad = None
        out = path(q, k, v, mask)
        out.sum().backward()
        assert torch.isfinite(q.grad).all()
        assert torch.equal(q.grad[2], torch.zeros(3, dtype=q.dtype))


def test_gradcheck_self_attention(gen):
    layer = SelfAttention(6, 4, 3).double()
    x = _req(randn(gen, 2, 5, 6))
    mask = random_mask(gen, 5, 5)
    mask[3] = False
    assert gradcheck(lambda x: layer(x, mask), (x,))
    assert gradcheck(lambda x: layer(x, causal=True), (x,))


# --- low precision and large scores ------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("with_mask", [False, True])
@pytest.mark.parametrize("path", sorted(OUTPUT_PATHS))
def test_low_precision_close_to_float32(gen, dtype, with_mask, path):
    q, k, v = (randn(gen, 2, 6, 8, dtype=torch.float32) for _ in range(3))
    mask = random_mask(gen, 6, 6) if with_mask else None
    expected, _ = sdpa(q, k, v, mask)
    out = OUTPUT_PATHS[path](q.to(dtype), k.to(dtype), v.to(dtype), mask)
    assert out.dtype == dtype
    torch.testing.assert_close(out.float(), expected, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("big", [1e2, 1e4])
@pytest.mark.parametrize("path", sorted(OUTPUT_PATHS))
def test_huge_scores_give_finite_outputs(gen, big, path):
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]) * math.sqrt(big)
    k = q.clone() * math.sqrt(2.0)  # scores up to +-big
    v = randn(gen, 3, 4, dtype=torch.float32)
    out = OUTPUT_PATHS[path](q, k, v)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(
        out, F.scaled_dot_product_attention(q, k, v), atol=1e-5, rtol=1e-5
    )
