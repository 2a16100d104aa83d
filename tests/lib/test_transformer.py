"""The decoder block, the K/V cache and the sequence-to-sequence models.

Oracles: PyTorch's ``TransformerDecoderLayer`` and ``TransformerEncoderLayer``
(pre-norm, GELU, dropout 0) with the same weights copied in by hand; the block
run on the whole prefix (for cached decoding); the model run one example at a
time without padding (for masks and batching); greedy decoding by recomputing
the prefix (for ``generate``).
"""

from __future__ import annotations

import inspect
import re

import pytest
import torch
from torch import nn

from selfattn import TransformerEncoderBlock
from selfattn.seq2seq import BahdanauSeq2Seq, EncoderDecoderTransformer
from selfattn.transformer import KVCache, TransformerDecoderBlock

TIGHT = {"rtol": 1e-12, "atol": 1e-12}  # float64: agreement to rounding


def randomize(module: nn.Module, gen: torch.Generator, std: float = 0.3) -> nn.Module:
    """Every parameter (LayerNorm and biases too) from ``gen``: no identity hides a
    swapped norm, no zero bias hides a dropped one."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * std)
    return module


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def copy_mha(ours, theirs: nn.MultiheadAttention) -> None:
    """PyTorch keeps W_q, W_k, W_v stacked in one (3D, D) in_proj_weight."""
    W, b = theirs.in_proj_weight.chunk(3), theirs.in_proj_bias.chunk(3)
    for lin, W_, b_ in zip((ours.W_q, ours.W_k, ours.W_v), W, b, strict=True):
        lin.weight.copy_(W_)
        lin.bias.copy_(b_)
    ours.W_o.weight.copy_(theirs.out_proj.weight)
    ours.W_o.bias.copy_(theirs.out_proj.bias)


def copy_linear_norm(pairs) -> None:
    for ours, theirs in pairs:
        ours.weight.copy_(theirs.weight)
        ours.bias.copy_(theirs.bias)


def torch_decoder_pair(gen, D=8, H=2, ff=12):
    layer = nn.TransformerDecoderLayer(
        D, H, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    layer = randomize(layer.double(), gen).eval()
    block = TransformerDecoderBlock(D, H, ff, generator=g(0)).double().eval()
    with torch.no_grad():
        copy_mha(block.self_attn, layer.self_attn)
        copy_mha(block.cross_attn, layer.multihead_attn)
        copy_linear_norm(
            [
                (block.norm1, layer.norm1),
                (block.norm2, layer.norm2),
                (block.norm3, layer.norm3),
                (block.ffn[0], layer.linear1),
                (block.ffn[2], layer.linear2),
            ]
        )
    return block, layer


# --- the block against PyTorch's layers -----------------------------------------


@pytest.mark.parametrize("T_q, T_k", [(5, 7), (6, 3), (1, 4)])
@pytest.mark.parametrize("padded", [False, True])
def test_decoder_block_matches_torch_decoder_layer(gen, T_q, T_k, padded):
    block, layer = torch_decoder_pair(gen)
    y, memory = randn(gen, 3, T_q, 8), randn(gen, 3, T_k, 8)
    ignore_future = torch.ones(T_q, T_q, dtype=torch.bool).triu(1)  # True = ignore
    pad = torch.zeros(3, T_k, dtype=torch.bool)
    if padded:
        pad[1, -2:] = pad[2, -1:] = True  # the last keys of two sources are padding
    with torch.no_grad():
        expected = layer(y, memory, tgt_mask=ignore_future, memory_key_padding_mask=pad)
        out = block(y, memory, memory_mask=~pad[:, None, :])  # causal by default
    torch.testing.assert_close(out, expected, **TIGHT)


def test_decoder_block_without_causal_mask_matches_torch(gen):
    block, layer = torch_decoder_pair(gen)
    y, memory = randn(gen, 2, 5, 8), randn(gen, 2, 4, 8)
    with torch.no_grad():
        expected = layer(y, memory)
        torch.testing.assert_close(block(y, memory, causal=False), expected, **TIGHT)
        mask = torch.ones(5, 5, dtype=torch.bool).tril()  # the same as causal=True
        causal = block(y, memory)
        torch.testing.assert_close(block(y, memory, mask, causal=False), causal)


@pytest.mark.parametrize("eps", [1e-5, 1e-3])
def test_from_torch_copies_the_layer(gen, eps):
    _, layer = torch_decoder_pair(gen)
    for norm in (layer.norm1, layer.norm2, layer.norm3):
        norm.eps = eps  # as nn.TransformerDecoderLayer(..., layer_norm_eps=eps)
    block = TransformerDecoderBlock.from_torch(layer)
    y, memory = randn(gen, 2, 5, 8), randn(gen, 2, 6, 8)
    future = torch.ones(5, 5, dtype=torch.bool).triu(1)
    pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])  # True = ignore
    with torch.no_grad():
        expected = layer(y, memory, tgt_mask=future, memory_key_padding_mask=pad)
        got = block(y, memory, memory_mask=~pad[:, None, :])
        torch.testing.assert_close(got, expected, **TIGHT)
    assert block.self_attn.W_q.weight.dtype == torch.float64
    assert {block.norm1.eps, block.norm2.eps, block.norm3.eps} == {eps}


@pytest.mark.parametrize("eps", [1e-5, 1e-3])
def test_encoder_from_torch_copies_the_layer(gen, eps):
    """The encoder block's twin: PyTorch's pre-norm GELU encoder layer, its
    weights and layer_norm_eps, with a causal and a padding mask."""
    layer = nn.TransformerEncoderLayer(
        8, 2, 12, dropout=0.0, activation="gelu", layer_norm_eps=eps,
        batch_first=True, norm_first=True,
    )  # fmt: skip
    layer = randomize(layer.double(), gen).eval()
    block = TransformerEncoderBlock.from_torch(layer)
    x = randn(gen, 2, 5, 8)
    future = torch.ones(5, 5, dtype=torch.bool).triu(1)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])  # True = ignore
    with torch.no_grad():
        torch.testing.assert_close(block(x), layer(x), **TIGHT)
        expected = layer(x, src_mask=future, src_key_padding_mask=pad)
        mask = ~future & ~pad[:, None, :]  # True = may attend
        torch.testing.assert_close(block(x, mask)[0], expected[0], **TIGHT)
        torch.testing.assert_close(block(x, mask)[1, :3], expected[1, :3], **TIGHT)
    assert block.attn.W_q.weight.dtype == torch.float64
    assert {block.norm1.eps, block.norm2.eps} == {eps}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"activation": "relu", "norm_first": True},  # only the activation differs
        {"activation": "gelu", "norm_first": False},  # only the norm's place
        {"activation": "gelu", "norm_first": True, "bias": False},  # only the biases
    ],
    ids=["relu", "post-norm", "no-bias"],
)
@pytest.mark.parametrize("kind", ["Decoder", "Encoder"])
def test_from_torch_refuses_each_layout_it_cannot_copy(kwargs, kind):
    torch_layer = getattr(nn, f"Transformer{kind}Layer")
    ours = {"Decoder": TransformerDecoderBlock, "Encoder": TransformerEncoderBlock}
    layer = torch_layer(8, 2, 12, batch_first=True, **kwargs)
    message = (
        "from_torch copies a pre-norm layer with GELU and biases: build it with "
        "norm_first=True, activation='gelu' and bias=True"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ours[kind].from_torch(layer)
    with pytest.raises(
        TypeError, match=f"^layer must be torch.nn.Transformer{kind}Layer, got Linear$"
    ):
        ours[kind].from_torch(nn.Linear(2, 2))


def test_from_torch_keeps_the_layer_s_device_and_dtype():
    """On PyTorch's ``meta`` device (shapes, no data): the copy is built where
    the layer lives, in its dtype."""
    layer = nn.TransformerDecoderLayer(
        8, 2, 12, activation="gelu", batch_first=True, norm_first=True,
        device="meta", dtype=torch.float64,
    )  # fmt: skip
    block = TransformerDecoderBlock.from_torch(layer)
    assert {(p.device.type, p.dtype) for p in block.parameters()} == {
        ("meta", torch.float64)
    }
    layer = nn.TransformerEncoderLayer(
        8, 2, 12, activation="gelu", batch_first=True, norm_first=True,
        device="meta", dtype=torch.float64,
    )  # fmt: skip
    block = TransformerEncoderBlock.from_torch(layer)
    assert {(p.device.type, p.dtype) for p in block.parameters()} == {
        ("meta", torch.float64)
    }


def test_block_without_cross_attention_is_a_causal_encoder_block(gen):
    """The GPT block: torch's pre-norm encoder layer with a causal mask, and the
    library's TransformerEncoderBlock(causal=True), with the same weights."""
    D, H, ff, T = 8, 2, 12, 6
    layer = nn.TransformerEncoderLayer(
        D, H, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    layer = randomize(layer.double(), gen).eval()
    block = TransformerDecoderBlock(D, H, ff, cross_attention=False).double().eval()
    enc = TransformerEncoderBlock(D, H, ff).double().eval()
    assert block.cross_attn is None and block.norm2 is None
    with torch.no_grad():
        for attn in (block.self_attn, enc.attn):
            copy_mha(attn, layer.self_attn)
        copy_linear_norm(
            [(block.norm1, layer.norm1), (block.norm3, layer.norm2)]
            + [(enc.norm1, layer.norm1), (enc.norm2, layer.norm2)]
            + [(m.ffn[0], layer.linear1) for m in (block, enc)]
            + [(m.ffn[2], layer.linear2) for m in (block, enc)]
        )
        x = randn(gen, 2, T, D)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        expected = layer(x, src_mask=future)
        torch.testing.assert_close(block(x), expected, **TIGHT)
        torch.testing.assert_close(enc(x, causal=True), expected, **TIGHT)


def test_attention_weights_are_the_weights_of_the_call(gen):
    block = randomize(TransformerDecoderBlock(8, 2).double(), gen).eval()
    y, memory = randn(gen, 2, 5, 8), randn(gen, 2, 4, 8)
    pad = torch.tensor([[True] * 4, [True, True, True, False]])[:, None, :]
    w = block.attention_weights(y, memory, memory_mask=pad)
    assert set(w) == {"self", "cross"}
    assert w["self"].shape == (2, 2, 5, 5) and w["cross"].shape == (2, 2, 5, 4)
    torch.testing.assert_close(w["self"].sum(-1), torch.ones(2, 2, 5).double())
    assert (w["self"].triu(1) == 0).all()  # no weight on a later position
    assert (w["cross"][1, :, :, 3] == 0).all()  # none on a padded key
    # the cross weights, recomputed from the sublayer's own input
    with torch.no_grad():
        h = y + block.self_attn(block.norm1(y), causal=True)
        expected = block.cross_attn.attention_weights(block.norm2(h), memory, mask=pad)
    torch.testing.assert_close(w["cross"], expected)
    plain = TransformerDecoderBlock(8, 2, cross_attention=False).double()
    assert set(plain.attention_weights(y)) == {"self"}


def test_attention_weights_follow_the_self_attention_mask(gen):
    """A mask on the decoder's own positions (a padded target): no weight on
    a masked key, and the cross weights read the sublayer input that the
    masked self-attention made."""
    block = randomize(TransformerDecoderBlock(8, 2).double(), gen).eval()
    y, memory = randn(gen, 2, 5, 8), randn(gen, 2, 4, 8)
    keep = torch.ones(2, 5, 5, dtype=torch.bool)
    keep[1, :, 1] = False  # the second target's position 1 is padding
    w = block.attention_weights(y, memory, keep)
    assert (w["self"][1, :, 1:, 1] == 0).all()
    assert (w["self"][0, :, 1:, 1] != 0).all()  # the other example is untouched
    with torch.no_grad():
        h = y + block.self_attn(block.norm1(y), mask=keep, causal=True)
        expected = block.cross_attn.attention_weights(block.norm2(h), memory)
    torch.testing.assert_close(w["cross"], expected, **TIGHT)


@pytest.mark.parametrize("cls", [TransformerDecoderBlock, EncoderDecoderTransformer])
def test_attention_weights_takes_the_arguments_of_forward(cls):
    forward = inspect.signature(cls.forward)
    weights = inspect.signature(cls.attention_weights)
    assert list(weights.parameters.values()) == list(forward.parameters.values())
    assert "tuple" not in str(forward.return_annotation)  # the output only


# --- the K/V cache ------------------------------------------------------------------


@pytest.mark.parametrize("cross", [True, False])
@pytest.mark.parametrize("chunks", [[1] * 7, [3, 1, 2, 1], [7]])
def test_cached_steps_equal_the_block_on_the_whole_prefix(gen, cross, chunks):
    block = randomize(
        TransformerDecoderBlock(8, 2, cross_attention=cross).double(), gen
    ).eval()
    y, memory = randn(gen, 2, sum(chunks), 8), randn(gen, 2, 5, 8)
    pad = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])[:, None, :]
    mem, m_mask = (memory, pad) if cross else (None, None)
    with torch.no_grad():
        full = block(y, mem, memory_mask=m_mask)  # (B, T, D): all at once
        outs, cache, t = [], None, 0
        for n in chunks:  # feed the positions a few at a time
            out, new = block.step(y[:, t : t + n], mem, cache, m_mask)
            if cache is not None:  # the old cache is not modified
                assert cache.k.shape[2] == t
            assert new.k.shape == (2, 2, t + n, 4) and new.v.shape == new.k.shape
            outs.append(out)
            cache, t, mem = new, t + n, None  # memory only on the first step
    torch.testing.assert_close(torch.cat(outs, dim=1), full, **TIGHT)
    if cross:
        assert cache.memory_k.shape == (2, 2, 5, 4)
    else:
        assert cache.memory_k is None and cache.memory_v is None


