r"""The encoder–decoder with and without attention (Bahdanau et al., 2015);
each weight line is as wide as its weight and carries a ``gid``
(``"weight i j"``) that a test reads back."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from torch import Tensor

import selfattn.lab.diagrams._draw as d
from selfattn.attention import scaled_dot_product_attention

__all__ = ["encoder_decoder"]

Y = dict(token=0.0, h=1.0, c=2.9, g=4.3, y=5.2)  # the rows, bottom to top
_KEY = [
    ("encoder states $h_j$ (keys and values)", "key"),
    ("decoder steps $g$ (dashed: the query)", "query"),
    ("fixed code $C$", d.GREY),
    ("context $C_i$", "output"),
    (r"weight $\alpha'_{i,j}$ (line width; the largest printed)", "weight"),
]


def _checked_weights(weights: object, n: int, m: int) -> Tensor:
    """``weights`` as a float tensor ``(n, m)`` whose rows are distributions."""
    w = torch.as_tensor(weights, dtype=torch.float64)
    if w.shape != (n, m):
        raise ValueError(
            f"weights must have shape (len(target), len(source)) = ({n}, {m}), "
            f"got {tuple(w.shape)}"
        )
    sums = w.sum(-1)  # (n,)
    if (w < 0).any() or not torch.allclose(sums, torch.ones_like(sums), atol=1e-5):
        raise ValueError(
            "weights: every row must be non-negative and sum to 1 (the attention "
            f"weights of one output step), got row sums {sums.tolist()}"
        )
    return w


def _alignment_weights(
    m: int, n: int, alignment: Sequence[int] | None, sharpness: float
) -> Tensor:
    """The weights of one-hot keys and queries that each match ``alignment[i]``."""
    if alignment is None or len(alignment) != n:
        raise ValueError(
            f"alignment must give one source position per target token "
            f"({n}), got {alignment!r}"
        )
    if any(not 0 <= a < m for a in alignment):
        raise ValueError(
            f"alignment positions must be in 0..{m - 1}, got {list(alignment)}"
        )
    keys = torch.eye(m, dtype=torch.float64)  # (m, m): one key per position
    queries = keys[list(alignment)]  # (n, m): step i looks for alignment[i]
    return scaled_dot_product_attention(queries, keys, keys, scale=sharpness)[1]


def _chains(ax: Axes, enc_x, dec_x, source, target) -> None:
    """The encoder's states over the source (bottom), the decoder's steps (top)."""
    for j, x in enumerate(enc_x):
        d.text(ax, x, Y["token"], source[j], d.FONT)
        d.link(ax, (x, Y["token"] + 0.22), (x, Y["h"] - 0.28))
        d.box(ax, x, Y["h"], f"$h_{{{j + 1}}}$", "key", 0.8, 0.5)
        if j:
            d.link(ax, (enc_x[j - 1] + 0.4, Y["h"]), (x - 0.4, Y["h"]))
    for i, x in enumerate(dec_x):
        d.box(ax, x, Y["g"], "$g$", "query", 0.8, 0.5)
        d.text(ax, x, Y["y"], f"$y_{{{i + 1}}}$ = {target[i]}", d.FONT)
        d.link(ax, (x, Y["g"] + 0.27), (x, Y["y"] - 0.22))
        if i:
            d.link(ax, (dec_x[i - 1] + 0.4, Y["g"]), (x - 0.4, Y["g"]))


def _one_code(ax: Axes, enc_x, dec_x, mid: float) -> None:
    """Without attention: the last state becomes one code C for every step."""
    d.box(ax, mid, Y["c"], "$C$", d.GREY, 0.8, 0.5)
    d.link(ax, (enc_x[-1], Y["h"] + 0.27), (mid + 0.2, Y["c"] - 0.27))
    for x in dec_x:
        d.link(ax, (mid, Y["c"] + 0.27), (x, Y["g"] - 0.27), color=d.GREY)
    ax.set_title("without attention: one code $C$ for every step", size=d.FONT)


def _contexts(ax: Axes, enc_x, dec_x, w: Tensor) -> None:
    """With attention: a context C_i per step, one weighted link per state."""
    for i, x in enumerate(dec_x):
        d.box(ax, x, Y["c"], f"$C_{{{i + 1}}}$", "output", 0.8, 0.5)
        d.link(ax, (x, Y["c"] + 0.27), (x, Y["g"] - 0.27))
        for j, xj in enumerate(enc_x):
            ends = (xj, Y["h"] + 0.27), (x, Y["c"] - 0.27)
            lw, gid = d.width(float(w[i, j])), f"weight {i} {j}"
            d.link(ax, *ends, color="weight", lw=lw, head=False, gid=gid)
        largest = f"{float(w[i, int(w[i].argmax())]):.2f}"
        d.text(ax, x + 0.45, Y["c"] + 0.05, largest, ha="left", color=d.BLACK)
        if i:  # the query comes from the decoder's previous step
            ends = (dec_x[i - 1] + 0.2, Y["g"] - 0.27), (x - 0.35, Y["c"] + 0.2)
            d.link(ax, *ends, color="query", ls="--")
    ax.set_title("with attention: a context $C_i$ per step", size=d.FONT)


def encoder_decoder(
    source: Sequence[str] = ("the", "black", "cat"),
    target: Sequence[str] = ("le", "chat", "noir"),
    *,
    alignment: Sequence[int] | None = (0, 2, 1),
    sharpness: float = 2.0,
    weights: object | None = None,
) -> Figure:
    r"""Draw an encoder–decoder without and with attention, side by side.

    Left: the encoder's states :math:`h_1, \dots, h_m` end in one code :math:`C`
    that every decoder step :math:`g` reads. Right: step :math:`i` reads its own
    context :math:`C_i = \sum_j \alpha'_{i,j} h_j`, each line from :math:`h_j` as
    wide as :math:`\alpha'_{i,j}`, its query from the decoder's previous step.

    The weights are ``weights`` if given (e.g. from a trained model), else those
    of :func:`~selfattn.attention.scaled_dot_product_attention` for one-hot keys
    and queries that match ``alignment[i]``, scaled by ``sharpness``: an
    illustration, not a trained alignment.

    Args:
        source, target: the tokens (1 to 8 each).
        alignment: for each target step, the source position its query
            matches (0-based); ignored when ``weights`` is given.
        sharpness: the score multiplier (``scale``) of the computed weights.
        weights: ``(len(target), len(source))``, rows summing to 1.

    Returns:
        The figure, two axes (without and with attention).
    """
    m, n = len(source), len(target)
    for name, tokens in (("source", source), ("target", target)):
        if not 1 <= len(tokens) <= 8:
            raise ValueError(f"{name} must have 1 to 8 tokens, got {len(tokens)}")
    if weights is None:
        w = _alignment_weights(m, n, alignment, sharpness)
    else:
        w = _checked_weights(weights, n, m)
    enc_x = [j * 1.6 for j in range(m)]
    mid = enc_x[-1] / 2
    dec_x = [mid + (i - (n - 1) / 2) * 1.6 for i in range(n)]
    left, right = min(enc_x[0], dec_x[0]) - 1.0, max(enc_x[-1], dec_x[-1]) + 1.0
    fig, axes = d.figure(
        (12.0, 6.0), 1, 2, left=0.01, right=0.99, top=0.92, bottom=0.16, wspace=0.05
    )
    for ax in axes:
        d.panel(ax, (left, right), (-0.5, 5.7), equal=True)
        _chains(ax, enc_x, dec_x, source, target)
    _one_code(axes[0], enc_x, dec_x, mid)
    _contexts(axes[1], enc_x, dec_x, w)
    d.legend(fig, _KEY, ncol=3)
    return fig
