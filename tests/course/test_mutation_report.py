"""``tests/MUTATION.md`` reports on the modules mutation testing mutates.

``[tool.mutmut] only_mutate`` in pyproject.toml names the core modules; the
report (``make mutation``, ``tools/mutation_report.py``) has a row for each
of them that holds a function, and no other, so a module added to the
configuration (or one moved out of it) shows that the report is out of date
(the code review of 2026-12-02, M2).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a row: | `module` | mutants | ... | score | equivalent | score, equivalents excl. |
ROW = re.compile(r"^\| `(selfattn/[^`]+\.py)` \|.*\| ([\d.]+) % \| \d+ \| [\d.]+ % \|$")


def _configured() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths = {
        p.relative_to(ROOT).as_posix()
        for pattern in config["tool"]["mutmut"]["only_mutate"]
        for p in ROOT.glob(pattern)
        if p.suffix == ".py"
    }
    return {
        p
        for p in paths
        if any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            for n in ast.walk(ast.parse((ROOT / p).read_text(encoding="utf-8")))
        )
    }


def _rows() -> dict[str, float]:
    text = (ROOT / "tests" / "MUTATION.md").read_text(encoding="utf-8")
    return {m[1]: float(m[2]) for line in text.splitlines() if (m := ROW.match(line))}


def test_the_report_has_a_row_for_every_module_mutated_and_no_other():
    rows = _rows()
    assert rows, "no table rows found in tests/MUTATION.md"
    assert set(rows) == _configured(), (
        "tests/MUTATION.md is out of date with [tool.mutmut] only_mutate "
        "(run make mutation): "
        f"missing {sorted(_configured() - set(rows))}, "
        f"extra {sorted(set(rows) - _configured())}"
    )
