"""Every module of the library checks its inputs' widths at the top of ``forward``.

STYLE rule 7 for modules: a tensor of the wrong width (its last dimension:
a model width, a feature width, an image's side) raises ``ValueError`` naming
the argument, and a tensor of integers raises ``TypeError`` naming it, before
any layer runs, not LayerNorm's or a matmul's error from deep inside torch.

Nothing here is listed by hand but the exceptions. The modules are the
library's public ``nn.Module`` classes (``__all__`` of its modules, the bench
``selfattn.lab`` aside). A valid call of each is taken from its class
docstring's ``Examples``: they run under a profiler that keeps the module and
the arguments of the first call of ``forward``, and the test calls
``forward`` (and ``attention_weights``, which takes the same arguments) again
with one floating-point argument changed.
"""

from __future__ import annotations

import doctest
import functools
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import selfattn

# mutmut's copy (make mutation) replaces each method by a trampoline to its
# mutants, so the profiler below never sees the code objects it looks for.
pytestmark = pytest.mark.skipif(
    Path(selfattn.__file__).parents[1].name == "mutants",
    reason="mutmut's trampolines hide the calls the examples make",
)

# Modules whose forward takes no floating-point tensor, with why.
NO_WIDTH = {
    "EncoderDecoderTransformer": "token ids (B, T): the last dimension is a length, "
    "every one valid; dtype, rank and vocabulary are checked (check_ids)",
    "BahdanauSeq2Seq": "token ids (B, T), as EncoderDecoderTransformer",
}


def _library_modules_classes() -> dict[str, type]:
    found = {}
    for info in pkgutil.walk_packages(selfattn.__path__, "selfattn."):
        parts = info.name.split(".")
        if parts[1] == "lab" or any(p.startswith("_") for p in parts):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, nn.Module):
                found[name] = obj
    return found


MODULES = _library_modules_classes()


@functools.cache
def _example_call(name: str) -> dict:
    """``forward``'s arguments (``self`` included) in its class's first example call."""
    cls = MODULES[name]
    code, calls = cls.forward.__code__, []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is code and not calls:
            calls.append(dict(frame.f_locals))

    module = sys.modules[cls.__module__]
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(cls, name, module, globs=dict(vars(module))):
        sys.setprofile(profile)
        try:
            runner.run(test, out=lambda s: None)
        finally:
            sys.setprofile(None)
    assert calls, f"no example in {name}'s docstring calls it: add one"
    return calls[0]


def _float_arguments(name: str) -> list[str]:
    call = _example_call(name)
    return [
        arg
        for arg, value in call.items()
        if isinstance(value, torch.Tensor) and value.is_floating_point()
    ]


def _wider(x: torch.Tensor) -> torch.Tensor:
    """``x`` with one more column in its last dimension."""
    return torch.cat([x, x[..., :1]], dim=-1)


CASES = [
    (name, method, arg)
    for name in sorted(set(MODULES) - set(NO_WIDTH))
    for method in ("forward", "attention_weights")
    if hasattr(MODULES[name], method)
    for arg in _float_arguments(name)
]


def test_the_modules_and_their_examples_were_found():
    for expected in ("TransformerEncoderBlock", "ViT", "GAT", "MultiHeadAttention"):
        assert expected in MODULES
    assert set(NO_WIDTH) <= set(MODULES), "an exception names no module"
    for name in MODULES:
        assert _float_arguments(name) or name in NO_WIDTH, (
            f"{name}.forward takes no floating-point tensor in its example: "
            "give it one, or list it in NO_WIDTH with the reason"
        )
    assert len(CASES) >= 20


def _call(name: str, method: str, **changed):
    given = {**_example_call(name), **changed}
    module = given.pop("self")
    module.eval()
    return getattr(module, method)(**given)


@pytest.mark.parametrize("name, method, arg", CASES)
def test_a_wrong_width_raises_naming_the_argument(name, method, arg):
    _call(name, method)  # the example's own arguments are valid
    wrong = _wider(_example_call(name)[arg])
    with pytest.raises(ValueError, match=rf"\b{arg}\b") as info:
        _call(name, method, **{arg: wrong})
    assert type(info.value) is ValueError  # not a subclass raised deep in torch
    assert str(wrong.shape[-1]) in str(info.value)  # the width it saw


@pytest.mark.parametrize("name, method, arg", CASES)
def test_integers_raise_a_type_error_naming_the_argument(name, method, arg):
    ints = _example_call(name)[arg].long()
    with pytest.raises(TypeError, match=rf"\b{arg}\b"):
        _call(name, method, **{arg: ints})
