"""Attention modules against torch.nn.MultiheadAttention and
torch.nn.TransformerEncoderLayer (weights copied), against the functional core
and the numpy reference, and their errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from oracles import softmax_oracle
from torch import nn

from selfattn import (
    MultiHeadAttention,
    SelfAttention,
    TransformerEncoderBlock,
    causal_mask,
    length_mask,
    reference,
    scaled_dot_product_attention,
)
from selfattn.masks import from_key_padding_mask


def randomize(module: nn.Module, gen: torch.Generator, std: float = 0.3) -> nn.Module:
    """Fill every parameter (biases too) from ``gen``: no zeros hiding bugs."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * std)
    return module


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


# --- SelfAttention -------------------------------------------------------------


@pytest.mark.parametrize("d_in, d_k, d_v", [(6, 4, 4), (5, 3, 7)])
@pytest.mark.parametrize("bias", [False, True])
def test_self_attention_output_and_weights(gen, d_in, d_k, d_v, bias):
    """forward against the explicit function on the layer's own projections;
    attention_weights against a softmax written out here."""
    layer = randomize(SelfAttention(d_in, d_k, d_v, bias=bias).double(), gen)
    x = randn(gen, 2, 5, d_in)
    q, k, v = layer.W_q(x), layer.W_k(x), layer.W_v(x)
    mask = causal_mask(5)
    for m, causal in ((None, False), (mask, False), (None, True)):
        expected_out, expected_w = scaled_dot_product_attention(
            q, k, v, m, causal=causal
        )
        torch.testing.assert_close(layer(x, m, causal=causal), expected_out)
        w = layer.attention_weights(x, m, causal=causal)
        torch.testing.assert_close(w, expected_w)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, T, T)
        pattern = mask if (m is not None or causal) else None
        torch.testing.assert_close(w, softmax_oracle(scores, pattern))
        torch.testing.assert_close(w.sum(-1), torch.ones(2, 5, dtype=w.dtype))
    assert layer(x).shape == (2, 5, d_v)
    assert not any(n for n, _ in layer.named_buffers())  # no hidden state


def test_self_attention_causal_ignores_the_future(gen):
    layer = SelfAttention(4, 4).double()
    x = randn(gen, 1, 6, 4)
    y = x.clone()
    y[:, 4:] = randn(gen, 1, 2, 4)  # change the last two tokens only
    torch.testing.assert_close(
        layer(x, causal=True)[:, :4], layer(y, causal=True)[:, :4]
    )


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
    out, w = reference.attention_rows(q, k, v)
    np.testing.assert_allclose(layer(x).detach().numpy(), out, rtol=1e-10)
    np.testing.assert_allclose(
        layer.attention_weights(x).detach().numpy(), w, rtol=1e-10
    )


# --- MultiHeadAttention vs torch.nn.MultiheadAttention ---------------------------


def torch_mha(gen, D, H, batch_first, bias=True):
    m = nn.MultiheadAttention(D, H, batch_first=batch_first, bias=bias)
    return randomize(m.double(), gen).eval()


