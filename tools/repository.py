"""The course's repository URL: one place (``_config.yml``), every copy made from it.

Usage::

    python tools/repository.py set https://github.com/you/self-attention-executable
    python tools/repository.py set URL --install repository   # a fork's own library
    python tools/repository.py sync        # rewrite every copy from _config.yml
    python tools/repository.py check       # exit 1 if a copy is stale
    python tools/repository.py published   # exit 1 while the URL is the placeholder

The URL lives in ``_config.yml`` (``repository.url``: the book's repository,
launch and issue buttons). A notebook opened in Colab cannot read that file,
so the first cell of every notebook (the install cell, tagged ``remove-cell``)
carries the URL, ``book/how-to-run.md`` shows that cell, and the wheel's
``[project.urls]`` in ``pyproject.toml`` (PyPI's links) are made from it,
and so are the links of ``README.md``, which PyPI shows as the package's page
(``readme`` in pyproject.toml), where a relative link leads nowhere: a page of
the book links to the published book (``site``), a file or folder of the
repository to this release's tag (``{url}/blob/v<version>/...``,
``{url}/tree/v<version>/...``), and the reader notebooks to the branch the
launch buttons open (``notebooks_branch``). Those copies are written by this
tool and checked by ``tests/course/test_repository.py``; nobody edits them by
hand.

The install cell (at most 15 lines of code: a learner reads it first) installs
the first of its ``sources`` that pip can install: the released package
``selfattn[lab]`` (from PyPI or a mirror of it), else the repository at this
release's tag (``@v2.0.0``: never the moving default branch); where every
source fails, its error shows what pip said at each try (on a mirror that
lacks the release, and with GitHub out of reach, both causes). It never
upgrades torch or numpy: it asks pip for the installed ones (``torch==...``,
``numpy==...``), so where one is older than selfattn's floor in pyproject.toml
pip installs nothing and names the conflict. ``from_wheel`` gives the cell
that installs one wheel alone: the offline bundle's (the wheel beside its
notebooks) and the tests' (a wheel of this checkout, no index).

What a fork installs: ``repository.install`` in ``_config.yml``, set with
``set URL --install pypi|repository`` (``make repository URL=...
INSTALL=repository``). ``pypi`` (the default) tries PyPI's ``selfattn`` first;
``repository`` leaves PyPI out, so a fork that changes the library gets its
own code in Colab, from its tag ``v<version>``, and never upstream's release.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"
HOW_TO_RUN = ROOT / "book" / "how-to-run.md"
PYPROJECT = ROOT / "pyproject.toml"
PLACEHOLDER = "OWNER"
# where the install cell takes selfattn from (repository.install in _config.yml)
INSTALL_FROM = ("pypi", "repository")
# The packages whose installed release the cell keeps (pinned, never upgraded).
KEPT = ("torch", "numpy")
IMPORT_NAMES = {"scikit-learn": "sklearn"}  # distribution -> module, where they differ

# __URL__, __TAG__, __SOURCES__, __KEPT__ and __MODULES__ are filled in from
# _config.yml and pyproject.toml (install_cell). At most 15 lines of code: a
# learner reads this cell first (issue 31).
INSTALL_CELL = """\
# Install the course library, selfattn with its extra lab, where it is missing (as on
# Colab); elsewhere this cell does nothing. pip must keep this Python's torch and
# numpy, since upgrading a package the kernel has imported breaks the kernel; where
# one is too old for selfattn, pip says so: upgrade it, restart the kernel, rerun.
import subprocess
import sys
from importlib import invalidate_caches, metadata, util

url = "git+__URL__@__TAG__"
__SOURCES__
keep = [f"{n}=={metadata.version(n)}" for n in __KEPT__ if util.find_spec(n)]

