"""The figures' budget (issue 30): no function of ``selfattn/lab/diagrams`` runs
over 80 lines, its docstring and decorators included, and the package's lines
only come down. Issue 30's target is 2,200 lines; ``TOTAL`` is where the
package stands, lowered each time a figure gets shorter."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from selfattn.lab import diagrams

FOLDER = Path(diagrams.__file__).parent
LONGEST = 80  # lines of one function, docstring and decorators included
# Lines as ruff formats them: a ``# fmt: skip`` may keep a table's rows on
# their lines, never pack a signature or a call (test below), so the count is
# not bought with density. 2,394 when this was written (2,682 at the start of
# the work, counted the same way); issue 30's target is 2,200.
TOTAL = 2_400
MUTANTS = pytest.mark.skipif(
    FOLDER.parents[2].name == "mutants", reason="mutmut's copy adds code"
)


def _lengths(source: str) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function in ``source``, nested ones too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min(n.lineno for n in [node, *node.decorator_list])
            found.append((node.name, node.end_lineno - start + 1))
    return found


def test_a_function_counts_its_decorators_docstring_and_body():
    source = '@decorator\ndef f():\n    """Doc."""\n\n    def g():\n        pass\n'
    assert _lengths(source) == [("f", 6), ("g", 2)]


@MUTANTS
def test_no_diagram_function_runs_over_80_lines():
    long = {
        f"{path.name}::{name}": n
        for path in sorted(FOLDER.glob("*.py"))
        for name, n in _lengths(path.read_text())
        if n > LONGEST
    }
    assert not long, (
        f"over {LONGEST} lines: {long}; draw with the primitives of _draw.py or "
        "split off a helper (a panel, a legend, the argument checks)"
    )


def test_fmt_skip_keeps_only_tables():
    packed = [
        f"{path.name}:{i}"
        for path in sorted(FOLDER.glob("*.py"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if line.endswith("# fmt: skip")
        and not line.split("#")[0].rstrip().endswith("]")
    ]
    assert not packed, (
        f"# fmt: skip on a signature or a call (let ruff format): {packed}"
    )


@MUTANTS
def test_the_diagrams_stay_within_their_line_budget():
    lines = {p.name: len(p.read_text().splitlines()) for p in FOLDER.glob("*.py")}
    assert sum(lines.values()) <= TOTAL, (
        f"the diagrams have {sum(lines.values())} lines, over their budget of "
        f"{TOTAL} (issue 30's target: 2,200): {lines}"
    )
