"""Write tests/MUTATION.md from the results of the last `mutmut run`.

Usage (from the repository root, after `mutmut run`; `make mutation` does both):

    .venv/bin/python tools/mutation_report.py [--seconds N] [--children N]

It reads mutmut's per-file metadata (``mutants/<module>.py.meta``: the exit
code of the tests for every mutant) and writes one row per core module:
killed / (killed + survived), where a timeout counts as killed and a mutant no
test reaches ("no tests") counts as survived. The surviving mutants judged
equivalent (the mutated code behaves exactly as the original) are listed with
their reason from ``tests/mutation_equivalent.toml``; any other survivor is
listed as not yet judged, with its diff.
"""

from __future__ import annotations

import argparse
import datetime
import json
import tomllib
from collections import Counter
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "tests" / "MUTATION.md"
EQUIVALENT = ROOT / "tests" / "mutation_equivalent.toml"

# mutmut's exit codes (mutmut.stats.status_by_exit_code), folded into our
# three classes.
KILLED_CODES = {1, 3, 36, 24, -24, 152, 255}  # failed test, pytest error, timeout
SURVIVED_CODES = {0, 5, 33}  # tests passed, or no test reaches the mutant


def _module(meta: Path) -> str:
    """One row per file, packages' modules included: a package's total could
    hide a weak module in it."""
    return meta.relative_to(ROOT / "mutants").as_posix().removesuffix(".meta")


def _status(code: int | None) -> str:
    if code is None:
        return "not checked"
    if code in KILLED_CODES:
        return "killed"
    if code == 0:
        return "survived"
    if code in SURVIVED_CODES:
        return "no tests"
    return "other"


def _diff(name: str, path: str) -> str:
    """The mutated lines of one mutant (mutmut's own diff, +/- lines only)."""
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)  # mutmut reads its configuration from ./pyproject.toml
    try:
        from mutmut.__main__ import get_diff_for_mutant

        diff = get_diff_for_mutant(name, path=path)
    finally:
        os.chdir(cwd)
    lines = [
        line.rstrip()
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return "\n".join(lines)


def collect() -> tuple[dict[str, Counter], dict[str, list[tuple[str, str, str]]]]:
    counts: dict[str, Counter] = {}
    survivors: dict[str, list[tuple[str, str, str]]] = {}
    for meta in sorted((ROOT / "mutants" / "selfattn").rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        if not codes:
            continue
        module = _module(meta)
        source = meta.relative_to(ROOT / "mutants").as_posix().removesuffix(".meta")
        c = counts.setdefault(module, Counter())
        for name, code in codes.items():
            status = _status(code)
            c[status] += 1
            if status in ("survived", "no tests"):
                survivors.setdefault(module, []).append((name, status, source))
    return counts, survivors


def _pct(killed: int, total: int) -> str:
    return f"{100.0 * killed / total:.1f} %" if total else "n/a"


def _score(c: Counter) -> str:
    return _pct(c["killed"], c["killed"] + c["survived"] + c["no tests"])


def render(seconds: float | None, note: str | None = None, children: int = 1) -> str:
    counts, survivors = collect()
    judged_file = tomllib.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    reasons: dict[str, str] = judged_file.get("equivalent", {})
    here: dict[str, str] = judged_file.get("not_killable_here", {})
    today = datetime.date.today().isoformat()
    out = [
        "# Mutation testing of the core library",
        "",
        "Written by `tools/mutation_report.py`; regenerate with `make mutation`",
        "(not part of `make test`; see CONTRIBUTING.md). Do not edit by hand: the",
        "reasons for equivalent mutants live in `tests/mutation_equivalent.toml`.",
        "",
        f"- command: `make mutation` (`mutmut run --max-children {children}`, "
        "then `python tools/mutation_report.py`)",
        f"- mutmut {version('mutmut')}, torch {version('torch')}, date {today}",
    ]
    if seconds is not None:
        out.append(f"- wall time of the run: {seconds / 60:.0f} min")
    if note:
        out += ["", note.strip()]
    out += [
        "- score = killed / (killed + survived); a timeout counts as killed, a",
        '  mutant no test reaches ("no tests") as survived. mutmut 3 mutates the',
        "  bodies of functions and methods only (not module-level constants).",
        "",
        "| module | mutants | killed | survived | no tests | not checked "
        "| score | equivalent | score, equivalents excluded |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    total = Counter()
    for module, c in counts.items():
        total += c
        n_eq = sum(1 for name, _, _ in survivors.get(module, []) if name in reasons)
        killed, lost = c["killed"], c["survived"] + c["no tests"]
        out.append(
            f"| `{module}` | {sum(c.values())} | {killed} | {c['survived']} "
            f"| {c['no tests']} | {c['not checked']} | {_score(c)} "
            f"| {n_eq} | {_pct(killed, killed + lost - n_eq)} |"
        )
    out.append(
        f"| **all** | {sum(total.values())} | {total['killed']} | {total['survived']} "
        f"| {total['no tests']} | {total['not checked']} | {_score(total)} "
        "| | |"
    )
    judged = [
        (m, n, s, src)
        for m, lst in survivors.items()
        for n, s, src in lst
        if n in reasons
    ]
    unkillable = [
        (m, n, s, src) for m, lst in survivors.items() for n, s, src in lst if n in here
    ]
    unjudged = [
        (m, n, s, src)
        for m, lst in survivors.items()
        for n, s, src in lst
        if n not in reasons and n not in here
    ]
    out += ["", "## Surviving mutants judged equivalent", ""]
    if not judged:
        out.append("None.")
    for _, name, _, src in judged:
        out += [f"- `{name}`: {reasons[name].strip()}", "", "  ```diff"]
        out += ["  " + line for line in _diff(name, src).splitlines()]
        out += ["  ```", ""]
    out += ["", "## Surviving mutants not killable on this machine", ""]
    out.append(
        "Not equivalent, but they differ only on a device other than the CPU "
        "(reasons in tests/mutation_equivalent.toml)."
    )
    out.append("")
    for _, name, _, src in unkillable:
        out += [f"- `{name}`: {here[name].strip()}", "", "  ```diff"]
        out += ["  " + line for line in _diff(name, src).splitlines()]
        out += ["  ```", ""]
    out += ["", "## Surviving mutants not judged (tests to write)", ""]
    if not unjudged:
        out.append("None.")
    for _, name, status, src in unjudged:
        out += [f"- `{name}` ({status})", "", "  ```diff"]
        out += ["  " + line for line in _diff(name, src).splitlines()]
        out += ["  ```", ""]
    stale = sorted(
        (set(reasons) | set(here)) - {n for _, n, _, _ in judged + unkillable}
    )
    if stale:
        out += [
            "",
            "## Entries of tests/mutation_equivalent.toml that no longer survive",
            "",
            "(killed now, or renamed by a change of the code: re-judge or remove.)",
            "",
        ]
        out += [f"- `{name}`" for name in stale]
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="wall time of the run")
    parser.add_argument("--note", help="a paragraph to add (e.g. a partial run)")
    parser.add_argument(
        "--children", type=int, default=1, help="mutmut's --max-children"
    )
    args = parser.parse_args()
    REPORT.write_text(render(args.seconds, args.note, args.children))
    counts, _ = collect()
    for module, c in counts.items():
        print(
            f"{module:26s} {_score(c):>8s}  ({sum(c.values())} mutants, "
            f"{c['not checked']} not checked)"
        )
    print(f"wrote {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
