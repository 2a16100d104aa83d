"""selfattn.lab.diagrams.addressing (Agg): the encoder–decoder and the key–value
memory draw what the library's attention computes."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattn import scaled_dot_product_attention  # noqa: E402
from selfattn.lab import diagrams  # noqa: E402
from selfattn.lab.diagrams._draw import MAX_WIDTH  # noqa: E402


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text)]


def widths(fig: Figure) -> dict[str, float]:
    """The drawn line width of every weight arrow, by its gid."""
    return {
        a.get_gid(): a.get_linewidth()
        for ax in fig.axes
        for a in ax.artists + ax.patches
        if (a.get_gid() or "").startswith("weight")
    }


def kv_example():
    g = torch.Generator().manual_seed(0)
    K = torch.randn(5, 4, generator=g)
    return torch.randn(4, generator=g), K, torch.randn(5, 3, generator=g)


@pytest.mark.parametrize(
    "draw", [diagrams.encoder_decoder, lambda: diagrams.key_value_memory(*kv_example())]
)
def test_a_white_figure_without_warnings_or_randomness(draw):
    state = torch.get_rng_state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "Glyph ... missing from font(s)"
        fig = draw()
        fig.canvas.draw()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert torch.equal(torch.get_rng_state(), state)


def test_exported_in_teaching_order():
    assert diagrams.__all__[:2] == ["encoder_decoder", "key_value_memory"]


# --- the encoder–decoder ---------------------------------------------------------


def test_line_widths_are_the_library_weights():
    fig = diagrams.encoder_decoder(
        ("a", "b", "c", "d"), ("x", "y"), alignment=(3, 1), sharpness=1.5
    )
    eye = torch.eye(4, dtype=torch.float64)
    _, w = scaled_dot_product_attention(eye[[3, 1]], eye, eye, scale=1.5)
    drawn = widths(fig)
    assert len(drawn) == 2 * 4  # one line per (step, state)
    for i in range(2):
        for j in range(4):
            assert drawn[f"weight {i} {j}"] == pytest.approx(
                max(MAX_WIDTH * float(w[i, j]), 0.05)
            )
    assert f"{float(w[0, 3]):.2f}" in texts(fig)  # the largest weight, printed


def test_the_default_alignment_crosses():
    """the black cat -> le chat noir: chat looks at cat, noir at black."""
    drawn = widths(diagrams.encoder_decoder())
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        row = {jj: drawn[f"weight {i} {jj}"] for jj in range(3)}
        assert max(row, key=row.get) == j


def test_given_weights_are_drawn_and_checked():
    w = torch.tensor([[0.1, 0.9], [0.5, 0.5], [1.0, 0.0]])
    drawn = widths(diagrams.encoder_decoder(("a", "b"), ("x", "y", "z"), weights=w))
    assert drawn["weight 0 1"] == pytest.approx(0.9 * MAX_WIDTH)
    assert drawn["weight 2 1"] == pytest.approx(0.05)  # a zero weight: a hairline
    with pytest.raises(ValueError, match="shape"):
        diagrams.encoder_decoder(("a", "b"), ("x", "y"), weights=w)
    with pytest.raises(ValueError, match="sum to 1"):
        diagrams.encoder_decoder(("a", "b"), ("x", "y", "z"), weights=2 * w)


def test_encoder_decoder_errors_name_the_argument():
    with pytest.raises(ValueError, match="alignment"):
        diagrams.encoder_decoder(("a", "b"), ("x", "y", "z"))  # default is for 3
    with pytest.raises(ValueError, match="alignment positions"):
        diagrams.encoder_decoder(("a",), ("x",), alignment=(1,))
    with pytest.raises(ValueError, match="source"):
        diagrams.encoder_decoder((), ("x",), alignment=(0,))


# --- the key–value memory ------------------------------------------------------------


def test_numbers_and_widths_are_the_library_s():
    q, K, V = kv_example()
    fig = diagrams.key_value_memory(q, K, V, scale=2.0)
    out, w = scaled_dot_product_attention(q[None], K, V, scale=2.0)
    shown = texts(fig)
    for j in range(5):
        assert f"{float(w[0, j]):.3f}" in shown
        assert f"{float(2.0 * (K[j] @ q)):.2f}" in shown
        assert widths(fig)[f"weight {j}"] == pytest.approx(
            max(MAX_WIDTH * float(w[0, j]), 0.05)
        )
    printed = "(" + ", ".join(f"{float(t):.2g}" for t in out[0]) + ")"
    assert printed in shown  # the output box is the library's output


def test_the_hard_lookup_mark_is_on_the_largest_score():
    K = torch.eye(3)
    q = torch.tensor([0.0, 2.0, 1.0])
    fig = diagrams.key_value_memory(q, K, torch.eye(3), labels=["a", "b", "c"])
    star = next(t for t in fig.axes[0].texts if t.get_text() == "★")
    label = next(t for t in fig.axes[0].texts if t.get_text().startswith("b\n"))
    assert star.get_position()[1] == label.get_position()[1]  # the row of key b


def test_key_value_memory_errors_name_the_argument():
    q, K, V = kv_example()
    with pytest.raises(ValueError, match="q must be"):
        diagrams.key_value_memory(q[None], K, V)
    with pytest.raises(ValueError, match="same number N"):
        diagrams.key_value_memory(q, K, V[:4])
    with pytest.raises(ValueError, match="at most 4 columns"):
        diagrams.key_value_memory(q, K, torch.zeros(5, 6))
    with pytest.raises(ValueError, match="labels"):
        diagrams.key_value_memory(q, K, V, labels=["a"])
