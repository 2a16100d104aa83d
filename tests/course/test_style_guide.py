"""STYLE.md and CONTRIBUTING.md say what the repository does: every test a
rule names exists, and the mutated modules are the ones pyproject.toml mutates."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STYLE = (ROOT / "STYLE.md").read_text(encoding="utf-8")
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def _enforcers() -> list[str]:
    """Every ``tests/...py`` or ``tests/...py::name`` STYLE.md names."""
    return re.findall(r"`(tests/[\w/]+\.py(?:::\w+)?)`", " ".join(STYLE.split()))


def test_every_test_a_style_rule_names_exists():
    named = _enforcers()
    assert len(named) >= 10
    for ref in named:
        path, _, name = ref.partition("::")
        assert (ROOT / path).is_file(), f"STYLE.md names {path}, which is not there"
        if name:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert name in defined, f"STYLE.md names {ref}, which is not defined"


def test_contributing_lists_every_module_mutation_testing_mutates():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mutated = {
        Path(p).stem if p.endswith(".py") else Path(p).parent.name
        for p in config["tool"]["mutmut"]["only_mutate"]
    }
    text = " ".join(CONTRIBUTING.split())
    start = text.index("**Mutation testing**")
    listed = re.search(r"over the core modules \(([^;]*);", text[start:]).group(1)
    assert {m.strip("` /") for m in listed.split(",")} == mutated
