"""What a tagger sees: the inputs that one output of each kind of tagger reads.

:func:`~selfattn.lab.diagrams.tagger_reads` computes, from the library's masks, which
input
positions of a padded sentence the output at each position can depend on,
for the three taggers of :doc:`/notebooks/sequence-labelling`:

* a per-token classifier reads its own word only,
  :func:`selfattn.masks.window_mask` of radius 0;
* a window tagger of radius ``r`` reads the ``2r + 1`` positions around it,
  ``window_mask(T, r)`` (a position past the end of the sentence holds the
  padding word, which it reads like any other);
* a self-attention tagger reads every real word of the sentence and none of
  the padding, :func:`selfattn.masks.length_mask`.

:func:`~selfattn.lab.diagrams.tagger_views` draws the three for one word of one
sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from torch import Tensor

from selfattn._checks import check_int
from selfattn.lab.diagrams._draw import (
    BLACK,
    BLUE,
    FONT,
    GREY,
    ORANGE,
    SKY,
    SMALL,
    _fill,
    _segments,
)
from selfattn.masks import length_mask, window_mask

__all__ = ["tagger_reads", "tagger_views"]

TAGGERS = ("per-token", "window", "self-attention")
PAD = "<pad>"  # how a padding position is labelled in the figure


def tagger_reads(
    length: int, T: int | None = None, *, radius: int
) -> dict[str, Tensor]:
    """Which inputs the output at each position reads, for the three taggers.

    Args:
        length: the number of real words of the sentence (positive).
        T: the padded length (``>= length``; ``None``: no padding).
        radius: the window tagger's radius ``r`` (non-negative).

    Returns:
        ``{"per-token", "window", "self-attention"}`` to a ``(T, T)`` bool
        tensor whose row ``i`` is True at the input positions ``j`` that the
        output at ``i`` reads: ``window_mask(T, 0)``, ``window_mask(T, r)``
        and the sentence's ``length_mask`` for every row.

    Examples:
        >>> reads = tagger_reads(4, 6, radius=1)
        >>> reads["window"][3].int().tolist()
        [0, 0, 1, 1, 1, 0]
        >>> reads["self-attention"][3].int().tolist()
        [1, 1, 1, 1, 0, 0]
    """
    length = check_int("length", length)
    T = length if T is None else check_int("T", T)
    if T < length:
        raise ValueError(f"T={T} must be at least length={length} (the padded length)")
    radius = check_int("radius", radius, minimum=0)
    real = length_mask([length], T)[0]  # (1, T): True at the real words
    return {
        "per-token": window_mask(T, 0),
        "window": window_mask(T, radius),
        "self-attention": real.expand(T, T).clone(),
    }


def _check_words(words: Sequence[str]) -> list[str]:
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise TypeError("words must be a sequence of strings (one per position)")
    if not words:
        raise ValueError("words must hold at least one word")
    return list(words)


def tagger_views(
    words: Sequence[str],
    position: int,
    *,
    radius: int = 2,
    clue: int | None = None,
    pad: int = 0,
) -> Figure:
    """Draw which words each tagger reads to tag the word at ``position``.

    Three panels, one per tagger of :func:`~selfattn.lab.diagrams.tagger_reads`
    (per-token, window
    of radius ``radius``, self-attention). In each, the sentence runs along
    the bottom, followed by ``pad`` padding positions; the words the output
    at ``position`` reads are filled and joined to it by an edge, the others
    are left white. The window's edges are labelled with their offset
    ``j - i``: each offset has its own block of the first weight matrix.
    ``clue`` (optional) marks the word that decides the tag, and each panel
    says whether that tagger sees it.

    Args:
        words: the sentence, one string per word.
        position: the word whose tag is drawn (``0 <= position < len(words)``).
        radius: the window tagger's radius (non-negative).
        clue: the position of the deciding word, or ``None``.
        pad: padding positions drawn after the sentence (non-negative).

    Returns:
        The figure, one axes per tagger. Each input word is a text artist
        whose ``gid`` is ``"<tagger>:<j>:read"`` or ``"<tagger>:<j>:unread"``.
    """
    words = _check_words(words)
    length = len(words)
    pad = check_int("pad", pad, minimum=0)
    T = length + pad
    reads = tagger_reads(length, T, radius=radius)  # checks radius
    position = check_int("position", position, minimum=0)
    if position >= length:
        raise ValueError(
            f"position={position} must be a word of the sentence (< {length})"
        )
    if clue is not None:
        clue = check_int("clue", clue, minimum=0)
        if clue >= length or clue == position:
            raise ValueError(
                f"clue={clue} must be another word of the sentence "
                f"(< {length}, not position={position})"
            )
    labels = words + [PAD] * pad
    target = words[position]
    seen = {kind: reads[kind][position].numpy() for kind in TAGGERS}  # (T,) each
    n_seen = {kind: int(s.sum()) for kind, s in seen.items()}
    titles = {
        "per-token": f"per-token classifier: reads {n_seen['per-token']} word, its own",
        "window": (
            f"window tagger, r = {radius}: reads the 2r + 1 = {n_seen['window']} "
            "positions around it, one block of weights per offset"
        ),
        "self-attention": (
            f"self-attention tagger: reads all {n_seen['self-attention']} words of "
            "the sentence, weights computed from the words, padding masked out"
        ),
    }
    fig, axes = plt.subplots(3, 1, figsize=(10.0, 7.6), facecolor="white")
    fig.subplots_adjust(left=0.02, right=0.98, top=0.95, bottom=0.1, hspace=0.45)
    top, bottom = 1.5, 0.0
    for ax, kind in zip(axes, TAGGERS, strict=True):
        ax.set_xlim(-0.6, T - 0.4)
        ax.set_ylim(-0.45, top + 0.45)
        ax.axis("off")
        ax.set_title(titles[kind], size=SMALL, loc="left")
        edges = [
            (j, bottom + 0.22, position, top - 0.22) for j in np.flatnonzero(seen[kind])
        ]
        _segments(ax, edges, color=BLUE, lw=1.6, zorder=1)
        if kind == "window":  # one block of W_1 per offset j - i
            for j in np.flatnonzero(seen[kind]):
                ax.text(
                    j + 0.3 * (position - j),
                    0.55,
                    f"{j - position:+d}",
                    ha="center",
                    va="center",
                    size=SMALL - 1,
                    color=BLUE,
                    zorder=3,
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"),
                )
        for j, word in enumerate(labels):
            read = bool(seen[kind][j])
            box = dict(
                boxstyle="round,pad=0.3",
                fc=_fill(SKY, 0.6) if read else "white",
                ec=ORANGE if j == clue else (BLACK if read else GREY),
                lw=2.8 if j == clue else 1.0,
            )
            ax.text(
                j,
                bottom,
                word,
                ha="center",
                va="center",
                size=FONT,
                bbox=box,
                color=BLACK if read else GREY,
                style="italic" if j >= length else "normal",
                gid=f"{kind}:{j}:{'read' if read else 'unread'}",
                zorder=2,
            )
        ax.text(
            position,
            top,
            f"tag of '{target}'",
            ha="center",
            va="center",
            size=FONT,
            bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=BLUE, lw=1.6),
            zorder=2,
        )
        if clue is not None:
            ok = bool(seen[kind][clue])
            ax.text(
                T - 0.4,
                top,
                "sees the deciding word" if ok else "cannot see the deciding word",
                ha="right",
                va="center",
                size=SMALL,
                color=BLACK,
                weight="normal" if ok else "bold",
            )
    handles = [
        Patch(fc=_fill(SKY, 0.6), ec=BLACK, label="read by the output"),
        Patch(fc="white", ec=GREY, label="not read"),
        Line2D([], [], color=BLUE, lw=1.6, label="edge: the output reads this input"),
    ]
    if clue is not None:
        handles.append(Patch(fc="white", ec=ORANGE, lw=2.8, label="the deciding word"))
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=len(handles),
        frameon=False,
        fontsize=SMALL,
    )
    return fig
