r"""Self-attention that *is* a convolution (Cordonnier et al., 2020, Theorem 1).

A multi-head self-attention layer with :math:`K^2` heads and relative
positional attention reproduces any :math:`K \times K` convolution. Head
:math:`h` attends only to the pixel at offset :math:`\Delta_h` from the
query (:func:`kernel_offsets`, :func:`relative_position_mask`); its
value/output projection carries the kernel slice :math:`W_{:,:,\Delta_h}`
(:func:`conv2d_as_attention`):

.. math::
    \operatorname{MHSA}(X)_q = \sum_{h} \sum_{k} A^{(h)}_{qk}\, x_k\,
    W^{(h)}_{\text{out}} + b,
    \qquad A^{(h)}_{qk} = [\,k - q = \Delta_h\,]
    = \operatorname{Conv}(X)_q .
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_images, check_int, check_tensor, shape_str
from selfattn.attention import masked_softmax

__all__ = ["kernel_offsets", "relative_position_mask", "conv2d_as_attention"]


def kernel_offsets(kernel_size: int) -> list[tuple[int, int]]:
    r"""The offsets :math:`\Delta_h = (i - r, j - r)` of a ``K x K`` kernel.

    Row-major over the kernel's ``(i, j)``, ``r = K // 2``; head ``h`` of
    :func:`conv2d_as_attention` looks at the pixel ``Delta_h`` away from the
    query, weighted by ``weight[:, :, i, j]``. ``torch.nn.functional.conv2d``
    computes a cross-correlation, so the offset has the sign of ``(i, j)``.

    Taught in :doc:`/notebooks/images-attention-convolution`.

    Examples:
        >>> kernel_offsets(3)[:4]
        [(-1, -1), (-1, 0), (-1, 1), (0, -1)]
    """
    if check_int("kernel_size", kernel_size) % 2 == 0:
        raise ValueError(f"kernel_size must be a positive odd int, got {kernel_size}")
    r = kernel_size // 2
    return [(i - r, j - r) for i in range(kernel_size) for j in range(kernel_size)]


def relative_position_mask(
    height: int,
    width: int,
    offset: tuple[int, int],
    *,
    device: torch.device | str | None = None,
) -> Tensor:
    r"""Query pixel ``q`` may attend key pixel ``k`` iff ``k - q = offset``.

    Pixels are numbered row-major, ``n = y W + x``. Near the border the pixel
    ``q + offset`` may lie outside the image: that query row is all False,
    so attention gives it zero weights and a zero output, which is exactly
    what zero padding gives a convolution.

    Taught in :doc:`/notebooks/images-attention-convolution`.

    Returns:
        ``(H W, H W)`` bool with at most one True per row, on ``device``.

    Examples:
        >>> m = relative_position_mask(3, 3, (0, 1))  # each pixel: right neighbour
        >>> m.shape, int(m.sum())  # 9 query pixels, 6 have a right neighbour
        (torch.Size([9, 9]), 6)
    """
    height, width = check_int("height", height), check_int("width", width)
    dy, dx = offset
    y, x = torch.meshgrid(
        torch.arange(height, device=device),
        torch.arange(width, device=device),
        indexing="ij",
    )
    y, x = y.flatten(), x.flatten()  # (HW,) pixel coordinates, row-major
    return (y[None, :] - y[:, None] == dy) & (x[None, :] - x[:, None] == dx)


def conv2d_as_attention(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    *,
    gamma: float | None = None,
) -> tuple[Tensor, Tensor]:
    r"""A ``K x K`` convolution computed as multi-head self-attention over pixels.

    Cordonnier et al. (2020, Theorem 1 and Lemma 1): with :math:`K^2` heads,
    head :math:`h` attends to the pixel at offset :math:`\Delta_h`
    (:func:`kernel_offsets`), its value projection is the identity and its
    block of the output projection is :math:`W^O_h =
    (W^{\text{conv}}_{\Delta_h})^\top` (``C_in x C_out``). Then

    .. math::
        \operatorname{MHSA}(X) = \big[\,A'^{\,1} X;\ \dots;\ A'^{\,K^2} X\,\big]
        \begin{bmatrix} W^O_1 \\ \vdots \\ W^O_{K^2} \end{bmatrix} + b
        = \operatorname{conv2d}(x, W^{\text{conv}}, b,\ \text{padding} = K/2) .

    * ``gamma=None`` (exact): head :math:`h`'s weights :math:`A'^{\,h}` are
      the masked softmax of zero scores under :func:`relative_position_mask`,
      a one-hot row, or a zero row where the offset leaves the image (zero
      padding).
    * ``gamma`` a number :math:`\gamma`: the paper's quadratic relative
      positional scores :math:`\alpha^h_{i,j} = -\gamma \lVert
      (\mathrm{pos}(j) - \mathrm{pos}(i)) - \Delta_h \rVert^2` (the paper
      writes :math:`\alpha` for the sharpness), a plain softmax over the keys
      of the image padded with ``K // 2`` rings of zero pixels. As
      :math:`\gamma \to \infty` each row tends to the one-hot of the exact
      construction (the error shrinks like :math:`e^{-\gamma}`).

    Taught in :doc:`/notebooks/images-attention-convolution`.

    Args:
        x: images ``(B, C_in, H_img, W_img)``.
        weight: the kernel :math:`W^{\text{conv}}` ``(C_out, C_in, K, K)``,
            ``K`` odd.
        bias: ``(C_out,)`` or None.
        gamma: None for the exact (hard) attention, else the softmax sharpness.

    Returns:
        ``(out, weights)``: ``out`` ``(B, C_out, H_img, W_img)``, equal to
        ``conv2d(x, weight, bias, padding=K//2)`` (exactly, or up to the
        softmax error when ``gamma`` is given), and the weights of the
        ``K^2`` heads ``(K^2, T, T_k)`` with ``T = H_img W_img`` query
        pixels and ``T_k = T`` (exact) or ``(H_img + 2c)(W_img + 2c)`` keys
        (soft, ``c = K // 2`` rings of padding).

    Examples:
        >>> import torch.nn.functional as F
        >>> g = torch.Generator().manual_seed(0)
        >>> x = torch.randn(1, 2, 5, 5, generator=g)  # 2 channels, 5 x 5 pixels
        >>> kernel = torch.randn(3, 2, 3, 3, generator=g)  # 2 -> 3 channels, 3 x 3
        >>> out, _ = conv2d_as_attention(x, kernel)
        >>> torch.allclose(out, F.conv2d(x, kernel, padding=1), atol=1e-5)
        True
    """
    B, C_in, H, W = check_images(x).shape
    check_tensor("weight", weight, min_dim=4)
    C_out, C_w, K, K2 = weight.shape
    if C_w != C_in or K != K2:
        raise ValueError(
            f"weight must have shape (C_out, {C_in}, K, K) for x {shape_str(x)}, "
            f"got {shape_str(weight)}"
        )
    offsets = kernel_offsets(K)
    c = K // 2  # rings of zero padding
    if gamma is None:  # exact: one allowed key per head and query (or none)
        tokens = x.flatten(2).transpose(1, 2)  # (B, HW, C_in)
        mask = torch.stack(
            [relative_position_mask(H, W, d, device=x.device) for d in offsets]
        )
        scores = torch.zeros(mask.shape, dtype=x.dtype, device=x.device)
        A = masked_softmax(scores, mask)  # (K^2, HW, HW)
    else:  # soft: quadratic relative scores over the zero-padded image
        padded = nn.functional.pad(x, (c, c, c, c))  # (B, C_in, H+2c, W+2c)
        tokens = padded.flatten(2).transpose(1, 2)  # (B, T_k, C_in)
        grid = {"device": x.device}
        qy, qx = torch.meshgrid(
            torch.arange(H, **grid), torch.arange(W, **grid), indexing="ij"
        )
        ky, kx = torch.meshgrid(
            torch.arange(H + 2 * c, **grid) - c,
            torch.arange(W + 2 * c, **grid) - c,
            indexing="ij",
        )
        dy = ky.flatten()[None, :] - qy.flatten()[:, None]  # (HW, T_k)
        dx = kx.flatten()[None, :] - qx.flatten()[:, None]  # (HW, T_k)
        scores = torch.stack(
            [-gamma * ((dy - a) ** 2 + (dx - b) ** 2) for a, b in offsets]
        ).to(x.dtype)  # (K^2, HW, T_k)
        A = torch.softmax(scores, dim=-1)
    heads = A[None] @ tokens[:, None]  # (B, K^2, HW, C_in), value proj. = identity
    concat = heads.transpose(1, 2).reshape(B, H * W, K * K * C_in)  # (B, HW, K^2 C_in)
    W_out = weight.permute(2, 3, 1, 0).reshape(K * K * C_in, C_out)  # stacked slices
    out = concat @ W_out  # (B, HW, C_out)
    if bias is not None:
        out = out + bias
    out = out.transpose(1, 2).reshape(B, C_out, H, W)  # (B, C_out, H, W)
    return out, A
