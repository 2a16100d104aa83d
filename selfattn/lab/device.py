"""Where the chapters train: the CPU, unless the reader opts in to a GPU.

The book's numbers come from the CPU, and so do its claims' records
(``tests/SEEDS.md``): a GPU rounds differently and gives other draws. So
:func:`pick_device` returns the CPU unless the environment variable
``SELFATTN_DEVICE`` names a device (``cpu``, ``cuda``, ``cuda:1``, ``mps``):
a learner with a GPU in Colab, or on an Apple-silicon Mac, sets
``SELFATTN_DEVICE=cuda`` or ``SELFATTN_DEVICE=mps`` before starting the
kernel to train there.
"""

from __future__ import annotations

import os

import torch

__all__ = ["ENV_VAR", "pick_device"]

ENV_VAR = "SELFATTN_DEVICE"


def pick_device() -> torch.device:
    """The device to train on: ``$SELFATTN_DEVICE`` when set, else the CPU.

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
    return torch.device("cpu")  # a GPU only when asked for: the book's numbers


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