def test_step_and_forward_take_the_same_per_head_memory_mask(gen):
    """A memory mask per head (B, H, T_q, T_k), which MultiHeadAttention and
    the block's forward take, is taken by step too (its rows for the new
    positions), with the same outputs; each head sees other source keys."""
    block = randomize(TransformerDecoderBlock(8, 2).double(), gen).eval()
    y, memory = randn(gen, 2, 4, 8), randn(gen, 2, 5, 8)
    m_mask = torch.rand(2, 2, 4, 5, generator=gen) < 0.6
    m_mask[..., 0] = True  # every query sees a key
    with torch.no_grad():
        full = block(y, memory, memory_mask=m_mask)  # (B, T, D)
        out1, cache = block.step(y[:, :3], memory, None, m_mask[:, :, :3])
        out2, _ = block.step(y[:, 3:], None, cache, m_mask[:, :, 3:])
        shared = block(y, memory, memory_mask=m_mask[:, :1])  # (B, 1, T, T_k)
    torch.testing.assert_close(torch.cat([out1, out2], dim=1), full, **TIGHT)
    assert not torch.allclose(full, shared)  # the second head's mask counts


def test_the_cache_projects_each_position_once(gen):
    """Keys of earlier positions are taken from the cache, not recomputed: the
    key projection sees one new row per step."""
    block = TransformerDecoderBlock(8, 2, generator=g(1)).double().eval()
    rows = []
    block.self_attn.W_k.register_forward_hook(lambda m, i, o: rows.append(o.shape[1]))
    y, memory = randn(gen, 1, 6, 8), randn(gen, 1, 4, 8)
    with torch.no_grad():
        _, cache = block.step(y[:, :1], memory)
        first = cache.memory_k
        for t in range(1, 6):
            _, cache = block.step(y[:, t : t + 1], None, cache)
            assert cache.memory_k is first  # the memory's keys: projected once
    assert rows == [1] * 6


