"""The GitHub workflow is valid, and it shares its lists with .ci/run.

The workflow cannot run here, so it is linted: against GitHub's workflow
schema (check-jsonschema's vendored copy) and by zizmor, offline
(.github/zizmor.yml says which tags it accepts). The Debian packages and the
library's test selection live in one file each (.ci/apt-packages.txt,
.ci/library-tests.txt), read by .ci/run, the Makefile and the workflow.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN))
    assert path, f"{name} is missing: it is in the dev extra (requirements.lock)"
    return path


def test_the_workflow_follows_githubs_schema() -> None:
    check = [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows"]
    done = subprocess.run(check + [str(WORKFLOW)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_in_the_workflow() -> None:
    zizmor = [_tool("zizmor"), "--offline", "--no-progress", str(WORKFLOW)]
    done = subprocess.run(zizmor, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def _apt_packages() -> list[str]:
    text = (ROOT / ".ci" / "apt-packages.txt").read_text(encoding="utf-8")
    return [w for line in text.splitlines() for w in line.split("#")[0].split()]


@pytest.mark.parametrize("path", [".ci/run", ".github/workflows/book.yml"])
def test_the_debian_packages_are_listed_once(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert ".ci/apt-packages.txt" in text
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    copies = [p for p in _apt_packages() if re.search(rf"\b{re.escape(p)}\b", code)]
    assert not copies, f"{path} names packages of .ci/apt-packages.txt: {copies}"


def test_the_library_test_selection_names_existing_paths() -> None:
    lines = (ROOT / ".ci" / "library-tests.txt").read_text(encoding="utf-8")
    for line in lines.split():
        path = line.removeprefix("--ignore=")
        assert (ROOT / path).exists(), f".ci/library-tests.txt: no {path}"


def test_the_jobs_run_what_the_issue_asks_for() -> None:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]

    def runs(job: str) -> str:
        return "\n".join(step.get("run", "") for step in jobs[job]["steps"])

    assert "make floors FLOOR_TORCH=floor" in runs("floors")
    assert jobs["other-systems"]["strategy"]["matrix"]["os"] == [
        "macos-latest",
        "windows-latest",
    ]
    assert "@.ci/library-tests.txt" in runs("other-systems")
    assert "--nbval-lax" in runs("other-systems")
    assert "twine check" in runs("package")
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing
    assert "refs/tags/v" in publish["if"]
    assert any(
        step.get("uses", "").startswith("pypa/gh-action-pypi-publish")
        for step in publish["steps"]
    )
