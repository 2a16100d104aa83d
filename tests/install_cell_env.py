"""A Colab-like Python for the install cell's tests (tests/course/test_repository.py,
tests/editions/test_install_cell.py).

Colab has its packages preinstalled in a site directory of its own (torch,
numpy, matplotlib, pip, ...) and no ``selfattn``. Here: a fresh venv whose
``preinstalled`` directory, on its path through a ``.pth`` file, holds links to
every package of an existing environment except ``selfattn``. pip sees those
packages as installed; what the cell installs lands in the venv's own
site-packages, so anything pip installed or upgraded shows up there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "repository", ROOT / "tools" / "repository.py"
)
repository = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(repository)
# what the chapters import (selfattn and its extra lab)
IMPORTS = "import selfattn, selfattn.lab, matplotlib, networkx, sklearn, tqdm"


def site_packages(python: Path | str) -> Path:
    out = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def colab_like(where: Path, packages: Path | None = None) -> Path:
    """A venv in ``where`` that sees every package of ``packages`` (default:
    this Python's site-packages) but selfattn; returns its python."""
    packages = packages or Path(sysconfig.get_path("purelib"))
    venv = [sys.executable, "-m", "venv", "--without-pip", str(where / "venv")]
    subprocess.run(venv, check=True)  # pip too comes from the preinstalled ones
    bindir = "Scripts" if os.name == "nt" else "bin"
    python = where / "venv" / bindir / "python"
    pre = where / "preinstalled"
    pre.mkdir()
    for entry in packages.iterdir():
        name = entry.name.lower()
        if "selfattn" in name or name.endswith(".pth"):
            continue
        (pre / entry.name).symlink_to(entry, entry.is_dir())
    (site_packages(python) / "preinstalled.pth").write_text(f"{pre}\n")
    return python


def own_packages(python: Path) -> set[str]:
    """The distributions in the venv's own site-packages (not the preinstalled)."""
    return {
        p.name.split("-")[0].lower() for p in site_packages(python).glob("*.dist-info")
    }


def where_and_version(python: Path, *modules: str) -> dict[str, list[str]]:
    """For each module: the file it is imported from, and its version."""
    code = (
        "import importlib, importlib.metadata as m, json, sys\n"
        f"names = {list(modules)!r}\n"
        "print(json.dumps({n: [importlib.import_module(n).__file__, m.version(n)]"
        " for n in names}))"
    )
    out = subprocess.run(  # run outside the checkout, whose selfattn would win
        [python, "-c", code], cwd=python.parents[2], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def run_cell(
    python: Path, cell: str, source: Path, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run the cell as a kernel would, installing ``source`` (a wheel) alone,
    as the offline bundle's cell does (``from_wheel``), and nothing from an
    index (PIP_NO_INDEX: no network)."""
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    cell = repository.from_wheel(cell, str(source))
    return subprocess.run(
        [python, "-c", cell + "\nprint('cell done')"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def build_wheel(where: Path, floors: dict[str, str] | None = None) -> Path:
    """selfattn as a wheel, built from a copy of what the build reads (the
    top-level files, the package, a licences folder if any); ``floors``
    raises the lower bounds of some of its requirements (``{"numpy": "99"}``)."""
    source = where / "source"
    source.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__")
    for path in ROOT.iterdir():
        if path.is_file() and not path.name.startswith("."):
            shutil.copy(path, source / path.name)
        elif path.name == "selfattn" or path.name.lower().startswith("licen"):
            shutil.copytree(path, source / path.name, ignore=skip)
    pyproject = source / "pyproject.toml"
    for name, floor in (floors or {}).items():
        text, n = re.subn(
            rf'"{name}>=[^",]*', f'"{name}>={floor}', pyproject.read_text("utf-8")
        )
        assert n == 1, f"{name} is not a requirement of pyproject.toml"
        pyproject.write_text(text, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
        + ["--no-build-isolation", "--disable-pip-version-check"]
        + ["-w", str(where / "wheel"), str(source)],
        check=True,
        cwd=source,
    )
    (wheel,) = (where / "wheel").glob("selfattn-*.whl")
    return wheel
