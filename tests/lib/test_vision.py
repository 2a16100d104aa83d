"""selfattn.vision: patches against a loop, and the Vision Transformer block
by block (the CNN baseline beside it for shapes)."""

from __future__ import annotations

import pytest
import torch

from selfattn import scaled_dot_product_attention
from selfattn.lab.baselines import SmallCNN
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


def test_vit_refuses_images_of_another_size_or_channel_count():
    """A smaller image would run on fewer patches (and the position table's
    first rows), a wider channel count would fail inside the patch embedding:
    both are refused at the top, naming images and the shapes."""
    vit = ViT(
        8, 4, 1, 3, embed_dim=8, depth=1, num_heads=2, generator=torch.Generator()
    )
    expected = r"^images must have shape \(B, 1, 8, 8\) \(in_channels=1, image_size=8\)"
    for shape in [(2, 1, 4, 4), (2, 3, 8, 8), (2, 1, 8, 4)]:
        for method in (vit, vit.attention_weights):
            with pytest.raises(ValueError, match=expected + rf", got \(2, {shape[1]}"):
                method(torch.rand(*shape))


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