if None in map(util.find_spec, "__MODULES__".split()):
    pip = [sys.executable, "-m", "pip", "install", *keep]
    runs = []  # pip's tries, in order, until one installs selfattn
    for spec in sources:  # the first that pip can install
        if not runs or runs[-1].returncode:
            runs.append(subprocess.run([*pip, spec], capture_output=True, text=True))
    if runs[-1].returncode:  # every try failed: what pip said at each
        raise RuntimeError("pip failed:\\n" + "".join(r.stdout + r.stderr for r in runs))
    invalidate_caches()"""  # noqa: E501 (the cell itself is 88 wide at most)
SOURCES = {  # repository.install: where selfattn comes from, in this order
    "pypi": 'sources = ["__RELEASE__", f"selfattn[lab] @ {url}"]'
    "  # PyPI or a mirror, then url",
    "repository": 'sources = [f"selfattn[lab] @ {url}"]  # this repository, never PyPI',
}
# The lines of the cell that say where selfattn comes from (from_wheel)
URL_LINE = re.compile(r'^url = "[^"\n]*"\n', re.M)
SOURCES_LINE = re.compile(r"^sources = .*$", re.M)
# The end of the cell's pip command, after which from_wheel turns the index off
PIP_INSTALL = re.compile(r'"install", \*keep\]')
# The install cell, in this and in earlier versions, starts with these words.
OPENING = "# Install the course library"
BLOCK = re.compile(r"```python\n" + re.escape(OPENING) + r".*?\n```", re.S)
TEMPLATE = ROOT / "templates" / "chapter.ipynb"


def _repository() -> dict:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["repository"]


def url() -> str:
    return _repository()["url"]


def install_from() -> str:
    """``pypi`` (PyPI's release first, then the tag) or ``repository`` (the tag)."""
    where = _repository().get("install", "pypi")
    if where not in INSTALL_FROM:
        raise SystemExit(
            f"repository.install in _config.yml: {where!r}, not pypi/repository"
        )
    return where


def _project() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def _name_and_floor(requirement: str) -> tuple[str, str | None]:
    name, spec = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", requirement).groups()
    low = re.search(r">=\s*([0-9][0-9.]*)", spec)
    return name.lower(), low.group(1) if low else None


def floors() -> dict[str, str]:
    """pyproject.toml's lower bounds of the packages the cell keeps."""
    found = dict(_name_and_floor(r) for r in _project()["dependencies"])
    return {name: found[name] for name in KEPT}


def release() -> str:
    """The released package the cell asks for: this major version, the extra lab."""
    major, minor = _project()["version"].split(".")[:2]
    return f"selfattn[lab]~={major}.{minor}"


def version() -> str:
    """This release's version, pyproject.toml's (the PDF's title page shows it)."""
    return _project()["version"]


def tag() -> str:
    """The git tag of this release, ``v<version>``: what the workflow publishes."""
    return f"v{version()}"


def modules() -> tuple[str, ...]:
    """The modules of the extra lab's packages (the chapters import them)."""
    lab = [_name_and_floor(r)[0] for r in _project()["optional-dependencies"]["lab"]]
    return tuple(IMPORT_NAMES.get(name, name) for name in lab)


def install_cell(
    repo_url: str,
    modules_: tuple[str, ...] | None = None,
    install: str | None = None,
) -> str:
    """The install cell for ``repo_url`` (the tests may change the modules it
    checks and where it installs from; default: ``repository.install``)."""
    names = ("selfattn", *(modules() if modules_ is None else modules_))
    fills = {
        "__SOURCES__": SOURCES[install or install_from()],
        "__RELEASE__": release(),
        "__URL__": repo_url,
        "__TAG__": tag(),
        "__KEPT__": "(" + ", ".join(json.dumps(name) for name in KEPT) + ")",
        "__MODULES__": " ".join(names),
    }
    cell = INSTALL_CELL
    for key, value in fills.items():
        cell = cell.replace(key, value)
    return cell


def from_wheel(cell: str, wheel: str) -> str:
    """The install cell ``cell``, installing ``wheel`` (a path: absolute, or
    relative to the notebook) and nothing else: the offline bundle's cell
    (``../wheels/...``), and the tests'. pip gets ``--no-index`` and the
    wheel's folder as ``--find-links``: it never opens the network (not even
    for its own version check), and what selfattn needs beyond the installed
    packages comes from that folder (the bundle's wheels/, where a learner
    unzips the wheelhouse of their system)."""
    line = f"sources = [{json.dumps(wheel + '[lab]')}]  # the wheel, alone"
    cell, found = SOURCES_LINE.subn(lambda _: line, cell, count=1)
    offline = json.dumps(["--no-index", "--find-links", os.path.dirname(wheel) or "."])
    pip_line = f'"install", *keep]\n    pip += {offline}  # no network'
    cell, pips = PIP_INSTALL.subn(lambda _: pip_line, cell, count=1)
    if not (found and pips):
        raise ValueError("an old install cell: run python tools/repository.py sync")
    return URL_LINE.sub("", cell, count=1)


def notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def copies() -> list[Path]:
    """Every notebook that carries the install cell: the chapters, the template."""
    return [*notebooks(), TEMPLATE]


def _install_cell_index(cells: list[dict], path: Path) -> int:
    """The first code cell: the install cell (in the template, its empty slot)."""
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            if source.startswith(OPENING) or (path == TEMPLATE and not source.strip()):
                return i
            break
    raise ValueError("the first code cell is not the install cell")


# Pages that link to the latest GitHub Release (its PDFs, bundles, wheelhouses)
RELEASE_PAGES = [
    ROOT / "book" / "intro.md",
    HOW_TO_RUN,
    ROOT / "book" / "how-to-run-zh.md",
    ROOT / "README.md",
]
RELEASES = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/releases/latest")
README = ROOT / "README.md"
# A Markdown link's target; a GitHub link to a ref of a repository; a page of
# the published book (the book's pages are book/<name>.md)
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
GITHUB_REF = re.compile(
    r"https://github\.com/[\w.-]+/[\w.-]+/(?:blob|tree)/(?P<ref>[^/)\s]+)/(?P<path>\S*)"
)
BOOK_PAGE = re.compile(r"https://\S+?/(?P<page>book/[\w/-]+)\.html")
URLS = re.compile(r"(?m)^\[project\.urls\]\n(?:[A-Za-z].*\n)*")


def _tool(name: str) -> ModuleType:
    """``tools/<name>.py``, imported late (notebook_licence imports this module)."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    return importlib.import_module(name)


def site(repo_url: str) -> str:
    """The published book: ``html.baseurl``, else the GitHub Pages site of
    ``repo_url`` (as tools/reader_notebooks.py's ``published_url``)."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    base = (config.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/") + "/"
    owner, name = repo_url.rstrip("/").split("/")[-2:]
    return f"https://{owner.lower()}.github.io/{name}/"


def notebooks_branch() -> str:
    """The branch the launch buttons open: the reader notebooks (_config.yml)."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    return config["sphinx"]["config"]["notebooks_branch"]


def reader_notebooks(repo_url: str) -> str:
    """The reader notebooks on GitHub: ``notebooks/`` of the notebooks branch."""
    return f"{repo_url}/tree/{notebooks_branch()}/notebooks"


def _readme_link(target: str, repo_url: str) -> str:
    """The absolute URL that ``target``, a link of README.md, is written as:
    itself where it is neither the repository's file nor the book's page."""
    if target.startswith("#"):
        return target
    path = target
    if github := GITHUB_REF.fullmatch(target):
        if github["ref"] == notebooks_branch():
            return f"{repo_url}/tree/{github['ref']}/{github['path']}"
        path = github["path"]
    elif book := BOOK_PAGE.fullmatch(target):
        path = book["page"] + ".md"
    elif re.match(r"[a-z][a-z0-9+.-]*:", target):
        return target  # another site
    if not (ROOT / path).exists():
        return target  # not ours: a relative one fails the tests
    if path.startswith("book/") and path.endswith(".md"):
        return site(repo_url) + path.removesuffix(".md") + ".html"
    kind = "tree" if (ROOT / path).is_dir() else "blob"
    return f"{repo_url}/{kind}/{tag()}/{path.rstrip('/')}"


def readme(repo_url: str, text: str | None = None) -> str:
    """README.md (or ``text``) with its links made absolute for ``repo_url``."""
    text = README.read_text(encoding="utf-8") if text is None else text
    return LINK.sub(lambda m: f"]({_readme_link(m['target'], repo_url)})", text)


def project_urls(repo_url: str) -> str:
    """``[project.urls]`` of pyproject.toml for ``repo_url``: PyPI's links."""
    links = {
        "Homepage": site(repo_url),
        "Source": repo_url,
        "Issues": f"{repo_url}/issues",
        "Releases": f"{repo_url}/releases",
    }
    return "[project.urls]\n" + "".join(f'{k} = "{v}"\n' for k, v in links.items())


def stale(repo_url: str | None = None) -> list[str]:
    """The copies that differ from what ``repo_url`` (default: the config's) gives."""
    want = install_cell(repo_url or url())
    out = []
    for path in copies():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        try:
            text = path.read_text(encoding="utf-8")
            if "".join(
                cells[_install_cell_index(cells, path)]["source"]
            ) != want or not _tool("notebook_licence").has_licence(text, repo_url):
                out.append(path.relative_to(ROOT).as_posix())
        except ValueError:
            out.append(path.relative_to(ROOT).as_posix() + " (no install cell)")
    blocks = BLOCK.findall(HOW_TO_RUN.read_text(encoding="utf-8"))
    if blocks != [f"```python\n{want}\n```"]:
        out.append(HOW_TO_RUN.relative_to(ROOT).as_posix())
    for page in RELEASE_PAGES:
        links = RELEASES.findall(page.read_text(encoding="utf-8"))
        if not links or set(links) != {f"{repo_url or url()}/releases/latest"}:
            out.append(page.relative_to(ROOT).as_posix() + " (Releases link)")
    urls = URLS.findall(PYPROJECT.read_text(encoding="utf-8"))
    if urls != [project_urls(repo_url or url())]:
        out.append(PYPROJECT.relative_to(ROOT).as_posix())
    text = README.read_text(encoding="utf-8")
    notebooks_link = f"]({reader_notebooks(repo_url or url())})"
    if readme(repo_url or url(), text) != text or notebooks_link not in text:
        out.append(README.relative_to(ROOT).as_posix() + " (links)")
    return out


def sync_notebook(path: Path, want: str) -> None:
    """Write the install cell ``want`` into one notebook (tagged remove-cell)."""
    nb = nbformat.read(path, as_version=4)
    cell = nb.cells[_install_cell_index(nb.cells, path)]
    tags = cell.metadata.setdefault("tags", [])
    if cell.source != want or "remove-cell" not in tags:
        cell.source = want
        tags[:] = sorted({*tags, "remove-cell"})
        nbformat.write(nb, path)


def sync() -> None:
    """Rewrite every copy from the URL in ``_config.yml``."""
    want = install_cell(url())
    for path in copies():
        sync_notebook(path, want)
    _tool("notebook_licence").write(copies())  # its notice names the repository
    page = HOW_TO_RUN.read_text(encoding="utf-8")
    page = BLOCK.sub(lambda _: f"```python\n{want}\n```", page)
    HOW_TO_RUN.write_text(page, encoding="utf-8")
    for page in RELEASE_PAGES:
        text = page.read_text(encoding="utf-8")
        page.write_text(
            RELEASES.sub(f"{url()}/releases/latest", text), encoding="utf-8"
        )
    toml = PYPROJECT.read_text(encoding="utf-8")
    PYPROJECT.write_text(URLS.sub(project_urls(url()), toml, count=1), encoding="utf-8")
    translations = _tool("translations")
    for page in {HOW_TO_RUN, *RELEASE_PAGES}:  # their Chinese follow the address
        if translations.catalogue_path(page).exists():
            translations.follow_addresses(page)
    README.write_text(readme(url()), encoding="utf-8")


def set_url(repo_url: str, install: str | None = None) -> None:
    """Set repository.url (and repository.install, when given), then sync."""
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repo_url):
        raise SystemExit(f"expected https://github.com/OWNER/REPO, got {repo_url!r}")
    if install is not None and install not in INSTALL_FROM:
        raise SystemExit(f"--install takes pypi or repository, not {install!r}")
    text = CONFIG.read_text(encoding="utf-8")
    new, n = re.subn(
        r"(?m)^(repository:\n(?:  #.*\n)*  url: ).*$",
        lambda m: m.group(1) + repo_url,
        text,
    )
    if n != 1:
        raise SystemExit("could not find repository.url in _config.yml")
    if install is not None:
        new, n = re.subn(r"(?m)^(  install: ).*$", lambda m: m.group(1) + install, new)
        if n != 1:
            raise SystemExit("could not find repository.install in _config.yml")
    CONFIG.write_text(new, encoding="utf-8")
    sync()


def main(argv: list[str]) -> int:
    match argv:
        case ["set", repo_url]:
            set_url(repo_url)
        case ["set", repo_url, "--install", install]:
            set_url(repo_url, install)
        case ["sync"]:
            sync()
        case ["check"]:
            if bad := stale():
                print(
                    "stale copies of the repository URL (run tools/repository.py sync):"
                )
                print("\n".join(f"  {b}" for b in bad))
                return 1
        case ["published"]:
            if PLACEHOLDER in url():
                print(
                    f"repository.url in _config.yml is the placeholder {url()}: set it"
                )
                print("with `make repository URL=https://github.com/you/repo` first.")
                return 1
        case _:
            print(__doc__)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
