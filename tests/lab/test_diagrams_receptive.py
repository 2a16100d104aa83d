"""selfattn.lab.diagrams.receptive_fields (Agg): the highlighted inputs are the
receptive field of a stack of convolutions, 1 + L(k - 1) wide for contiguous
kernels and k^L for dilated ones, and the connections are those of
torch.nn.Conv1d (checked against the gradient of a real stack)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from torch import nn  # noqa: E402

from selfattn.lab import diagrams  # noqa: E402
from selfattn.lab.diagrams import receptive_fields  # noqa: E402
from selfattn.lab.diagrams.receptive import conv_reads, receptive_field  # noqa: E402


def _gradient_field(T, k, L, dilated, out):
    """Inputs with a nonzero gradient of output ``out``: an independent oracle
    (a stack of Conv1d with positive weights, differentiated by autograd)."""
    convs = []
    for layer in range(L):
        dil = k**layer if dilated else 1
        conv = nn.Conv1d(1, 1, k, padding=dil * (k - 1) // 2, dilation=dil, bias=False)
        nn.init.constant_(conv.weight, 0.5)
        convs.append(conv)
    x = torch.zeros(1, 1, T, requires_grad=True)
    (grad,) = torch.autograd.grad(nn.Sequential(*convs)(x)[0, 0, out], x)
    return torch.nonzero(grad[0, 0]).flatten().tolist()


def test_exported_in_teaching_order():
    assert "receptive_fields" in diagrams.__all__
    order = diagrams.__all__
    assert order.index("connectivity") < order.index("receptive_fields")


def test_layer_reads_is_a_centred_dilated_window():
    assert conv_reads(7, 3, 1)[3] == [2, 3, 4]
    assert conv_reads(7, 3, 2)[3] == [1, 3, 5]
    assert conv_reads(7, 3, 3)[0] == [0, 3]  # zero padding: no tap at -3
    assert conv_reads(9, 5, 1)[0] == [0, 1, 2]


@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("L", [1, 2, 3])
def test_widths_match_the_formulas_and_autograd(k, L):
    T = 2 * k**L + 1  # long enough for the middle output not to meet an edge
    out = T // 2
    cont = receptive_field(T, k, L, dilated=False, out=out)
    dil = receptive_field(T, k, L, dilated=True, out=out)
    assert len(cont[0]) == 1 + L * (k - 1)
    assert len(dil[0]) == k**L
    assert cont[0] == _gradient_field(T, k, L, False, out)
    assert dil[0] == _gradient_field(T, k, L, True, out)
    assert cont[-1] == dil[-1] == [out]


def test_an_edge_output_sees_one_side_only():
    field = receptive_field(27, 3, 3, dilated=True, out=26)[0]
    assert field == _gradient_field(27, 3, 3, True, 26)
    assert min(field) == 26 - (3**3 - 1) // 2  # one-sided reach (k^L - 1) / 2


def test_the_figure_highlights_the_field():
    fig = receptive_fields(T=27, kernel=3, layers=3)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    for ax, dilated, width in zip(fig.axes, (False, True), (7, 27), strict=True):
        (field,) = [c for c in ax.collections if c.get_gid() == "field"]
        xs = sorted(int(round(x)) for x, _ in field.get_offsets())
        assert xs == receptive_field(27, 3, 3, dilated=dilated, out=13)[0]
        assert len(xs) == width
        assert f"sees {width} of the 27 inputs" in ax.get_title(loc="left")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"T": 0}, ValueError, "T must be positive"),
        ({"kernel": 4}, ValueError, "kernel must be odd"),
        ({"kernel": 1}, ValueError, "kernel must be at least 3"),
        ({"layers": 0}, ValueError, "layers must be positive"),
        ({"out": 27}, ValueError, "out must be a position below T=27"),
        ({"T": 2.5}, TypeError, "T must be an int"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        receptive_fields(**kwargs)
