"""selfattn.lab.measure.count_madds: the multiply-adds of a call, against
products counted by hand (an independent oracle: a b c per product)."""

from __future__ import annotations

import torch
from torch import nn

from selfattn.lab.measure import count_madds


def test_one_product_is_abc():
    a, b, c = 7, 5, 3
    assert count_madds(torch.mm, torch.randn(a, b), torch.randn(b, c)) == a * b * c


def test_products_add_and_batches_multiply():
    x, w = torch.randn(4, 6, 8), torch.randn(8, 2)

    def two(x, w):
        return x @ w, x @ w  # two products of 4 * 6 * 8 * 2

    assert count_madds(two, x, w) == 2 * 4 * 6 * 8 * 2


def test_keyword_arguments_reach_the_call():
    x = torch.randn(3, 4)
    assert count_madds(torch.matmul, x, other=torch.randn(4, 5)) == 3 * 4 * 5


def test_elementwise_work_is_not_counted():
    x = torch.randn(16, 16)
    assert count_madds(lambda: torch.tanh(x).softmax(-1) + 1) == 0


def test_a_linear_layer_and_a_convolution():
    lin = nn.Linear(8, 4)
    assert count_madds(lin, torch.randn(10, 8)) == 10 * 8 * 4
    conv = nn.Conv1d(6, 6, kernel_size=3, padding=1)
    T = 20  # k * T * D^2
    with torch.no_grad():
        assert count_madds(conv, torch.randn(1, 6, T)) == 3 * T * 6 * 6
