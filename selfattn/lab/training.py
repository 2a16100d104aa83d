"""A small, reproducible training loop for the chapters' models.

``fit`` runs mini-batch gradient descent and returns a :class:`History` of
per-epoch numbers; ``evaluate`` measures a model without changing it;
``accuracy`` is the usual metric. Shuffling draws only from the
``torch.Generator`` you pass, so the same seed gives the same run, and
nothing is printed unless you ask for a progress bar.

Data are a tuple of tensors ``(X, y, *extra)`` sharing their first
dimension (one row per example), or a ``torch.utils.data.Dataset`` whose items
are such tuples. The model is called as ``model(X, *extra)`` and returns
logits; the loss as ``loss_fn(logits, y)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields

import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

__all__ = ["History", "accuracy", "evaluate", "fit"]

Data = Sequence[Tensor] | Dataset
LossFn = Callable[[Tensor, Tensor], Tensor]
MetricFn = Callable[[Tensor, Tensor], float | Tensor]


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


def accuracy(logits: Tensor, y: Tensor, ignore_index: int | None = None) -> float:
    r"""Fraction of targets whose class has the largest logit.

    .. math:: \text{acc} = \frac{1}{|V|} \sum_{n \in V} [\arg\max_c z_{n,c} = y_n]

    where :math:`V` are the positions whose target is not ``ignore_index``
    (e.g. padding in sequence labelling).

    Args:
        logits: ``(B, C)`` or ``(B, T, C)`` class scores; or, for binary
            targets, logits of the shape of ``y`` (positive means class 1).
        y: ``(B,)`` or ``(B, T)`` integer class labels.
        ignore_index: label value to leave out of the count.

    Returns:
        The accuracy as a Python float in ``[0, 1]``: the number of correct
        predictions divided by the number of targets, both counted as
        integers, so 990 correct of 1000 is exactly ``0.99``.

    Examples:
        >>> logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [3.0, 1.0]])
        >>> accuracy(logits, torch.tensor([0, 1, 1]))
        0.6666666666666666
    """
    if not isinstance(logits, Tensor) or not isinstance(y, Tensor):
        raise TypeError(
            f"logits and y must be tensors, got {type(logits).__name__} "
            f"and {type(y).__name__}"
        )
    if logits.shape == y.shape:
        pred = (logits > 0).long()  # binary: one logit per target
    elif logits.shape[:-1] == y.shape:
        pred = logits.argmax(dim=-1)
    else:
        raise ValueError(
            f"logits {tuple(logits.shape)} do not match y {tuple(y.shape)}; expected "
            "logits (..., C) with y (...), or logits and y of the same shape"
        )
    valid = torch.ones_like(y, dtype=torch.bool)
    if ignore_index is not None:
        valid = y != ignore_index
    total = int(valid.sum())
    if not total:
        raise ValueError(f"y has no targets left after ignore_index={ignore_index}")
    correct = int((pred[valid] == y[valid].long()).sum())
    return correct / total  # integer counts: 990 of 1000 is exactly 0.99


def _check_data(name: str, data: Data) -> int:
    """Validate tensor-tuple data or a Dataset; return the number of examples."""
    if isinstance(data, Dataset):
        n = len(data)  # type: ignore[arg-type]
    elif isinstance(data, (tuple, list)):
        if len(data) < 2 or not all(isinstance(t, Tensor) for t in data):
            raise TypeError(f"{name} must be a tuple of tensors (X, y, *extra)")
        sizes = [t.shape[0] if t.dim() else None for t in data]
        if len(set(sizes)) != 1:
            shapes = ", ".join(
                f"{name}[{i}] {tuple(t.shape)}" for i, t in enumerate(data)
            )
            raise ValueError(
                f"{name}: every tensor needs the same first dimension (one row per "
                f"example), got {shapes}"
            )
        n = sizes[0]
    else:
        raise TypeError(
            f"{name} must be a tuple of tensors or a torch Dataset, "
            f"got {type(data).__name__}"
        )
    if not n:
        raise ValueError(f"{name} is empty")
    return n


def _batches(
    data: Data, batch_size: int, shuffle: bool, generator: torch.Generator | None
) -> Iterator[list[Tensor]]:
    """Yield ``[X, y, *extra]`` mini-batches, shuffled with ``generator``."""
    if isinstance(data, Dataset):
        loader = DataLoader(data, batch_size, shuffle=shuffle, generator=generator)
        yield from (list(b) for b in loader)
        return
    n = data[0].shape[0]
    order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
    for start in range(0, n, batch_size):
        idx = order[start : start + batch_size]
        yield [t[idx] for t in data]


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


@torch.no_grad()
def evaluate(
    model: nn.Module,
    data: Data,
    *,
    loss_fn: LossFn | None = None,
    metric_fn: MetricFn | None = None,
    batch_size: int = 256,
    device: torch.device | str | None = None,
) -> dict[str, float]:
    """Measure a model on ``data`` in eval mode, without gradients.

    The logits of every batch are gathered, and ``loss_fn`` and ``metric_fn``
    are applied once, to all of them: the numbers are those of the whole data
    at any batch size (with :func:`accuracy`, which counts in integers, 990
    correct of 1000 is exactly 0.99). The model's train/eval mode is restored.

    Args:
        model: called as ``model(X, *extra)``, returns logits ``(B, ...)``.
        data: ``(X, y, *extra)`` tensors or a Dataset of such tuples.
        loss_fn: ``loss_fn(logits, y) -> scalar tensor`` (a mean over the data).
        metric_fn: ``metric_fn(logits, y) -> float``, e.g. :func:`accuracy`.
        batch_size: examples per forward pass.
        device: where the model runs (it must already be there); each batch
            is moved to it. None: where the data are.

    Returns:
        ``{"loss": ..., "metric": ...}`` with the keys whose function was given.

    Examples:
        >>> X, y = torch.eye(4), torch.tensor([0, 1, 2, 0])
        >>> evaluate(nn.Identity(), (X, y), metric_fn=accuracy, batch_size=3)
        {'metric': 0.75}
    """
    if loss_fn is None and metric_fn is None:
        raise ValueError("evaluate needs loss_fn, metric_fn or both")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    _check_data("data", data)
    was_training = model.training
    model.eval()
    logits, targets = [], []
    try:
        for X, y, *extra in _batches(data, batch_size, False, None):
            X, y, *extra = _to(device, X, y, *extra)
            logits.append(model(X, *extra))
            targets.append(y)
    finally:
        model.train(was_training)
    z, y = _gather("logits", logits), _gather("targets", targets)
    out = {}
    if loss_fn is not None:
        out["loss"] = float(loss_fn(z, y))
    if metric_fn is not None:
        out["metric"] = float(metric_fn(z, y))
    return out


def _to(device: torch.device | str | None, *tensors: Tensor) -> list[Tensor]:
    """The tensors on ``device`` (unchanged when it is None)."""
    return [t if device is None else t.to(device) for t in tensors]


def _gather(name: str, parts: list[Tensor]) -> Tensor:
    """Concatenate the batches' tensors along the example dimension."""
    try:
        return torch.cat(parts)
    except RuntimeError:
        shapes = ", ".join(str(tuple(t.shape)) for t in parts[:3])
        raise ValueError(
            f"the batches' {name} must match beyond the first dimension to be "
            f"gathered, got {shapes}, ..."
        ) from None


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

    Returns:
        The :class:`History`. The model is trained in place and left in the
        train/eval mode it had before.
    """
    if not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an integer of at least 1, got {epochs!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
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
