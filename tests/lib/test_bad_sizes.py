"""Every size argument of the library refuses a bool, a float, zero and a negative.

STYLE rule 7 for integers: ``TypeError`` for a bool or a float, ``ValueError``
for zero (where zero is not a valid size) and for a negative, each naming the
argument (the library checks them with ``selfattn._checks.check_int``).

Nothing here is listed by hand but the exceptions. The callables are the
library's public functions and classes (``__all__`` of its modules, the bench
``selfattn.lab`` aside) and their public methods; a size argument is one
annotated ``int`` or ``int | None``. A valid call of each is taken from its
own docstring's ``Examples`` (or its class's, for ``__init__`` and methods):
the examples run under a profiler that keeps the arguments of the first call
of each callable, and the test calls it again with one argument changed. So a
new public function or argument is covered as soon as its example calls it.
The same replay sends every ``dropout`` argument a bool, a string and rates
outside ``[0, 1]`` (``selfattn._checks.check_rate``).
"""

from __future__ import annotations

import doctest
import functools
import importlib
import inspect
import pkgutil
import re
import sys
import warnings
from pathlib import Path

import pytest

import selfattn

# mutmut's copy (make mutation) replaces each function by a trampoline to its
# mutants, so the profiler below never sees the code objects it looks for;
# the other bad-input tests (test_bad_input.py, test_layers.py) run there.
pytestmark = pytest.mark.skipif(
    Path(selfattn.__file__).parents[1].name == "mutants",
    reason="mutmut's trampolines hide the calls the examples make",
)

# Integer arguments that are not sizes, with why (they are not varied here).
NOT_SIZES = {
    "dim": "an axis of a tensor: negative counts from the end, torch checks it",
    "axis": "an axis of a numpy array: negative counts from the end, numpy checks it",
}

# (callable, argument): zero is valid, by the callable's docstring; a bool, a
# float and a negative are still refused.
ZERO_IS_VALID = {
    ("causal_mask", "T_q"): "an empty sequence: a (0, T_k) mask",
    ("causal_mask", "T_k"): "no keys: a (T_q, 0) mask",
    ("length_mask", "T"): "sequences padded to length 0, all of length 0",
    ("window_mask", "T"): "an empty sequence: a (0, 0) mask",
    ("window_mask", "radius"): "each query sees itself only",
    ("local_attention", "radius"): "each query sees itself only",
    ("tiles", "T_q"): "no queries: no blocks",
    ("tiles", "T_k"): "no keys: every query block visits no key block",
    ("sinusoidal_encoding", "num_positions"): "a (0, D) encoding",
    ("LearnedPositionalEmbedding.rows", "T"): "the rows of an empty sequence",
    ("BahdanauSeq2Seq.__init__", "pad_id"): "a token id: 0 is the first token",
    ("EncoderDecoderTransformer.__init__", "pad_id"): "a token id",
    ("BahdanauSeq2Seq.generate", "bos_id"): "a token id",
    ("BahdanauSeq2Seq.generate", "eos_id"): "a token id",
    ("EncoderDecoderTransformer.generate", "bos_id"): "a token id",
    ("EncoderDecoderTransformer.generate", "eos_id"): "a token id",
}

# What else the call with zero changes, where the example's values need it.
ZERO_ALSO = {("length_mask", "T"): {"lengths": [0, 0]}}

# Public callables whose example calls cannot be replayed: none today.
NOT_REPLAYED: dict[str, str] = {}

BAD = [(True, TypeError), (2.0, TypeError), (0, ValueError), (-1, ValueError)]
SIZE = re.compile(r"^int( \| None)?$")  # the annotations, as strings (PEP 563)


def _library_modules():
    for info in pkgutil.walk_packages(selfattn.__path__, "selfattn."):
        parts = info.name.split(".")
        if parts[1] != "lab" and not any(p.startswith("_") for p in parts):
            yield importlib.import_module(info.name)


def _size_arguments(fn) -> list[str]:
    params = inspect.signature(fn).parameters.values()
    return [
        p.name
        for p in params
        if isinstance(p.annotation, str)
        and SIZE.match(p.annotation)
        and p.name not in NOT_SIZES
    ]


def _targets() -> dict[str, tuple[type | None, object]]:
    """``{"Class.method" or "function": (class or None, function)}`` for every
    public callable of the library with a size argument."""
    found = {}
    for module in _library_modules():
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not getattr(obj, "__module__", "").startswith("selfattn"):
                continue
            pairs = []
            if inspect.isfunction(obj):
                pairs = [(obj.__qualname__, (None, obj))]
            elif inspect.isclass(obj):
                pairs = [
                    (f"{obj.__qualname__}.{attr}", (obj, member))
                    for attr, member in vars(obj).items()
                    if (attr == "__init__" or not attr.startswith("_"))
                    and inspect.isfunction(member)
                ]
            for key, target in pairs:
                if _size_arguments(target[1]):
                    assert found.setdefault(key, target) == target, f"two {key}"
    return found


