"""Measuring a model: exact accuracy, and evaluation over a whole data set.

:func:`accuracy` counts correct predictions in integers, and :func:`evaluate`
applies the metric once to the logits of every batch, so a number such as 990
correct of 1000 comes out as exactly 0.99 at any batch size. Data are a tuple
of tensors ``(X, y, *extra)`` sharing their first dimension, or a
``torch.utils.data.Dataset`` of such tuples; the model is called as
``model(X, *extra)`` and returns logits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset

from selfattn._checks import check_int

__all__ = ["accuracy", "evaluate"]

Data = Sequence[Tensor] | Dataset
LossFn = Callable[[Tensor, Tensor], Tensor]
MetricFn = Callable[[Tensor, Tensor], float | Tensor]


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
    check_int("batch_size", batch_size)
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