def test_model_decode_steps_equal_teacher_forcing(gen):
    model = EncoderDecoderTransformer(
        9, 11, embed_dim=16, num_heads=2, num_layers=2, generator=g(2)
    )
    model = model.double().eval()
    src = torch.tensor([[3, 4, 5, 6, 0], [7, 8, 3, 0, 0]])
    tgt = torch.tensor([[1, 6, 5, 4, 3, 2], [1, 3, 8, 7, 2, 0]])
    with torch.no_grad():
        full = model(src, tgt)  # (B, T_q, V): all positions at once
        memory, caches, steps = model.encode(src), None, []
        for t in range(tgt.shape[1]):
            logits, caches = model.decode_step(tgt[:, t : t + 1], memory, caches, src)
            steps.append(logits)
    assert len(caches) == 2 and isinstance(caches[0], KVCache)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **TIGHT)


def test_generate_is_greedy_decoding_by_recomputation():
    model = EncoderDecoderTransformer(9, 9, embed_dim=16, generator=g(3)).double()
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 3, 0]])
    tokens = model.generate(src, 6, bos_id=1)
    prefix = torch.ones(2, 1, dtype=torch.long)
    with torch.no_grad():
        for _ in range(6):  # the whole prefix through forward, every step
            nxt = model(src, prefix)[:, -1].argmax(-1, keepdim=True)
            prefix = torch.cat([prefix, nxt], dim=1)
    assert torch.equal(tokens, prefix[:, 1:])


