"""The package's layers (STYLE.md, rule 9): the library ``selfattn`` never
imports the bench ``selfattn.lab`` nor the bench's dependencies, no module
of the package takes part in an import cycle, and no module is longer than
300 lines."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import selfattn

ROOT = Path(selfattn.__file__).parent
BENCH_ONLY = ("selfattn.lab", "matplotlib", "networkx", "sklearn", "tqdm")


def _modules() -> list[str]:
    return ["selfattn"] + [
        m.name for m in pkgutil.walk_packages([str(ROOT)], "selfattn.")
    ]


LIBRARY = [m for m in _modules() if not m.startswith("selfattn.lab")]
BENCH = [m for m in _modules() if m.startswith("selfattn.lab")]


def _loaded_after_import(*modules: str) -> set[str]:
    """Modules in sys.modules after importing ``modules`` in a fresh interpreter."""
    code = (
        f"import json, sys, {', '.join(modules)}; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out))


def _bench_modules(loaded: set[str]) -> list[str]:
    """What the bench would bring: its modules and its dependencies (those that
    torch and numpy do not load already: torch itself imports tqdm)."""
    baseline = _loaded_after_import("torch", "numpy")
    return sorted(
        m
        for m in loaded - baseline
        if m.split(".")[0] in BENCH_ONLY or m.startswith("selfattn.lab")
    )


def test_the_layers_were_found():
    assert {"selfattn.attention", "selfattn.efficient.flash"} <= set(LIBRARY)
    assert {"selfattn.lab.plotting", "selfattn.lab.measure"} <= set(BENCH)


def test_the_library_imports_nothing_of_the_bench():
    """Every library module at once, in a fresh interpreter: none of the bench."""
    leaks = _bench_modules(_loaded_after_import(*LIBRARY))
    assert not leaks, f"importing the library loads {leaks[:8]}"


def test_the_check_would_see_a_leak():
    """The check above can fail: the bench loads matplotlib, found the same way."""
    leaks = _bench_modules(_loaded_after_import("selfattn.lab.plotting"))
    assert "matplotlib" in leaks and "selfattn.lab.plotting" in leaks


def _imports(path: Path, name: str) -> set[str]:
    """Every selfattn module that ``path`` imports, at any depth of the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    known = set(_modules())
    return {m for m in found if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    graph = {}
    for info in pkgutil.walk_packages([str(ROOT)], "selfattn."):
        spec = info.module_finder.find_spec(info.name.rpartition(".")[2])
        graph[info.name] = _imports(Path(spec.origin), info.name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles, each as a path that returns to its start."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_no_import_cycle():
    graph = _graph()
    # a package's __init__ re-exports its modules; a module importing its own
    # package's __init__ would close a cycle through it: that counts too
    assert not _cycles(graph), _cycles(graph)


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_library_never_names_the_bench():
    """Not even inside a function (a deferred import would still be a leak)."""
    graph = _graph()
    for module in LIBRARY[1:]:
        bad = [m for m in graph[module] if m.startswith("selfattn.lab")]
        assert not bad, f"{module} imports {bad}"


@pytest.mark.skipif(ROOT.parent.name == "mutants", reason="mutmut's copy adds code")
def test_no_module_is_longer_than_300_lines():
    long = {
        str(p.relative_to(ROOT.parent)): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 300
    }
    assert not long, f"split these modules (STYLE.md, rule 9): {long}"
