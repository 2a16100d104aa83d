"""What one layer reads, and the path lengths and depth that follow.

Table 1 of Vaswani et al. (2017) gives the maximum path length between two
positions and the number of sequential operations of a layer as formulas
(:mod:`selfattn.complexity`). Here they are *computed* from the layer's
connections: :func:`layer_reads` lists what each output reads,
:func:`path_lengths` runs a breadth-first search over those connections and
:func:`sequential_depth` finds the longest chain of outputs that wait for
each other.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from selfattn._checks import check_int

__all__ = ["LAYERS", "layer_reads", "path_lengths", "sequential_depth"]

LAYERS = ("convolution", "recurrence", "self-attention")


def layer_reads(
    kind: str, T: int, kernel: int = 3
) -> tuple[list[list[int]], list[list[int]]]:
    """What output ``i`` of one layer reads: input positions and earlier outputs.

    Convolution: inputs ``|i - j| <= (kernel - 1) / 2``; recurrence: input
    ``i`` and the previous hidden state ``i - 1``; self-attention: every input.

    Taught in :doc:`/notebooks/attention-vs-rnn` and :doc:`/notebooks/complexity`.

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
