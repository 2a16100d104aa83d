"""selfattn.lab.plotting (Agg): drawn data equal the input, no figure leaks."""

from __future__ import annotations

import importlib

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from selfattn.lab import plotting  # noqa: E402

OKABE_ITO = {
    "#000000", "#E69F00", "#56B4E9", "#009E73",
    "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
}  # fmt: skip


def softmax_rows(gen, T_q, T_k):
    return torch.softmax(torch.randn(T_q, T_k, generator=gen), dim=-1)


def tick_texts(labels):
    return [t.get_text() for t in labels]


def test_colours_are_cvd_safe_choices():
    assert set(plotting.PALETTE) == OKABE_ITO
    for name in (plotting.CMAP, plotting.DIVERGING_CMAP):
        assert name in matplotlib.colormaps


def test_import_changes_no_rcparams():
    before = dict(matplotlib.rcParams)
    importlib.reload(plotting)
    assert dict(matplotlib.rcParams) == before


@pytest.mark.parametrize("T_q, T_k", [(1, 1), (3, 5), (6, 4), (12, 30)])
@pytest.mark.parametrize("as_numpy", [False, True])
def test_heatmap_image_is_the_matrix(gen, T_q, T_k, as_numpy):
    w = softmax_rows(gen, T_q, T_k)
    ax = plotting.attention_heatmap(w.numpy() if as_numpy else w)
    assert isinstance(ax, Axes)
    np.testing.assert_array_equal(ax.images[0].get_array(), w.numpy())
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key", "query")
    assert ax.images[0].get_clim() == (0.0, pytest.approx(w.max().item()))
    assert len(ax.figure.axes) == 2  # heatmap and colour bar


def test_heatmap_tick_labels_are_the_tokens(gen):
    queries, keys = ["I", "saw", "her"], ["the", "cat", "sat", "down"]
    ax = plotting.attention_heatmap(
        softmax_rows(gen, 3, 4), queries=queries, keys=keys, title="t", colorbar=False
    )
    assert tick_texts(ax.get_yticklabels()) == queries
    assert tick_texts(ax.get_xticklabels()) == keys
    assert ax.get_title() == "t"
    assert len(ax.figure.axes) == 1


@pytest.mark.parametrize(
    "shape, annotate, expected",
    [
        ((3, 4), "auto", 12),
        ((11, 4), "auto", 0),
        ((11, 4), True, 44),
        ((3, 4), False, 0),
    ],
)
def test_heatmap_annotations(gen, shape, annotate, expected):
    w = softmax_rows(gen, *shape)
    ax = plotting.attention_heatmap(w, annotate=annotate)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == expected
    if expected:
        oracle = [
            f"{w[i, j].item():.2f}" for i in range(shape[0]) for j in range(shape[1])
        ]
        assert sorted(texts) == sorted(oracle)


def test_heatmap_draws_on_given_axes_without_new_figure(gen):
    fig, ax = plt.subplots()
    n = len(plt.get_fignums())
    assert plotting.attention_heatmap(softmax_rows(gen, 2, 2), ax=ax) is ax
    assert len(plt.get_fignums()) == n


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"weights": torch.ones(2, 3, 4)}, "weights must have 2 dimensions"),
        ({"weights": torch.tensor([[float("nan")]])}, "weights contains NaN"),
        ({"weights": torch.ones(2, 3), "queries": ["a"]}, "queries has 1 labels"),
        ({"weights": torch.ones(2, 3), "keys": ["a", "b"]}, "keys has 2 labels"),
        ({"weights": torch.ones(2, 3), "annotate": "yes"}, "annotate"),
    ],
)
def test_heatmap_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plotting.attention_heatmap(**kwargs)


