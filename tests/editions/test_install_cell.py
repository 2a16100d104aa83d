"""The install cell on a Python with an older numpy: nothing is upgraded.

Run by ``make floors``, which builds ``_build/floors``: a venv with the floor of
every dependency (numpy 1.23.2 where the lock has 2.4, matplotlib 3.8, ...)
beside the torch at hand, and the wheel of selfattn. Here a Colab-like Python
sees all of that venv's packages but selfattn (tests/install_cell_env.py);
the install cell, pointed at the wheel and at no index, must install selfattn
with its extra lab and leave numpy and torch as they were, and a chapter's
imports must work.
"""

from __future__ import annotations

import importlib.util
import subprocess
import tomllib
from pathlib import Path

from install_cell_env import (
    IMPORTS,
    ROOT,
    colab_like,
    own_packages,
    run_cell,
    site_packages,
    where_and_version,
)

FLOORS = ROOT / "_build" / "floors"

spec = importlib.util.spec_from_file_location(
    "repository", ROOT / "tools" / "repository.py"
)
repository = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repository)


def _lock_version(name: str) -> str:
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if line.lower().startswith(name + "=="):
            return line.split("==")[1]
    raise AssertionError(f"{name} is not in requirements.lock")


def test_with_an_older_numpy_the_cell_installs_selfattn_and_upgrades_nothing(
    tmp_path: Path,
) -> None:
    floors_python = FLOORS / "venv" / "bin" / "python"
    assert floors_python.is_file(), "run `make floors` first"
    (wheel,) = (FLOORS / "wheel").glob("selfattn-*.whl")
    python = colab_like(tmp_path, site_packages(floors_python))
    kept = where_and_version(python, "torch", "numpy")
    # numpy is the floor, older than the lock's
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    floor = repository.floors()["numpy"]
    assert f"numpy>={floor},<3" in project["project"]["dependencies"]
    assert kept["numpy"][1] == floor != _lock_version("numpy")

    done = run_cell(python, repository.install_cell(repository.url()), wheel, tmp_path)
    assert done.returncode == 0, done.stderr
    assert own_packages(python) == {"selfattn"}  # it alone was installed
    assert where_and_version(python, "torch", "numpy") == kept  # same files
    subprocess.run([python, "-c", IMPORTS], cwd=tmp_path, check=True)
