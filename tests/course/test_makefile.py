"""Less tooling to learn: `make help` by group, and every manifest's reason.

`make help` lists every documented target (a `## [group] ` comment) under one
of four groups: author, test, editions, maintenance. Every dependency manifest
is pyproject.toml, or follows it and says so at its top (or, where the file
cannot hold a comment, in a README beside it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ["author", "test", "editions", "maintenance"]
MAKEFILES = [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]
TARGET = re.compile(r"^([a-zA-Z0-9%_-]+):[^#\n]*## (.*)$", re.M)


def _documented() -> dict[str, str]:
    """Every documented target and its `## ` text."""
    return {
        m.group(1): m.group(2)
        for f in MAKEFILES
        for m in TARGET.finditer(f.read_text())
    }


def test_every_documented_target_names_one_of_the_four_groups():
    for target, text in _documented().items():
        group = re.match(r"\[([a-z]+)\] ", text)
        assert group and group.group(1) in GROUPS, (
            f"make {target}: its comment starts '## [group] ', group one of {GROUPS}"
        )


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_help_lists_every_target_once_under_its_group():
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    headers = re.findall(r"^(\S[^:]*):$", out, re.M)
    assert headers == GROUPS
    listed: dict[str, str] = {}
    group = None
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            group = line[:-1]
        elif line.startswith("  make "):
            target = line.split()[1]
            assert target not in listed, f"make {target} listed twice"
            listed[target] = group
    documented = _documented()
    assert set(listed) == set(documented)
    for target, text in documented.items():
        assert f"[{listed[target]}]" in text


def test_ci_calls_a_few_top_level_targets():
    run = (ROOT / ".ci" / "run").read_text()
    assert re.findall(r"^time make (\S+)", run, re.M) == [
        "test",
        "editions",
        "dist",
        "floors",
    ]


# Every file that declares packages, and where its reason is written.
MANIFESTS = {
    "pyproject.toml": "pyproject.toml",  # the one source
    "requirements.lock": "requirements.lock",
    "environment.yml": "environment.yml",
    "binder/requirements.txt": "binder/requirements.txt",
    "binder/runtime.txt": "binder/README.md",  # repo2docker reads line 1 only
    ".ci/apt-packages.txt": ".ci/apt-packages.txt",
    "uv.lock": "pyproject.toml",  # written by uv; its reason beside [tool.uv]
}
MANIFEST_NAMES = re.compile(
    r"(^|/)(requirements[^/]*\.(txt|lock|in)|environment[^/]*\.ya?ml|Pipfile(\.lock)?"
    r"|setup\.(py|cfg)|uv\.lock|poetry\.lock|conda[^/]*\.ya?ml|runtime\.txt|postBuild"
    r"|apt[^/]*\.txt|apt\.txt|constraints[^/]*\.txt|pyproject\.toml)$"
)


def test_no_dependency_manifest_beyond_the_known_ones():
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    found = {
        f for f in files if MANIFEST_NAMES.search(f) and not f.startswith("tests/")
    }
    assert found <= set(MANIFESTS), (
        f"{sorted(found - set(MANIFESTS))}: a new dependency manifest; generate it "
        "from pyproject.toml or write its reason at its top, and list it here"
    )


@pytest.mark.parametrize("manifest", sorted(MANIFESTS))
def test_every_manifest_says_why_it_exists(manifest):
    if not (ROOT / manifest).exists():
        pytest.skip(f"{manifest} is not committed")
    where = MANIFESTS[manifest]
    text = (ROOT / where).read_text()
    if where == manifest:  # a comment at its top (after a shebang)
        head = [line for line in text.splitlines()[:3] if not line.startswith("#!")]
        assert head[0].startswith("# "), f"{manifest}: a comment at its top says why"
    else:  # the file beside it that says why names it
        assert Path(manifest).name in text, f"{where} says why {manifest} exists"
