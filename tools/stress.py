"""Run the chapters that measure time again and again, under load: `make stress`.

Usage (from the repository root)::

    .venv/bin/python tools/stress.py [--runs 10] [--load 3] [NOTEBOOK ...]

Each run executes every chapter that measures time (a code cell calls a
clock or :mod:`selfattn.lab.measure`; or the NOTEBOOKs named) as the
portable pass of ``make test`` does: nbval comparing every output, PyTorch's
portable kernels, one thread. Beside it, ``--load`` processes spin on the CPU
the whole time (other work running beside it counts too: each run records the
one-minute load average at its end, so the report says what the load was).
It prints the pass rate of each chapter and writes ``_build/stress.json``; it
exits 1 unless every run of every chapter passed.
Not part of ``make test`` (it takes hours); an author runs it after changing a
chapter that measures time (CONTRIBUTING, "Portable lessons").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORTABLE = {
    "ATEN_CPU_CAPABILITY": "default",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MKL_CBWR": "COMPATIBLE",
}
CLOCK = re.compile(
    r"\b(cpu_times?|perf_counter|process_time|thread_time|assert_faster|timeit)\("
)


def timing_chapters() -> list[Path]:
    """The chapters with a code cell that measures time."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        if any(CLOCK.search(src) for src in code):
            found.append(path)
    return found


def run_once(path: Path) -> tuple[bool, float, str]:
    """One portable nbval pass of one notebook: (passed, seconds, last lines)."""
    env = {**os.environ, **PORTABLE}
    cmd = [sys.executable, "-m", "pytest", str(path), "-q", "-p", "no:cacheprovider"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    return proc.returncode == 0, time.monotonic() - start, tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--load", type=int, default=3, help="CPU-bound processes")
    parser.add_argument("--out", default=str(ROOT / "_build" / "stress.json"))
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    chapters = [p.resolve() for p in args.notebooks] or timing_chapters()
    print(f"stress: {len(chapters)} chapters x {args.runs} runs, portable kernels, "
          f"one thread, {args.load} CPU-bound processes beside")  # fmt: skip
    spin = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(args.load)
    ]
    results: dict[str, list[dict]] = {p.stem: [] for p in chapters}
    try:
        for run in range(1, args.runs + 1):
            for path in chapters:
                ok, seconds, tail = run_once(path)
                load = os.getloadavg()[0]
                record = {
                    "run": run,
                    "passed": ok,
                    "seconds": round(seconds, 1),
                    "load": round(load, 2),
                }
                results[path.stem].append(record)
                verdict = "pass" if ok else "FAIL"
                print(
                    f"run {run:2d} {path.stem:32s} {verdict} {seconds:6.0f} s"
                    f"  load {load:4.1f}",
                    flush=True,
                )
                if not ok:
                    print(tail, flush=True)
    finally:
        for p in spin:
            p.kill()
    print("\nchapter                          passed         load (min-max)")
    for name, rows in results.items():
        n_ok = sum(r["passed"] for r in rows)
        loads = [r["load"] for r in rows]
        print(
            f"{name:32s} {n_ok:3d} / {len(rows)}  ({100 * n_ok / len(rows):3.0f} %)"
            f"  {min(loads):4.1f}-{max(loads):4.1f}"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"runs": args.runs, "load": args.load, "results": results}, indent=1)
        + "\n"  # fmt: skip
    )
    return 0 if all(r["passed"] for rows in results.values() for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
