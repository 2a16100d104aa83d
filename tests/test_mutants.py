"""Tests written against the bugs a mutation probe planted and the suite missed.

Each test names the line it guards; each fails when that line is removed or
changed (see the code review of 2026-11-22, finding 4).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import selfattn.attention as attention_module
from selfattn import MultiHeadAttention, SelfAttention
from selfattn import reference as ref
from selfattn.attention import attend
from selfattn.graph import GraphAttentionLayer
from selfattn.lab.training import fit


def test_fully_masked_rows_do_not_reach_the_fused_kernel(monkeypatch):
    """attention.py's guard in ``attend`` (the modules' fast path): PyTorch
    < 2.5 returns NaN for a query with no key.

    The fused kernel is replaced by one that does what old releases did; the
    library must not call it for such a mask, and must give zeros: in
    ``attend`` itself and in the modules' ``forward``.
    """
    real = torch.nn.functional.scaled_dot_product_attention
    calls = []

    def old_sdpa(q, k, v, attn_mask=None, **kw):
        calls.append(attn_mask)
        out = real(q, k, v, attn_mask=attn_mask, **kw)
        if attn_mask is not None:
            empty = ~attn_mask.any(dim=-1, keepdim=True)
            out = out.masked_fill(empty, float("nan"))
        return out

    monkeypatch.setattr(attention_module.F, "scaled_dot_product_attention", old_sdpa)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 3, generator=g) for _ in "qkv")
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False  # query 2 may attend nothing
    out = attend(q, k, v, mask)
    assert torch.isfinite(out).all()
    assert torch.equal(out[0, 2], torch.zeros(3))
    layer = SelfAttention(3, 3, generator=torch.Generator().manual_seed(1))
    assert torch.equal(layer(q, mask)[0, 2], torch.zeros(3))
    mha = MultiHeadAttention(4, 2, bias=False)
    x = torch.randn(1, 4, 4, generator=g)
    assert torch.equal(mha(x, mask=mask)[0, 2], torch.zeros(4))  # W_o(0) = 0
    assert calls == []  # the kernel was never asked
    attend(q, k, v, torch.ones(4, 4, dtype=torch.bool))
    assert len(calls) == 1  # where every row has a key, the kernel is used


@pytest.mark.parametrize("causal", [False, True])
def test_dispatched_path_against_the_numpy_reference(causal):
    """``attend``'s fused-kernel path, checked against something that is not
    the kernel."""
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((5, 4)) for _ in range(3))
    mask = rng.random((5, 5)) < 0.7
    mask[:, 0] = True  # every row has a key, so the library dispatches
    if causal:
        mask &= np.tril(np.ones((5, 5), dtype=bool))
    out = attend(*(torch.from_numpy(a) for a in (Q, K, V)), torch.from_numpy(mask))
    expected = ref.attention_rows(Q, K, V, mask)
    expected = expected[0] if isinstance(expected, tuple) else expected
    np.testing.assert_allclose(out.numpy(), expected, rtol=0, atol=1e-12)


def test_fit_reports_the_loss_weighted_by_batch_size():
    """training.py: `total_loss += loss.item() * len(y)`, batches of 2, 2 and 1.

    With a learning rate of 1e-30 nothing visibly changes, so the epoch's loss
    is the loss over the whole data set, not the mean of the three batch means.
    """
    g = torch.Generator().manual_seed(0)
    X = torch.randn(5, 3, generator=g)
    y = torch.tensor([0.0, 1.0, 2.0, 3.0, 40.0])  # one large error, last batch
    model = nn.Linear(3, 1)
    loss_fn = lambda z, t: nn.functional.mse_loss(z.squeeze(-1), t)  # noqa: E731
    expected = loss_fn(model(X), y).item()
    history = fit(
        model,
        (X, y),
        loss_fn=loss_fn,
        epochs=1,
        lr=1e-30,  # no visible change to the weights
        batch_size=2,
        optimizer="sgd",
        generator=torch.Generator().manual_seed(1),
        progress=False,
    )
    assert history.loss[0] == pytest.approx(expected, rel=1e-6)


def test_gat_attention_dropout_acts_in_training_only():
    """graph.py: `heads = self.drop(weights) @ ...` in train mode."""
    g = torch.Generator().manual_seed(0)
    layer = GraphAttentionLayer(4, 3, num_heads=2, dropout=0.5, generator=g)
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(1))
    mask = torch.ones(6, 6, dtype=torch.bool)
    layer.eval()
    eval_out = layer(x, mask)
    torch.testing.assert_close(layer(x, mask), eval_out)  # eval: deterministic
    layer.train()
    torch.manual_seed(0)
    train_out = layer(x, mask)
    assert not torch.allclose(train_out, eval_out), "dropout had no effect"
    layer.drop.p = 0.0
    torch.testing.assert_close(layer(x, mask), eval_out)  # p = 0: no change
