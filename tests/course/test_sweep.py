"""tools/sweep.py judges claims and the learner's wait as CONTRIBUTING says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("sweep", ROOT / "tools" / "sweep.py")
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)


def _run(seed, value, cpu, kernels="portable"):
    held = value > 0.5
    claim = {"name": "c", "value": value, "op": ">", "threshold": 0.5, "held": held}
    return {
        "chapter": "ch",
        "seed": seed,
        "kernels": kernels,
        "cpu_s": cpu,
        "wall_s": cpu,
        "errors": [],
        "claims": [claim],
    }


def test_a_claim_stands_only_with_a_quarter_of_its_range_as_margin():
    wide = [_run(0, 0.9, 10), _run(1, 1.0, 10)]  # margin 0.4, range 0.1
    rows, _, _, problems = sweep.summarise(wide, {})
    assert problems == [] and rows[0].endswith("| yes |")
    close = [_run(0, 0.51, 10), _run(1, 1.0, 10)]  # margin 0.01, range 0.49
    _, _, _, problems = sweep.summarise(close, {})
    assert problems == ["ch: c: margin 0.01 (0.02 of the range) is under a quarter"]
    _, _, _, problems = sweep.summarise(close, {"ch: c": "a reason"})
    assert problems == []


def test_the_budget_is_judged_alone_where_measured_else_on_the_worst_draw():
    runs = [_run(0, 0.9, 80), _run(1, 1.0, 120)]  # a loaded draw over budget
    _, times, _, problems = sweep.summarise(runs, {})
    assert problems == ["ch: 120 s with portable kernels (in the sweep)"]
    assert times == [("ch", 100, 120, 2, None)]
    alone = {"ch": {"cpu_s": 70.0, "load": 0.1}}
    assert sweep.summarise(runs, {}, alone)[3] == []
    alone = {"ch": {"cpu_s": 95.0, "load": 0.1}}
    assert sweep.summarise(runs, {}, alone)[3] == [
        "ch: 95 s with portable kernels (alone)"
    ]
