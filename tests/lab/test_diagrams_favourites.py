"""selfattn.lab.diagrams.favourite_keys (Agg): the rings are each row's argmax,
the titles count what the weights say, and GAT's static attention shows as
one column of rings."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from selfattn.graph import gat_attention  # noqa: E402
from selfattn.lab import diagrams  # noqa: E402


def weights(seed: int, T: int = 5) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(T, T, generator=g), dim=-1)


def rings(ax) -> np.ndarray:
    """The (column, row) of every ring drawn on a panel."""
    return np.asarray(ax.collections[0].get_offsets())


def test_a_white_figure_without_warnings_and_its_panels():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a missing glyph
        fig = diagrams.favourite_keys(
            {"A": weights(0), "B": weights(1)}, targets=[0, 1, 2, 3, 4]
        )
        fig.canvas.draw()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    panels = fig.axes[:2]
    assert [ax.get_title().split("\n")[0] for ax in panels] == ["A", "B"]
    np.testing.assert_allclose(panels[0].images[0].get_array(), weights(0).numpy())
    assert fig.legends, "a key for the rings and the dots"


def test_rings_sit_on_each_rows_argmax_and_dots_on_the_targets():
    w, targets = weights(2), [4, 3, 2, 1, 0]
    fig = diagrams.favourite_keys({"w": w}, targets=targets)
    ax = fig.axes[0]
    assert rings(ax)[:, 0].tolist() == w.argmax(-1).tolist()
    assert rings(ax)[:, 1].tolist() == list(range(5))
    assert np.asarray(ax.collections[1].get_offsets())[:, 0].tolist() == targets


def test_the_title_counts_favourites_and_hits():
    w = torch.eye(4) * 0.7 + 0.1  # every query's favourite is its own key
    stats = diagrams.favourite_stats(w, [0, 1, 2, 3])
    assert stats["distinct"] == 4 and stats["on_target"] == 4
    title = diagrams.favourite_keys({"diag": w}, targets=[0, 1, 2, 3]).axes[0]
    assert "4 distinct favourites, 4 of 4 on target" in title.get_title()
    one = torch.tensor([[0.1, 0.9], [0.2, 0.8]])  # both like key 1
    assert diagrams.favourite_stats(one, [0, 1]) == {
        "favourites": pytest.approx(np.array([1, 1])),
        "distinct": 1,
        "on_target": 1,
    }
    assert diagrams.favourite_stats(one)["on_target"] is None
    fig = diagrams.favourite_keys({"one": one})
    assert "1 distinct favourite" in fig.axes[0].get_title()
    assert "favourites" not in fig.axes[0].get_title()


def test_a_gat_head_on_a_complete_graph_draws_one_column_of_rings():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 3, generator=g)
    W, a = torch.randn(1, 3, 4, generator=g), torch.randn(1, 8, generator=g)
    _, w = gat_attention(x, torch.ones(6, 6, dtype=torch.bool), W, a)
    fig = diagrams.favourite_keys({"GAT": w[0]})
    assert len(set(rings(fig.axes[0])[:, 0].tolist())) == 1  # static attention
    assert "1 distinct favourite" in fig.axes[0].get_title()


def test_labels_on_the_axes():
    fig = diagrams.favourite_keys(
        {"w": weights(3, 3)}, queries=list("abc"), keys=list("xyz"), xlabel="k"
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list("xyz")
    assert [t.get_text() for t in ax.get_yticklabels()] == list("abc")
    assert ax.get_xlabel() == "k" and ax.get_ylabel() == "query"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": {}}, "at least one panel"),
        ({"weights": {"w": torch.ones(3)}}, "must be 2-D"),
        ({"weights": {"a": torch.ones(2, 2), "b": torch.ones(3, 3)}}, "not \\(2, 2\\)"),
        ({"weights": {"w": torch.ones(2, 2)}, "queries": ["a"]}, "queries has 1"),
        ({"weights": {"w": torch.ones(2, 2)}, "keys": list("abc")}, "keys has 3"),
        ({"weights": {"w": torch.ones(2, 2)}, "targets": [0, 2]}, "targets must"),
        ({"weights": {"w": torch.ones(2, 2)}, "targets": [0]}, "targets must"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    weights_ = kwargs.pop("weights")
    with pytest.raises(ValueError, match=match):
        diagrams.favourite_keys(weights_, **kwargs)