def run_torch(mha, q, k, v, **kw):
    """Call torch's module on batch-first tensors, whatever its batch_first."""
    if not mha.batch_first:
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))  # (T, B, D)
    out, w = mha(q, k, v, need_weights=True, average_attn_weights=False, **kw)
    return (out if mha.batch_first else out.transpose(0, 1)), w


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("D, H, T_q, T_k", [(8, 2, 5, 5), (12, 3, 4, 6), (6, 1, 3, 3)])
def test_from_torch_self_and_cross_attention(gen, batch_first, bias, D, H, T_q, T_k):
    ref = torch_mha(gen, D, H, batch_first, bias)
    ours = MultiHeadAttention.from_torch(ref)
    q, kv = randn(gen, 2, T_q, D), randn(gen, 2, T_k, D)
    expected, w_expected = run_torch(ref, q, kv, kv)
    out, w = ours(q, kv, kv), ours.attention_weights(q, kv, kv)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(w, w_expected)  # per head (B, H, T_q, T_k)
    torch.testing.assert_close(ours(q, kv), expected)  # value defaults to key
    if T_q == T_k:
        x = q
        torch.testing.assert_close(ours(x), run_torch(ref, x, x, x)[0])


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("use_attn_mask", [False, True])
def test_from_torch_key_padding_translation(gen, batch_first, use_attn_mask):
    """torch: key_padding_mask True = IGNORE; ours: True = may attend."""
    D, H, T = 8, 2, 5
    ref = torch_mha(gen, D, H, batch_first)
    ours = MultiHeadAttention.from_torch(ref)
    x = randn(gen, 3, T, D)
    lens = torch.tensor([5, 2, 3])
    key_padding_mask = torch.arange(T)[None, :] >= lens[:, None]  # (B, T) True = pad
    attn_mask = ~causal_mask(T) if use_attn_mask else None  # torch: True = forbid
    expected, w_expected = run_torch(
        ref, x, x, x, key_padding_mask=key_padding_mask, attn_mask=attn_mask
    )
    mask = from_key_padding_mask(key_padding_mask)  # (B, 1, T)
    assert torch.equal(mask, length_mask(lens, T))
    if use_attn_mask:
        mask = mask & ~attn_mask  # (B, T, T)
    out, w = ours(x, mask=mask), ours.attention_weights(x, mask=mask)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(w, w_expected)
    assert (w[1, :, :, 2:] == 0).all()  # padded keys get exactly zero weight


@pytest.mark.parametrize("shape", ["(T,T)", "(B,T,T)", "(B,H,T,T)", "(B,1,T)"])
def test_mha_mask_shapes_agree(gen, shape):
    mha = randomize(MultiHeadAttention(8, 2).double(), gen)
    x = randn(gen, 2, 4, 8)
    base = torch.rand(4, 4, generator=gen) < 0.6
    base[:, 0] = True
    masks = {  # (mask given, the (T_q, T_k) pattern it means for every b, h)
        "(T,T)": (base, base),
        "(B,T,T)": (base.expand(2, 4, 4), base),
        "(B,H,T,T)": (base.expand(2, 2, 4, 4), base),
        "(B,1,T)": (base[:1].expand(2, 1, 4), base[:1].expand(4, 4)),
    }
    mask, pattern = masks[shape]
    w = mha.attention_weights(x, mask=mask)
    assert torch.equal(w > 0, pattern.expand(2, 2, 4, 4))
    torch.testing.assert_close(mha(x, mask=mask), mha(x, mask=pattern))


def test_mha_per_head_mask(gen):
    mha = randomize(MultiHeadAttention(8, 2).double(), gen)
    x = randn(gen, 1, 4, 8)
    mask = torch.stack([causal_mask(4), causal_mask(4).T])[None]  # (1, H, T, T)
    w = mha.attention_weights(x, mask=mask)
    assert torch.equal(w > 0, mask)


def test_mha_from_torch_dtype_and_unsupported(gen):
    ours = MultiHeadAttention.from_torch(torch_mha(gen, 4, 2, True))
    assert ours.W_q.weight.dtype == torch.float64
    with pytest.raises(ValueError, match="kdim == vdim == embed_dim"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, kdim=3))
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(4, 2, add_bias_kv=True))
    with pytest.raises(TypeError, match="nn.MultiheadAttention, got Linear"):
        MultiHeadAttention.from_torch(nn.Linear(4, 4))


def test_bias_false_leaves_every_projection_without_bias():
    single = SelfAttention(6, 4, 3, bias=False)
    multi = MultiHeadAttention(8, 2, bias=False)
    for module in (single, multi):
        for name, child in module.named_children():
            assert child.bias is None, f"{type(module).__name__}.{name} has a bias"
    assert len(list(multi.children())) == 4 and len(list(single.children())) == 3


def test_mha_from_torch_keeps_the_module_s_device():
    """On PyTorch's ``meta`` device (shapes, no data): the copy is built where
    the module lives, in its dtype."""
    module = nn.MultiheadAttention(8, 2, device="meta", dtype=torch.float64)
    ours = MultiHeadAttention.from_torch(module)
    assert {(p.device.type, p.dtype) for p in ours.parameters()} == {
        ("meta", torch.float64)
    }


# --- MultiHeadAttention's cached path ----------------------------------------------


