"""``tools/``: every script has a place and a usage, and the folder a budget.

The code review of 2026-12-02 (M2) found the tooling growing faster than the
course. CONTRIBUTING's "What you need to know, by what you change" puts every
script in one row, so a contributor learns only the scripts of their row; a
new script must be given its row there. ``TOTAL`` is where ``tools/`` stands,
lowered each time it shrinks: a script that grows makes room elsewhere.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = sorted((ROOT / "tools").glob("*.py"))
TOTAL = 4_120  # lines of tools/*.py (4,117 when this was written)


def _boundary_table() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index("## What you need to know, by what you change")
    return text[start : text.index("\n## ", start + 1)]


def test_every_tool_is_in_exactly_one_row_of_contributing():
    rows = [ln for ln in _boundary_table().splitlines() if ln.startswith("| ")]
    for tool in TOOLS:
        found = [r for r in rows if re.search(rf"`{re.escape(tool.name)}`", r)]
        assert len(found) == 1, f"{tool.name}: in {len(found)} rows of CONTRIBUTING"


def test_every_tool_says_what_it_does():
    for tool in TOOLS:
        doc = ast.get_docstring(ast.parse(tool.read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()[0]) > 20, f"{tool.name}: no docstring"


def test_tools_stay_within_their_budget():
    lines = sum(len(t.read_text(encoding="utf-8").splitlines()) for t in TOOLS)
    assert lines <= TOTAL, (
        f"tools/ is {lines} lines, over its budget of {TOTAL}: make room in "
        "another script (CONTRIBUTING, 'What you need to know')"
    )
