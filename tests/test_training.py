"""selfattn.lab.training: learns a toy problem, reproducibly, silently, checked."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
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


def separable(gen, n=200):
    """Two classes split by the line x0 + 2 x1 = 0, with a margin of 0.1."""
    X = torch.randn(n, 2, generator=gen)
    X = X[(X[:, 0] + 2 * X[:, 1]).abs() > 0.1]
    y = (X[:, 0] + 2 * X[:, 1] > 0).long()
    return X, y


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


def new_linear(seed=0):
    """nn.Linear(2, 2) initialised from an explicit generator (no global seed)."""
    model, g = nn.Linear(2, 2), torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model


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
        ({"epochs": 0}, ValueError, "epochs must be an integer of at least 1, got 0"),
        ({"epochs": 1.5}, ValueError, "epochs"),
        ({"batch_size": 0}, ValueError, "batch_size"),
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
