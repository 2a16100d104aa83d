"""selfattn.lab.training: learns a toy problem, reproducibly, silently, checked."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from oracles import new_linear, separable
from torch import nn
from torch.utils.data import Dataset, TensorDataset

from selfattn.lab.training import History, accuracy, evaluate, fit

IGNORE = -100


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run fastest on one thread (no spin-waiting on a busy machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Tagger(nn.Module):
    """Per-token linear classifier: (B, T, D) -> (B, T, C)."""

    def __init__(self, D=3, C=4):
        super().__init__()
        self.proj = nn.Linear(D, C)

    def forward(self, x, scale=None):
        logits = self.proj(x)  # (B, T, C)
        return logits if scale is None else logits * scale[:, None, None]


def seq_loss(logits, y):
    return F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE)


def test_fit_learns_linearly_separable_problem(gen):
    X, y = separable(gen)
    model = new_linear()
    history = fit(model, (X, y), loss_fn=F.cross_entropy, epochs=30, lr=0.05,
                  metric_fn=accuracy, val_data=(X, y), generator=gen)  # fmt: skip
    assert isinstance(history, History)
    assert history.keys() == ["loss", "val_loss", "metric", "val_metric"]
    assert all(len(history[k]) == 30 for k in history.keys())
    assert history.loss[-1] < history.loss[0] / 3
    with torch.no_grad():
        acc = (model(X).argmax(dim=1) == y).float().mean().item()  # oracle
    assert acc >= 0.95
    assert history.val_metric[-1] == pytest.approx(acc)
    assert model.training  # mode restored


def test_history_keys_only_those_that_apply(gen):
    X, y = separable(gen, n=40)
    history = fit(new_linear(), (X, y), loss_fn=F.cross_entropy, epochs=2)
    assert history.keys() == ["loss"]
    assert "val_loss" not in history
    assert len(history.time_s) == 2
    assert "time_s" not in repr(history)
    with pytest.raises(KeyError, match="History has no 'metric'"):
        history["metric"]


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "sgd"])
@pytest.mark.parametrize("as_dataset", [False, True])
def test_same_seed_same_run(optimizer, as_dataset):
    X, y = separable(torch.Generator().manual_seed(1), n=100)
    data = TensorDataset(X, y) if as_dataset else (X, y)
    base = new_linear()

    def run(seed):
        model = copy.deepcopy(base)
        gen = torch.Generator().manual_seed(seed)
        kw = dict(loss_fn=F.cross_entropy, epochs=3, batch_size=16, lr=0.1,
                  optimizer=optimizer, metric_fn=accuracy, weight_decay=1e-3,
                  grad_clip=1.0, generator=gen)  # fmt: skip
        return fit(model, data, **kw), model.state_dict()

    (h1, p1), (h2, p2), (h3, _) = run(0), run(0), run(1)
    assert h1 == h2
    assert all(torch.equal(p1[k], p2[k]) for k in p1)
    assert h1.loss != h3.loss  # a different seed shuffles differently


@pytest.mark.parametrize("progress", [False, None])
def test_silent_unless_asked(gen, capsys, progress):
    X, y = separable(gen, n=40)
    fit(new_linear(), (X, y), loss_fn=F.cross_entropy, epochs=2, progress=progress,
        val_data=(X, y), metric_fn=accuracy)  # fmt: skip
    out, err = capsys.readouterr()
    assert (out, err) == ("", "")


def test_progress_true_writes_to_stderr_only(gen, capsys):
    X, y = separable(gen, n=40)
    fit(new_linear(), (X, y), loss_fn=F.cross_entropy, epochs=2, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "epochs" in err


def test_sequence_labelling_ignores_padding(gen):
    X = torch.randn(12, 5, 3, generator=gen)  # (B, T, D)
    y = torch.randint(0, 4, (12, 5), generator=gen)  # (B, T)
    y[:, 3:] = IGNORE  # padding
    scale = torch.rand(12, generator=gen) + 0.5  # an extra model input

    def run(inputs, labels):
        model = Tagger()
        torch.nn.init.zeros_(model.proj.weight)
        torch.nn.init.zeros_(model.proj.bias)
        metric = lambda z, t: accuracy(z, t, ignore_index=IGNORE)  # noqa: E731
        return fit(model, (inputs, labels, scale), loss_fn=seq_loss, epochs=2,
                   batch_size=4, metric_fn=metric, lr=0.1,
                   generator=torch.Generator().manual_seed(0))  # fmt: skip

    h = run(X, y)
    # What the model sees and predicts at padded positions must not matter ...
    X_noise = X.clone()
    X_noise[:, 3:] = 100 * torch.randn(12, 2, 3, generator=gen)
    assert run(X_noise, y) == h
    # ... whereas real labels there would change the run.
    y_leak = y.clone()
    y_leak[:, 3:] = torch.randint(0, 4, (12, 2), generator=gen)
    assert run(X, y_leak) != h


class PairDataset(Dataset):
    """A map-style Dataset of (x, y) pairs, as a reader might write one."""

    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.X[i], self.y[i]


def test_fit_accepts_a_dataset(gen):
    X, y = separable(gen, n=60)
    data = PairDataset(X, y)
    history = fit(new_linear(), data, loss_fn=F.cross_entropy, epochs=3,
                  val_data=data, generator=gen)  # fmt: skip
    assert history.keys() == ["loss", "val_loss"]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"epochs": 0}, ValueError, "epochs must be positive, got epochs=0"),
        ({"epochs": 1.5}, TypeError, "epochs must be an int, got float"),
        ({"epochs": True}, TypeError, "epochs must be an int, got bool"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": 2.0}, TypeError, "batch_size"),
        ({"lr": 0.0}, ValueError, "lr must be positive"),
        ({"grad_clip": -1.0}, ValueError, "grad_clip"),
        ({"optimizer": "adagrad"}, ValueError, "optimizer must be one of"),
        ({"train_data": (torch.zeros(5, 2), torch.zeros(4))}, ValueError,
         r"train_data: .*train_data\[0\] \(5, 2\), train_data\[1\] \(4,\)"),
        ({"train_data": (torch.zeros(0, 2), torch.zeros(0))}, ValueError,
         "train_data is empty"),
        ({"train_data": (torch.zeros(5, 2),)}, TypeError, "train_data must be a tuple"),
        ({"train_data": np.zeros((5, 2))}, TypeError, "train_data must be a tuple"),
        ({"val_data": (torch.zeros(3, 2), torch.zeros(2))}, ValueError, "val_data"),
        ({"schedule": 0.5}, TypeError, "^schedule must be callable or None, got 0.5$"),
    ],
)  # fmt: skip
def test_fit_bad_input(gen, kwargs, error, match):
    X, y = separable(gen, n=20)
    args = {"train_data": (X, y), "loss_fn": F.cross_entropy, "epochs": 1, **kwargs}
    with pytest.raises(error, match=match):
        fit(new_linear(), **args)


def test_fit_stops_on_nan_loss(gen):
    X, y = separable(gen, n=20)
    with pytest.raises(RuntimeError, match="loss became nan at epoch 1, batch 1"):
        fit(new_linear(), (X, y), loss_fn=lambda z, t: z.sum() * float("nan"),
            epochs=1)  # fmt: skip


def test_fit_metric_is_exact_over_the_epoch(gen):
    """fit's training metric is that of all the epoch's logits at once."""
    X = torch.randn(1000, 2, generator=gen)
    y = (X[:, 0] > 0).long()
    model = nn.Linear(2, 2)
    seen = []

    def metric(z, t):
        seen.append(len(t))
        return accuracy(z, t)

    fit(model, (X, y), loss_fn=F.cross_entropy, epochs=2, lr=1e-3, batch_size=37,
        metric_fn=metric, generator=gen)  # fmt: skip
    assert seen == [1000, 1000]  # once per epoch, on every example


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_fit_and_evaluate_run_on_the_device(gen):  # pragma: no cover
    X, y = torch.randn(64, 2, generator=gen), torch.randint(0, 2, (64,), generator=gen)
    model = nn.Linear(2, 2)
    fit(model, (X, y), loss_fn=F.cross_entropy, epochs=1, device="cuda")
    assert next(model.parameters()).is_cuda
    assert 0 <= evaluate(model, (X, y), metric_fn=accuracy, device="cuda")["metric"]


def test_fit_moves_the_model_to_the_device(gen):
    X, y = torch.randn(64, 2, generator=gen), torch.randint(0, 2, (64,), generator=gen)
    model = nn.Linear(2, 2).double()
    fit(model, (X.double(), y), loss_fn=F.cross_entropy, epochs=1, device="cpu")
    assert next(model.parameters()).device.type == "cpu"


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


def test_fit_schedule_sets_each_step_s_rate(gen):
    """With ``schedule``, step s uses lr * schedule(s): checked against SGD by hand
    (an oracle loop of plain gradient steps with those rates)."""
    X, y = separable(gen, n=40)
    X, y = X[:12], y[:12]  # 12 rows: 6 batches of 2
    factors = [1.0, 0.5, 0.25, 0.0, 2.0, 1.0, 9.0]  # one per step; the 7th unused
    model, oracle = new_linear(), new_linear()
    oracle.load_state_dict(model.state_dict())
    fit(model, (X, y), loss_fn=F.cross_entropy, epochs=1, lr=0.1, batch_size=2,
        optimizer="sgd", schedule=lambda s: factors[s],
        generator=torch.Generator().manual_seed(3))  # fmt: skip
    order = torch.randperm(12, generator=torch.Generator().manual_seed(3))
    for s, rows in enumerate(order.split(2)):
        oracle.zero_grad()
        F.cross_entropy(oracle(X[rows]), y[rows]).backward()
        with torch.no_grad():
            for p in oracle.parameters():
                p -= 0.1 * factors[s] * p.grad
    for a, b in zip(model.parameters(), oracle.parameters(), strict=True):
        torch.testing.assert_close(a, b)
