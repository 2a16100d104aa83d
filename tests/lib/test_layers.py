"""The package's layers (STYLE.md, rule 9): the library ``selfattn`` never
imports the bench ``selfattn.lab`` nor the bench's dependencies, no module
of the package takes part in an import cycle, and a module over 300 lines
is reported (a warning), one over 400 fails."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
import warnings
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


SOFT_CAP, HARD_CAP = 300, 400  # lines of a module: a warning, a failure


def _longer_than(cap: int) -> dict[str, int]:
    return {
        str(p.relative_to(ROOT.parent)): n
        for p in sorted(ROOT.rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > cap
    }


@pytest.mark.skipif(ROOT.parent.name == "mutants", reason="mutmut's copy adds code")
def test_no_module_is_longer_than_400_lines():
    long = _longer_than(HARD_CAP)
    assert not long, f"split these modules (STYLE.md, rule 9): {long}"


@pytest.mark.skipif(ROOT.parent.name == "mutants", reason="mutmut's copy adds code")
def test_a_module_over_300_lines_is_reported():
    """A warning, not a failure: the next edit to a long module still passes,
    and the warning says which module to split when a concept falls out of it."""
    for path, n in _longer_than(SOFT_CAP).items():
        warnings.warn(
            f"{path} has {n} lines, over {SOFT_CAP}: split it when a concept "
            f"of its own falls out (STYLE.md, rule 9; {HARD_CAP} fails)",
            stacklevel=1,
        )


def _module_functions_by_body() -> dict[str, list[str]]:
    """``{body: ["file:line name", ...]}`` for the library's module-level
    functions, the body compared without its docstring."""
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        if "lab" in path.relative_to(ROOT).parts:
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                key = ast.dump(ast.Module(body=body, type_ignores=[]))
                where = f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name}"
                found.setdefault(key, []).append(where)
    return found


@pytest.mark.skipif(ROOT.parent.name == "mutants", reason="mutmut's copy adds code")
def test_no_library_function_is_defined_twice():
    """A helper two modules need lives once (in ``selfattn/_checks.py`` for a
    check), so a fix to it cannot reach one copy only."""
    twice = [w for w in _module_functions_by_body().values() if len(w) > 1]
    assert not twice, f"one definition each, please: {twice}"
    assert sum(map(len, _module_functions_by_body().values())) > 100


def _third_party(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports, at any depth."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_library_never_names_the_bench_s_dependencies():
    """Not even inside a function: the test above cannot see a library
    ``import tqdm`` at run time, since torch itself loads tqdm."""
    for path in sorted(ROOT.rglob("*.py")):
        if "lab" in path.relative_to(ROOT).parts:
            continue
        bad = _third_party(path) & set(BENCH_ONLY[1:])
        assert not bad, f"{path.relative_to(ROOT.parent)} imports {sorted(bad)}"


# The library's private names the bench may use, each with its reason. A
# figure that shows what the library computes calls the library's own
# helper rather than a copy; listing it here says so at the definition's
# side: whoever renames or changes one of these finds the figure to change.
BENCH_MAY_USE = {
    ("selfattn._checks", "check_images"): "the CNN baseline checks its input "
    "exactly as the vision modules it is compared with",
    ("selfattn._checks", "check_int"): "the tagging figures check their sizes "
    "with the library's messages",
    ("selfattn._checks", "check_ints"): "the pipeline, receptive-field and "
    "tiling figures check several sizes at once with the library's messages",
    ("selfattn._params", "init_from"): "the CNN baseline is built with "
    "generator= as every library module is (STYLE.md, rule 5)",
    ("selfattn.efficient.lsh", "_check_buckets"): "the LSH figure takes the "
    "bucket counts the library's hash takes",
    ("selfattn.efficient.lsh", "_rotation"): "the LSH figure draws the very "
    "rotation angular_lsh hashes with",
}


def _private_uses() -> set[tuple[str, str]]:
    """(library module, name) for every private module or name of the
    library that a bench module imports."""
    found = set()
    for path in sorted((ROOT / "lab").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            module = node.module
            if not module.startswith("selfattn.") or module.startswith("selfattn.lab"):
                continue
            private_module = any(p.startswith("_") for p in module.split("."))
            for alias in node.names:
                if private_module or alias.name.startswith("_"):
                    found.add((module, alias.name))
    return found


def test_the_bench_uses_only_the_listed_private_names_of_the_library():
    uses = _private_uses()
    assert uses, "the scan found nothing: it has stopped working"
    unlisted = sorted(uses - set(BENCH_MAY_USE))
    assert not unlisted, (
        f"the bench imports private names of the library: {unlisted}; use a "
        "public name, or list it in BENCH_MAY_USE with the reason"
    )
    stale = sorted(set(BENCH_MAY_USE) - uses)
    assert not stale, f"BENCH_MAY_USE lists names the bench no longer uses: {stale}"