def test_generate_pads_after_the_end_token():
    model = EncoderDecoderTransformer(9, 9, embed_dim=16, generator=g(3)).double()
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 3, 0]])
    free = model.generate(src, 6, bos_id=1)
    eos = int(free[0, 1])  # call the second token of example 1 the end token
    stopped = model.generate(src, 6, bos_id=1, eos_id=eos)
    assert torch.equal(stopped[0, :2], free[0, :2])
    assert (stopped[0, 2:] == model.pad_id).all()


# --- the causal property ------------------------------------------------------


def test_a_later_target_position_cannot_change_an_earlier_output(gen):
    model = EncoderDecoderTransformer(9, 9, embed_dim=16, num_layers=2, generator=g(4))
    src = torch.tensor([[3, 4, 5, 6, 7]])
    tgt = torch.tensor([[1, 7, 6, 5, 4]])
    changed = tgt.clone()
    changed[0, 3] = 8  # perturb position 3
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
    assert torch.equal(a[:, :3], b[:, :3])  # exactly: no rounding either
    assert not torch.allclose(a[:, 3:], b[:, 3:])


def test_the_gradient_to_a_later_input_is_exactly_zero(gen):
    block = randomize(TransformerDecoderBlock(8, 2).double(), gen)
    y = randn(gen, 1, 6, 8).requires_grad_()
    memory = randn(gen, 1, 4, 8).requires_grad_()
    out = block(y, memory)
    gy, gm = torch.autograd.grad(out[0, 2].sum(), (y, memory))
    assert (gy[0, 3:] == 0).all()  # later target positions: exactly zero
    assert (gy[0, :3].abs().sum(-1) > 0).all()  # earlier ones: they count
    assert (gm[0].abs().sum(-1) > 0).all()  # every source position counts


