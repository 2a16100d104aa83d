"""The rules that keep a lesson true on every CPU, seed and load
(CONTRIBUTING, "Portable lessons"), checked on every chapter's code.

1. No ``assert`` compares a measured time: a cost claim is asserted on a
   count; a time only through :func:`selfattn.lab.measure.assert_faster`
   (an order-of-magnitude class of gap, measured with the noise-resistant
   protocol), and every such call says in a ``# timing claim:`` comment why
   the gap holds anywhere.
2. A check printed as a boolean is also asserted (a printed ``False`` would
   pass the seed passes, which compare no output).
3. A number in a figure's caption or alt text does not come from a run: it
   is glued, or listed with its reason in ``tests/course/caption_numbers.toml``.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# --- 1. measured time ---------------------------------------------------------

# calls whose result is a measured time: the course's helpers, time's clocks
TIMERS = {"cpu_time", "cpu_times", "perf_counter", "perf_counter_ns",
          "process_time", "thread_time", "monotonic", "blocked_autorange"}  # fmt: skip
TIME_MODULE_CALLS = {("time", "time"), ("timeit", "timeit"), ("timeit", "repeat")}


def _code_sources(nb: dict) -> list[str]:
    return [
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).strip()
    ]


def _parse(source: str) -> ast.Module | None:
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _is_timer(node: ast.Call) -> bool:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id in TIMERS or f.id == "timeit"
    if isinstance(f, ast.Attribute):
        owner = f.value.id if isinstance(f.value, ast.Name) else ""
        return f.attr in TIMERS or (owner, f.attr) in TIME_MODULE_CALLS
    return False


def _measures_time(node: ast.AST, tainted: set[str]) -> bool:
    """Does the expression call a timer or read a name that holds a time?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and _is_timer(sub):
            return True
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return True
    return False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Taint(ast.NodeVisitor):
    """Walks statements in source order; a name holds a time when it is
    assigned from an expression that measures one, and stops holding it when
    it is assigned anything else."""

    def __init__(self, tainted: set[str]):
        self.tainted, self.found = tainted, []

    def _assign(self, targets: list[ast.AST], value: ast.AST | None) -> None:
        if value is not None and _measures_time(value, self.tainted):
            for t in targets:
                self.tainted |= _names(t)
        else:  # a plain name (or a tuple of them) now holds something else
            for t in targets:
                plain = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
                for name in plain:
                    if isinstance(name, ast.Name):
                        self.tainted.discard(name.id)

    def visit_Assign(self, node):
        self.generic_visit(node)
        self._assign(node.targets, node.value)

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        self._assign([node.target], node.value)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if _measures_time(node.value, self.tainted):
            self.tainted |= _names(node.target)

    def visit_NamedExpr(self, node):
        self.generic_visit(node)
        self._assign([node.target], node.value)

    def visit_For(self, node):
        for _ in range(2):  # a second pass sees what the first tainted
            if _measures_time(node.iter, self.tainted):
                self.tainted |= _names(node.target)
            for stmt in node.body + node.orelse:
                self.visit(stmt)

    def visit_comprehension(self, node):
        if _measures_time(node.iter, self.tainted):
            self.tainted |= _names(node.target)
        self.generic_visit(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("append", "extend", "update", "setdefault")
            and any(_measures_time(a, self.tainted) for a in node.args)
        ):
            self.tainted |= _names(f.value)

    def visit_Assert(self, node):
        if _measures_time(node.test, self.tainted):
            self.found.append(ast.unparse(node)[:80])


def timing_asserts(sources: list[str]) -> list[tuple[int, str]]:
    """``(cell, assert)`` for every assert that depends on a measured time; the
    taint runs on from cell to cell."""
    tainted: set[str] = set()
    found = []
    for i, source in enumerate(sources):
        tree = _parse(source)
        if tree is None:
            continue
        walker = _Taint(tainted)
        for stmt in tree.body:
            walker.visit(stmt)
        found += [(i, a) for a in walker.found]
    return found


