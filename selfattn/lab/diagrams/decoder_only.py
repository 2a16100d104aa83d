"""One mask for a whole encoder–decoder: the decoder-only model's causal mask.

:func:`~selfattn.lab.diagrams.decoder_only_masks` draws
:func:`selfattn.masks.causal_mask` over a prompt and its target, with the
three blocks that play the encoder–decoder's three attention layers outlined,
and beside it the prefix-LM mask, whose prompt block is full.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from selfattn._checks import check_int
from selfattn.lab.diagrams._draw import BLACK, FONT, GREY, ORANGE, SKY, SMALL, _fill
from selfattn.lab.plotting import PALETTE
from selfattn.masks import causal_mask

# (rows, columns, colour, label) of the outlined blocks: the source digits
# x_1 .. x_L, and the decoder's queries <sep> y_1 .. y_L (<sep> writes y_1, as
# the decoder's <bos> does)
_BLOCKS = (
    (
        "source",
        "source",
        PALETTE[0],
        "x × x: the encoder's self-attention (causal here)",
    ),
    ("decoder", "source", PALETTE[1], "<sep> y × x: cross-attention"),
    (
        "decoder",
        "decoder",
        PALETTE[2],
        "<sep> y × <sep> y: the decoder's self-attention",
    ),
)


def decoder_only_masks(*, L: int = 4) -> Figure:
    """Draw the causal and the prefix-LM mask of a decoder-only model.

    The sequence is ``<bos> x_1 .. x_L <sep> y_1 .. y_L``: a prompt of
    ``P = L + 2`` tokens, then ``L`` target tokens, ``T = 2L + 2`` in all
    (rows are queries, columns keys; a filled cell may attend). Left:
    :func:`selfattn.masks.causal_mask` ``(T)``, with the blocks that are the
    encoder–decoder's three attention layers outlined: ``x × x`` (the
    encoder's, causal here), the decoder's queries ``<sep> y`` against ``x``
    (cross-attention, ``(L + 1) L`` scores) and against themselves
    (``(L + 1)(L + 2) / 2``); the ``<bos>`` row and column lie outside them.
    Right: the prefix-LM mask, the causal mask with the whole prompt × prompt
    block allowed.

    Args:
        L: digits in the source and in the target (at least 1).

    Returns:
        The figure; ``fig.axes[k].images[0].get_array() > 0`` is the causal
        mask (``k = 0``) and the prefix-LM mask (``k = 1``).

    Examples:
        >>> fig = decoder_only_masks(L=2)
        >>> [int((ax.images[0].get_array() > 0).sum()) for ax in fig.axes[:2]]
        [21, 27]
    """
    L = check_int("L", L)
    P, T = L + 2, 2 * L + 2
    causal = causal_mask(T).numpy()
    in_prompt = np.arange(T) < P
    prefix = causal | (in_prompt[:, None] & in_prompt[None, :])
    names = ["<bos>", *(f"x{i}" for i in range(1, L + 1)), "<sep>"]
    names += [f"y{i}" for i in range(1, L + 1)]
    span = {"source": (1, L + 1), "decoder": (L + 1, T)}
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 6.4), facecolor="white")
    fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=0.3, wspace=0.25)
    cmap = ListedColormap(["white", _fill(SKY, 0.8), ORANGE])
    for ax, mask, title in zip(
        axes, (causal, prefix), ("causal mask", "prefix-LM mask"), strict=True
    ):
        codes = mask.astype(int) + (mask & ~causal)  # 2: allowed only here
        ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=2.5, interpolation="nearest")
        ax.set_xticks(np.arange(T + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(T + 1) - 0.5, minor=True)
        ax.grid(which="minor", color=GREY, lw=0.6)
        ax.tick_params(which="minor", length=0)
        ax.set_xticks(range(T), names, rotation=90, size=SMALL)
        ax.set_yticks(range(T), names, size=SMALL)
        ax.set_xlabel("key (attended to)", size=FONT)
        ax.set_title(f"{title} ({T} × {T})", size=FONT)
        for rows, cols, colour, _ in _BLOCKS:
            (r0, r1), (c0, c1) = span[rows], span[cols]
            ax.add_artist(
                Rectangle(
                    (c0 - 0.5, r0 - 0.5), c1 - c0, r1 - r0, fill=False, ec=colour, lw=3
                )
            )
    axes[0].set_ylabel("query (attending)", size=FONT)
    handles = [Patch(fc="none", ec=c, lw=3, label=label) for *_, c, label in _BLOCKS]
    handles += [
        Patch(fc=_fill(SKY, 0.8), ec=GREY, label="may attend (both masks)"),
        Patch(fc=ORANGE, ec=GREY, label="may attend: prefix-LM only"),
        Patch(fc="white", ec=BLACK, label="may not attend"),
    ]
    fig.legend(
        handles=handles, loc="lower center", ncol=2, fontsize=SMALL, frameon=False
    )
    return fig
