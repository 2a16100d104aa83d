"""selfattn.convolution: attention that is a convolution (Cordonnier et al.,
2020), against torch.nn.functional.conv2d; its masks against explicit pixel
coordinates."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from selfattn.convolution import (
    conv2d_as_attention,
    kernel_offsets,
    relative_position_mask,
)


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
