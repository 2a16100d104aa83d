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
import tomllib
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


def _jobs() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _needs(jobs: dict, name: str) -> set[str]:
    """Every job that ``name`` waits for, directly or not."""
    direct = jobs[name].get("needs", [])
    direct = [direct] if isinstance(direct, str) else direct
    return set(direct).union(*(_needs(jobs, n) for n in direct))


TAG_ONLY = "startsWith(github.ref, 'refs/tags/v')"


def test_nothing_tells_a_learner_to_install_before_pypi_serves_the_release() -> None:
    # issue 31, F1: the site, the launch buttons' branches and the release
    # wait for the PyPI upload and for PyPI to serve exactly our wheel
    jobs = _jobs()
    for name in ("deploy", "notebooks-branches", "release"):
        assert TAG_ONLY in jobs[name]["if"], name
        assert {"publish", "on-pypi"} <= _needs(jobs, name), name
    assert TAG_ONLY in jobs["on-pypi"]["if"]
    check = _runs(jobs["on-pypi"])
    assert "pip download" in check and "--no-deps" in check
    assert (
        '"selfattn==$version"' in check
        and "--index-url https://pypi.org/simple" in check
    )
    assert "for attempt in" in check and "sleep" in check  # PyPI may lag
    assert "sha256sum dist/" in check and "sha256sum pypi/" in check
    # the pages and the branches are only made on a tag
    steps = {s.get("name"): s for s in jobs["test"]["steps"]}
    for step in ("Upload the built book", "The branches the launch buttons open"):
        assert TAG_ONLY in steps[step]["if"], step
    # everything checked before the upload
    assert {"test", "floors", "other-systems", "python-range", "offline"} <= _needs(
        jobs, "publish"
    )


def test_the_student_edition_goes_into_the_site_before_its_upload() -> None:
    """With the repository variable STUDENT_EDITION set to publish, a tag puts
    the student edition (built by make editions' student-check) under
    student/ of the site, before the built book is uploaded to Pages."""
    steps = _jobs()["test"]["steps"]
    names = [s.get("name") for s in steps]
    student = names.index("The student edition beside the book")
    upload = names.index("Upload the built book")
    editions = next(
        i for i, s in enumerate(steps) if "make editions" in s.get("run", "")
    )
    assert editions < student < upload
    condition = steps[student]["if"]
    assert "vars.STUDENT_EDITION == 'publish'" in condition and TAG_ONLY in condition
    assert steps[student]["run"].split() == [
        "cp",
        "-r",
        "_build/student/_build/html",  # make student's output (mk/editions.mk)
        "_build/html/student",
    ]
    assert steps[upload]["with"]["path"] == "_build/html"
    makefile = (ROOT / "mk" / "editions.mk").read_text(encoding="utf-8")
    assert re.search(r"(?m)^editions:.*\n(?:\t.*\n)*\t.*\bstudent-check\b", makefile)
    assert re.search(r"(?m)^student-check: student\b", makefile)
    assert "--path-output _build/student " in makefile


def test_a_tag_makes_a_release_with_every_edition() -> None:
    jobs = _jobs()
    release = jobs["release"]
    assert release["permissions"] == {"contents": "write"}
    editions = next(
        s
        for s in jobs["test"]["steps"]
        if s.get("name") == "Keep the PDFs and the bundles"
    )
    kept = editions["with"]["path"].split()
    for name in ("", "-student"):
        assert f"_build/self-attention-executable{name}.pdf" in kept
        assert f"_build/self-attention-executable{name}.zip" in kept
    downloads = [
        s["with"] for s in release["steps"] if "download-artifact" in s.get("uses", "")
    ]
    assert {d.get("name") or d.get("pattern") for d in downloads} == {
        "dist",  # the wheel and the sdist
        "editions",
        "wheels-*",
    }
    run = _runs(release)
    assert "sha256sum" in run and "SHA256SUMS" in run
    assert 'gh release create "$TAG"' in run and "--verify-tag" in run
    assert "files/*" in run


def test_wheelhouses_are_built_per_system_and_installed_offline_there() -> None:
    jobs = _jobs()
    systems = jobs["wheelhouse"]["strategy"]["matrix"]["system"]
    assert systems == ["linux", "macos", "windows"]
    assert "tools/wheelhouse.py" in _runs(jobs["wheelhouse"])
    offline = jobs["offline"]
    legs = offline["strategy"]["matrix"]["include"]
    assert {leg["system"] for leg in legs} == set(systems)
    assert {leg["os"] for leg in legs} == {
        "ubuntu-latest",
        "macos-latest",
        "windows-latest",
    }
    assert offline["env"]["PIP_NO_INDEX"] == "1"
    run = _runs(offline)
    assert '--no-index --find-links wheels "selfattn[lab]" jupyterlab' in run
    assert (
        "self-attention-executable.zip" in run
        and "nbconvert --to notebook --execute" in run
    )


def test_the_oldest_and_the_newest_python_are_run() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    floor = project["project"]["requires-python"].removeprefix(">=")
    jobs = _jobs()
    legs = jobs["python-range"]["strategy"]["matrix"]["include"]
    assert {leg["leg"]: leg["python"] for leg in legs}["floor"] == floor
    run = _runs(jobs["python-range"])
    assert "-c requirements.lock" not in run  # the newest releases, as a learner gets
    assert "@.ci/library-tests.txt" in run
    assert "notebooks/transformer-end-to-end.ipynb" in run and "--nbval-lax" in run