@pytest.mark.parametrize("H, ncols", [(1, 4), (4, 2), (3, 2), (8, 4)])
def test_heads_grid_shares_one_scale(gen, H, ncols):
    w = torch.softmax(torch.randn(H, 5, 5, generator=gen), dim=-1)
    fig = plotting.attention_heads(w, tokens=list("abcde"), ncols=ncols, suptitle="s")
    assert isinstance(fig, Figure)
    assert len(fig.axes) == H + 1  # one per head, then the colour bar
    for h in range(H):
        ax = fig.axes[h]
        np.testing.assert_array_equal(ax.images[0].get_array(), w[h].numpy())
        assert ax.images[0].get_clim() == (0.0, pytest.approx(w.max().item()))
        assert ax.get_title() == f"head {h + 1}"
        assert tick_texts(ax.get_xticklabels()) == list("abcde")
    assert fig.get_suptitle() == "s"


def test_positional_encoding_heatmap(gen):
    P = torch.rand(20, 8, generator=gen) * 2 - 1
    ax = plotting.positional_encoding_heatmap(P)
    image = ax.images[0]
    np.testing.assert_array_equal(image.get_array(), P.numpy())
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == plotting.DIVERGING_CMAP
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("dimension", "position")


@pytest.mark.parametrize("powers", [(1.0, 2.0), (0.5, 1.5, 3.0)])
def test_loglog_recovers_power_law_slopes(powers):
    xs = np.array([16.0, 32.0, 64.0, 128.0, 256.0])
    series = {f"p={p}": 3.7 * xs**p for p in powers}
    ax, slopes = plotting.loglog_plot(xs, series, xlabel="T", ylabel="s", title="t")
    assert slopes == {f"p={p}": pytest.approx(p, abs=1e-9) for p in powers}
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    legend = tick_texts(ax.get_legend().get_texts())
    assert legend == [f"p={p} (slope {p:.2f})" for p in powers]
    for line, p in zip(ax.get_lines(), powers, strict=True):
        np.testing.assert_allclose(line.get_ydata(), 3.7 * xs**p)


def test_loglog_shows_a_flat_slope_without_a_minus_sign():
    xs = np.array([2.0, 8.0, 32.0, 128.0, 512.0])
    ax, slopes = plotting.loglog_plot(xs, {"flat": xs**-0.001})
    assert slopes["flat"] == pytest.approx(-0.001)
    assert tick_texts(ax.get_legend().get_texts()) == ["flat (slope 0.00)"]


def test_loglog_without_fit_and_bad_input():
    xs = [1, 2, 4]
    ax, slopes = plotting.loglog_plot(xs, {"a": [1, 2, 3]}, fit=False)
    assert slopes == {}
    assert tick_texts(ax.get_legend().get_texts()) == ["a"]
    with pytest.raises(ValueError, match="xs must be positive"):
        plotting.loglog_plot([0, 1], {"a": [1, 2]})
    with pytest.raises(ValueError, match=r"ys_by_label\['a'\] has shape"):
        plotting.loglog_plot([1, 2, 3], {"a": [1, 2]})
    with pytest.raises(ValueError, match="must be positive"):
        plotting.loglog_plot([1, 2], {"a": [1, -2]})


def arrow_oracle(w):
    """Pairs (i, j), i != j, whose weight is at least 1 % of the largest."""
    n = len(w)
    return sum(
        1 for i in range(n) for j in range(n) if i != j and w[i][j] >= 0.01 * w.max()
    )


@pytest.mark.parametrize("masked", [False, True])
def test_graph_attention_plot_draws_one_arrow_per_weight(gen, masked):
    G = nx.path_graph(5)
    scores = torch.randn(5, 5, generator=gen)
    if masked:  # attend to neighbours and self only, as in a GAT
        allowed = torch.tensor(nx.to_numpy_array(G)).bool() | torch.eye(5).bool()
        scores = scores.masked_fill(~allowed, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    ax = plotting.graph_attention_plot(G, w, node_colors=[0, 0, 1, 1, 2])
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == arrow_oracle(w.numpy())
    assert not ax.axison


def test_graph_attention_plot_fixed_layout_and_bad_input():
    G = nx.cycle_graph(4)
    pos = {n: (float(n), 0.0) for n in G}
    _, ax = plt.subplots()
    assert plotting.graph_attention_plot(G, np.full((4, 4), 0.25), pos=pos, ax=ax) is ax
    with pytest.raises(ValueError, match=r"weights has shape \(3, 3\) but the graph"):
        plotting.graph_attention_plot(G, np.eye(3))
