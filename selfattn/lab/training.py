"""A small, reproducible training loop for the chapters' models.

``fit`` runs mini-batch gradient descent and returns a :class:`History` of
per-epoch numbers. ``evaluate`` (which measures a model without changing it)
and ``accuracy`` come from :mod:`selfattn.lab.evaluation` and are re-exported
here, so a chapter imports its training tools from one place. Shuffling
draws only from the ``torch.Generator`` you pass, so the same seed gives the
same run, and nothing is printed unless you ask for a progress bar.

Data are a tuple of tensors ``(X, y, *extra)`` sharing their first
dimension (one row per example), or a ``torch.utils.data.Dataset`` whose items
are such tuples. The model is called as ``model(X, *extra)`` and returns
logits; the loss as ``loss_fn(logits, y)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import torch
from torch import nn
from tqdm import tqdm

from selfattn._checks import check_int
from selfattn.lab.evaluation import (
    Data,
    LossFn,
    MetricFn,
    _batches,
    _check_data,
    _gather,
    _to,
    accuracy,
    evaluate,
)

__all__ = ["History", "accuracy", "evaluate", "fit"]


@dataclass
class History:
    """Per-epoch numbers from :func:`fit`; a key is present only if it applies.

    Keys: ``"loss"`` (training loss), ``"val_loss"`` (needs ``val_data``),
    ``"metric"`` and ``"val_metric"`` (need ``metric_fn``). ``time_s`` (seconds
    per epoch) is kept out of comparisons and of the printed form, so two
    identical runs compare equal and notebook outputs stay stable.
    """

    loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    metric: list[float] = field(default_factory=list)
    val_metric: list[float] = field(default_factory=list)
    time_s: list[float] = field(default_factory=list, compare=False, repr=False)

    def keys(self) -> list[str]:
        """Names of the recorded (non-empty) series, ``time_s`` excluded."""
        return [f.name for f in fields(self) if f.repr and getattr(self, f.name)]

    def __getitem__(self, key: str) -> list[float]:
        if key not in self.keys() and key != "time_s":
            raise KeyError(f"History has no {key!r}; it has {self.keys()}")
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __repr__(self) -> str:
        parts = [f"{k}=[{', '.join(f'{v:.4f}' for v in self[k])}]" for k in self.keys()]
        return f"History({', '.join(parts)})"


def _make_optimizer(
    optimizer: str | torch.optim.Optimizer, model: nn.Module, lr: float, wd: float
) -> torch.optim.Optimizer:
    if isinstance(optimizer, torch.optim.Optimizer):
        return optimizer
    choices = {
        "adam": torch.optim.Adam,
        "adamw": torch.optim.AdamW,
        "sgd": torch.optim.SGD,
    }
    if optimizer not in choices:
        raise ValueError(
            f"optimizer must be one of {sorted(choices)} or a torch.optim.Optimizer, "
            f"got {optimizer!r}"
        )
    return choices[optimizer](model.parameters(), lr=lr, weight_decay=wd)


def fit(
    model: nn.Module,
    train_data: Data,
    *,
    loss_fn: LossFn,
    epochs: int,
    lr: float = 1e-3,
    batch_size: int = 32,
    optimizer: str | torch.optim.Optimizer = "adam",
    val_data: Data | None = None,
    metric_fn: MetricFn | None = None,
    generator: torch.Generator | None = None,
    progress: bool | None = None,
    weight_decay: float = 0.0,
    grad_clip: float | None = None,
    device: torch.device | str | None = None,
    schedule: Callable[[int], float] | None = None,
) -> History:
    r"""Train ``model`` by mini-batch gradient descent; return per-epoch history.

    Each epoch shuffles ``train_data`` with ``generator`` and, per batch, takes
    one optimizer step on the batch loss
    :math:`\mathcal{L} = \text{loss\_fn}(\text{model}(X, \dots), y)`; for plain
    SGD that is :math:`\theta \leftarrow \theta - \eta\, \nabla_\theta \mathcal{L}`
    with :math:`\eta` = ``lr`` (Adam rescales the step per parameter).
    ``"loss"`` is the running mean of the batch losses over the epoch
    (weighted by batch size, model in train mode); ``"metric"`` is
    ``metric_fn`` of all the epoch's training logits at once (as they came,
    in train mode); ``"val_*"`` come from :func:`evaluate` at the end of the
    epoch. For sequence labelling, pass a
    loss that handles ``(B, T, C)`` logits and padding, e.g.
    ``lambda z, y: F.cross_entropy(z.transpose(1, 2), y, ignore_index=-100)``.

    Why fifteen arguments and no config object: after ``model`` and
    ``train_data`` each is keyword-only, all but ``loss_fn`` and ``epochs``
    have a default, and a chapter's call names only the few it changes, in
    the cell that uses them (as PyTorch's optimizers and scikit-learn's
    estimators do). Grouping them (an ``Optim(lr, weight_decay, grad_clip,
    schedule)``, say) would add a class to learn and take the settings out of
    that cell.

    Args:
        model: called as ``model(X, *extra)``, returns logits.
        train_data: ``(X, y, *extra)`` tensors sharing their first dimension, or
            a Dataset of such tuples.
        loss_fn: ``loss_fn(logits, y) -> scalar tensor``.
        epochs: passes over the data (at least 1).
        lr, weight_decay: for ``optimizer`` given by name.
        batch_size: examples per step.
        optimizer: ``"adam"``, ``"adamw"``, ``"sgd"`` or a ready optimizer.
        val_data: data for ``"val_loss"`` / ``"val_metric"``.
        metric_fn: ``metric_fn(logits, y) -> float``, e.g. :func:`accuracy`.
        generator: source of the shuffling; the same seed gives the same run
            (dropout inside the model still uses torch's global generator).
        progress: show a tqdm bar on stderr; None shows it only when stderr
            is a terminal (never inside a Jupyter kernel).
        grad_clip: clip the gradients' global norm to this value.
        device: where to train (e.g. :func:`selfattn.lab.device.pick_device`):
            the model is moved there (in place) and every batch with it.
            None: where the model and the data are.
        schedule: the learning rate of step ``s`` (counted from 0 over the
            whole run) is the optimizer's own rate times ``schedule(s)``
            (PyTorch's ``LambdaLR``, stepped after every optimizer step, so
            it is also called once with the number of steps), e.g. a warm-up
            then a cosine decay. None: a constant rate.

    Returns:
        The :class:`History`. The model is trained in place and left in the
        train/eval mode it had before.
    """
    check_int("epochs", epochs)
    check_int("batch_size", batch_size)
    if lr <= 0:
        raise ValueError(f"lr must be positive, got {lr}")
    if grad_clip is not None and grad_clip <= 0:
        raise ValueError(f"grad_clip must be positive or None, got {grad_clip}")
    n = _check_data("train_data", train_data)
    if val_data is not None:
        _check_data("val_data", val_data)
    if device is not None:
        model.to(device)
    opt = _make_optimizer(optimizer, model, lr, weight_decay)
    if schedule is not None and not callable(schedule):
        raise TypeError(f"schedule must be callable or None, got {schedule!r}")
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule) if schedule else None
    show = sys.stderr.isatty() if progress is None else bool(progress)
    history = History()
    was_training = model.training
    bar = tqdm(range(epochs), desc="epochs", disable=not show, file=sys.stderr)
    try:
        for epoch in bar:
            start, total_loss, seen = time.perf_counter(), 0.0, ([], [])
            model.train()
            for step, (X, y, *extra) in enumerate(
                _batches(train_data, batch_size, True, generator)
            ):
                X, y, *extra = _to(device, X, y, *extra)
                logits = model(X, *extra)
                loss = loss_fn(logits, y)
                if not torch.isfinite(loss):
                    raise RuntimeError(
                        f"loss became {loss.item()} at epoch {epoch + 1}, batch "
                        f"{step + 1}; try a smaller lr (now {lr}) or grad_clip"
                    )
                opt.zero_grad()
                loss.backward()
                if grad_clip is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
                opt.step()
                if sched is not None:
                    sched.step()
                total_loss += loss.item() * len(y)
                if metric_fn is not None:
                    seen[0].append(logits.detach())
                    seen[1].append(y)
            history.loss.append(total_loss / n)
            if metric_fn is not None:
                z, y_all = _gather("logits", seen[0]), _gather("targets", seen[1])
                history.metric.append(float(metric_fn(z, y_all)))
            if val_data is not None:
                val = evaluate(
                    model, val_data, loss_fn=loss_fn, metric_fn=metric_fn, device=device
                )
                history.val_loss.append(val["loss"])
                if metric_fn is not None:
                    history.val_metric.append(val["metric"])
            history.time_s.append(time.perf_counter() - start)
            bar.set_postfix({k: f"{history[k][-1]:.4f}" for k in history.keys()})
    finally:
        bar.close()
        model.train(was_training)
    return history
