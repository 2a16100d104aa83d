"""selfattn.paths: sequential operations and path lengths (Vaswani et al.,
2017, Table 1) against the closed forms and against stacked one-step
reachability matrices walked with nested loops."""

from __future__ import annotations

import math

import pytest

from selfattn import paths
from selfattn.paths import max_path_length, sequential_operations


def test_sequential_and_path_length():
    n = 1024
    assert sequential_operations("self-attention", n) == 1
    assert sequential_operations("recurrence", n) == n
    assert sequential_operations("convolution", n) == 1
    assert sequential_operations("restricted", n) == 1
    assert max_path_length("self-attention", n) == 1
    assert max_path_length("recurrence", n) == n
    assert max_path_length("convolution", n, k=4) == n / 4
    assert max_path_length("convolution", n, k=4, dilated=True) == pytest.approx(5)
    assert max_path_length("restricted", n, r=16) == n / 16
    with pytest.raises(ValueError, match="kind"):
        max_path_length("lstm", n)
    with pytest.raises(ValueError, match="n"):
        sequential_operations("recurrence", 0)


def stacked_path_lengths(T: int, kernel: int) -> dict[str, int]:
    """The oracle: stack one-step reachability matrices with nested loops.

    ``step[j][i]``: one layer (or recurrent step) carries position ``j`` to
    ``i``. The path from ``a`` to ``b`` is the fewest steps whose product has
    ``(a, b)``; the maximum over the pairs ever connected is returned.
    """
    r = (kernel - 1) // 2
    steps = {
        "convolution": [[abs(i - j) <= r for i in range(T)] for j in range(T)],
        "recurrence": [[i == j + 1 for i in range(T)] for j in range(T)],
        "self-attention": [[True] * T for _ in range(T)],
    }
    result = {}
    for kind, step in steps.items():
        longest = 0
        for a in range(T):
            for b in range(T):
                if a == b:
                    continue
                reach, n = [a == i for i in range(T)], 0
                while not reach[b] and n < T:  # one more layer
                    reach = [
                        any(reach[j] and step[j][i] for j in range(T)) for i in range(T)
                    ]
                    n += 1
                if reach[b]:
                    longest = max(longest, n)
        result[kind] = longest
    return result


@pytest.mark.parametrize("T", [1, 2, 3, 5, 8, 9])
@pytest.mark.parametrize("kernel", [3, 5, 7])
def test_path_lengths_match_stacked_layers(T, kernel):
    got = paths.path_lengths(T, kernel)
    assert got == stacked_path_lengths(T, kernel)
    if T > 1:  # Vaswani et al. (2017), Table 1: O(n/k), O(n), O(1)
        assert got["convolution"] == math.ceil((T - 1) / ((kernel - 1) // 2))
        assert got["recurrence"] == T - 1
        assert got["self-attention"] == 1


@pytest.mark.parametrize(
    "args, name", [((0, 3), "T"), ((8, 4), "kernel"), ((8, 1), "kernel")]
)
def test_path_lengths_bad_arguments(args, name):
    with pytest.raises(ValueError, match=name):
        paths.path_lengths(*args)
