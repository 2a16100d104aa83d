"""The repository URL has one home, and the Colab install cell works.

``_config.yml`` holds the URL; ``tools/repository.py`` writes its copies (the
install cell of every notebook, the cell shown on the how-to-run page). The
install cell is run here as Colab runs it, in a Python where ``selfattn`` is
missing, with ``$SELFATTN_SOURCE`` pointing at a local copy of this
repository instead of GitHub.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "repository", ROOT / "tools" / "repository.py"
)
repository = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repository)


def test_every_copy_of_the_url_is_made_from_the_config() -> None:
    assert repository.stale() == []


def test_a_changed_url_makes_every_copy_stale() -> None:
    other = "https://github.com/someone/elsewhere"
    assert len(repository.stale(other)) == len(repository.notebooks()) + 1


def test_publishing_is_refused_while_the_url_is_the_placeholder() -> None:
    placeholder = repository.PLACEHOLDER in repository.url()
    assert repository.main(["published"]) == (1 if placeholder else 0)


def test_set_url_rejects_what_is_not_a_github_repository() -> None:
    with pytest.raises(SystemExit, match="expected https://github.com/OWNER/REPO"):
        repository.set_url("git@github.com:me/repo.git")


def test_the_install_cell_installs_selfattn_where_it_is_missing(
    tmp_path: Path,
) -> None:
    # A local copy of what pip needs to build the package.
    source = tmp_path / "repo"
    shutil.copytree(ROOT / "selfattn", source / "selfattn")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    # A fresh environment without selfattn that sees this one's packages
    # (torch, numpy, ...), as Colab has its own.
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "course-packages.pth").write_text(sysconfig.get_path("purelib") + "\n")
    cell = repository.install_cell(repository.url())
    env = {**os.environ, "SELFATTN_SOURCE": str(source)}
    probe = "import selfattn, sys; print(selfattn.__file__)"
    before = subprocess.run([python, "-c", probe], cwd=tmp_path, capture_output=True)
    assert before.returncode != 0, "selfattn must be missing before the cell runs"
    subprocess.run([python, "-c", cell], cwd=tmp_path, env=env, check=True, timeout=600)
    after = subprocess.run(
        [python, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert Path(after.stdout.strip()).is_relative_to(env_dir)
    again = subprocess.run(  # a second run is a no-op
        [python, "-c", cell + "\nprint('done')"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout.strip() == "done"
