"""Initial parameters drawn from an explicit ``torch.Generator``.

PyTorch's layers draw their initial values from the global random number
generator. The course's modules take ``generator=`` instead (STYLE: randomness
is explicit): they are built as usual, then, when a generator is given,
:func:`redraw_parameters` draws every parameter again from it, with the
distribution PyTorch itself uses, in the order of ``module.modules()``. The
initial values are then a function of the generator alone.

The layers' first (discarded) initial values come from PyTorch's global
generator; the constructors build them inside :func:`kept_global_rng`, which
puts the global generator's state back afterwards. Building a module with a
generator therefore leaves the global generator exactly as it was, and code
that draws from it later (dropout, a layer built without a generator) does
not depend on how many modules were built before.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["kept_global_rng", "redraw_parameters"]


def kept_global_rng(generator: torch.Generator | None):
    """Context manager: with a generator, torch's global CPU generator leaves
    the block in the state it entered it (``torch.random.fork_rng``); with
    ``generator=None`` it does nothing, so the global draws stay."""
    return torch.random.fork_rng(devices=[], enabled=generator is not None)


def redraw_parameters(module: nn.Module, generator: torch.Generator | None) -> None:
    """Draw the parameters of ``module`` again, from ``generator``.

    ``nn.Linear`` and ``nn.Conv1d/2d``: PyTorch's defaults, weight
    :math:`U(-\\sqrt{1/\\text{fan\\_in}}, \\sqrt{1/\\text{fan\\_in}})` (Kaiming
    uniform with ``a = sqrt(5)``) and bias in the same range. A module with
    its own ``reset_parameters_from(generator)`` (e.g. a learned position table)
    redraws itself. LayerNorm keeps ones and zeros (nothing random). With
    ``generator=None`` nothing changes (PyTorch's global-RNG draws stay).
    """
    if generator is None:
        return
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d)):
                nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), generator=generator)
                if m.bias is not None:
                    fan_in = m.weight[0].numel()
                    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                    nn.init.uniform_(m.bias, -bound, bound, generator=generator)
            elif m is not module and hasattr(m, "reset_parameters_from"):
                m.reset_parameters_from(generator)
