"""attention.py where mutation testing found behaviour unchecked.

Oracles: hand-computed small cases and PyTorch's own softmax/autograd on the
formula written out. See tests/MUTATION.md.
"""

from __future__ import annotations

import re

import pytest
import torch

from selfattn.attention import masked_softmax, relu_weights


def test_relu_weights_gradient_of_a_row_with_no_positive_score_is_zero():
    """A row whose positive part is all zero has weights 0 and gradient 0.

    The safe division ``w / where(total > 0, total, 1)`` keeps the backward
    pass finite: dividing by the zero total would give 0/0 = NaN in the
    gradient even though the forward pass hides it with ``where``.
    """
    scores = torch.tensor([[-1.0, -2.0, 0.0], [1.0, 3.0, -1.0]], requires_grad=True)
    w = relu_weights(scores)
    torch.testing.assert_close(
        w.detach(), torch.tensor([[0.0, 0.0, 0.0], [0.25, 0.75, 0.0]])
    )
    (w * torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])).sum().backward()
    assert torch.isfinite(scores.grad).all()
    # row 1: d/ds_j of sum_i c_i s_i / S = (c_j - sum_i c_i w_i) / S on s_j > 0
    expected = torch.tensor([[0.0, 0.0, 0.0], [(1 - 1.75) / 4, (2 - 1.75) / 4, 0.0]])
    torch.testing.assert_close(scores.grad, expected)


@pytest.mark.parametrize(
    "scores, error, match",
    [
        ([[1.0, 2.0]], TypeError, r"^scores must be a torch\.Tensor, got list"),
        (
            torch.tensor([[1.0, float("nan")]]),
            ValueError,
            r"^scores contains NaN \(shape \(1, 2\)\)",
        ),
        (
            torch.tensor([[1.0, float("inf")]]),
            ValueError,
            r"^scores contain \+inf \(shape \(1, 2\)\); ReLU normalisation would "
            r"divide inf by inf\. Mask such entries or clamp the scores\.$",
        ),
    ],
)
def test_relu_weights_errors_name_the_argument(scores, error, match):
    with pytest.raises(error, match=match):
        relu_weights(scores)


def test_relu_weights_gradient_of_a_fully_masked_row_is_zero():
    """Positive scores, all masked: weights 0 and gradient 0 (not NaN from the
    0/0 the forward pass hides; the mask's zeros do not cancel a NaN)."""
    scores = torch.tensor([[1.0, 2.0, 3.0], [1.0, 3.0, -1.0]], requires_grad=True)
    mask = torch.tensor([[False, False, False], [True, True, False]])
    w = relu_weights(scores, mask)
    torch.testing.assert_close(
        w.detach(), torch.tensor([[0.0, 0.0, 0.0], [0.25, 0.75, 0.0]])
    )
    (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    expected = torch.tensor([[0.0, 0.0, 0.0], [(1 - 1.75) / 4, (2 - 1.75) / 4, 0.0]])
    torch.testing.assert_close(scores.grad, expected)


@pytest.mark.parametrize(
    "scores, error, message",
    [
        ([1.0], TypeError, "scores must be a torch.Tensor, got list"),
        (
            torch.tensor([1, 2]),
            TypeError,
            "scores must be a floating-point tensor, got dtype torch.int64",
        ),
        (
            torch.tensor([[1.0, float("inf")]]),
            ValueError,
            "scores contains +inf (shape (1, 2)); the softmax of +inf is undefined",
        ),
    ],
)
def test_masked_softmax_errors_name_the_argument(scores, error, message):
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        masked_softmax(scores)
