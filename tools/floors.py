"""The lower bounds of pyproject.toml as pip constraints, for ``make floors``.

Usage::

    python tools/floors.py                   # constraints, torch at the lock's release
    python tools/floors.py --torch floor     # constraints, torch at its floor too
    python tools/floors.py --torch-version lock|floor   # the torch version alone
    python tools/floors.py --names           # the packages the floors venv installs

The constraints pin every dependency of the library and of its extra ``lab``
to its lower bound, so the minimum-versions pass runs on exactly the oldest
releases that pyproject.toml admits; the test tools are pinned to the lock's
versions. Transitive dependencies resolve as pip picks them, except those in
``TRANSITIVE``. Standard library only (tomllib): it runs before any venv.

Why each floor is what it is (``make floors`` runs the unit tests and two
chapters on them; the workflow's floors job does the same with torch's floor,
from PyTorch's CPU index, which this machine may not reach):

* torch 2.5: the multi-head chapter calls
  ``F.scaled_dot_product_attention(..., enable_gqa=True)`` (new in 2.5). The
  library alone needs 2.2 (``generator=`` of ``torch.nn.init``'s functions,
  new in 2.2; ``scale=`` of scaled_dot_product_attention and
  ``torch.utils.flop_counter`` came in 2.1). Read from the wheels of
  2.0 to 2.9; proven only by the workflow's floors job.
* numpy 1.23.2: the oldest numpy with wheels for Python 3.11
  (requires-python); the code and the tests use nothing newer.
* matplotlib 3.8: the tests call ``Figure.get_suptitle`` (new in 3.8).
* scikit-learn 1.1.3: the oldest release with wheels for Python 3.11
  (the course calls ``load_digits`` alone).
* networkx 2.8.8, tqdm 4.45: the oldest releases tried; the code uses
  nothing newer.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Pins below what pip would pick, with the reason.
TRANSITIVE = {
    # matplotlib < 3.10.8 calls pyparsing names that 3.3 deprecates: the
    # warnings fail the warning-free figure tests, not the course's code.
    "pyparsing": "<3.3",
}
# The test tools the floors venv needs (pinned to the lock's versions).
TOOLS = ("pytest", "pytest-timeout", "nbval", "hypothesis", "ipykernel")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _name_and_floor(requirement: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", requirement)
    if not m:
        raise SystemExit(f"cannot read the requirement {requirement!r}")
    name, spec = m.groups()
    lows = re.findall(r">=\s*([0-9][0-9.]*)", spec)
    if len(lows) != 1:
        raise SystemExit(f"{name}: expected one lower bound (>=), got {spec!r}")
    return _canonical(name), lows[0]


def floors() -> dict[str, str]:
    """The lower bound of every dependency of selfattn and of its extra lab."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = project["project"]
    reqs = list(project["dependencies"]) + list(project["optional-dependencies"]["lab"])
    return dict(_name_and_floor(r) for r in reqs)


def lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[_canonical(name)] = version
    return pins


def torch_version(which: str) -> str:
    """torch's floor (three components: '2.5' -> '2.5.0') or the lock's pin."""
    if which == "lock":
        return lock()["torch"]
    if which == "floor":
        parts = floors()["torch"].split(".")
        return ".".join(parts + ["0"] * (3 - len(parts)))
    raise SystemExit(f"--torch takes lock or floor, not {which!r}")


def constraints(torch: str = "lock") -> str:
    pins = lock()
    lines = ["# The floors pass (make floors): written by tools/floors.py"]
    for name, low in sorted(floors().items()):
        version = torch_version(torch) if name == "torch" else low
        lines.append(f"{name}=={version}")
    lines += [f"{name}{spec}" for name, spec in sorted(TRANSITIVE.items())]
    lines += [f"{name}=={pins[name]}" for name in TOOLS]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    match argv:
        case []:
            print(constraints(), end="")
        case ["--torch", which]:
            print(constraints(which), end="")
        case ["--torch-version", which]:
            print(torch_version(which))
        case ["--names"]:
            print(" ".join(sorted(floors()) + list(TOOLS)))
        case _:
            print(__doc__)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