# --- padding, batching and the recurrent baseline --------------------------------


@pytest.mark.parametrize("cls", ["transformer", "bahdanau"])
def test_padding_changes_nothing(cls):
    """A padded batch gives each example the logits it gets alone, unpadded."""
    if cls == "transformer":
        model = EncoderDecoderTransformer(9, 9, embed_dim=16, generator=g(5))
    else:
        model = BahdanauSeq2Seq(9, 9, embed_dim=6, hidden_dim=5, generator=g(5))
    model = model.double().eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [8, 3, 0, 0, 0]])
    tgt = torch.tensor([[1, 7, 6], [1, 3, 8]])
    with torch.no_grad():
        batch = model(src, tgt)
        alone = [
            model(src[b : b + 1, : int((src[b] != 0).sum())], tgt[b : b + 1])
            for b in range(2)
        ]
    torch.testing.assert_close(batch, torch.cat(alone), **TIGHT)


def test_bahdanau_attention_is_a_distribution_over_real_tokens():
    model = BahdanauSeq2Seq(9, 9, embed_dim=6, hidden_dim=5, generator=g(6)).double()
    src = torch.tensor([[3, 4, 5, 6], [8, 3, 0, 0]])
    w = model.attention_weights(src, torch.tensor([[1, 6, 5], [1, 3, 8]]))
    assert w.shape == (2, 3, 4)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3).double())
    assert (w[1, :, 2:] == 0).all()


