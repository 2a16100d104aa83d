"""selfattn.complexity: counts against hand-computed values and PyTorch's FLOP
counter, power-law slopes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from selfattn.complexity import (
    convolution_madds,
    loglog_slope,
    multi_head_madds,
    recurrent_madds,
    restricted_self_attention_madds,
    self_attention_madds,
    table1,
)


def test_counts_by_hand():
    # n = 10, d = 4: scores 10*10*4 = 400, weighted sum 400
    assert self_attention_madds(10, 4) == 800
    # + projections: 4 matrices 4x4 applied to 10 positions = 4 * 10 * 16 = 640
    assert self_attention_madds(10, 4, projections=True) == 800 + 640
    assert recurrent_madds(10, 4) == 10 * 16  # one 4x4 mat-vec per step
    assert convolution_madds(10, 4, 3) == 3 * 10 * 16  # 3 taps, 4 -> 4 channels
    assert restricted_self_attention_madds(10, 4, 3) == 2 * 3 * 10 * 4


def test_counts_against_matmul_shapes():
    """A (a, b) @ (b, c) product costs a*b*c multiply-adds: count the real ones."""
    n, d = 7, 6
    q = k = v = torch.zeros(n, d)
    scores = q @ k.T  # (n, n), n*d*n
    out = scores @ v  # (n, d), n*n*d
    by_shapes = n * d * scores.shape[1] + scores.shape[0] * n * out.shape[1]
    assert self_attention_madds(n, d) == by_shapes


def _torch_flops(fn, *args):
    """FLOPs of fn(*args) as PyTorch counts them: 2 per multiply-add."""
    with FlopCounterMode(display=False) as counter:
        fn(*args)
    return counter.get_total_flops()


@pytest.mark.parametrize("n, d", [(7, 6), (32, 16)])
def test_madds_are_half_of_pytorchs_flop_count(n, d):
    """FlopCounterMode counts 2 FLOPs per multiply-add: FLOPs = 2 x madds."""
    x = torch.randn(1, n, d)
    scores = lambda x: x @ x.transpose(-2, -1)  # noqa: E731
    attention = lambda x: torch.softmax(scores(x), -1) @ x  # noqa: E731
    assert _torch_flops(attention, x) == 2 * self_attention_madds(n, d)
    H = 2
    mha = nn.MultiheadAttention(d, H, batch_first=True, bias=False)
    with torch.no_grad():
        flops = _torch_flops(lambda x: mha(x, x, x, need_weights=True), x)
    assert flops == 2 * multi_head_madds(n, d, H, projections=True)
    conv = nn.Conv1d(d, d, 3, padding=1, bias=False)
    assert _torch_flops(conv, x.transpose(1, 2)) == 2 * convolution_madds(n, d, 3)
    W = torch.randn(d, d)
    h = torch.randn(1, d)
    step = lambda: [h @ W for _ in range(n)]  # noqa: E731  one W h per step
    assert _torch_flops(step) == 2 * recurrent_madds(n, d)


def test_restricted_with_full_window_is_self_attention():
    assert restricted_self_attention_madds(64, 32, 64) == self_attention_madds(64, 32)


@pytest.mark.parametrize("projections", [False, True])
def test_multi_head_independent_of_heads(projections):
    counts = {
        h: multi_head_madds(128, 64, h, projections=projections)
        for h in (1, 2, 4, 8, 16, 64)
    }
    assert len(set(counts.values())) == 1
    assert counts[1] == self_attention_madds(128, 64, projections=projections)
    with pytest.raises(ValueError, match="h=3"):
        multi_head_madds(128, 64, 3)


def test_attention_vs_recurrent_crossover():
    """Table 1's remark: self-attention is cheaper than a recurrent layer when n < d
    (here with the 2 n^2 d count against n d^2, when 2 n < d)."""
    d = 512
    assert self_attention_madds(100, d) < recurrent_madds(100, d)
    assert self_attention_madds(1000, d) > recurrent_madds(1000, d)


def test_table1_rows():
    rows = table1()
    assert [r["layer"] for r in rows][:2] == ["Self-attention", "Recurrent"]
    assert {r["complexity"] for r in rows} == {
        "O(n^2 d)",
        "O(n d^2)",
        "O(k n d^2)",
        "O(r n d)",
    }
    assert "madds" not in rows[0]
    rows = table1(n=512, d=64, k=3, r=8)
    by_layer = {r["layer"]: r for r in rows}
    assert by_layer["Self-attention"]["madds"] == 2 * 512**2 * 64
    assert by_layer["Recurrent"]["madds"] == recurrent_madds(512, 64)
    assert by_layer["Convolutional"]["madds"] == convolution_madds(512, 64, 3)
    assert by_layer["Self-attention (restricted)"]["madds"] == (
        restricted_self_attention_madds(512, 64, 8)
    )
    assert by_layer["Recurrent"]["sequential_ops"] == 512
    assert by_layer["Convolutional"]["path_length"] == 512 / 3


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("c", [1e-6, 1.0, 40.0])
def test_loglog_slope_of_exact_power_laws(p, c):
    xs = [2**i for i in range(4, 12)]
    assert loglog_slope(xs, [c * x**p for x in xs]) == pytest.approx(p)


def test_loglog_slope_least_squares(rng):
    xs = np.geomspace(100, 10_000, 20)
    ys = 3 * xs**1.5 * np.exp(rng.normal(0, 0.01, size=20))
    expected = np.polyfit(np.log(xs), np.log(ys), 1)[0]
    assert loglog_slope(xs, ys) == pytest.approx(expected)
    assert abs(loglog_slope(xs, ys) - 1.5) < 0.02
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1, 2], [1, -2])
    with pytest.raises(ValueError, match="same length"):
        loglog_slope([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="distinct"):
        loglog_slope([2, 2], [1, 3])


@pytest.mark.parametrize("bad", [0, -5])
def test_counts_reject_bad_sizes(bad):
    with pytest.raises(ValueError, match="n"):
        self_attention_madds(bad, 4)
    with pytest.raises(ValueError, match="k"):
        convolution_madds(4, 4, bad)
    with pytest.raises(TypeError, match="d"):
        recurrent_madds(4, 2.5)
