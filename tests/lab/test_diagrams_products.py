"""selfattn.lab.diagrams.score_product (Agg): the numbers drawn are the
lecture's Q, K^T and A, and the highlighted entry is A[j, i]."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from selfattn.lab import diagrams  # noqa: E402
from selfattn.lab.diagrams import score_product  # noqa: E402


def _inputs(D=4, T=5, d_k=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(D, T)), rng.normal(size=(d_k, D)), rng.normal(size=(d_k, D))


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_exported_in_teaching_module():
    assert "score_product" in diagrams.__all__


@pytest.mark.parametrize(("i", "j"), [(1, 1), (2, 4), (5, 3)])
def test_the_cells_hold_q_k_and_a(i, j):
    I, W_q, W_k = _inputs()
    fig = score_product(I, W_q, W_k, i=i, j=j)
    assert isinstance(fig, Figure)
    Q, K = W_q @ I, W_k @ I
    A = K.T @ Q / math.sqrt(3)  # an independent oracle of the scores
    cells = [t for t in _texts(fig) if t.replace("-", "").replace(".", "").isdigit()]
    expected = [f"{v:.2f}" for M in (K.T, Q, A) for v in M.ravel()]
    assert sorted(cells) == sorted(expected)
    formula = [t for t in _texts(fig) if t.startswith("$A_{")]
    assert len(formula) == 1
    assert formula[0].endswith(f"= {A[j - 1, i - 1]:.2f}")
    assert f"{(K[:, j - 1] @ Q[:, i - 1]):.2f} / {math.sqrt(3):.2f}" in formula[0]


def test_the_entry_is_outlined_where_row_and_column_meet():
    I, W_q, W_k = _inputs(T=4, d_k=2)
    fig = score_product(I, W_q, W_k, i=3, j=2)
    bold = [
        p
        for p in fig.axes[0].patches + fig.axes[0].artists
        if isinstance(p, Rectangle) and p.get_linewidth() >= 3
    ]
    assert len(bold) == 1
    (x, y) = bold[0].get_xy()
    # A's top-left corner is at (d_k + gap, T); column i - 1, row j - 1 down
    d_k, T, gap = 2, 4, 1.6
    assert (x, y) == pytest.approx((d_k + gap + 2, T - 2))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(i=0, j=1), "i must be positive"),
        (dict(i=6, j=1), "i must be at most T=5"),
        (dict(i=1, j=9), "j must be at most T=5"),
    ],
)
def test_bad_indices_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        score_product(*_inputs(), **kwargs)


def test_bad_shapes_are_named():
    I, W_q, W_k = _inputs()
    with pytest.raises(ValueError, match="W_q and W_k must both be"):
        score_product(I, W_q, W_k[:2], i=1, j=1)
    with pytest.raises(ValueError, match="at most 10 positions"):
        score_product(*_inputs(T=11), i=1, j=1)
    with pytest.raises(ValueError, match="I must be a matrix"):
        score_product(I[0], W_q, W_k, i=1, j=1)
