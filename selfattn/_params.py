"""Initial parameters drawn from an explicit ``torch.Generator``: one way to build.

PyTorch's layers draw their initial values from the global random number
generator. The library's modules take ``generator=`` instead (STYLE.md, rule
5: randomness is explicit), and every one of them is built the same way::

    def __init__(self, ..., *, generator=None):
        super().__init__()
        with init_from(self, generator):
            self.W_q = nn.Linear(embed_dim, d_k)
            ...

Inside the block the layers are built as usual. On leaving it, with a
generator, every parameter is drawn again from it (:func:`redraw_parameters`,
with the distributions PyTorch itself uses, in the order of
``module.modules()``) and torch's global generator is put back in the state
it had on entering: the initial values are a function of the generator alone,
and building a module never moves the global stream (dropout, or a layer built
without a generator, does not depend on how many modules were built before).
With ``generator=None`` the layers keep PyTorch's own global draws.

A module with parameters of its own (not inside ``nn.Linear`` or ``nn.Conv``)
defines ``reset_parameters_from(generator)``, which draws them (from the
global generator when ``generator`` is None); :func:`init_from` calls it.
The rule fails loudly: with a generator, a parameter that nothing drew and
that is not a constant initialisation (all zeros or all ones: a bias,
LayerNorm's, a class token) raises ``TypeError`` naming its submodule,
instead of keeping a value from the global stream: an ``nn.Embedding``, or a
``torch.randn`` parameter (one element included) with no
``reset_parameters_from``. So does a floating-point buffer registered in the
block just after a draw from the global stream (``register_buffer("R",
torch.randn(...))``) that nothing drew again; a buffer computed without
randomness (a table of positions) is registered after no draw and passes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

__all__ = ["init_from", "redraw_parameters"]


@contextmanager
def init_from(module: nn.Module, generator: torch.Generator | None) -> Iterator[None]:
    """Build ``module``'s layers in this block; parameters come from ``generator``.

    Raises:
        TypeError: ``generator`` is neither None nor a ``torch.Generator``.
    """
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    with torch.random.fork_rng(devices=[], enabled=generator is not None):
        with _buffers_after_a_draw(enabled=generator is not None) as drawn:
            yield
    redraw_parameters(module, generator)
    _check_buffers_drawn(module, drawn)


def redraw_parameters(module: nn.Module, generator: torch.Generator | None) -> None:
    """Draw the parameters of ``module`` again, from ``generator``.

    ``nn.Linear`` and ``nn.Conv1d/2d``: PyTorch's defaults, weight
    :math:`U(-\\sqrt{1/\\text{fan\\_in}}, \\sqrt{1/\\text{fan\\_in}})` (Kaiming
    uniform with ``a = sqrt(5)``) and bias in the same range. Every module
    (``module`` itself included) with a ``reset_parameters_from`` method draws
    its own parameters with it, in the order of ``module.modules()``, even a
    subclass of ``nn.Linear``.
    LayerNorm keeps ones and zeros. With ``generator=None`` the layers keep
    the values they drew when built, and only ``module``'s own
    ``reset_parameters_from`` runs (its submodules ran theirs when built).

    Raises:
        TypeError: with a generator, a submodule holds a parameter that
            nothing drew and that is not constant (what it would keep comes
            from the global stream).
    """
    with torch.no_grad():
        if generator is None:  # the layers drew their own; draw module's own
            if hasattr(module, "reset_parameters_from"):
                module.reset_parameters_from(None)
            return
        # PyTorch counts the in-place writes to a tensor (autograd's version
        # counter): a parameter whose count did not move was not drawn here
        before = {id(p): p._version for p in module.parameters()}
        for m in module.modules():
            if hasattr(m, "reset_parameters_from"):  # its own rule first
                m.reset_parameters_from(generator)
            elif isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d)):
                nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), generator=generator)
                if m.bias is not None:
                    fan_in = m.weight[0].numel()
                    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                    nn.init.uniform_(m.bias, -bound, bound, generator=generator)
        _check_all_drawn(module, before)


def _where(module: nn.Module, name: str, m: nn.Module) -> str:
    """``Model`` or ``Model.sub.name (Type)``: where a message points."""
    return type(module).__name__ + (f".{name} ({type(m).__name__})" if name else "")


def _check_all_drawn(module: nn.Module, before: dict[int, int]) -> None:
    """Raise ``TypeError`` naming each submodule with a parameter that was not
    drawn (its version did not move) and is not constant (LayerNorm's ones, a
    zero bias, a zero class token are)."""
    for name, m in module.named_modules():
        undrawn = [
            n
            for n, p in m.named_parameters(recurse=False)
            if p._version == before[id(p)] and not p.is_meta and not _constant(p)
        ]
        if undrawn:
            raise TypeError(
                f"{_where(module, name, m)} has parameters {undrawn} that "
                "init_from cannot draw from the generator (it draws nn.Linear "
                "and nn.Conv1d/2d); give the module that owns them a "
                "reset_parameters_from(generator) that draws them (STYLE.md, rule 5)"
            )


def _constant(p: torch.Tensor) -> bool:
    """A constant initialisation, all zeros or all ones (a zero bias, LayerNorm's
    ones, a zero class token): no randomness to draw. Any other value, a single
    one included, may have come from the global stream."""
    return bool((p == 0).all() or (p == 1).all())


@contextmanager
def _buffers_after_a_draw(*, enabled: bool) -> Iterator[list]:
    """Collect ``(owner, name, buffer, version)`` for each floating-point buffer
    registered in the block after the global stream moved since the last
    registration (of a parameter, buffer or module): its values may be draws."""
    found, last = [], [torch.get_rng_state()]

    def seen(*_) -> None:  # every registration is a checkpoint of the stream
        last[0] = torch.get_rng_state()

    def buffer(owner: nn.Module, name: str, b: torch.Tensor | None) -> None:
        if b is not None and b.is_floating_point() and not b.is_meta:
            if not torch.equal(torch.get_rng_state(), last[0]) and not _constant(b):
                found.append((owner, name, b, b._version))
        seen()

    handles = []
    if enabled:
        hooks = nn.modules.module
        handles = [
            hooks.register_module_buffer_registration_hook(buffer),
            hooks.register_module_parameter_registration_hook(seen),
            hooks.register_module_module_registration_hook(seen),
        ]
    try:
        yield found
    finally:
        for handle in handles:
            handle.remove()


def _check_buffers_drawn(module: nn.Module, found: list) -> None:
    """Raise ``TypeError`` naming a buffer of ``found`` still in ``module`` that
    nothing drew again (its version did not move)."""
    for name, m in module.named_modules():
        undrawn = [
            n
            for owner, n, b, version in found
            if owner is m and m._buffers.get(n) is b and b._version == version
        ]
        if undrawn:
            raise TypeError(
                f"{_where(module, name, m)} has buffers {undrawn} registered just "
                "after a draw from torch's global stream, that nothing drew from the "
                "generator; draw "
                "them in a reset_parameters_from(generator) (STYLE.md, rule 5)"
            )