def test_bahdanau_step_by_hand(gen):
    """One decoder step written out from the docstring's equations."""
    m = randomize(BahdanauSeq2Seq(9, 9, embed_dim=6, hidden_dim=5).double(), gen)
    src, tgt = torch.tensor([[3, 4, 5]]), torch.tensor([[1]])
    with torch.no_grad():
        ann, _ = m.encoder(m.src_embed(src))  # (1, 3, 10): [forward; backward]
        s0 = torch.tanh(m.init_state(ann[:, 0, 5:]))  # backward state at j = 1
        hidden = torch.tanh(m.score.W_q(s0)[:, None] + m.score.W_k(ann))
        alpha = torch.softmax(m.score.w_v(hidden)[..., 0], dim=-1)  # (1, 3)
        scores = m.score(s0[:, None], ann)[:, 0]  # the library's AdditiveScore
        torch.testing.assert_close(torch.softmax(scores, -1), alpha, **TIGHT)
        context = (alpha[..., None] * ann).sum(1)  # (1, 10): C_1
        e = m.tgt_embed(tgt[:, 0])
        s1 = m.cell(torch.cat([e, context], -1), s0)
        logits = m.head(torch.cat([s1, context, e], -1))
        torch.testing.assert_close(m(src, tgt)[:, 0], logits, **TIGHT)
        torch.testing.assert_close(m.attention_weights(src, tgt)[:, 0], alpha)


def test_bahdanau_generate_is_greedy_decoding_by_recomputation():
    model = BahdanauSeq2Seq(9, 9, embed_dim=6, hidden_dim=5, generator=g(7)).double()
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 3, 0]])
    tokens = model.generate(src, 5, bos_id=1)
    prefix = torch.ones(2, 1, dtype=torch.long)
    with torch.no_grad():
        for _ in range(5):
            nxt = model(src, prefix)[:, -1].argmax(-1, keepdim=True)
            prefix = torch.cat([prefix, nxt], dim=1)
    assert torch.equal(tokens, prefix[:, 1:])
    eos = int(tokens[1, 0])
    stopped = model.generate(src, 5, bos_id=1, eos_id=eos)
    assert stopped[1, 0] == eos and (stopped[1, 1:] == model.pad_id).all()


# --- devices and bad input ----------------------------------------------------------


def test_block_and_step_stay_on_the_input_device():
    block = TransformerDecoderBlock(8, 2).to("meta")
    y, memory = torch.empty(2, 3, 8, device="meta"), torch.empty(2, 4, 8, device="meta")
    assert block(y, memory).device.type == "meta"
    out, cache = block.step(
        y, memory, memory_mask=torch.ones(2, 1, 4, device="meta").bool()
    )
    out, cache = block.step(y[:, :1], None, cache)
    assert out.device.type == "meta" and cache.k.shape == (2, 2, 4, 4)


def _block(cross=True):
    return TransformerDecoderBlock(8, 2, cross_attention=cross, generator=g(0))


def _model():
    return EncoderDecoderTransformer(7, 9, embed_dim=8, generator=g(0))


def _bahdanau():
    return BahdanauSeq2Seq(7, 9, embed_dim=4, hidden_dim=3, generator=g(0))


