"""The repository URL has one home, and the Colab install cell works.

``_config.yml`` holds the URL; ``tools/repository.py`` writes its copies (the
install cell of every notebook and of the chapter template, the cell shown on
the how-to-run page). The install cell is run here as Colab runs it, in a
Python that has torch, numpy and the rest but not ``selfattn``
(tests/install_cell_env.py), installing a wheel of this repository instead of
PyPI or GitHub, as the offline bundle's cell does (``from_wheel``), and no
index (no network). The same with an older numpy, the floor's:
tests/editions/test_install_cell.py, run by ``make floors``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from install_cell_env import (
    IMPORTS,
    build_wheel,
    colab_like,
    own_packages,
    run_cell,
    where_and_version,
)

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "repository", ROOT / "tools" / "repository.py"
)
repository = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repository)


def test_every_copy_of_the_url_is_made_from_the_config() -> None:
    assert repository.stale() == []


def test_a_changed_url_makes_every_copy_stale() -> None:
    other = "https://github.com/someone/elsewhere"
    # the copies, the how-to-run page's cell, pyproject.toml's [project.urls],
    # README.md's links and the pages' links to the latest release
    assert len(repository.stale(other)) == (
        len(repository.copies()) + 3 + len(repository.RELEASE_PAGES)
    )


def test_the_readme_has_no_relative_link() -> None:
    """PyPI shows README.md as the package's page, where a relative link leads
    nowhere (and GitHub shows a book page as raw MyST): sync writes them all
    absolute, to the book, the release's tag or the notebooks branch."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    relative = re.findall(r"\]\((?!https://|#)[^)]*\)", readme)
    assert relative == [], "run python tools/repository.py sync"
    assert "](" in readme and "README.md (links)" not in repository.stale()


def test_sync_makes_the_readme_s_links_absolute() -> None:
    me, tag = "https://github.com/Me/book", repository.tag()
    text = (
        "[a](book/how-to-run.md) [b](selfattn/) [c](LICENSE) [d](#sources)"
        " [e](https://example.org/x) [f](https://github.com/x/y/blob/v0.1/LICENSE)"
        " [g](https://github.com/x/y/tree/notebooks/notebooks)"
        " [h](https://x.github.io/y/book/how-to-run-zh.html)"
    )
    assert repository.readme(me, text) == (
        "[a](https://me.github.io/book/book/how-to-run.html)"
        f" [b]({me}/tree/{tag}/selfattn) [c]({me}/blob/{tag}/LICENSE) [d](#sources)"
        f" [e](https://example.org/x) [f]({me}/blob/{tag}/LICENSE)"
        f" [g]({me}/tree/notebooks/notebooks)"
        " [h](https://me.github.io/book/book/how-to-run-zh.html)"
    )


