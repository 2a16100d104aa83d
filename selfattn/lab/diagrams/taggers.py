"""What a tagger sees: the inputs that one output of each tagger of
:doc:`/notebooks/sequence-labelling` reads, from the library's masks (a window
tagger reads the padding word like any other)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from torch import Tensor

import selfattn.lab.diagrams._draw as d
from selfattn._checks import check_int
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
        ``{"per-token", "window", "self-attention"}`` to ``(T, T)`` bools, row
        ``i`` True at the inputs ``j`` that output ``i`` reads:
        ``window_mask(T, 0)``, ``window_mask(T, r)``, the ``length_mask``.

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


def _checked(words: Sequence[str], position: int, clue: int | None) -> tuple:
    """``words`` as a list, ``position`` and ``clue``, once checked."""
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise TypeError("words must be a sequence of strings (one per position)")
    if not words:
        raise ValueError("words must hold at least one word")
    length = len(words)
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
    return list(words), position, clue


def _words(ax, kind: str, labels: list[str], read, length: int, clue) -> None:
    """The sentence along the bottom, the words read filled, each with a gid."""
    for j, word in enumerate(labels):
        seen = bool(read[j])
        edge = d.ORANGE if j == clue else (d.BLACK if seen else d.GREY)
        fc = d.fill(d.SKY, 0.6) if seen else "white"
        box = dict(boxstyle="round,pad=0.3", fc=fc, ec=edge, lw=2.8 if j == clue else 1)
        look = dict(color=d.BLACK if seen else d.GREY, zorder=2)
        look |= dict(style="italic" if j >= length else "normal", bbox=box)
        gid = f"{kind}:{j}:{'read' if seen else 'unread'}"
        d.text(ax, j, 0.0, word, d.FONT, gid=gid, **look)


def tagger_views(
    words: Sequence[str],
    position: int,
    *,
    radius: int = 2,
    clue: int | None = None,
    pad: int = 0,
) -> Figure:
    """Draw which words each tagger reads to tag the word at ``position``.

    One panel per tagger of :func:`~selfattn.lab.diagrams.tagger_reads`: the
    sentence along the bottom, then ``pad`` padding positions; the words read are
    filled and joined to the output by an edge, the window's edges labelled with
    their offset ``j - i`` (each has its own block of the first weight matrix).
    ``clue`` marks the word that decides the tag; each panel says if it is seen.

    Args:
        words: the sentence, one string per word.
        position: the word whose tag is drawn (``0 <= position < len(words)``).
        radius: the window tagger's radius (non-negative).
        clue: the position of the deciding word, or ``None``.
        pad: padding positions drawn after the sentence (non-negative).

    Returns:
        The figure, one axes per tagger; each input word is a text whose ``gid``
        is ``"<tagger>:<j>:read"`` or ``"<tagger>:<j>:unread"``.
    """
    words, position, clue = _checked(words, position, clue)
    length = len(words)
    pad = check_int("pad", pad, minimum=0)
    T = length + pad
    reads = tagger_reads(length, T, radius=radius)  # checks radius
    seen = {kind: reads[kind][position].numpy() for kind in TAGGERS}  # (T,) each
    n = {kind: int(s.sum()) for kind, s in seen.items()}
    titles = (
        f"per-token classifier: reads {n['per-token']} word, its own",
        f"window tagger, r = {radius}: reads the 2r + 1 = {n['window']} "
        "positions around it, one block of weights per offset",
        f"self-attention tagger: reads all {n['self-attention']} words of "
        "the sentence, weights computed from the words, padding masked out",
    )
    fig, axes = d.figure(
        (10.0, 7.6), 3, 1, left=0.02, right=0.98, top=0.95, bottom=0.1, hspace=0.45
    )
    top, tag = 1.5, dict(boxstyle="round,pad=0.3", fc="white", ec=d.BLUE, lw=1.6)
    output = f"tag of '{words[position]}'"
    for ax, kind, title in zip(axes, TAGGERS, titles, strict=True):
        d.panel(ax, (-0.6, T - 0.4), (-0.45, top + 0.45))
        ax.set_title(title, size=d.SMALL, loc="left")
        read = np.flatnonzero(seen[kind])
        edges = [(j, 0.22, position, top - 0.22) for j in read]
        d.segments(ax, edges, color=d.BLUE, lw=1.6, zorder=1)
        for j in read if kind == "window" else ():  # a block of W_1 per offset
            box = dict(boxstyle="round,pad=0.1", fc="white", ec="none")
            x, label = j + 0.3 * (position - j), f"{j - position:+d}"
            d.text(ax, x, 0.55, label, d.SMALL - 1, color=d.BLUE, zorder=3, bbox=box)
        _words(ax, kind, words + [PAD] * pad, seen[kind], length, clue)
        d.text(ax, position, top, output, d.FONT, bbox=tag, zorder=2)
        if clue is not None:
            sees = bool(seen[kind][clue])
            note = "sees the deciding word" if sees else "cannot see the deciding word"
            look = dict(ha="right", color=d.BLACK, weight="normal" if sees else "bold")
            d.text(ax, T - 0.4, top, note, **look)
    key = [
        d.swatch("read by the output", d.SKY, 0.6, ec=d.BLACK),
        d.swatch("not read", d.GREY, fc="white"),
        d.mark("edge: the output reads this input", color=d.BLUE, lw=1.6),
    ]
    if clue is not None:
        key.append(d.swatch("the deciding word", d.ORANGE, fc="white", lw=2.8))
    d.legend(fig, key)
    return fig
