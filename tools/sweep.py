"""Every claim of every chapter that trains or samples, over many draws: `make sweep`.

Usage (from the repository root)::

    .venv/bin/python tools/sweep.py [--seeds 0-11] [--native 0-11] [--jobs 2] [NB ...]
    .venv/bin/python tools/sweep.py --report     # rewrite tests/SEEDS.md only
    .venv/bin/python tools/sweep.py --wait [NB ...]  # a learner's wait, alone

A chapter states each claim about a trained or sampled quantity with
:func:`selfattn.lab.claims.claim`. This tool executes each chapter that does
(or the NBs named) once per draw: each base seed of ``--seeds`` with PyTorch's
portable kernels on one thread (as the portable pass of ``make test``), and
each of ``--native`` with the machine's native kernels on one thread. ``--jobs``
draws run at a time (one per core). In every run the environment variable
``SELFATTN_CLAIMS`` names a file where :func:`claim` records each value, and
``SELFATTN_CLAIMS_GO_ON=1`` lets a failed claim be recorded without stopping
the chapter, so every claim is measured at every draw.

The raw results go to ``tests/seeds/<chapter>.json`` (the run's date,
command, machine and wall time; one entry per draw and kernel set: the times,
the errors and every claim's value); a run of some chapters replaces only
their files. ``tests/SEEDS.md`` is then written from all of them: for each
claim, the threshold, min, median and max over the draws, how many draws
passed, and the margin: the distance from the threshold to the nearest value,
as a share of the range of values. A claim needs every draw to pass and a
margin of at least a quarter of the range, or a reason in
``tests/seeds_reasons.toml`` (keyed ``"chapter: claim"``). The exit status is 1
when a claim fails that test, or a run stopped with an error.

A learner's wait is measured apart (``--wait``, ``make wait``): each chapter
runs once, alone, at base seed 0 with portable kernels on one thread, and its
kernel's CPU seconds (its wall time on an idle core) go to the record's
``wait``, with the load average beside it. Draws that run side by side share
the two cores' caches and slow each other, so the sweep's own CPU seconds read
high; the budget is judged on the time alone where one was measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "seeds"  # one JSON file per chapter
REPORT = ROOT / "tests" / "SEEDS.md"
REASONS = ROOT / "tests" / "seeds_reasons.toml"
PORTABLE = {
    "ATEN_CPU_CAPABILITY": "default",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MKL_CBWR": "COMPATIBLE",
}
NATIVE = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
BUDGET_S = 90  # a chapter's wall time, portable kernels, one core
MARGIN_SHARE = 0.25  # the threshold lies outside the range by this share of it


def claiming_chapters() -> list[Path]:
    """The chapters with a code cell that states a claim (``claim(``)."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        if any("claim(" in src for src in code):
            found.append(path)
    return found


# The runner executed in a fresh Python per draw: the notebook top to bottom in
# one kernel, errors kept (nbclient's allow_errors), the wall time measured.
RUNNER = r"""
import json, resource, sys, time
import nbformat
from nbclient import NotebookClient
path, out = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
start = time.perf_counter()
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": sys.argv[3]}}).execute()
wall = time.perf_counter() - start
kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel, ended
cpu = kids.ru_utime + kids.ru_stime
errors = []
for i, cell in enumerate(nb.cells):
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            errors.append(f"cell {i}: {o['ename']}: {o['evalue']}"[:300])
json.dump({"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "errors": errors},
          open(out, "w"))
"""


def run_draw(path: Path, seed: int, kernels: str) -> dict:
    """Execute one chapter at one base seed with one kernel set."""
    with tempfile.TemporaryDirectory() as tmp:
        claims, result = Path(tmp) / "claims.jsonl", Path(tmp) / "result.json"
        env = {
            **os.environ,
            **(PORTABLE if kernels == "portable" else NATIVE),
            "SELFATTN_SEED": str(seed),
            "SELFATTN_CLAIMS": str(claims),
            "SELFATTN_CLAIMS_GO_ON": "1",
            "SELFATTN_DEVICE": "cpu",
        }
        if kernels == "native":
            env.pop("ATEN_CPU_CAPABILITY", None)
            env.pop("MKL_CBWR", None)
        cmd = [sys.executable, "-c", RUNNER, str(path), str(result), str(path.parent)]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not result.exists():
            done = {
                "wall_s": None,
                "cpu_s": None,
                "errors": [proc.stderr.strip()[-300:]],
            }
        else:
            done = json.loads(result.read_text())
        lines = claims.read_text().splitlines() if claims.exists() else []
    return {
        "chapter": path.stem,
        "seed": seed,
        "kernels": kernels,
        **done,
        "claims": [json.loads(line) for line in lines],
    }


def seed_list(text: str) -> list[int]:
    """'0-11' or '0,3,5' or '' -> the seeds."""
    out: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def summarise(
    runs: list[dict], reasons: dict, waits: dict | None = None
) -> tuple[list, list, list, list]:
    """The claims' rows, the chapters' times, the margins and the problems.

    ``waits`` maps a chapter to its time alone (``--wait``), if measured.
    """
    problems: list[str] = []
    chapters = sorted({r["chapter"] for r in runs})
    rows, times, tight = [], [], []
    for chapter in chapters:
        mine = [r for r in runs if r["chapter"] == chapter]
        for r in mine:
            for e in r["errors"]:
                problems.append(f"{chapter} seed {r['seed']} {r['kernels']}: {e}")
        walls = [r["cpu_s"] for r in mine if r["kernels"] == "portable" and r["cpu_s"]]
        alone = (waits or {}).get(chapter)
        if walls:
            worst = max(walls)
            times.append((chapter, statistics.median(walls), worst, len(walls), alone))
            judged = alone["cpu_s"] if alone else worst
            if judged > BUDGET_S:
                how = "alone" if alone else "in the sweep"
                problems.append(
                    f"{chapter}: {judged:.0f} s with portable kernels ({how})"
                )
        names: list[str] = []
        for r in mine:
            for c in r["claims"]:
                if c["name"] not in names:
                    names.append(c["name"])
        for name in names:
            got = [c for r in mine for c in r["claims"] if c["name"] == name]
            values = [c["value"] for c in got]
            op, thresholds = got[0]["op"], {c["threshold"] for c in got}
            if len(thresholds) > 1:
                problems.append(f"{chapter}: {name!r} has several thresholds")
            t = got[0]["threshold"]
            passed = sum(c["held"] for c in got)
            lo, hi = min(values), max(values)
            spread = hi - lo
            if op in (">", ">="):
                gap = lo - t
            elif op in ("<", "<="):
                gap = t - hi
            else:
                gap = None
            if gap is None:
                share, margin = None, "exact"
            elif spread == 0:
                share, margin = float("inf"), f"{_fmt(gap)} (no spread)"
            else:
                share = gap / spread
                margin = f"{_fmt(gap)} ({share:.2f} of the range)"
            key = f"{chapter}: {name}"
            reason = reasons.get(key, "")
            if share is not None and share != float("inf"):
                tight.append((share, key))
            ok = passed == len(got) and (
                share is None or share >= MARGIN_SHARE or bool(reason)
            )
            if passed < len(got):
                problems.append(f"{key}: {len(got) - passed} of {len(got)} draws fail")
            elif not ok:
                problems.append(f"{key}: margin {margin} is under a quarter")
            stands = reason or ("yes" if ok else "NO")
            rows.append(
                f"| {chapter} | {name} | {op} {_fmt(t)} | {_fmt(lo)} | "
                f"{_fmt(statistics.median(values))} | {_fmt(hi)} | "
                f"{passed}/{len(got)} | {margin} | {stands} |"
            )
    tight.sort()
    return rows, times, tight, problems


def _alone(wait: dict | None, key: str, fmt: str) -> str:
    """One field of a chapter's time alone, or a dash where none was measured."""
    return format(wait[key], fmt) if wait and wait.get(key) is not None else "–"


def write_report() -> list[str]:
    """Write tests/SEEDS.md from every chapter's record; return the problems."""
    reasons = tomllib.loads(REASONS.read_text()) if REASONS.exists() else {}
    records = {
        p.stem: json.loads(p.read_text()) for p in sorted(RECORDS.glob("*.json"))
    }
    runs = [r for rec in records.values() for r in rec["runs"]]
    waits = {name: rec["wait"] for name, rec in records.items() if "wait" in rec}
    rows, times, tight, problems = summarise(runs, reasons, waits)

    def seeds_of(rec: dict, kernels: str) -> str:
        got = sorted({r["seed"] for r in rec["runs"] if r["kernels"] == kernels})
        return ", ".join(map(str, got)) or "none"

    runs_table = [
        f"| {name} | {m['date']} | {seeds_of(rec, 'portable')} | "
        f"{seeds_of(rec, 'native')} | "
        f"{len(rec['runs'])} | {m['wall_s']} | {m['jobs']} | {m['machine']} | "
        f"{m['torch']} |"
        for name, rec in records.items()
        for m in [rec["meta"]]
    ]
    for name, rec in records.items():
        if not rec["meta"].get("complete", True):
            problems.append(f"{name}: its last sweep stopped before every draw ran")
    lines = [
        "# Every claim over many draws",
        "",
        "Generated by `make sweep` (`tools/sweep.py`); do not edit by hand. "
        "Each chapter that states a claim about a trained or sampled quantity "
        "(`selfattn.lab.claims.claim`) is executed once per draw: each base seed "
        "(`SELFATTN_SEED`) with PyTorch's portable kernels on one thread, and "
        "again with the machine's native kernels. A claim stands when every "
        "draw passes and its threshold lies outside the range of the values "
        "by at least a quarter of that range (the margin below), or when "
        "`tests/seeds_reasons.toml` gives the reason it need not.",
        "",
        "## The runs",
        "",
        "Each chapter's last sweep: its date, the base seeds with portable "
        "and with native kernels, the wall time of the whole run in seconds "
        "and how many draws ran side by side (`tests/seeds/<chapter>.json` "
        "holds every value).",
        "",
        "| chapter | date | portable seeds | native seeds | draws | wall (s) | "
        "jobs | CPU | torch |",
        "|---|---|---|---|---:|---:|---:|---|---|",
        *runs_table,
        "",
        "## Claims",
        "",
        "| chapter | claim | holds if | min | median | max | passed | margin | "
        "stands |",
        "|---|---|---|---:|---:|---:|---:|---|---|",
        *rows,
        "",
        "## The tightest margins",
        "",
        *[f"- {share:.2f} of the range: {key}" for share, key in tight[:5]],
        "",
        "## Claims restated after their sweep",
        "",
        "A claim whose wording or threshold changed after its sweep, its value "
        "computed as before (`tools/sweep.py --restate`), judged anew on the "
        "recorded values:",
        "",
        *(
            [
                f"- {name}: {note}"
                for name, rec in records.items()
                for note in rec["meta"].get("restated", [])
            ]
            or ["- none"]
        ),
        "",
        "## A learner's wait",
        "",
        f"Time of each chapter with portable kernels on one thread: the CPU "
        f"seconds of its kernel, which is its wall time on an idle core. "
        f"*Alone* is one run at base seed 0 with nothing else on the machine "
        f"(`make wait`; the load average when it started beside it); the "
        f"budget of {BUDGET_S} s is judged on it. The median and worst are "
        f"over the sweep's portable draws, which ran side by side with other "
        f"draws and read higher (shared caches); where no time alone was "
        f"measured, the budget is judged on their worst.",
        "",
        "| chapter | alone (CPU s) | load then | sweep median (CPU s) | "
        "sweep worst (CPU s) | draws |",
        "|---|---:|---:|---:|---:|---:|",
        *[
            f"| {c} | {_alone(a, 'cpu_s', '.0f')} | {_alone(a, 'load', '.2f')} | "
            f"{m:.0f} | {w:.0f} | {n} |"
            for c, m, w, n, a in times
        ],
        "",
        "## Problems",
        "",
        *([f"- {p}" for p in problems] or ["None: every claim stands."]),
        "",
    ]
    REPORT.write_text("\n".join(lines))
    return problems


def restate(chapter: str, old: str, new: str, op: str, threshold: str) -> None:
    """Rename claim ``old`` of a chapter's record to ``new``, judged by ``op``
    and ``threshold``: for a claim whose value is computed as before and whose
    wording or threshold changed after the sweep. The record's meta lists it."""
    from selfattn.lab.claims import _OPS

    path = RECORDS / f"{chapter}.json"
    record = json.loads(path.read_text())
    t = float(threshold)
    found = 0
    for run in record["runs"]:
        for c in run["claims"]:
            if c["name"] == old:
                c.update(
                    name=new, op=op, threshold=t, held=bool(_OPS[op](c["value"], t))
                )
                found += 1
    if not found:
        raise SystemExit(f"{chapter}: no recorded claim {old!r}")
    note = f"{datetime.date.today()}: {old!r} -> {new!r} {op} {threshold}"
    record["meta"].setdefault("restated", []).append(note)
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{chapter}: {found} values restated ({note})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--seeds", default="0-11", help="portable kernels (e.g. 0-11)")
    ap.add_argument("--native", default="0-11", help="native kernels (e.g. 0-2)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", action="store_true", help="only rewrite SEEDS.md")
    ap.add_argument(
        "--restate",
        nargs=5,
        metavar=("CHAPTER", "OLD", "NEW", "OP", "THRESHOLD"),
        help="rename a recorded claim and judge its values against a new op and "
        "threshold (its value must be the same computation; noted in the record)",
    )
    ap.add_argument(
        "--wait",
        action="store_true",
        help="time each chapter alone once (seed 0, portable kernels) for the "
        "learner's wait; run it on an otherwise idle machine",
    )
    ap.add_argument(
        "--add",
        action="store_true",
        help="keep the chapters' recorded draws of other seeds (finish a sweep)",
    )
    args = ap.parse_args(argv)
    if args.restate:
        restate(*args.restate)
    elif args.wait:
        for p in [p.resolve() for p in args.notebooks] or claiming_chapters():
            load = os.getloadavg()[0]
            result = run_draw(p, 0, "portable")
            path = RECORDS / f"{p.stem}.json"
            record = json.loads(path.read_text())
            record["wait"] = {
                "date": datetime.date.today().isoformat(),
                "cpu_s": result["cpu_s"],
                "wall_s": result["wall_s"],
                "load": round(load, 2),
                "errors": result["errors"],
            }
            path.write_text(json.dumps(record, indent=1) + "\n")
            print(
                f"{p.stem:32s} alone: CPU {result['cpu_s']} s, wall "
                f"{result['wall_s']} s, load {load:.2f} {result['errors']}"
            )
    elif not args.report:
        paths = [p.resolve() for p in args.notebooks] or claiming_chapters()
        draws = [(p, s, "portable") for p in paths for s in seed_list(args.seeds)]
        draws += [(p, s, "native") for p in paths for s in seed_list(args.native)]
        start = time.monotonic()
        done: list[dict] = []
        kept: dict[str, list[dict]] = {}
        if args.add:  # the recorded draws this run does not repeat
            todo = {(p.stem, s, k) for p, s, k in draws}
            for p in paths:
                path = RECORDS / f"{p.stem}.json"
                old = json.loads(path.read_text())["runs"] if path.exists() else []
                kept[p.stem] = [
                    r for r in old if (p.stem, r["seed"], r["kernels"]) not in todo
                ]
        import torch

        def save() -> None:
            """Write each chapter's record with the draws done so far."""
            meta = {
                "date": datetime.date.today().isoformat(),
                "command": "make sweep"
                + (
                    f" NB='{' '.join(str(p.relative_to(ROOT)) for p in paths)}'"
                    if args.notebooks
                    else ""
                ),
                "seeds": args.seeds,
                "native": args.native,
                "wall_s": round(time.monotonic() - start),
                "jobs": args.jobs,
                "machine": _cpu_name(),
                "torch": torch.__version__,
                "complete": len(done) == len(draws),
                "seeds_done": sorted(
                    {f"{r['kernels']} {r['seed']}" for r in done}
                    | {f"{r['kernels']} {r['seed']}" for k in kept.values() for r in k}
                ),
            }
            RECORDS.mkdir(exist_ok=True)
            for p in paths:
                mine = [r for r in done if r["chapter"] == p.stem]
                runs = kept.get(p.stem, []) + mine
                record = {"meta": meta, "runs": runs}
                text = json.dumps(record, indent=1) + "\n"
                (RECORDS / f"{p.stem}.json").write_text(text)

        with ThreadPoolExecutor(args.jobs) as pool:
            for result in pool.map(lambda d: run_draw(*d), draws):
                done.append(result)
                save()  # after every draw: an interrupted sweep keeps its draws
                bad = [c["name"] for c in result["claims"] if not c["held"]]
                print(
                    f"{result['chapter']:32s} seed {result['seed']:3d} "
                    f"{result['kernels']:8s} {result['wall_s'] or 0:6.1f} s "
                    f"(CPU {result['cpu_s'] or 0:5.1f} s) "
                    f"claims {len(result['claims']):3d} failed {bad} "
                    f"errors {result['errors']}",
                    flush=True,
                )
    problems = write_report()
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
