"""The figures' budget (issue 30): no function of ``selfattn/lab/diagrams`` runs
over 80 lines, its docstring and decorators included (a failure: the local
rule), and the package's lines come down. ``TOTAL`` is where the package
stands, lowered each time a figure gets shorter; over it, a warning, like the
library's soft module cap, so whoever adds a figure is told, not stopped; over
``TOTAL + NEW_FIGURE`` a failure, so the package cannot drift. Issue 30's
target is 2,200 lines."""

from __future__ import annotations

import ast
import warnings
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
NEW_FIGURE = 150  # room for about one new figure above TOTAL before it fails
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
    total = sum(lines.values())
    message = (
        f"the diagrams have {total} lines, over their budget of {TOTAL} (issue "
        f"30's target: 2,200): draw with the primitives of _draw.py, or make room "
        f"in another figure: {lines}"
    )
    assert total <= TOTAL + NEW_FIGURE, message
    if total > TOTAL:
        warnings.warn(message, stacklevel=1)
