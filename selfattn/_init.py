"""Initial parameters drawn from an explicit ``torch.Generator``.

PyTorch's layers draw their initial values from the global random number
generator. The course's modules take ``generator=`` instead (STYLE: randomness
is explicit): they are built as usual, then, when a generator is given,
:func:`redraw_parameters` draws every parameter again from it, with the
distribution PyTorch itself uses, in the order of ``module.modules()``. The
initial values are then a function of the generator alone.

One side effect remains: the layers are first built as usual, and their
first (discarded) initial values still come from PyTorch's global
generator. Code that draws from the global generator after building a
module (dropout, its own layers) therefore depends on how many modules it
built before; seed such draws just before them.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["redraw_parameters"]


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
