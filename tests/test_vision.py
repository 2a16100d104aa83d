"""selfattn.vision: patches against a loop, attention-as-convolution against
torch.nn.functional.conv2d, and the two image models' shapes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from selfattn import scaled_dot_product_attention
from selfattn.lab.baselines import SmallCNN
from selfattn.convolution import (
    conv2d_as_attention,
    kernel_offsets,
    relative_position_mask,
)
from selfattn.vision import ViT, patchify


def _patchify_loop(images: torch.Tensor, p: int) -> torch.Tensor:
    """Oracle: cut the patches one by one, row-major, and flatten each."""
    B, C, H, W = images.shape
    rows = []
    for b in range(B):
        patches = []
        for r in range(H // p):
            for c in range(W // p):
                patches.append(images[b, :, r * p : (r + 1) * p, c * p : (c + 1) * p])
        rows.append(torch.stack([q.flatten() for q in patches]))
    return torch.stack(rows)


@pytest.mark.parametrize(
    "B, C, H, W, p",
    [(1, 1, 8, 8, 2), (2, 3, 6, 9, 3), (3, 2, 8, 4, 4), (1, 3, 5, 10, 1)],
)
def test_patchify_matches_a_loop(B, C, H, W, p, gen):
    x = torch.randn(B, C, H, W, generator=gen)
    patches = patchify(x, p)
    assert patches.shape == (B, (H // p) * (W // p), C * p * p)
    torch.testing.assert_close(patches, _patchify_loop(x, p), rtol=0, atol=0)


def test_pixels_as_tokens():
    """The lecture's 5 x 10 RGB image is a set of 50 vectors of 3 numbers."""
    img = torch.arange(150.0).reshape(1, 3, 5, 10)
    tokens = patchify(img, 1)
    assert tokens.shape == (1, 50, 3)
    assert tokens[0, 13].tolist() == img[0, :, 1, 3].tolist()  # pixel (y=1, x=3)


def test_patchify_bad_input():
    with pytest.raises(ValueError, match="patch=3"):
        patchify(torch.zeros(1, 1, 8, 8), 3)
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        patchify(torch.zeros(1, 1, 1, 8, 8), 2)
    with pytest.raises(TypeError):
        patchify(torch.zeros(1, 1, 8, 8, dtype=torch.long), 2)


