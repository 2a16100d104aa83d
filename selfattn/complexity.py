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

The same quantities are also *computed* here by walking the graph of what
one layer reads, as an independent check of the formulas:
:func:`path_lengths` (a breadth-first search) and :func:`sequential_depth`.
:func:`loglog_slope` gives the exponent ``p`` of a power law ``y = c x^p``.
Measured time and memory are the course bench's (:mod:`selfattn.lab.measure`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "self_attention_madds",
    "multi_head_madds",
    "recurrent_madds",
    "convolution_madds",
    "restricted_self_attention_madds",
    "sequential_operations",
    "max_path_length",
    "table1",
    "layer_reads",
    "path_lengths",
    "sequential_depth",
    "loglog_slope",
]

LAYERS = ("convolution", "recurrence", "self-attention")
KINDS = ("self_attention", "recurrent", "convolutional", "restricted")


def _pos(**sizes: object) -> None:
    """Raise unless every size is a positive int (messages name the argument)."""
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{name} must be an int, got {type(n).__name__}")
        if n <= 0:
            raise ValueError(f"{name} must be positive, got {name}={n}")


def self_attention_madds(n: int, d: int, *, projections: bool = False) -> int:
    r"""Multiply-adds of one self-attention layer: :math:`2 n^2 d` (:math:`+ 4 n d^2`).

    Scores :math:`q k^\top`: :math:`n \cdot n \cdot d`; weighted sum of values:
    :math:`n \cdot n \cdot d`. With ``projections=True``, add the four
    :math:`d \times d` projections :math:`W_q, W_k, W_v, W_o` applied to ``n``
    positions: :math:`4 n d^2` (Table 1 of Vaswani et al., 2017, lists only
    the order of the first part, :math:`O(n^2 d)`; the constant 2 is this
    count's own).

    Args:
        n: sequence length; d: model width; projections: include them.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d)
    return 2 * n * n * d + (4 * n * d * d if projections else 0)


def multi_head_madds(n: int, d: int, h: int, *, projections: bool = False) -> int:
    r"""Multiply-adds of ``h``-head attention of width ``d``: the same as one head.

    Each head works in width :math:`d/h`: :math:`h \cdot 2 n^2 (d/h) = 2 n^2 d`,
    independent of ``h`` (Vaswani et al., 2017, sec. 3.2.2: "the total
    computational cost is similar to that of single-head attention").

    Args:
        n: sequence length; d: model width; h: heads (must divide ``d``);
        projections: add :math:`4 n d^2` for the projections.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d, h=h)
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

    Args:
        n: sequence length; d: hidden width.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d)
    return n * d * d


def convolution_madds(n: int, d: int, k: int) -> int:
    r"""Multiply-adds of a 1-D convolution with kernel width ``k``: :math:`k n d^2`.

    ``d`` channels in and ``d`` out: each output position sums ``k d`` inputs
    for each of ``d`` channels.

    Args:
        n: sequence length; d: channels; k: kernel width.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d, k=k)
    return k * n * d * d


def restricted_self_attention_madds(n: int, d: int, r: int) -> int:
    r"""Multiply-adds of self-attention restricted to ``r`` keys: :math:`2 r n d`.

    ``r`` is the size of the neighbourhood (Table 1); a window of radius
    :math:`\rho` (:func:`selfattn.efficient.local_attention`) has
    :math:`r = 2\rho + 1`. With ``r = n`` this is :func:`self_attention_madds`.

    Args:
        n: sequence length; d: width; r: keys per query.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d, r=r)
    return 2 * r * n * d


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got kind={kind!r}")


def sequential_operations(kind: str, n: int) -> float:
    """Minimum number of sequential operations (Table 1): ``1`` or ``n`` for an RNN.

    Args:
        kind: one of ``"self_attention"``, ``"recurrent"``, ``"convolutional"``,
            ``"restricted"``; n: sequence length.

    Returns:
        The expression inside the ``O(.)``.
    """
    _check_kind(kind)
    _pos(n=n)
    return float(n) if kind == "recurrent" else 1.0


def max_path_length(
    kind: str, n: int, *, k: int = 3, r: int = 3, dilated: bool = False
) -> float:
    r"""Maximum path length between two positions (Table 1), the expression in ``O(.)``.

    Self-attention: ``1``; recurrent: ``n``; restricted self-attention:
    ``n / r``; convolution: ``n / k`` for contiguous kernels (the lecture's
    value: each layer widens the receptive field by about ``k``) or
    :math:`\log_k n` for dilated ones (``dilated=True``). Table 1 prints
    :math:`O(\log_k n)`, the dilated case.

    Args:
        kind: as in :func:`sequential_operations`; n: sequence length;
        k: kernel width; r: neighbourhood size; dilated: dilated convolutions.
    """
    _check_kind(kind)
    _pos(n=n, k=k, r=r)
    if kind == "self_attention":
        return 1.0
    if kind == "recurrent":
        return float(n)
    if kind == "restricted":
        return n / r
    if dilated:
        return math.log(n, k) if k > 1 else float(n)
    return n / k