@pytest.mark.parametrize("chunks", [[1] * 6, [2, 1, 3], [6]])
def test_mha_step_equals_causal_self_attention_on_the_prefix(gen, chunks):
    mha = randomize(MultiHeadAttention(8, 2).double(), gen)
    x = randn(gen, 2, sum(chunks), 8)
    outs, cache, t = [], None, 0
    for n in chunks:
        out, new = mha.step(x[:, t : t + n], cache)
        if cache is not None:  # the cache passed in is not modified
            assert cache[0].shape == (2, 2, t, 4)
        assert new[0].shape == new[1].shape == (2, 2, t + n, 4)
        outs.append(out)
        cache, t = new, t + n
    torch.testing.assert_close(torch.cat(outs, dim=1), mha(x, causal=True))
    k, v = mha.project_kv(x)  # the cache holds the prefix's keys and values
    assert torch.equal(cache[0], k) and torch.equal(cache[1], v)


def test_mha_step_projects_each_position_once(gen):
    mha = MultiHeadAttention(8, 2, generator=gen)
    rows = []
    mha.W_k.register_forward_hook(lambda m, i, o: rows.append(o.shape[1]))
    x, cache = torch.randn(1, 5, 8, generator=gen), None
    for t in range(5):
        _, cache = mha.step(x[:, t : t + 1], cache)
    assert rows == [1] * 5


@pytest.mark.parametrize("shape", ["none", "(T,T)", "(B,T,T)", "(B,H,T,T)"])
def test_mha_forward_kv_is_forward_with_the_keys_projected_once(gen, shape):
    """The same operations as ``forward``: bit for bit the same output."""
    mha = randomize(MultiHeadAttention(8, 2).double(), gen)
    query, key, value = randn(gen, 2, 3, 8), randn(gen, 2, 5, 8), randn(gen, 2, 5, 8)
    base = torch.rand(3, 5, generator=gen) < 0.6
    base[:, 0] = True
    mask = {
        "none": None,
        "(T,T)": base,
        "(B,T,T)": base.expand(2, 3, 5),
        "(B,H,T,T)": base.expand(2, 2, 3, 5),
    }[shape]
    k, v = mha.project_kv(key, value)
    assert k.shape == v.shape == (2, 2, 5, 4)
    assert torch.equal(mha.forward_kv(query, k, v, mask), mha(query, key, value, mask))
    k_self, _ = mha.project_kv(key)  # value defaults to key
    assert torch.equal(k_self, k)


def test_state_dict_from_torch_maps_in_proj_to_three_projections(gen):
    module = torch_mha(gen, 8, 2, True)
    state = MultiHeadAttention.state_dict_from_torch(module)
    W = module.in_proj_weight
    assert torch.equal(state["W_q.weight"], W[:8]) and torch.equal(
        state["W_v.weight"], W[16:]
    )
    assert torch.equal(state["W_o.bias"], module.out_proj.bias)
    no_bias = MultiHeadAttention.state_dict_from_torch(
        nn.MultiheadAttention(8, 2, bias=False)
    )
    assert sorted(no_bias) == ["W_k.weight", "W_o.weight", "W_q.weight", "W_v.weight"]


# --- TransformerEncoderBlock vs torch.nn.TransformerEncoderLayer -----------------