TARGETS = _targets()


@functools.cache
def _example_call(name: str) -> dict | None:
    """The arguments of the first call of target ``name`` in its examples (its
    own docstring's, then its class's), or None if they never call it."""
    cls, fn = TARGETS[name]
    code, module = inspect.unwrap(fn).__code__, sys.modules[(cls or fn).__module__]
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is code and not calls:
            calls.append(dict(frame.f_locals))

    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for holder in (fn, cls) if cls else (fn,):
        for test in finder.find(holder, name, module, globs=dict(vars(module))):
            sys.setprofile(profile)
            try:
                runner.run(test, out=lambda s: None)
            finally:
                sys.setprofile(None)
            if calls:
                return calls[0]
    return None


def _call(name: str, **changed):
    """Call target ``name`` with its example's arguments, ``changed`` changed."""
    cls, fn = TARGETS[name]
    example = _example_call(name)
    if example is None:
        pytest.fail(f"no example in the docstrings of {name} calls it")
    given = {**example, **changed}
    args, kwargs = [], {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            args.extend(given[p.name])
        elif p.kind is p.VAR_KEYWORD:
            kwargs.update(given[p.name])
        elif p.kind is p.POSITIONAL_ONLY:
            args.append(given[p.name])
        else:
            kwargs[p.name] = given[p.name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fn.__name__ == "__init__":
            del kwargs["self"]
            result = cls(*args, **kwargs)
        else:
            result = fn(*args, **kwargs)
        if inspect.isgenerator(result):  # a generator checks on its first step
            result = list(result)
    return result


ARGUMENTS = [(n, a) for n, (_, f) in TARGETS.items() for a in _size_arguments(f)]
CASES = [
    (name, arg, bad, error)
    for name, arg in ARGUMENTS
    if name not in NOT_REPLAYED
    for bad, error in BAD
    if not (bad == 0 and (name, arg) in ZERO_IS_VALID)
]


def test_the_callables_and_their_examples_were_found():
    for expected in (
        "MultiHeadAttention.__init__",
        "chunked_attention",
        "tiles",
        "EncoderDecoderTransformer.generate",
        "LearnedPositionalEmbedding.rows",
    ):
        assert expected in TARGETS
    called = {name for name in TARGETS if _example_call(name) is not None}
    missing = set(TARGETS) - called - set(NOT_REPLAYED)
    assert not missing, f"no example calls {sorted(missing)}: add one to its docstring"
    assert len(CASES) > 300
    assert set(ZERO_IS_VALID) <= set(ARGUMENTS), "an exception names no argument"
    assert set(ZERO_ALSO) <= set(ZERO_IS_VALID)


@pytest.mark.parametrize("name", sorted(set(TARGETS) - set(NOT_REPLAYED)))
def test_the_example_call_is_valid(name):
    _call(name)


@pytest.mark.parametrize("name, arg, bad, error", CASES)
def test_a_size_argument_refuses_a_bool_a_float_zero_and_a_negative(
    name, arg, bad, error
):
    with pytest.raises(error, match=rf"\b{arg}\b") as info:
        _call(name, **{arg: bad})
    assert type(info.value) is error  # not a subclass raised deep inside torch


@pytest.mark.parametrize("name, arg", sorted(ZERO_IS_VALID))
def test_zero_is_valid_where_the_docstring_says_so(name, arg):
    _call(name, **{arg: 0, **ZERO_ALSO.get((name, arg), {})})


# --- rates: a dropout rate is a number in [0, 1] ------------------------------------

RATES = sorted(
    name
    for name, (_, fn) in TARGETS.items()
    if "dropout" in inspect.signature(fn).parameters and name not in NOT_REPLAYED
)
BAD_RATES = [
    (True, TypeError),
    ("0.1", TypeError),
    (-0.1, ValueError),
    (1.5, ValueError),
]


def test_the_dropout_arguments_were_found():
    expected = {"TransformerEncoderBlock.__init__", "ViT.__init__", "GAT.__init__"}
    assert expected <= set(RATES)
    assert len(RATES) >= 6


@pytest.mark.parametrize("bad, error", BAD_RATES)
@pytest.mark.parametrize("name", RATES)
def test_a_dropout_rate_refuses_a_bool_a_string_and_rates_outside_0_1(name, bad, error):
    with pytest.raises(error, match=r"\bdropout\b") as info:
        _call(name, dropout=bad)
    assert type(info.value) is error


@pytest.mark.parametrize("name", RATES)
def test_a_dropout_rate_in_0_1_is_valid(name):
    for rate in (0, 0.5, 1.0):  # 1 drops everything (test_graph uses it)
        _call(name, dropout=rate)