def timing_claims_without_reason(sources: list[str]) -> list[int]:
    """Cells that call assert_faster without a ``# timing claim:`` comment."""
    return [
        i
        for i, s in enumerate(sources)
        if re.search(r"\bassert_faster\(", s) and "# timing claim:" not in s
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_assert_compares_a_measured_time(path):
    sources = _code_sources(json.loads(path.read_text()))
    bad = timing_asserts(sources)
    assert not bad, (
        f"{path.name}: these asserts depend on a measured time (assert the cost "
        "on a count, or a large gap with assert_faster): "
        + "; ".join(f"code cell {i}: {a}" for i, a in bad)
    )
    missing = timing_claims_without_reason(sources)
    assert not missing, (
        f"{path.name}: code cells {missing} call assert_faster without a "
        "'# timing claim: why it holds anywhere' comment"
    )


PLANTED = [
    ("t = cpu_time(f)\nassert t < 1", 1),
    ("ts = cpu_times(calls)\nratio = ts[1] / ts[0]\n", 0),
    ("ts = cpu_times(calls)\nratio = ts[1] / ts[0]", 0),
    ("start = time.perf_counter()\nf()\nwall = time.perf_counter() - start", 0),
    ("checks = {'faster': ratio > 2}\nassert all(checks.values())", 1),
    ("checks = {'exact': err < 1e-6}\nassert all(checks.values())", 0),
    ("times = []\nfor n in ns:\n    times.append(cpu_time(f, n))\n"
     "assert times[0] < 1", 1),
    ("slopes = {k: loglog_slope(Ts, t) for k, t in cpu_times(c)}\n"
     "assert slopes['a'] > 1", 1),
]  # fmt: skip


def test_the_timing_rule_catches_what_it_is_for():
    """Planted cells: direct, derived, across cells, through a dict, a loop and
    a comprehension; and what the rule lets through."""
    found = timing_asserts([src for src, _ in PLANTED])
    assert [i for i, _ in found] == [i for i, (_, n) in enumerate(PLANTED) if n]
    allowed = [
        "mib = peak_memory_bytes(f) / 2**20\nassert mib < 5",  # a count of bytes
        "m = count_madds(f)\nassert m == 2 * T * T * D",  # a count of operations
        "ratio = assert_faster(fast, slow, factor=5)  # timing claim: 40x here\n"
        "print(ratio)",
    ]
    assert timing_asserts(allowed) == []
    assert timing_claims_without_reason(allowed) == []
    assert timing_claims_without_reason(["assert_faster(a, b, factor=3)"]) == [0]


# --- 2. a printed boolean is asserted ----------------------------------------------


def _printed_booleans(cell: dict) -> bool:
    text = "".join(
        "".join(o.get("text", "")) for o in cell.get("outputs", []) if "text" in o
    )
    return bool(re.search(r"\b(True|False)\b", text))


def unasserted_booleans(nb: dict) -> list[int]:
    """Code cells that print True or False with no assert there or in the
    next code cell."""
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    bad = []
    for i, cell in enumerate(cells):
        if not _printed_booleans(cell):
            continue
        here = "".join(cell["source"])
        nxt = "".join(cells[i + 1]["source"]) if i + 1 < len(cells) else ""
        if not re.search(r"\bassert\b", here + "\n" + nxt):
            bad.append(i)
    return bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_printed_boolean_is_asserted(path):
    bad = unasserted_booleans(json.loads(path.read_text()))
    assert not bad, (
        f"{path.name}: code cells {bad} print True/False but neither they nor the "
        "next code cell assert anything: assert the check too"
    )


def test_the_boolean_rule_fires():
    def cell(src, text):
        return {"cell_type": "code", "source": src,
                "outputs": [{"output_type": "stream", "text": text}]}  # fmt: skip

    nb = {"cells": [cell("print(ok)", "allclose: True\n"), cell("x = 1", "")]}
    assert unasserted_booleans(nb) == [0]
    nb["cells"][1]["source"] = "assert ok"
    assert unasserted_booleans(nb) == []


# --- 3. numbers in captions and alt texts ------------------------------------------

CAPTION_NUMBERS = ROOT / "tests" / "course" / "caption_numbers.toml"
ALLOWED = tomllib.loads(CAPTION_NUMBERS.read_text())
NUMBER = re.compile(r"(?<![\w.^_{])-?\d+(?:[.,]\d+)*(?:\.\d+)?%?")


def _figure_texts(nb: dict) -> dict[str, str]:
    """Caption and alt text of every figure cell, by figure name."""
    out = {}
    for i, c in enumerate(nb["cells"]):
        meta = c.get("metadata", {})
        fig = meta.get("mystnb", {}).get("figure", {})
        alt = meta.get("mystnb", {}).get("image", {}).get("alt", "") or meta.get(
            "image", {}
        ).get("alt", "")
        if fig or alt:
            name = fig.get("name", f"cell-{i}")
            out[name] = fig.get("caption", "") + "\n" + alt
    return out


def caption_numbers(text: str) -> set[str]:
    """The numbers written in a caption, glue roles and maths labels aside."""
    text = re.sub(r"\{glue:\w+\}`[^`]*`", "", text)  # glued: fine
    text = re.sub(r"\{numref\}`[^`]*`|\{eq\}`[^`]*`", "", text)
    text = re.sub(r"fig-[\w-]+", "", text)
    return set(NUMBER.findall(text))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_number_in_a_caption_is_glued_or_allowed(path):
    allowed = ALLOWED.get(path.stem, {})
    problems = []
    for name, text in _figure_texts(json.loads(path.read_text())).items():
        listed = allowed.get(name, {})
        for number in sorted(caption_numbers(text)):
            reason = listed.get(number, "")
            if not reason or reason.startswith("TODO"):
                problems.append(f"{name}: {number}")
    assert not problems, (
        f"{path.name}: numbers in captions or alt texts that are neither glued nor "
        "listed with a reason in tests/course/caption_numbers.toml: "
        + ", ".join(problems)
    )


def test_the_caption_rule_sees_numbers_and_skips_glue():
    assert caption_numbers("accuracy 0.93 after 40 steps") == {"0.93", "40"}
    assert caption_numbers("accuracy {glue:text}`acc:.2f` at $T^2$") == set()
    assert caption_numbers("see {numref}`fig-x-2`, fig-x-3") == set()
