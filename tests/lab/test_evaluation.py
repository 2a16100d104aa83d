"""selfattn.lab.evaluation: accuracy against a nested loop, evaluate against
the full-batch computation, exactly at any batch size."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from oracles import new_linear, separable
from torch import nn
from torch.utils.data import TensorDataset

from selfattn.lab.evaluation import accuracy, evaluate

IGNORE = -100


def nested_loop_accuracy(logits, y, ignore_index=None):
    """Oracle: count correct argmaxes one position at a time."""
    z, t = logits.reshape(-1, logits.shape[-1]).tolist(), y.reshape(-1).tolist()
    hits = [int(np.argmax(row) == label) for row, label in zip(z, t, strict=True)
            if label != ignore_index]  # fmt: skip
    return sum(hits) / len(hits)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 4, 6)])
@pytest.mark.parametrize("ignore_index", [None, IGNORE])
def test_accuracy_matches_nested_loop(gen, shape, ignore_index):
    C = 3
    logits = torch.randn(*shape, C, generator=gen)
    y = torch.randint(0, C, shape, generator=gen)
    if ignore_index is not None:
        drop = torch.rand(shape, generator=gen) < 0.4
        drop.view(-1)[0] = False
        y = y.masked_fill(drop, ignore_index)
    expected = nested_loop_accuracy(logits, y, ignore_index)
    assert accuracy(logits, y, ignore_index=ignore_index) == pytest.approx(expected)


def test_accuracy_binary_logits_and_errors():
    logits, y = torch.tensor([2.0, -1.0, 0.5, -3.0]), torch.tensor([1, 0, 0, 0])
    assert accuracy(logits, y) == 0.75
    with pytest.raises(ValueError, match=r"logits \(4, 3\) do not match y \(5,\)"):
        accuracy(torch.zeros(4, 3), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="no targets left"):
        accuracy(torch.zeros(2, 3), torch.full((2,), IGNORE), ignore_index=IGNORE)


def test_evaluate_matches_full_batch_oracle(gen):
    X, y = separable(gen, n=90)
    model = new_linear()
    model.train()
    result = evaluate(model, (X, y), loss_fn=F.cross_entropy, metric_fn=accuracy,
                      batch_size=7)  # fmt: skip
    with torch.no_grad():
        logits = model(X)
    assert result["loss"] == pytest.approx(F.cross_entropy(logits, y).item())
    assert result["metric"] == pytest.approx(nested_loop_accuracy(logits, y))
    assert model.training
    assert all(p.grad is None for p in model.parameters())
    only_metric = evaluate(model, TensorDataset(X, y), metric_fn=accuracy)
    assert list(only_metric) == ["metric"]


def test_evaluate_needs_a_function(gen):
    X, y = separable(gen, n=20)
    with pytest.raises(ValueError, match="loss_fn, metric_fn or both"):
        evaluate(new_linear(), (X, y))


@pytest.mark.parametrize("batch_size", [1, 3, 7, 64, 256, 999, 1000, 4096])
def test_evaluate_counts_exactly_at_any_batch_size(batch_size):
    """990 correct of 1000 is exactly 0.99, however the batches fall: accuracy
    counts in integers and evaluate applies it once to every logit (a float32
    mean of batch accuracies gave 0.98999999666 or 0.9900000095)."""
    y = torch.arange(1000) % 3
    logits = F.one_hot(y, 3).float()
    logits[::100] = logits[::100].roll(1, dims=-1)  # 10 wrong, spread out
    data = (logits, y)
    res = evaluate(nn.Identity(), data, metric_fn=accuracy, batch_size=batch_size)
    assert res["metric"] == 0.99
    assert accuracy(logits, y) == 0.99