z = torch.zeros
BAD = [
    (
        lambda: _block()(z(2, 3, 8)),
        ValueError,
        r"^memory \(B, T_k, 8\) is required: the block has cross-attention \(the "
        r"encoder's outputs are its keys and values\)$",
    ),
    (
        lambda: _block(False)(z(2, 3, 8), z(2, 4, 8)),
        ValueError,
        r"^this block has no cross-attention \(cross_attention=False\): pass "
        r"memory=None, got memory \(2, 4, 8\)$",
    ),
    (
        lambda: _block()(z(2, 3, 6), z(2, 4, 8)),
        ValueError,
        r"x must have shape \(B, T, 8\)",
    ),
    (lambda: _block()(z(2, 3, 8), z(2, 4)), ValueError, "memory must have at least 3"),
    (
        lambda: _block()(z(2, 3, 8), z(3, 4, 8)),
        ValueError,
        r"^x and memory must have the same batch size, got x \(2, 3, 8\) and "
        r"memory \(3, 4, 8\)$",
    ),
    (
        lambda: _block()(z(2, 3, 8).long(), z(2, 4, 8)),
        TypeError,
        "x must be a floating",
    ),
    (
        lambda: _block()(
            z(2, 3, 8), z(2, 4, 8), memory_mask=torch.ones(2, 3, 5).bool()
        ),
        ValueError,
        r"^memory_mask of shape \(2, 3, 5\) does not broadcast",
    ),
    (
        lambda: _block().step(
            z(3, 1, 8), None, _block().step(z(2, 1, 8), z(2, 4, 8))[1]
        ),
        ValueError,
        r"cache must be keys and values \(B, H, T_k, d_k\) = \(3, 2, T_k, 4\)",
    ),
    (
        lambda: _block().step(z(2, 1, 8), z(2, 4, 8), None, torch.ones(2, 1, 5).bool()),
        ValueError,
        "memory_mask of shape",
    ),
    (lambda: _block().step(z(2, 1, 8)), ValueError, "memory .* is required"),
    (lambda: _model()(z(2, 3), torch.ones(2, 2).long()), TypeError, "src must be a"),
    (lambda: _model()(torch.ones(2, 3).long(), torch.ones(2).long()), TypeError, "tgt"),
    (
        lambda: _model()(torch.full((2, 3), 7), torch.ones(2, 2).long()),
        ValueError,
        r"src holds ids outside \[0, 7\)",
    ),
    (
        lambda: EncoderDecoderTransformer(12, 10, pad_id=10),
        ValueError,
        r"^pad_id=10 must be an id of both vocabularies \(below src_vocab=12 and "
        r"tgt_vocab=10\)$",
    ),
    (lambda: BahdanauSeq2Seq(5, 9, pad_id=5), ValueError, "^pad_id=5 must be an id"),
    (
        lambda: _bahdanau()(torch.tensor([[3, 4], [0, 0]]), torch.ones(2, 2).long()),
        ValueError,
        r"^src rows \[1\] hold only padding \(pad_id=0\), src \(2, 2\): the GRU "
        r"encoder needs a real token in every source$",
    ),
    (
        lambda: _bahdanau()(torch.ones(2, 3).long(), torch.ones(2, 0).long()),
        ValueError,
        r"^tgt must hold at least one position, got \(2, 0\)$",
    ),
    (
        lambda: TransformerDecoderBlock.from_torch(nn.Linear(2, 2)),
        TypeError,
        "layer must",
    ),
    (
        lambda: TransformerDecoderBlock.from_torch(nn.TransformerDecoderLayer(8, 2)),
        ValueError,
        "norm_first=True",
    ),
]


@pytest.mark.parametrize("call, error, match", BAD)
def test_bad_input_raises_helpful_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_encoder_block_names_its_bad_arguments_whole():
    """STYLE rule 7, the messages pinned whole."""
    import re

    def raises(error, message):
        return pytest.raises(error, match="^" + re.escape(message) + "$")

    with raises(TypeError, "embed_dim must be an int, got bool"):
        TransformerEncoderBlock(True, 2)
    with raises(ValueError, "dropout must be in [0, 1], got dropout=2"):
        TransformerEncoderBlock(4, 2, dropout=2)
    block, x = TransformerEncoderBlock(4, 2), torch.zeros(1, 2, 5)
    with raises(ValueError, "x must have shape (B, T, 4), got (1, 2, 5)"):
        block(x)
    with raises(ValueError, "x must have shape (B, T, 4), got (1, 2, 5)"):
        block.attention_weights(x)
