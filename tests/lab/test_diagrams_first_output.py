"""selfattn.lab.diagrams.first_output (Agg): the weights and the output drawn are
those the library's attention computes for the first query."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Circle  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattn import scaled_dot_product_attention  # noqa: E402
from selfattn.lab import diagrams  # noqa: E402


def example():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(4, 3, generator=g)
    W_q, W_k, W_v = (torch.randn(3, 2, generator=g) for _ in range(3))
    return a, a @ W_q, a @ W_k, a @ W_v, ["I", "saw", "a", "saw"]


def test_the_drawn_weights_and_output_are_the_librarys():
    a, q, k, v, tokens = example()
    fig = diagrams.first_output(a, q, k, v, tokens)
    assert isinstance(fig, Figure)
    out, w = scaled_dot_product_attention(q[:1], k, v)
    ax = fig.axes[0]
    circles = [p for p in ax.patches if isinstance(p, Circle)]
    assert [c.get_gid() for c in circles] == [f"weight {j}" for j in range(1, 5)]
    drawn = [t.get_text() for t in ax.findobj(Text)]
    for j in range(4):  # each weight is printed in its circle
        assert f"{float(w[0, j]):.2f}" in drawn
    b1 = "(" + ", ".join(f"{t:g}" for t in out[0].round(decimals=2).tolist()) + ")"
    assert f"$b^1$ = {b1}" in drawn
    for token in set(tokens):
        assert any(t.endswith(f"\n{token}") for t in drawn)


def test_the_arrows_grow_with_the_weights():
    a, q, k, v, tokens = example()
    fig = diagrams.first_output(a, q, k, v, tokens)
    arrows = {
        t.get_gid(): t.arrow_patch.get_linewidth()
        for t in fig.axes[0].texts
        if (t.get_gid() or "").startswith("arrow")
    }
    _, w = scaled_dot_product_attention(q[:1], k, v)
    order = sorted(range(4), key=lambda j: float(w[0, j]))
    widths = [arrows[f"arrow {j + 1}"] for j in order]
    assert widths == sorted(widths) and widths[0] < widths[-1]


def test_draws_on_given_axes_and_checks_lengths():
    a, q, k, v, tokens = example()
    fig, ax = matplotlib.pyplot.subplots()
    assert diagrams.first_output(a, q, k, v, tokens, ax=ax) is fig
    with pytest.raises(ValueError):
        diagrams.first_output(a, q, k, v, tokens[:3])
    matplotlib.pyplot.close("all")