@pytest.mark.parametrize("causal", [False, True])
def test_encoder_block_matches_torch_pre_norm_layer(gen, causal):
    D, H, F_ = 8, 2, 16
    ref = nn.TransformerEncoderLayer(
        D, H, F_, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    ref = randomize(ref.double(), gen).eval()
    block = TransformerEncoderBlock(D, H, F_).double()
    block.attn = MultiHeadAttention.from_torch(ref.self_attn)
    block.norm1.load_state_dict(ref.norm1.state_dict())
    block.norm2.load_state_dict(ref.norm2.state_dict())
    block.ffn[0].load_state_dict(ref.linear1.state_dict())
    block.ffn[2].load_state_dict(ref.linear2.state_dict())
    x = randn(gen, 2, 5, D)
    mask = causal_mask(5)
    expected = ref(x, src_mask=~mask, is_causal=True) if causal else ref(x)
    torch.testing.assert_close(block(x, causal=causal), expected)
    w = block.attention_weights(x, causal=causal)
    assert w.shape == (2, H, 5, 5)


# --- attention_weights: the explicit path on the module's own projections -----


def explicit_mha(mha, query, key, mask=None, causal=False):
    """Multi-head attention written out with the explicit function:
    ``(out (B, T_q, D), weights (B, H, T_q, T_k))``."""
    B, T_q, D = query.shape
    H, d_k = mha.num_heads, D // mha.num_heads

    def split(t):
        return t.view(B, -1, H, d_k).transpose(1, 2)  # (B, H, T, d_k)

    q, k, v = split(mha.W_q(query)), split(mha.W_k(key)), split(mha.W_v(key))
    if mask is not None and mask.dim() == 3:
        mask = mask[:, None]  # (B, 1, T_q, T_k): the same for every head
    heads, w = scaled_dot_product_attention(q, k, v, mask, causal=causal)
    out = mha.W_o(heads.transpose(1, 2).reshape(B, T_q, D))  # (B, T_q, D)
    return out, w


@pytest.mark.parametrize("T_q, T_k", [(5, 5), (3, 6)])
@pytest.mark.parametrize("mask_kind", ["none", "mask", "empty_row", "causal"])
def test_mha_forward_and_weights_against_the_explicit_path(gen, T_q, T_k, mask_kind):
    mha = randomize(MultiHeadAttention(8, 2).double(), gen)
    query, key = randn(gen, 2, T_q, 8), randn(gen, 2, T_k, 8)
    mask = None
    if mask_kind in ("mask", "empty_row"):
        mask = torch.rand(2, T_q, T_k, generator=gen) < 0.6
        mask[..., 0] = True
    if mask_kind == "empty_row":
        mask[1, 2] = False  # query 2 of batch 1 may attend nothing
    causal = mask_kind == "causal"
    expected_out, expected_w = explicit_mha(mha, query, key, mask, causal)
    out = mha(query, key, mask=mask, causal=causal)
    w = mha.attention_weights(query, key, mask=mask, causal=causal)
    torch.testing.assert_close(out, expected_out)
    torch.testing.assert_close(w, expected_w)
    assert w.shape == (2, 2, T_q, T_k)
    rows = torch.ones(2, 2, T_q, dtype=w.dtype)
    if mask_kind == "empty_row":
        rows[1, :, 2] = 0.0
    torch.testing.assert_close(w.sum(-1), rows)  # 1, or 0 for an empty row


@pytest.mark.parametrize("causal", [False, True])
def test_encoder_block_forward_and_weights_against_the_explicit_path(gen, causal):
    block = randomize(TransformerEncoderBlock(8, 2, 12).double(), gen).eval()
    x = randn(gen, 3, 5, 8)
    mask = torch.rand(3, 5, 5, generator=gen) < 0.7
    mask[..., 0] = True
    ln_x = block.norm1(x)
    a, expected_w = explicit_mha(block.attn, ln_x, ln_x, mask, causal)
    h = x + a  # (B, T, D)
    expected = h + block.ffn(block.norm2(h))  # (B, T, D)
    torch.testing.assert_close(block(x, mask, causal=causal), expected)
    w = block.attention_weights(x, mask, causal=causal)
    torch.testing.assert_close(w, expected_w)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 2, 5, dtype=w.dtype))


def test_modules_compose_in_sequential(gen):
    """forward returns a tensor only, so modules stack like any layer."""
    model = nn.Sequential(
        TransformerEncoderBlock(8, 2, generator=gen),
        MultiHeadAttention(8, 2, generator=gen),
        SelfAttention(8, 4, generator=gen),
    )
    assert model(torch.randn(2, 5, 8, generator=gen)).shape == (2, 5, 4)


# --- errors -------------------------------------------------------------------

z = torch.zeros

