"""selfattn.lab.diagrams.offset_circles (Agg): the points drawn are the
sinusoidal table's pairs, and every arrow turns by delta * omega_f."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from selfattn.lab import diagrams  # noqa: E402
from selfattn.lab.diagrams import offset_circles  # noqa: E402
from selfattn.positional import frequencies, sinusoidal_encoding  # noqa: E402


def test_exported():
    assert "offset_circles" in diagrams.__all__


@pytest.mark.parametrize(("D", "pairs", "delta"), [(64, (0, 4), 2), (16, (1,), 3)])
def test_points_are_the_table_and_arrows_turn_by_delta_omega(D, pairs, delta):
    n, starts = 8, (0, 3)
    fig = offset_circles(
        embed_dim=D, pairs=pairs, n_positions=n, delta=delta, starts=starts
    )
    assert len(fig.axes) == len(pairs)
    P = sinusoidal_encoding(n, D, dtype=torch.float64).numpy()
    omega = frequencies(D).double().numpy()
    for ax, f in zip(fig.axes, pairs, strict=True):
        x, y = ax.lines[0].get_data()  # the numbered points
        np.testing.assert_allclose(np.c_[x, y], P[:, 2 * f : 2 * f + 2])
        arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
        assert len(arrows) == len(starts)
        for arrow, i in zip(arrows, starts, strict=True):
            (x0, y0), (x1, y1) = arrow._posA_posB  # start and end points
            turn = math.atan2(x1, y1) - math.atan2(x0, y0)  # clockwise from top
            expected = delta * omega[f]
            assert math.remainder(turn - expected, 2 * math.pi) == pytest.approx(0)
            np.testing.assert_allclose(
                np.array([x1, y1]) / 0.82, P[i + delta, 2 * f : 2 * f + 2]
            )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(embed_dim=7), "embed_dim must be even"),
        (dict(pairs=(32,)), "pairs must be non-empty, each in 0 .. 31"),
        (dict(pairs=()), "pairs must be non-empty"),
        (dict(delta=0), "delta must be positive"),
        (dict(starts=(6,)), "i \\+ delta < n_positions=8"),
        (dict(n_positions=1), "n_positions must be at least 2"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        offset_circles(**kwargs)
