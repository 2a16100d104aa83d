"""The descriptions of the environment agree with each other.

pyproject.toml declares ranges, environment.yml offers the same set to conda
users, requirements.lock pins one exact version of everything (the Makefile's
environment), and [tool.uv] pins the same torch. Binder installs what a
learner installs: the library with its extra lab, within those ranges.
The lower bounds of the library and of its extra lab are the oldest releases
the code runs on: `make floors` installs exactly them (tools/floors.py) and
runs the unit tests and two chapters there. Those of the authors' extras
(book, test, dev) are the locked releases.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CONDA_NAMES = {"pytorch": "torch", "python-build": "build"}  # conda -> PyPI name
LEARNER = ("dependencies", "lab")  # the library and its extra lab

spec = importlib.util.spec_from_file_location("floors", ROOT / "tools" / "floors.py")
floors = importlib.util.module_from_spec(spec)
spec.loader.exec_module(floors)


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_requirements(*groups: str) -> dict[str, Requirement]:
    """Every requirement of pyproject.toml, or those of the named groups
    ('dependencies' or an extra's name)."""
    project = _project()["project"]
    every = {"dependencies": project["dependencies"]}
    every.update(project["optional-dependencies"])
    reqs = [r for group in groups or every for r in every[group]]
    return {_canonical(Requirement(r).name): Requirement(r) for r in reqs}


def _conda_requirements() -> dict[str, str]:
    out = {}
    in_deps = False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            continue
        m = re.match(r"^\s+-\s+([A-Za-z0-9_.\-]+)\s*(.*)$", line) if in_deps else None
        if m and m.group(1) not in ("python", "pip"):
            name = CONDA_NAMES.get(m.group(1), m.group(1))
            out[_canonical(name)] = m.group(2).strip()
    return out


def _lock() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[_canonical(name)] = Version(version)
    return pins


def test_environment_yml_matches_pyproject():
    py = _pyproject_requirements()
    conda = _conda_requirements()
    assert set(conda) == set(py), (
        f"only in environment.yml: {sorted(set(conda) - set(py))}; "
        f"only in pyproject.toml: {sorted(set(py) - set(conda))}"
    )
    for name, spec in conda.items():
        assert spec.replace(" ", "") == str(py[name].specifier).replace(" ", "") or (
            set(spec.replace(" ", "").split(","))
            == {str(s) for s in py[name].specifier}
        ), f"{name}: environment.yml says {spec!r}, pyproject.toml {py[name].specifier}"


@pytest.mark.parametrize("name", sorted(_pyproject_requirements()))
def test_lock_pins_every_declared_package_within_its_range(name):
    req = _pyproject_requirements()[name]
    pins = _lock()
    assert name in pins, f"{name} is declared in pyproject.toml but not locked"
    assert req.specifier.contains(pins[name], prereleases=True), (
        f"requirements.lock pins {name}=={pins[name]}, outside {req.specifier}"
    )


def test_torch_is_pinned_to_the_cpu_release():
    assert _lock()["torch"] == Version("2.13.0")


def test_uv_pins_the_locked_torch_from_the_makefiles_cpu_index():
    uv = _project()["tool"]["uv"]
    assert uv["constraint-dependencies"] == [f"torch=={_lock()['torch']}"]
    (index,) = uv["index"]
    assert uv["sources"]["torch"] == [
        {"index": index["name"], "marker": "sys_platform == 'linux'"}
    ]
    makefile = (ROOT / "Makefile").read_text()
    assert f"TORCH_CPU_INDEX ?= {index['url']}\n" in makefile
    binder = (ROOT / "binder" / "requirements.txt").read_text()
    assert f"--extra-index-url {index['url']}\n" in binder


def test_binder_installs_what_a_learner_installs():
    """The checkout with its extra lab, the newest releases within pyproject's
    ranges (issue 31, F13), never the authors' lock; CPU torch."""
    binder = ROOT / "binder"
    lines = (binder / "requirements.txt").read_text().splitlines()
    wanted = [line for line in lines if line and not line.startswith("#")]
    (index,) = _project()["tool"]["uv"]["index"]
    extra = "lab"
    assert LEARNER == ("dependencies", extra)
    assert wanted == [f"--extra-index-url {index['url']}", f".[{extra}]"]
    assert not (binder / "postBuild").exists()  # nothing installs the lock after
    runtime = (binder / "runtime.txt").read_text().strip()
    python = Version(runtime.removeprefix("python-"))
    assert python in SpecifierSet(_project()["project"]["requires-python"])


def _lower_bound(req: Requirement) -> Version:
    lows = [Version(s.version) for s in req.specifier if s.operator in (">=", "==")]
    assert len(lows) == 1, f"{req.name}: one lower bound, not {req.specifier}"
    return lows[0]


AUTHORS = sorted(
    set(_pyproject_requirements()) - set(_pyproject_requirements(*LEARNER))
)


@pytest.mark.parametrize("name", AUTHORS)
def test_an_authors_tool_lower_bound_is_the_locked_release(name):
    """A lower bound below the locked release would promise an untested version
    (the authors' tools have no floors pass)."""
    req = _pyproject_requirements()[name]
    locked = _lock()[name].release[:2]
    assert _lower_bound(req).release[:2] == locked, (
        f"{name}: pyproject.toml allows {req.specifier}, but the suite runs on "
        f"{_lock()[name]}; raise the lower bound to >={locked[0]}.{locked[1]}"
    )


@pytest.mark.parametrize("name", sorted(_pyproject_requirements(*LEARNER)))
def test_make_floors_installs_exactly_the_learners_lower_bounds(name):
    """The library's and lab's lower bounds are proven by `make floors` (torch's
    by the workflow's floors job): its constraints pin each to its floor."""
    req = _pyproject_requirements(*LEARNER)[name]
    pins = dict(
        line.split("==")
        for line in floors.constraints("floor").splitlines()
        if "==" in line
    )
    assert Version(pins[name]) == _lower_bound(req)


def test_the_floors_pass_runs_in_ci_and_in_the_workflow():
    assert "make floors" in (ROOT / ".ci" / "run").read_text()
    workflow = (ROOT / ".github" / "workflows" / "book.yml").read_text()
    assert "make floors FLOOR_TORCH=floor" in workflow


def test_lock_holds_no_cuda_package():
    cuda = [n for n in _lock() if n.startswith(("nvidia-", "triton", "cuda"))]
    assert not cuda, f"requirements.lock would install CUDA packages: {cuda}"


def _lock_python() -> Version:
    """The newest Python floor among the lock's packages (Requires-Python of
    each, as installed in this environment, which the lock made)."""
    lows = {}
    for name in _lock():
        need = importlib.metadata.metadata(name).get("Requires-Python") or ""
        for spec in SpecifierSet(need):
            if spec.operator in (">=", "~="):
                lows[name] = max(lows.get(name, Version("0")), Version(spec.version))
    return max(lows.values())


def test_the_makefile_refuses_a_python_older_than_the_lock_needs():
    # soupsieve 4.1.2 needs 3.11.5; Debian 12's python3 is 3.11.2 (issue 31, F7)
    makefile = (ROOT / "Makefile").read_text()
    floor = re.search(r"(?m)^PYTHON_FLOOR\s*:=\s*(\S+)$", makefile)
    assert floor, "no PYTHON_FLOOR in the Makefile"
    assert Version(floor[1]) == _lock_python()


def test_requires_python_is_as_low_as_the_library_allows():
    # the library and its tests run on 3.10 (the workflow's python-range job);
    # only the authors' lock needs more
    project = _project()["project"]
    assert project["requires-python"] == ">=3.10"
    assert Version("3.10") < _lock_python()
    versions = [
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert versions[0] == "3.10"


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_the_python_check_says_what_to_do() -> None:
    def check(floor: str) -> subprocess.CompletedProcess:
        command = ["make", "--no-print-directory", "-s", "--eval"]
        command += ["pycheck: ; $(call check_python,$(PYTHON))", "pycheck"]
        command += [f"PYTHON={sys.executable}", f"PYTHON_FLOOR={floor}"]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)

    assert check("3.0").returncode == 0
    done = check("99.0.1")
    assert done.returncode != 0
    assert "needs Python 99.0.1 or newer" in done.stdout
    assert "make book PYTHON=python3.12" in done.stdout
