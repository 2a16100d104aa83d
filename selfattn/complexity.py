r"""What a layer costs: Table 1 of Vaswani et al. (2017), counted and measured.

Analytic counts are in **multiply-adds** (``*_madds``: one multiply and one
add), per layer, for a sequence of ``n`` positions of width ``d``, dropping the
softmax and other ``O(n^2)`` or ``O(n d)`` terms as Table 1 does. PyTorch's
``torch.utils.flop_counter.FlopCounterMode`` counts **2 FLOPs per
multiply-add**, so its ``get_total_flops()`` is ``2 ×`` these counts:
FLOPs = 2 × madds.

==========================  ====================  ===============  ==================
Layer                       Complexity per layer  Sequential ops   Max. path length
==========================  ====================  ===============  ==================
Self-attention              O(n^2 d)              O(1)             O(1)
Recurrent                   O(n d^2)              O(n)             O(n)
Convolutional               O(k n d^2)            O(1)             O(n/k), O(log_k n)
Self-attention, restricted  O(r n d)              O(1)             O(n/r)
==========================  ====================  ===============  ==================

The last two columns are also *computed*, by walking the graph of what one
layer reads, in :mod:`selfattn.paths`: an independent check of the formulas.
:func:`loglog_slope` gives the exponent ``p`` of a power law ``y = c x^p``.
Measured time and memory are the course bench's (:mod:`selfattn.lab.measure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from selfattn._checks import check_ints
from selfattn.paths import max_path_length, sequential_operations

__all__ = [
    "self_attention_madds",
    "multi_head_madds",
    "recurrent_madds",
    "convolution_madds",
    "restricted_self_attention_madds",
    "table1",
    "loglog_slope",
]


def self_attention_madds(n: int, d: int, *, projections: bool = False) -> int:
    r"""Multiply-adds of one self-attention layer: :math:`2 n^2 d` (:math:`+ 4 n d^2`).

    Scores :math:`q k^\top`: :math:`n \cdot n \cdot d`; weighted sum of values:
    :math:`n \cdot n \cdot d`. With ``projections=True``, add the four
    :math:`d \times d` projections :math:`W_q, W_k, W_v, W_o` applied to ``n``
    positions: :math:`4 n d^2` (Table 1 of Vaswani et al., 2017, lists only
    the order of the first part, :math:`O(n^2 d)`; the constant 2 is this
    count's own).

    Taught in :doc:`/notebooks/complexity`.

    Args:
        n: sequence length; d: model width; projections: include them.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.

    Examples:
        >>> self_attention_madds(10, 4)  # scores 10*10*4 and weighted sum 10*10*4
        800
        >>> self_attention_madds(10, 4, projections=True)  # + 4 * 10 * 4 * 4
        1440
    """
    check_ints(n=n, d=d)
    return 2 * n * n * d + (4 * n * d * d if projections else 0)


def multi_head_madds(n: int, d: int, h: int, *, projections: bool = False) -> int:
    r"""Multiply-adds of ``h``-head attention of width ``d``: the same as one head.

    Each head works in width :math:`d/h`: :math:`h \cdot 2 n^2 (d/h) = 2 n^2 d`,
    independent of ``h`` (Vaswani et al., 2017, sec. 3.2.2: "the total
    computational cost is similar to that of single-head attention").

    Taught in :doc:`/notebooks/multi-head-attention` and :doc:`/notebooks/complexity`.

    Args:
        n: sequence length; d: model width; h: heads (must divide ``d``);
        projections: add :math:`4 n d^2` for the projections.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.

    Examples:
        >>> multi_head_madds(10, 8, 2) == multi_head_madds(10, 8, 4) == 2 * 10 * 10 * 8
        True
    """
    check_ints(n=n, d=d, h=h)
    if d % h != 0:
        raise ValueError(f"h={h} must divide d={d} (each head has width d // h)")
    per_head = 2 * n * n * (d // h)  # scores + weighted sum in width d/h
    return h * per_head + (4 * n * d * d if projections else 0)


def recurrent_madds(n: int, d: int) -> int:
    r"""Multiply-adds of a recurrent layer: :math:`n d^2`.

    One :math:`d \times d` matrix-vector product :math:`W h_{t-1}` per step:
    the recurrent product alone, :math:`n d^2` (Table 1 gives only the order,
    :math:`O(n d^2)`); a real cell also multiplies the input (another :math:`n d^2`)
    and an LSTM has four gates: constants that :math:`O(n d^2)` drops.

    Taught in :doc:`/notebooks/complexity`.

    Args:
        n: sequence length; d: hidden width.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.

    Examples:
        >>> recurrent_madds(10, 4)  # one 4x4 matrix-vector product per step
        160
    """
    check_ints(n=n, d=d)
    return n * d * d


def convolution_madds(n: int, d: int, k: int) -> int:
    r"""Multiply-adds of a 1-D convolution with kernel width ``k``: :math:`k n d^2`.

    ``d`` channels in and ``d`` out: each output position sums ``k d`` inputs
    for each of ``d`` channels.

    Taught in :doc:`/notebooks/complexity`.

    Args:
        n: sequence length; d: channels; k: kernel width.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.

    Examples:
        >>> convolution_madds(10, 4, 3)  # 3 taps, 4 -> 4 channels, 10 positions
        480
    """
    check_ints(n=n, d=d, k=k)
    return k * n * d * d


def restricted_self_attention_madds(n: int, d: int, r: int) -> int:
    r"""Multiply-adds of self-attention restricted to ``r`` keys: :math:`2 r n d`.

    ``r`` is the size of the neighbourhood (Table 1); a window of radius
    :math:`\rho` (:func:`selfattn.efficient.local_attention`) has
    :math:`r = 2\rho + 1`. With ``r = n`` this is :func:`self_attention_madds`.

    Taught in :doc:`/notebooks/complexity`.

    Args:
        n: sequence length; d: width; r: keys per query.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.

    Examples:
        >>> restricted_self_attention_madds(10, 4, 10) == self_attention_madds(10, 4)
        True
    """
    check_ints(n=n, d=d, r=r)
    return 2 * r * n * d


def table1(
    n: int | None = None, d: int | None = None, k: int = 3, r: int = 3
) -> list[dict[str, Any]]:
    """Rows of Table 1 (Vaswani et al., 2017), optionally evaluated at ``n, d``.

    Each row has ``layer``, ``complexity``, ``sequential``, ``path`` (the
    symbolic entries); with ``n`` and ``d`` also ``madds`` (multiply-adds;
    FLOPs are twice as many), ``sequential_ops`` and ``path_length``.
    Convolution paths are ``n/k`` (contiguous kernels). Display them as a
    Markdown table or with a loop.

    Taught in :doc:`/notebooks/complexity`.

    Examples:
        >>> [row["complexity"] for row in table1()]
        ['O(n^2 d)', 'O(n d^2)', 'O(k n d^2)', 'O(r n d)']
        >>> table1(n=8, d=4)[0]["madds"]
        512
    """
    check_ints(k=k, r=r, **{s: v for s, v in (("n", n), ("d", d)) if v is not None})
    rows = [
        ("Self-attention", "O(n^2 d)", "O(1)", "O(1)", "self-attention"),
        ("Recurrent", "O(n d^2)", "O(n)", "O(n)", "recurrence"),
        ("Convolutional", "O(k n d^2)", "O(1)", "O(n/k)", "convolution"),
        ("Self-attention (restricted)", "O(r n d)", "O(1)", "O(n/r)", "restricted"),
    ]
    out = []
    for layer, cx, seq, path, kind in rows:
        row: dict[str, Any] = {
            "layer": layer,
            "complexity": cx,
            "sequential": seq,
            "path": path,
        }
        if n is not None and d is not None:
            row["madds"] = {
                "self-attention": lambda: self_attention_madds(n, d),
                "recurrence": lambda: recurrent_madds(n, d),
                "convolution": lambda: convolution_madds(n, d, k),
                "restricted": lambda: restricted_self_attention_madds(n, d, r),
            }[kind]()
            row["sequential_ops"] = sequential_operations(kind, n)
            row["path_length"] = max_path_length(kind, n, k=k, r=r)
        out.append(row)
    return out


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    r"""Least-squares slope of :math:`\log y` on :math:`\log x`: ``p`` in ``y = c x^p``.

    A slope near 2 over a range of sequence lengths means quadratic growth,
    near 1 linear.

    Taught in :doc:`/notebooks/complexity`.

    Args:
        xs, ys: positive numbers, at least two distinct ``xs``.

    Examples:
        >>> round(loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]), 6)  # y = 3 x^2
        2.0
    """
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(
            f"xs and ys must be 1-D of the same length >= 2, got {x.shape}, {y.shape}"
        )
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("xs and ys must be positive to take logarithms")
    lx, ly = np.log(x), np.log(y)
    if np.ptp(lx) == 0:
        raise ValueError("xs must contain at least two distinct values")
    return float(np.polyfit(lx, ly, 1)[0])
