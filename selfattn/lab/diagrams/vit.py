"""The Vision Transformer as a picture, and where a trained one looks: the
pipeline's shapes are a forward pass of the given :class:`selfattn.vision.ViT`,
and each attention panel gives the number of patches it effectively attends to,
the receptive field that self-attention chooses, image by image."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from torch import Tensor

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
from selfattn.lab.plotting import CMAP
from selfattn.vision import patchify

_PIXELS = dict(cmap="gray_r", interpolation="nearest")  # an image's first channel
_OUTLINE = {"fill": False, "ec": d.VERMILLION, "lw": 2.5}  # the query patch


def vit_shapes(vit: torch.nn.Module, image: Tensor) -> dict[str, tuple[int, ...]]:
    """The shape of every stage of ``vit`` on one image ``(C, H_img, W_img)``,
    read off its own pieces and checked against ``vit(image)``: ``image``,
    ``patches`` ``(T_p, C p^2)``, ``embedded`` ``(T_p, D)``, ``tokens`` and
    ``encoded`` ``(T_p + 1, D)``, ``summary`` ``(1, D)``, ``logits``."""
    if not isinstance(image, Tensor) or image.dim() != 3:
        raise ValueError("image must be one image, a tensor (C, H_img, W_img)")
    x = image[None]  # (1, C, H, W)
    with torch.no_grad():
        patches = patchify(x, vit.patch)  # (1, T_p, C p^2)
        emb = vit.embed(patches)  # (1, T_p, D)
        cls = vit.cls.expand(1, -1, -1)  # (1, 1, D)
        z = vit.pos(torch.cat([cls, emb], dim=1))  # (1, T, D)
        tokens = z
        for block in vit.blocks:
            z = block(z)  # (1, T, D)
        summary = z[:, 0] if vit.pool == "cls" else z[:, 1:].mean(dim=1)  # (1, D)
        logits = vit.head(vit.norm(summary))  # (1, classes)
        if not torch.allclose(logits, vit(x), atol=1e-5):
            raise RuntimeError("the pieces of this ViT do not give vit(image)")
    stages = dict(image=x, patches=patches, embedded=emb, tokens=tokens, encoded=z)
    shapes = {name: tuple(a.shape[1:]) for name, a in stages.items()}
    return shapes | {"summary": tuple(summary.shape), "logits": tuple(logits.shape)}


def vit_pipeline(vit: torch.nn.Module, image: Tensor) -> Figure:
    r"""Draw a Vision Transformer's pipeline with the shapes of a real run.

    Image (cut by the patch grid) → :math:`T_p` patch vectors of :math:`C p^2`
    numbers (:func:`selfattn.vision.patchify`) → their embedding to width
    :math:`D` → the class token in front and positions added, :math:`T = T_p + 1`
    tokens → the encoder blocks → the summary (as ``vit.pool`` says) → LayerNorm
    and a linear head → the logits, each grid of the shape ``vit_shapes`` reads
    off ``vit`` on ``image``, the class token's row coloured apart.

    Args:
        vit: a :class:`selfattn.vision.ViT` (any trained or untrained one).
        image: one image ``(C, H_img, W_img)``; the first channel is drawn.

    Returns:
        The figure.
    """
    s = vit_shapes(vit, image)
    (C, H_img, W_img), (T_p, CP), (T, D) = s["image"], s["patches"], s["tokens"]
    depth, p = len(vit.blocks), vit.patch
    cell = min(0.12, 2.0 / max(T, D, CP))
    px = 2.0 / max(H_img, W_img)  # the side of one pixel as drawn
    w_img, h_img = W_img * px, H_img * px
    gap = 1.75  # between two drawn pieces, room for an arrow and its label
    widths = [w_img, CP * cell, D * cell, D * cell, D * cell, D * cell]
    widths.append(s["logits"][1] * cell * 1.3)
    lefts = np.cumsum([0.0] + [w + gap for w in widths[:-1]])
    centres = lefts + np.asarray(widths) / 2
    high = max(T * cell, h_img)
    xlim, ylim = (-0.4, lefts[-1] + widths[-1] + 0.6), (-high / 2 - 1.5, high / 2 + 0.8)
    fig, ax = d.canvas(11.0, xlim, ylim, top=0.4, bottom=0.85)
    # the image, the patch grid on it
    box = (0.0, -h_img / 2, w_img, h_img / 2)
    extent = (box[0], box[2], box[1], box[3])
    ax.imshow(image[0].numpy(), extent=extent, zorder=1, **_PIXELS)
    grid = [(k * px, box[1], k * px, box[3]) for k in range(0, W_img + 1, p)]
    grid += [(0, y, w_img, y) for y in box[3] - px * np.arange(0, H_img + 1, p)]
    d.segments(ax, grid, color=d.VERMILLION, lw=1.2)
    d.text(ax, w_img / 2, box[3] + 0.12, "image", d.FONT, va="bottom")
    shape = f"$C \\times H_{{img}} \\times W_{{img}}$\n({C} × {H_img} × {W_img})"
    label = f"{shape}\n{T_p} patches\nof {p} × {p} pixels"
    d.text(ax, w_img / 2, box[1] - 0.12, label, va="top")
    stages = [  # (shape, colour, symbol, dims, note, in the key)
        ((T_p, CP), d.GREY, "patches", "T_p × C p^2", "a row\nper patch",
         "a patch's pixels, one row"),
        ((T_p, D), d.BLUE, "embedded", "T_p × D", "", "embedded patches"),
        ((T, D), d.GREEN, "tokens", "T × D", "row 0:\nclass token",
         "tokens, positions added"),
        (s["encoded"], d.PURPLE, "encoded", "T × D", "", "after the encoder"),
        (s["summary"], d.PURPLE, "summary", "1 × D", "", ""),
        (s["logits"], d.VERMILLION, "logits", "1 × classes", "", "logits"),
    ]  # fmt: skip
    boxes = [box]
    for xc, (shape, c, symbol, dims, note, _) in zip(centres[1:], stages, strict=True):
        size = cell * 1.3 if symbol == "logits" else cell
        names = dict(symbol=symbol, dims=dims, note=note)
        boxes.append(d.matrix(ax, (xc, 0.0), shape, size, c, **names))
    for box in boxes[3:5]:  # the class token's row, in the tokens and after the blocks
        d.row(ax, box, box[3] - cell, cell, fc=d.ORANGE, alpha=0.8, ec="none", zorder=3)
    blocks = f"encoder\nblock{'s' if depth > 1 else ''} ×{depth}"
    read = "class\ntoken" if vit.pool == "cls" else "mean of\npatch rows"
    labels = ["patchify", "linear\n$E$", "+ [CLS]\n+ positions", blocks, read]
    d.chain(ax, boxes, labels + ["LN,\nlinear"], above=True, size=d.SMALL - 1)
    ax.set_title("A Vision Transformer: patches as tokens", size=d.FONT + 1)
    key = [(label, color) for _, color, *_, label in stages if label]
    key.insert(3, ("class token [CLS]", d.ORANGE))
    d.legend(fig, key, ncol=3)
    return fig


def effective_keys(weights: Tensor) -> Tensor:
    r"""How many keys a row of weights effectively attends to: :math:`e^{H}`,
    the exponential of its entropy :math:`H = -\sum_j w_j \ln w_j` (1 for a
    one-hot row, :math:`T_k` for equal weights).

    Args:
        weights: ``(..., T_k)``, each row summing to 1.

    Returns:
        ``(...)``.
    """
    w = weights.clamp_min(1e-30)
    return torch.exp(-(weights * w.log()).sum(-1))


def _check_patches(images, weights, patch, query: int, titles, field) -> tuple:
    """The patch side and grid ``(rows, columns)``, the arguments checked."""
    if not isinstance(images, Tensor) or images.dim() != 4:
        raise ValueError("images must be a tensor (R, C, H_img, W_img)")
    R, _, H_img, W_img = images.shape
    p = check_int("patch", patch)
    if H_img % p or W_img % p:
        raise ValueError(f"patch={p} must divide the image size {H_img} x {W_img}")
    gh, gw = H_img // p, W_img // p
    T_p = gh * gw
    if not 0 <= query < T_p:
        raise ValueError(f"query must be a patch index in [0, {T_p}), got {query}")
    if not weights:
        raise ValueError("weights must hold at least one head")
    for name, w in weights.items():
        if tuple(w.shape) != (R, T_p + 1, T_p + 1):
            raise ValueError(
                f"weights {name!r} must have shape ({R}, {T_p + 1}, {T_p + 1}) "
                f"(class token + {T_p} patches), got {tuple(w.shape)}"
            )
    if field is not None and (check_int("field", field) % 2 == 0):
        raise ValueError(f"field must be odd, got {field}")
    if titles is not None and len(titles) != R:
        raise ValueError(f"titles has {len(titles)} labels for {R} images")
    return p, gh, gw


def _looks(ax, row: Tensor, grid: tuple[int, int], query, field, vmax: float):
    """One heatmap: the query's weights ``row`` (class token first) on the grid."""
    (gh, gw), (qy, qx) = grid, query
    heat = row[1:].reshape(gh, gw).numpy()  # the patches' weights on their grid
    im = ax.imshow(heat, cmap=CMAP, vmin=0, vmax=vmax, interpolation="nearest")
    ax.add_patch(Rectangle((qx - 0.5, qy - 0.5), 1, 1, **_OUTLINE))
    if field is not None:  # the block a convolution would see, clipped
        r0, c0 = max(qy - field // 2, 0), max(qx - field // 2, 0)
        r1, c1 = min(qy + field // 2, gh - 1), min(qx + field // 2, gw - 1)
        dashed = dict(fill=False, ec="white", lw=1.5, ls="--")
        xy, w, h = (c0 - 0.5, r0 - 0.5), c1 - c0 + 1, r1 - r0 + 1
        ax.add_patch(Rectangle(xy, w, h, **dashed))
    ax.set(xticks=[], yticks=[])
    return im


def patch_attention(
    images: Tensor,
    weights: Mapping[str, Tensor],
    *,
    patch: int,
    query: int,
    titles: Sequence[str] | None = None,
    field: int | None = 3,
) -> Figure:
    """Draw where one query patch looks, image by image and head by head.

    Row ``r`` is image ``r`` with the patch grid and the query patch outlined,
    then one panel per entry of ``weights``: the query's weights over the patch
    grid, titled with :func:`~selfattn.lab.diagrams.effective_keys` and the class
    token's weight (it has no place on the grid). A dashed square marks the
    ``field x field`` block of patches that a convolution would see.

    Args:
        images: ``(R, C, H_img, W_img)``; the first channel is drawn.
        weights: ``{column title: (R, T, T) weights of one head}``, token 0 the
            class token, as :meth:`selfattn.vision.ViT.attention_weights` gives.
        patch: the side ``p`` of a patch, in pixels.
        query: which patch asks, ``0 <= query < T_p`` (token ``query + 1``).
        titles: a label per row, e.g. the digits; optional.
        field: the side of the dashed block (odd), or None for no block.

    Returns:
        The figure; panel ``(r, c)`` is ``fig.axes[r * (1 + len(weights)) + c]``,
        and a heatmap panel's ``images[0]`` holds the weights on the grid.
    """
    p, gh, gw = _check_patches(images, weights, patch, query, titles, field)
    R, _, H_img, W_img = images.shape
    cols = 1 + len(weights)
    size = (2.0 * cols + 0.8, 2.1 * R + 0.3)
    fig, axes = plt.subplots(R, cols, figsize=size, squeeze=False, layout="constrained")
    fig.set_facecolor("white")
    vmax = max(float(w[:, query + 1, 1:].max()) for w in weights.values())
    qy, qx = divmod(query, gw)
    for r in range(R):
        ax = axes[r, 0]
        ax.imshow(images[r, 0].numpy(), **_PIXELS)
        ax.set_xticks(np.arange(-0.5, W_img, p), [])
        ax.set_yticks(np.arange(-0.5, H_img, p), [])
        ax.grid(color=d.GREY, lw=0.8)
        ax.add_patch(Rectangle((qx * p - 0.5, qy * p - 0.5), p, p, **_OUTLINE))
        ax.set_title("image" if titles is None else str(titles[r]), size=d.SMALL)
        for ax, (name, w) in zip(axes[r, 1:], weights.items(), strict=True):
            row = w[r, query + 1].detach()  # (T,): class token, then patches
            im = _looks(ax, row, (gh, gw), (qy, qx), field, vmax)
            n_eff = float(effective_keys(row))
            title = f"{name}\n{n_eff:.1f} keys; [CLS] {float(row[0]):.2f}"
            ax.set_title(title, size=d.SMALL - 1)
    label = "weight of the query patch"
    fig.colorbar(im, ax=list(axes[:, 1:].flat), label=label, shrink=0.8)
    return fig
