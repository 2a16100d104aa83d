"""The three descriptions of the environment agree with each other.

pyproject.toml declares ranges, environment.yml offers the same set to conda
users, and requirements.lock pins one exact version of everything.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch"}  # conda-forge name -> PyPI name


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
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


@pytest.mark.parametrize("name", sorted(_pyproject_requirements()))
def test_lower_bound_is_a_version_the_suite_ran_on(name):
    """A lower bound below the locked release would promise an untested version."""
    req = _pyproject_requirements()[name]
    lows = [Version(s.version) for s in req.specifier if s.operator in (">=", "==")]
    assert lows, f"{name}: no lower bound in pyproject.toml ({req.specifier})"
    locked = _lock()[name].release[:2]
    assert max(lows).release[:2] == locked, (
        f"{name}: pyproject.toml allows {req.specifier}, but the suite runs on "
        f"{_lock()[name]}; raise the lower bound to >={locked[0]}.{locked[1]}"
    )


def test_lock_holds_no_cuda_package():
    cuda = [n for n in _lock() if n.startswith(("nvidia-", "triton", "cuda"))]
    assert not cuda, f"requirements.lock would install CUDA packages: {cuda}"


def test_python_requirement_matches_the_lock():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11", "the lock is resolved for 3.11"
