"""One mask for a whole encoder–decoder: the decoder-only model's causal mask,
beside the prefix-LM mask."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
from selfattn.masks import causal_mask

# (rows, columns, colour, label) of the outlined blocks: the source digits
# x_1 .. x_L, and the decoder's queries <sep> y_1 .. y_L (<sep> writes y_1, as
# the decoder's <bos> does)
_BLOCKS = (
    ("source", "source", d.BLUE, "x × x: the encoder's self-attention (causal here)"),
    ("decoder", "source", d.VERMILLION, "<sep> y × x: cross-attention"),
    ("decoder", "decoder", d.GREEN, "<sep> y × <sep> y: the decoder's self-attention"),
)


def decoder_only_masks(*, L: int = 4) -> Figure:
    """Draw the causal and the prefix-LM mask of a decoder-only model.

    The sequence is ``<bos> x_1 .. x_L <sep> y_1 .. y_L``, a prompt of ``P = L +
    2`` tokens and ``L`` targets, ``T = 2L + 2`` (rows are queries, columns keys;
    a filled cell may attend). Left: :func:`selfattn.masks.causal_mask` ``(T)``,
    the encoder–decoder's three attention layers outlined: ``x × x`` (the
    encoder's, causal here), ``<sep> y × x`` (cross-attention) and ``<sep> y ×
    <sep> y``. Right: the prefix-LM mask, the prompt × prompt block allowed.

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
    fig, axes = d.figure(
        (11.0, 6.4), 1, 2, left=0.08, right=0.98, top=0.9, bottom=0.3, wspace=0.25
    )
    may, titles = d.fill(d.SKY, 0.8), ("causal mask", "prefix-LM mask")
    for ax, mask, title in zip(axes, (causal, prefix), titles, strict=True):
        codes = mask.astype(int) + (mask & ~causal)  # 2: allowed only here
        d.cells(ax, codes, ["white", may, d.ORANGE])
        ax.set_xticks(range(T), names, rotation=90, size=d.SMALL)
        ax.set_yticks(range(T), names, size=d.SMALL)
        ax.set_xlabel("key (attended to)", size=d.FONT)
        ax.set_title(f"{title} ({T} × {T})", size=d.FONT)
        for rows, cols, colour, _ in _BLOCKS:
            (r0, r1), (c0, c1) = span[rows], span[cols]
            xy, w, h = (c0 - 0.5, r0 - 0.5), c1 - c0, r1 - r0
            ax.add_artist(Rectangle(xy, w, h, fill=False, ec=colour, lw=3))
    axes[0].set_ylabel("query (attending)", size=d.FONT)
    key = [d.swatch(label, c, fc="none", lw=3) for *_, c, label in _BLOCKS]
    key += [
        d.swatch("may attend (both masks)", d.GREY, fc=may),
        d.swatch("may attend: prefix-LM only", d.GREY, fc=d.ORANGE),
        d.swatch("may not attend", d.BLACK, fc="white"),
    ]
    d.legend(fig, key, 2)
    return fig