ERRORS = [
    (
        lambda: MultiHeadAttention(10, 3),
        ValueError,
        r"^embed_dim=10 must be divisible by num_heads=3 \(each head gets "
        r"embed_dim // num_heads dimensions\)$",
    ),
    (
        lambda: MultiHeadAttention(8, 0),
        ValueError,
        r"^num_heads must be positive, got num_heads=0$",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 5)),
        ValueError,
        r"\bquery\b.*\(B, T, 8\), got \(2, 3, 5\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 3, 6)),
        ValueError,
        r"\bkey\b.*\(B, T, 8\), got \(2, 3, 6\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 4, 8), z(2, 3, 4)),
        ValueError,
        r"\bvalue\b.*\(B, T, 8\), got \(2, 3, 4\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(3, 4, 8)),
        ValueError,
        r"\bquery, key, value\b.*"
        r"\bquery \(2, 3, 8\), key \(3, 4, 8\), value \(3, 4, 8\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(2, 3, 8), z(2, 4, 8), z(2, 5, 8)),
        ValueError,
        r"\bquery, key, value\b.*"
        r"\bquery \(2, 3, 8\), key \(2, 4, 8\), value \(2, 5, 8\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(
            z(2, 3, 8), mask=z(2, 3, 3, 3, dtype=torch.bool)
        ),
        ValueError,
        r"\bmask of shape \(2, 3, 3, 3\).*\(2, 2, 3, 3\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2)(z(8)),
        ValueError,
        r"\bquery must\b.*\bshape \(8\)",
    ),
    (
        lambda: SelfAttention(4, 2)(z(1, 2, 3, 4)),
        ValueError,
        r"\bx must\b.*\(B, T, 4\), got \(1, 2, 3, 4\)",
    ),
    (
        lambda: MultiHeadAttention.from_torch(torch.nn.Linear(2, 2)),
        TypeError,
        r"\bmodule\b.*\bMultiheadAttention, got Linear\b",
    ),
    (
        lambda: MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(4, 2, kdim=3)
        ),
        ValueError,
        r"\bnn\.MultiheadAttention with kdim == vdim == embed_dim\b",
    ),
    (
        lambda: MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(4, 2, add_bias_kv=True)
        ),
        ValueError,
        r"\badd_bias_kv=False\b",
    ),
    (
        lambda: MultiHeadAttention.from_torch(
            torch.nn.MultiheadAttention(4, 2, add_zero_attn=True)
        ),
        ValueError,
        r"\badd_zero_attn=False\b",
    ),
    (
        lambda: MultiHeadAttention(8, 2).project_kv(z(2, 4, 8), z(2, 5, 8)),
        ValueError,
        r"^key and value must share the batch size and the length, got "
        r"key \(2, 4, 8\), value \(2, 5, 8\)$",
    ),
    (
        lambda: MultiHeadAttention(8, 2).project_kv(z(2, 4, 6)),
        ValueError,
        r"\bkey must have shape \(B, T, 8\), got \(2, 4, 6\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2).forward_kv(z(2, 1, 8), z(2, 5, 8), z(2, 5, 8)),
        ValueError,
        r"\bk, v must have at least 4 dimensions, got shape \(2, 5, 8\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2).forward_kv(
            z(2, 1, 8), z(2, 2, 5, 4), z(2, 2, 4, 4)
        ),
        ValueError,
        r"^k, v must be keys and values \(B, H, T_k, d_k\) = \(2, 2, T_k, 4\) as "
        r"project_kv returns them, got \(2, 2, 5, 4\), \(2, 2, 4, 4\)$",
    ),
    (
        lambda: MultiHeadAttention(8, 2).forward_kv(
            z(2, 1, 8), z(2, 1, 5, 8), z(2, 1, 5, 8)
        ),
        ValueError,
        r"\(2, 2, T_k, 4\).*got \(2, 1, 5, 8\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2).forward_kv(
            z(2, 1, 8), z(2, 2, 5, 4), z(2, 2, 5, 4), z(2, 1, 4, dtype=torch.bool)
        ),
        ValueError,
        r"\bmask of shape \(2, 1, 4\) does not broadcast",
    ),
    (
        lambda: MultiHeadAttention(8, 2).step(z(3, 1, 8), (z(2, 2, 4, 4),) * 2),
        ValueError,
        r"\bcache must be keys and values .* = \(3, 2, T_k, 4\).*got \(2, 2, 4, 4\)",
    ),
    (
        lambda: MultiHeadAttention(8, 2).step(z(3, 1, 6)),
        ValueError,
        r"\bx must have shape \(B, T, 8\), got \(3, 1, 6\)",
    ),
]


@pytest.mark.parametrize("call, error, match", ERRORS)
def test_module_errors_name_the_argument(call, error, match):
    """The argument's name and the shapes seen (and expected)."""
    with pytest.raises(error, match=match):
        call()