def test_the_learners_block_opens_the_readme() -> None:
    """Under the title: both how-to-run pages, the reader notebooks (the branch
    the launch buttons open) and the Releases page; the authors' part after."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    title, block = readme.split("\n\n", 2)[:2]
    assert title == "# Self-attention, executable"
    assert block.startswith("**Learners: start here.**")
    site, url = repository.site(repository.url()), repository.url()
    for link in (
        f"{site}book/how-to-run.html",
        f"{site}book/how-to-run-zh.html",
        repository.reader_notebooks(url),
        f"{url}/releases/latest",
    ):
        assert f"]({link})" in block, link
    assert repository.reader_notebooks(url) == f"{url}/tree/notebooks/notebooks"
    assert readme.index("## Set-up") > readme.index("## Chapters") > len(block)


def test_the_wheel_links_to_the_book_the_repository_and_its_releases() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    urls = project["project"]["urls"]
    assert urls["Source"] == repository.url()
    assert urls["Releases"] == repository.url() + "/releases"
    assert urls["Homepage"].startswith("https://") and urls["Homepage"].endswith("/")
    assert repository.project_urls("https://github.com/Me/book").startswith(
        '[project.urls]\nHomepage = "https://me.github.io/book/"\n'
    )


def test_publishing_is_refused_while_the_url_is_the_placeholder() -> None:
    placeholder = repository.PLACEHOLDER in repository.url()
    assert repository.main(["published"]) == (1 if placeholder else 0)


def test_set_url_rejects_what_is_not_a_github_repository() -> None:
    with pytest.raises(SystemExit, match="expected https://github.com/OWNER/REPO"):
        repository.set_url("git@github.com:me/repo.git")


def test_the_cell_is_at_most_15_lines_of_code() -> None:
    """A learner reads it first (issue 31): comments and blank lines aside."""
    for install in repository.INSTALL_FROM:
        cell = repository.install_cell(repository.url(), install=install)
        code = [ln for ln in cell.splitlines() if ln.strip() and ln[0] != "#"]
        assert len(code) <= 15, "\n".join(code)
        assert max(len(ln) for ln in cell.splitlines() if "://" not in ln) <= 88


def test_the_cell_carries_the_release_the_tag_and_what_it_keeps() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    deps = dict(
        re.fullmatch(r"([a-z]+)>=([0-9.]+),.*", d).groups()
        for d in project["project"]["dependencies"]
    )
    # the floors that make floors installs; the wheel carries them to pip
    assert repository.floors() == {"torch": deps["torch"], "numpy": deps["numpy"]}
    cell = repository.install_cell(repository.url())
    major = project["project"]["version"].split(".")[0]
    assert f'sources = ["selfattn[lab]~={major}.' in cell
    assert re.search(r'^url = "git\+https://[^"]*@v[0-9.]+"$', cell, re.M)
    # pip is asked for the installed torch and numpy: never an upgrade
    kept = ", ".join(json.dumps(name) for name in repository.KEPT)
    assert f"for n in ({kept}) if util.find_spec(n)]" in cell
    # it installs where selfattn or a module of its extra lab is missing
    modules = " ".join(("selfattn", *repository.modules()))
    assert f'map(util.find_spec, "{modules}".split())' in cell


def test_the_bundle_s_cell_installs_its_wheel_alone() -> None:
    cell = repository.install_cell(repository.url())
    wheel = "../wheels/selfattn-2.0.0-py3-none-any.whl"
    local = repository.from_wheel(cell, wheel)
    assert f'sources = ["{wheel}[lab]"]' in local
    # pip never opens the network; what else it needs, it finds beside the wheel
    assert 'pip += ["--no-index", "--find-links", "../wheels"]  # no network' in local
    assert len([ln for ln in local.splitlines() if ln and ln[0] != "#"]) <= 15
    assert "github" not in local and not re.search(r"^url = ", local, re.M)
    with pytest.raises(ValueError, match="sync"):
        repository.from_wheel("# Install the course library\nurl = 'x'\n", wheel)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_install_cell_installs_selfattn_and_upgrades_nothing(
    tmp_path: Path, wheel: Path
) -> None:
    python = colab_like(tmp_path)
    kept = where_and_version(python, "torch", "numpy")
    assert own_packages(python) == set()
    probe = [python, "-c", "import selfattn"]
    assert subprocess.run(probe, cwd=tmp_path, capture_output=True).returncode != 0
    cell = repository.install_cell(repository.url())
    done = run_cell(python, cell, wheel, tmp_path)
    assert done.returncode == 0, done.stderr
    # selfattn alone was installed; torch and numpy are the same files
    assert own_packages(python) == {"selfattn"}
    assert where_and_version(python, "torch", "numpy") == kept
    (home,) = where_and_version(python, "selfattn").values()
    assert Path(home[0]).is_relative_to(tmp_path / "venv")
    subprocess.run([python, "-c", IMPORTS], cwd=tmp_path, check=True)
    again = run_cell(python, cell, wheel, tmp_path)  # a second run is a no-op
    assert (again.returncode, again.stdout) == (0, "cell done\n"), again.stderr


def test_the_install_cell_stops_where_numpy_is_below_its_floor(
    tmp_path: Path,
) -> None:
    """selfattn needs a newer numpy than this Python's: pip, asked to keep it,
    installs nothing and says which package and which floor."""
    wheel = build_wheel(tmp_path / "newer", {"numpy": "99"})
    python = colab_like(tmp_path)
    (numpy,) = where_and_version(python, "numpy").values()
    done = run_cell(python, repository.install_cell(repository.url()), wheel, tmp_path)
    assert done.returncode != 0
    message = done.stderr.replace(" and >=", ",>=")
    assert "pip failed:" in message
    assert f"numpy=={numpy[1]}" in message and "numpy<3,>=99" in message, message
    assert own_packages(python) == set()  # nothing installed
    assert where_and_version(python, "numpy") == {"numpy": numpy}


def _pip_calls(
    monkeypatch: pytest.MonkeyPatch, cell: str, fails: int = 0, said: list | None = None
) -> list[str]:
    """What the cell asks pip for where selfattn is missing: the spec of each
    try, in order (pip is not run; the first ``fails`` tries fail, and pip
    "says" which). The error where every try fails goes into ``said``."""
    import importlib.util as util

    real = util.find_spec
    calls: list[str] = []

    def find_spec(name: str, *args: object) -> object:
        return None if name == "selfattn" else real(name, *args)

    def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        calls.append(cmd[-1])
        out = f"out {cmd[-1]}\n"
        return subprocess.CompletedProcess(cmd, int(len(calls) <= fails), out, "err\n")

    monkeypatch.setattr(util, "find_spec", find_spec)
    monkeypatch.setattr(subprocess, "run", run)
    try:
        exec(compile(cell, "install-cell", "exec"), {})
    except RuntimeError as error:
        assert str(error).startswith("pip failed:\n")
        (said if said is not None else []).append(str(error))
    return calls


def test_where_every_source_fails_the_error_shows_what_pip_said_at_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mirror without the release and GitHub out of reach: both causes shown."""
    cell = repository.install_cell(repository.url(), install="pypi")
    said: list[str] = []
    calls = _pip_calls(monkeypatch, cell, fails=2, said=said)
    assert said == ["pip failed:\n" + "".join(f"out {c}\nerr\n" for c in calls)]
    assert len(calls) == 2
    said.clear()
    _pip_calls(monkeypatch, cell, fails=1, said=said)  # the second try installs
    assert said == []


