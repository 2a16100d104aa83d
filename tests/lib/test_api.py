"""One API style (STYLE rule 4): functions return what they compute, modules
return their output and give their weights through ``attention_weights``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import selfattn
from selfattn import MultiHeadAttention, SelfAttention, TransformerEncoderBlock
from selfattn.graph import GAT, GraphAttentionLayer
from selfattn.vision import ViT


def _public_modules():
    names = ["selfattn"] + [
        m.name
        for m in pkgutil.walk_packages(selfattn.__path__, "selfattn.")
        if not any(part.startswith("_") for part in m.name.split("."))
    ]
    return [importlib.import_module(name) for name in names]


def _public_callables():
    """(qualified name, callable) for every public function, class and method."""
    seen = {}
    for module in _public_modules():
        names = getattr(module, "__all__", None) or [
            n for n in vars(module) if not n.startswith("_")
        ]
        for name in names:
            obj = getattr(module, name)
            if not callable(obj) or not getattr(obj, "__module__", "").startswith(
                "selfattn"
            ):
                continue
            seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
            if inspect.isclass(obj):
                for attr in dir(obj):
                    if attr.startswith("_") and attr not in ("__init__", "__call__"):
                        continue
                    member = getattr(obj, attr)
                    owner = getattr(member, "__module__", "") or ""
                    if callable(member) and owner.startswith("selfattn"):
                        seen[f"{obj.__module__}.{obj.__qualname__}.{attr}"] = member
    return sorted(seen.items())


PUBLIC = _public_callables()


def test_the_public_api_was_found():
    names = {name for name, _ in PUBLIC}
    for expected in (
        "selfattn.attention.scaled_dot_product_attention",
        "selfattn.graph.functional.edge_attention",
        "selfattn.convolution.conv2d_as_attention",
        "selfattn.modules.MultiHeadAttention.forward",
        "selfattn.vision.ViT.attention_weights",
        "selfattn.lab.measure.cpu_times",
    ):
        assert expected in names
    assert len(names) > 80


@pytest.mark.parametrize(
    "cls",
    [
        SelfAttention,
        MultiHeadAttention,
        TransformerEncoderBlock,
        GraphAttentionLayer,
        GAT,
        ViT,
    ],
)
def test_attention_weights_takes_the_arguments_of_forward(cls):
    forward = inspect.signature(cls.forward)
    weights = inspect.signature(cls.attention_weights)
    assert list(weights.parameters.values()) == list(forward.parameters.values())
    assert "Tensor" in str(forward.return_annotation)
    assert "tuple" not in str(forward.return_annotation)  # the output only


def _library_public_objects():
    """(name, object) for every public function and class of the library
    (the bench, selfattn.lab, aside), including the re-exported efficient ones."""
    found = {}
    for module in _public_modules():
        if module.__name__.startswith("selfattn.lab") or module.__name__ == "selfattn":
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if (
                inspect.isfunction(obj) or inspect.isclass(obj)
            ) and obj.__module__.startswith("selfattn"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return sorted(found.items())


LIBRARY_PUBLIC = _library_public_objects()
NOTEBOOKS = {
    p.stem for p in (Path(selfattn.__file__).parents[1] / "notebooks").glob("*.ipynb")
}


def test_the_library_objects_were_found():
    names = {n for n, _ in LIBRARY_PUBLIC}
    assert "selfattn.efficient.exact.chunked_attention" in names
    assert "selfattn.modules.MultiHeadAttention" in names
    assert not any(n.startswith("selfattn.lab") for n in names)


@pytest.mark.parametrize(
    "name, obj", LIBRARY_PUBLIC, ids=[n for n, _ in LIBRARY_PUBLIC]
)
def test_every_library_function_teaches_by_example(name, obj):
    """STYLE rule 3 (d2l's and PyTorch's habits): one line names the chapter
    that teaches it (a link the API page renders), and an ``Examples`` block
    runs as a doctest (``make unit``)."""
    doc = inspect.getdoc(obj) or ""
    chapters = re.findall(r":doc:`/notebooks/([\w-]+)`", doc)
    assert "Taught in" in doc and chapters, f"{name}: no 'Taught in :doc:...' line"
    if NOTEBOOKS:  # a copy of the package without the chapters (mutmut's) skips this
        assert set(chapters) <= NOTEBOOKS, (
            f"{name} links to {set(chapters) - NOTEBOOKS}"
        )
    assert "Examples:" in doc and ">>>" in doc, f"{name}: no Examples block"


def test_the_version_is_the_one_pyproject_releases() -> None:
    """``selfattn.__version__`` is the version pyproject.toml releases: the
    package's copy is held to the declared source, as the other manifests are."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+ (requires-python: 3.10)

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.exists():  # the copy of make mutation holds the package only
        pytest.skip("no pyproject.toml beside the package")
    release = tomllib.loads(pyproject.read_text())["project"]["version"]
    assert selfattn.__version__ == release


def _library_functions():
    """(name, function) for every public library function and public method
    (``__init__`` included) of a public library class."""
    for name, obj in LIBRARY_PUBLIC:
        if inspect.isfunction(obj):
            yield name, obj
        else:
            for attr, member in vars(obj).items():
                public = attr == "__init__" or not attr.startswith("_")
                if public and inspect.isfunction(member):
                    yield f"{name}.{attr}", member


def test_every_parameter_of_the_library_is_typed():
    """STYLE rule 11: a public function's every parameter carries a type."""
    untyped = [
        f"{name}({p.name})"
        for name, fn in _library_functions()
        for p in inspect.signature(fn).parameters.values()
        if p.annotation is p.empty
        and p.name not in ("self", "cls")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    assert not untyped, f"untyped parameters: {untyped}"
    assert len(list(_library_functions())) > 80