def test_kernel_offsets_and_relative_mask():
    assert kernel_offsets(3) == [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    H, W = 3, 4
    for offset in kernel_offsets(3):
        m = relative_position_mask(H, W, offset)
        for q in range(H * W):
            for k in range(H * W):  # oracle: explicit pixel coordinates
                dy, dx = k // W - q // W, k % W - q % W
                assert bool(m[q, k]) == ((dy, dx) == offset)
    with pytest.raises(ValueError, match="odd"):
        kernel_offsets(2)


@pytest.mark.parametrize(
    "B, C_in, C_out, H, W, K, bias",
    [
        (1, 1, 1, 4, 4, 3, False),
        (2, 3, 5, 5, 7, 3, True),
        (1, 2, 3, 6, 5, 5, True),
        (2, 2, 2, 3, 3, 1, True),
    ],
)
def test_conv_as_attention_is_exact(B, C_in, C_out, H, W, K, bias, gen):
    kw = {"generator": gen, "dtype": torch.float64}
    x = torch.randn(B, C_in, H, W, **kw)
    w = torch.randn(C_out, C_in, K, K, **kw)
    b = torch.randn(C_out, **kw) if bias else None
    out, A = conv2d_as_attention(x, w, b)
    ref = F.conv2d(x, w, b, padding=K // 2)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    # each head's row is one-hot, or all zero where the offset leaves the image
    assert A.shape == (K * K, H * W, H * W)
    assert set(A.unique().tolist()) <= {0.0, 1.0}
    for h, (dy, dx) in enumerate(kernel_offsets(K)):
        inside = (H - abs(dy)) * (W - abs(dx))
        assert int(A[h].sum()) == inside


def test_conv_as_attention_float32(gen):
    x = torch.randn(2, 3, 8, 8, generator=gen)
    w = torch.randn(4, 3, 3, 3, generator=gen)
    out, _ = conv2d_as_attention(x, w)
    torch.testing.assert_close(out, F.conv2d(x, w, padding=1))


def test_soft_attention_tends_to_the_convolution(gen):
    """Cordonnier's quadratic scores: the error falls towards 0 as gamma grows."""
    kw = {"generator": gen, "dtype": torch.float64}
    x, w = torch.randn(1, 2, 5, 6, **kw), torch.randn(3, 2, 3, 3, **kw)
    ref = F.conv2d(x, w, padding=1)
    errors = [
        (conv2d_as_attention(x, w, gamma=a)[0] - ref).abs().max().item()
        for a in (1.0, 3.0, 10.0, 30.0)
    ]
    assert all(e1 > e2 for e1, e2 in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-9
    _, A = conv2d_as_attention(x, w, gamma=2.0)
    assert A.shape == (9, 30, 7 * 8)
    torch.testing.assert_close(A.sum(-1), torch.ones(9, 30, dtype=torch.float64))


def test_conv_as_attention_bad_input(gen):
    x = torch.randn(1, 3, 4, 4, generator=gen)
    with pytest.raises(ValueError, match="C_out, 3, K, K"):
        conv2d_as_attention(x, torch.randn(2, 2, 3, 3, generator=gen))
    with pytest.raises(ValueError, match="odd"):
        conv2d_as_attention(x, torch.randn(2, 3, 2, 2, generator=gen))


def test_vit_and_cnn_shapes_and_gradients():
    torch.manual_seed(0)
    vit = ViT(8, 2, 1, 10, embed_dim=16, depth=2, num_heads=2)
    x = torch.rand(5, 1, 8, 8)
    logits, weights = vit(x), vit.attention_weights(x)
    assert logits.shape == (5, 10)
    assert len(weights) == 2 and weights[0].shape == (5, 2, 17, 17)
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(5, 2, 17))
    logits.sum().backward()
    assert vit.cls.grad is not None and vit.pos.weight.grad is not None
    cnn = SmallCNN(1, 10)
    assert cnn(x).shape == (5, 10)
    with pytest.raises(ValueError, match="patch=3"):
        ViT(8, 3, 1, 10)
    with pytest.raises(ValueError, match="pool"):
        ViT(8, 2, 1, 10, pool="max")


def test_vit_mean_pool_reads_the_patch_average():
    """pool="mean": the head sees the mean of the patch outputs (oracle: the
    blocks run by hand, then the same norm and head)."""
    torch.manual_seed(0)
    vit = ViT(8, 4, 1, 3, embed_dim=8, depth=1, num_heads=2, pool="mean").eval()
    x = torch.rand(2, 1, 8, 8)
    z = vit.embed(patchify(x, 4))  # (B, N, D)
    z = vit.pos(torch.cat([vit.cls.expand(2, -1, -1), z], dim=1))
    z = vit.blocks[0](z)
    expected = vit.head(vit.norm(z[:, 1:].mean(dim=1)))
    torch.testing.assert_close(vit(x), expected)


def test_vit_positions_matter():
    """Without positions a ViT is blind to where patches are: permuting the
    patches would not change its output. With learned positions it does."""
    torch.manual_seed(0)
    vit = ViT(4, 2, 1, 3, embed_dim=8, depth=1, num_heads=2)
    with torch.no_grad():
        vit.pos.weight.normal_()
    x = torch.rand(1, 1, 4, 4)
    swapped = x.clone()  # swap the two top patches
    swapped[..., :2, :2], swapped[..., :2, 2:] = x[..., :2, 2:], x[..., :2, :2]
    assert not torch.allclose(vit(x), vit(swapped))
    with torch.no_grad():
        vit.pos.weight.zero_()
    torch.testing.assert_close(vit(x), vit(swapped))


def test_vit_attention_weights_block_by_block():
    """Each block's weights: the explicit attention of that block's heads on
    LN of its input, the input being the previous block's output (blocks run
    by hand); rows sum to 1; forward is unchanged by asking for weights."""
    vit = ViT(8, 4, 1, 3, embed_dim=8, depth=2, num_heads=2)
    vit = vit.double().eval()
    x = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    x = x.double()
    weights = vit.attention_weights(x)
    z = vit.embed(patchify(x, 4))  # (B, N, D)
    z = vit.pos(torch.cat([vit.cls.expand(2, -1, -1), z], dim=1))  # (B, N + 1, D)
    assert len(weights) == 2
    for block, w in zip(vit.blocks, weights, strict=True):
        mha, h = block.attn, block.norm1(z)

        def split(t, mha=mha):
            return t.view(2, 5, mha.num_heads, mha.d_k).transpose(1, 2)

        q, k, v = split(mha.W_q(h)), split(mha.W_k(h)), split(mha.W_v(h))
        expected_heads, expected_w = scaled_dot_product_attention(q, k, v)
        torch.testing.assert_close(w, expected_w)  # (B, heads, N + 1, N + 1)
        torch.testing.assert_close(w.sum(-1), torch.ones(2, 2, 5, dtype=w.dtype))
        a = mha.W_o(expected_heads.transpose(1, 2).reshape(2, 5, 8))
        z = z + a
        z = z + block.ffn(block.norm2(z))
    torch.testing.assert_close(vit(x), vit.head(vit.norm(z[:, 0])))