def test_the_git_fallback_is_the_release_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    version = repository._project()["version"]
    cell = repository.install_cell(repository.url(), install="pypi")
    assert f'url = "git+{repository.url()}@v{version}"\n' in cell
    git = f"selfattn[lab] @ git+{repository.url()}@v{version}"
    assert _pip_calls(monkeypatch, cell) == [repository.release()]
    assert _pip_calls(monkeypatch, cell, fails=1) == [repository.release(), git]
    assert _pip_calls(monkeypatch, cell, fails=2) == [repository.release(), git]


def test_a_fork_that_installs_from_its_repository_never_asks_pypi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fork = "https://github.com/someone/fork"
    cell = repository.install_cell(fork, install="repository")
    assert repository.release() not in cell
    version = repository._project()["version"]
    assert _pip_calls(monkeypatch, cell) == [f"selfattn[lab] @ git+{fork}@v{version}"]


def test_set_url_also_sets_where_the_cell_installs_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "_config.yml"
    config.write_text(repository.CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(repository, "CONFIG", config)
    monkeypatch.setattr(repository, "sync", lambda: None)
    assert repository.install_from() == "pypi"
    repository.main(
        ["set", "https://github.com/someone/fork", "--install", "repository"]
    )
    assert repository.url() == "https://github.com/someone/fork"
    assert repository.install_from() == "repository"
    repository.set_url("https://github.com/someone/fork")  # keeps the choice
    assert repository.install_from() == "repository"
    with pytest.raises(SystemExit, match="pypi or repository"):
        repository.set_url("https://github.com/someone/fork", "conda")
