"""Where the chapters train: a GPU when there is one, else the CPU.

A learner in Colab often has a GPU; the committed outputs and CI use the CPU.
:func:`pick_device` chooses CUDA, then Apple's MPS, else the CPU, unless the
environment variable ``SELFATTN_DEVICE`` names one (``cpu``, ``cuda``,
``cuda:1``, ``mps``): set ``SELFATTN_DEVICE=cpu`` to reproduce the book's
numbers on a machine with a GPU.
"""

from __future__ import annotations

import os

import torch

__all__ = ["ENV_VAR", "pick_device"]

ENV_VAR = "SELFATTN_DEVICE"


def pick_device() -> torch.device:
    """The device to train on: ``$SELFATTN_DEVICE``, else CUDA, MPS or the CPU.

    Returns:
        A ``torch.device``.

    Raises:
        ValueError: ``SELFATTN_DEVICE`` names a device this machine lacks (or
            is not a device name).

    Examples:
        >>> import os
        >>> os.environ["SELFATTN_DEVICE"] = "cpu"
        >>> pick_device()
        device(type='cpu')
        >>> del os.environ["SELFATTN_DEVICE"]
    """
    name = os.environ.get(ENV_VAR, "").strip()
    if name:
        try:
            device = torch.device(name)
        except RuntimeError:
            raise ValueError(f"{ENV_VAR}={name!r} is not a device name") from None
        if not _available(device):
            raise ValueError(f"{ENV_VAR}={name!r}: this machine has no such device")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def _available(device: torch.device) -> bool:
    if device.type == "cpu":
        return True
    if device.type == "cuda":
        index = device.index or 0
        return torch.cuda.is_available() and index < torch.cuda.device_count()
    if device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        return mps is not None and mps.is_available()
    return False