def table1(
    n: int | None = None, d: int | None = None, k: int = 3, r: int = 3
) -> list[dict[str, Any]]:
    """Rows of Table 1 (Vaswani et al., 2017), optionally evaluated at ``n, d``.

    Each row has ``layer``, ``complexity``, ``sequential``, ``path`` (the
    symbolic entries); with ``n`` and ``d`` also ``madds`` (multiply-adds;
    FLOPs are twice as many), ``sequential_ops`` and ``path_length``.
    Convolution paths are ``n/k`` (contiguous kernels). Display them as a
    Markdown table or with a loop.
    """
    rows = [
        ("Self-attention", "O(n^2 d)", "O(1)", "O(1)", "self_attention"),
        ("Recurrent", "O(n d^2)", "O(n)", "O(n)", "recurrent"),
        ("Convolutional", "O(k n d^2)", "O(1)", "O(n/k)", "convolutional"),
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
                "self_attention": lambda: self_attention_madds(n, d),
                "recurrent": lambda: recurrent_madds(n, d),
                "convolutional": lambda: convolution_madds(n, d, k),
                "restricted": lambda: restricted_self_attention_madds(n, d, r),
            }[kind]()
            row["sequential_ops"] = sequential_operations(kind, n)
            row["path_length"] = max_path_length(kind, n, k=k, r=r)
        out.append(row)
    return out


# what one layer reads, and the path lengths and depth it implies


def layer_reads(
    kind: str, T: int, kernel: int = 3
) -> tuple[list[list[int]], list[list[int]]]:
    """What output ``i`` of one layer reads: input positions and earlier outputs.

    Convolution: inputs ``|i - j| <= (kernel - 1) / 2``; recurrence: input
    ``i`` and the previous hidden state ``i - 1``; self-attention: every input.

    Args:
        kind: ``"convolution"``, ``"recurrence"`` or ``"self-attention"``.
        T: sequence length; kernel: the convolution's kernel size (odd).

    Returns:
        ``(reads, needs)``: ``reads[i]`` the input positions output ``i``
        reads, ``needs[i]`` the earlier outputs it must wait for.

    Examples:
        >>> layer_reads("recurrence", 3)
        ([[0], [1], [2]], [[], [0], [1]])
    """
    if kind not in LAYERS:
        raise ValueError(f"kind must be one of {LAYERS}, got kind={kind!r}")
    r = (kernel - 1) // 2
    if kind == "convolution":
        reads = [[j for j in range(T) if abs(i - j) <= r] for i in range(T)]
    elif kind == "recurrence":
        reads = [[i] for i in range(T)]
    else:
        reads = [list(range(T)) for _ in range(T)]
    needs = [[i - 1] if kind == "recurrence" and i > 0 else [] for i in range(T)]
    return reads, needs


def sequential_depth(needs: Sequence[Sequence[int]]) -> int:
    """The longest chain of outputs that must be computed one after another.

    Args:
        needs: ``needs[i]`` the earlier outputs output ``i`` waits for, as
            :func:`layer_reads` returns.

    Returns:
        The number of sequential operations of the layer (0 for no output).

    Examples:
        >>> sequential_depth(layer_reads("recurrence", 5)[1])
        5
        >>> sequential_depth(layer_reads("self-attention", 5)[1])
        1
    """
    depth: list[int] = []
    for before in needs:  # outputs only need earlier outputs
        depth.append(1 + max((depth[j] for j in before), default=0))
    return max(depth, default=0)


def path_lengths(T: int, kernel: int = 3) -> dict[str, int]:
    r"""The maximum path length between two positions, for three kinds of layer.

    One operation moves information from position ``j`` to position ``i``
    when output ``i`` reads input ``j`` (a convolution with a centred kernel:
    :math:`|i - j| \le (k - 1)/2`; self-attention: every ``j``) or the hidden
    state ``j = i - 1`` (a recurrence). A breadth-first search over these
    moves, one more stacked layer (or recurrent step) per level, gives the
    fewest operations from each position to each other one; the maximum over
    the pairs it connects is returned (Vaswani et al., 2017, sec. 4):
    :math:`\lceil (T - 1) / ((k - 1)/2) \rceil` for the convolution,
    :math:`T - 1` for the recurrence (information flows forwards only) and
    :math:`1` for self-attention; 0 for all when ``T = 1``.

    Args:
        T: sequence length (positive).
        kernel: convolution kernel size ``k``: odd and at least 3 (a centred
            kernel; ``k = 1`` never connects two positions).

    Returns:
        ``{"convolution": ..., "recurrence": ..., "self-attention": ...}``.

    Examples:
        >>> path_lengths(8)
        {'convolution': 7, 'recurrence': 7, 'self-attention': 1}
    """
    _pos(T=T)
    _pos(kernel=kernel)
    if kernel < 3:
        raise ValueError(f"kernel must be at least 3, got kernel={kernel}")
    if kernel % 2 == 0:
        raise ValueError(
            "kernel must be odd (a kernel centred on each position), "
            f"got kernel={kernel}"
        )
    result = {}
    for kind in LAYERS:
        reads, needs = layer_reads(kind, T, kernel)
        moves = [[] for _ in range(T)]  # moves[j]: positions reached from j
        for i in range(T):
            for j in set(reads[i]) | set(needs[i]):
                if j != i:
                    moves[j].append(i)
        longest = 0
        for a in range(T):  # breadth-first search from every position
            dist = {a: 0}
            queue = deque([a])
            while queue:
                j = queue.popleft()
                for i in moves[j]:
                    if i not in dist:
                        dist[i] = dist[j] + 1
                        queue.append(i)
            longest = max(longest, *dist.values())
        result[kind] = longest
    return result


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    r"""Least-squares slope of :math:`\log y` on :math:`\log x`: ``p`` in ``y = c x^p``.

    A slope near 2 over a range of sequence lengths means quadratic growth,
    near 1 linear.

    Args:
        xs, ys: positive numbers, at least two distinct ``xs``.
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
