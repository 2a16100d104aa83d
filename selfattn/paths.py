"""Sequential operations and path lengths: Table 1's last two columns.

Table 1 of Vaswani et al. (2017) gives the number of sequential operations
of a layer and the maximum path length between two positions as orders,
which :func:`sequential_operations` and :func:`max_path_length` evaluate.
Here they are also *computed* from the layer's connections:
:func:`layer_reads` lists what each output reads, :func:`path_lengths` runs
a breadth-first search over those connections and :func:`sequential_depth`
finds the longest chain of outputs that wait for each other.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

from selfattn._checks import check_int, check_ints

__all__ = [
    "KINDS",
    "sequential_operations",
    "max_path_length",
    "LAYERS",
    "layer_reads",
    "path_lengths",
    "sequential_depth",
]

# One vocabulary: the layers of Table 1, restricted self-attention included
# (KINDS), and the three whose connections are computed here (LAYERS). Table 1's
# functions keep the paper's sizes n, k, r; the computed ones the course's T.
KINDS = ("self-attention", "recurrence", "convolution", "restricted")
LAYERS = ("convolution", "recurrence", "self-attention")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got kind={kind!r}")


def sequential_operations(kind: str, n: int) -> float:
    """Minimum number of sequential operations (Table 1): ``1`` or ``n`` for an RNN.

    Taught in :doc:`/notebooks/complexity`.

    Args:
        kind: one of ``"self-attention"``, ``"recurrence"``, ``"convolution"``,
            ``"restricted"``; n: sequence length.

    Returns:
        The expression inside the ``O(.)``.

    Examples:
        >>> [sequential_operations(kind, 100) for kind in ("recurrence", "restricted")]
        [100.0, 1.0]
    """
    _check_kind(kind)
    check_ints(n=n)
    return float(n) if kind == "recurrence" else 1.0


def max_path_length(
    kind: str, n: int, *, k: int = 3, r: int = 3, dilated: bool = False
) -> float:
    r"""Maximum path length between two positions (Table 1), the expression in ``O(.)``.

    Self-attention: ``1``; recurrent: ``n``; restricted self-attention:
    ``n / r``; convolution: ``n / k`` for contiguous kernels (the lecture's
    value: each layer widens the receptive field by about ``k``) or
    :math:`\log_k n` for dilated ones (``dilated=True``). Table 1 prints
    :math:`O(\log_k n)`, the dilated case.

    Taught in :doc:`/notebooks/complexity`.

    Args:
        kind: as in :func:`sequential_operations`; n: sequence length;
        k: kernel width; r: neighbourhood size; dilated: dilated convolutions.

    Examples:
        >>> max_path_length("convolution", 81, k=3), max_path_length("recurrence", 81)
        (27.0, 81.0)
        >>> round(max_path_length("convolution", 81, k=3, dilated=True), 6)
        4.0
    """
    _check_kind(kind)
    check_ints(n=n, k=k, r=r)
    if kind == "self-attention":
        return 1.0
    if kind == "recurrence":
        return float(n)
    if kind == "restricted":
        return n / r
    if dilated:
        return math.log(n, k) if k > 1 else float(n)
    return n / k


def layer_reads(
    kind: str, T: int, kernel: int = 3
) -> tuple[list[list[int]], list[list[int]]]:
    """What output ``i`` of one layer reads: input positions and earlier outputs.

    Convolution: inputs ``|i - j| <= (kernel - 1) / 2``; recurrence: input
    ``i`` and the previous hidden state ``i - 1``; self-attention: every input.

    Taught in :doc:`/notebooks/attention-vs-rnn` and :doc:`/notebooks/complexity`.

    Args:
        kind: ``"convolution"``, ``"recurrence"`` or ``"self-attention"``.
        T: sequence length (positive); kernel: the convolution's kernel size
            (odd, positive).

    Returns:
        ``(reads, needs)``: ``reads[i]`` the input positions output ``i``
        reads, ``needs[i]`` the earlier outputs it must wait for.

    Examples:
        >>> layer_reads("recurrence", 3)
        ([[0], [1], [2]], [[], [0], [1]])
    """
    if kind not in LAYERS:
        raise ValueError(f"kind must be one of {LAYERS}, got kind={kind!r}")
    check_ints(T=T, kernel=kernel)
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

    Taught in :doc:`/notebooks/attention-vs-rnn` and :doc:`/notebooks/complexity`.

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

    Taught in :doc:`/notebooks/attention-vs-rnn` and :doc:`/notebooks/complexity`.

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
    check_int("T", T)
    check_int("kernel", kernel, minimum=3)
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
