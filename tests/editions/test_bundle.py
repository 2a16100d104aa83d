"""The offline bundle (``make bundle``): complete, and readable from a file.

Run by ``make bundle-check``. The archive is unpacked into a temporary folder
and its ``html/index.html`` is opened in headless Chromium as a ``file://``
URL, with no server: every request that leaves the unpacked folder fails the
test, the mathematics must be typeset by the bundled MathJax, and every
figure must load. Its notebooks are the reader notebooks
(``_build/notebooks/reader``), outputs left out: the book's text in plain
Markdown, no MyST left, solutions folded. (The student bundle is checked by
``tests/editions/test_student.py``.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from .test_notebooks import FOLD, myst_left

ROOT = Path(__file__).resolve().parents[2]
READER = ROOT / "_build" / "notebooks" / "reader"
BUNDLE = ROOT / "_build" / "self-attention-executable.zip"
TOP = "self-attention-executable"
CHAPTERS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "tools"))
from reader_notebooks import published_url  # noqa: E402

SITE = published_url()


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert BUNDLE.is_file(), "run `make bundle` first"
    where = tmp_path_factory.mktemp("bundle")
    with zipfile.ZipFile(BUNDLE) as zf:
        assert all(n.startswith(TOP + "/") for n in zf.namelist())
        zf.extractall(where)
    return where / TOP


def test_the_bundle_holds_book_notebooks_wheel_lock_readme(unpacked: Path) -> None:
    assert (unpacked / "html" / "index.html").is_file()
    assert sorted(p.name for p in (unpacked / "notebooks").glob("*.ipynb")) == CHAPTERS
    # the Chinese edition beside it: its book in html/zh, its notebooks in zh/
    assert (unpacked / "html" / "zh" / "book" / "intro.html").is_file()
    chinese = sorted(p.name for p in (unpacked / "notebooks" / "zh").glob("*.ipynb"))
    assert chinese == CHAPTERS
    assert "../../html/zh/" in (unpacked / "notebooks" / "zh" / CHAPTERS[0]).read_text(
        encoding="utf-8"
    )
    wheels = list((unpacked / "wheels").glob("selfattn-*-py3-none-any.whl"))
    assert len(wheels) == 1
    with zipfile.ZipFile(wheels[0]) as whl:
        names = whl.namelist()
    library = sorted(
        p.relative_to(ROOT).as_posix() for p in ROOT.glob("selfattn/**/*.py")
    )
    assert sorted(n for n in names if n.endswith(".py")) == library
    lock = (unpacked / "requirements.lock").read_text(encoding="utf-8")
    assert lock == (ROOT / "requirements.lock").read_text(encoding="utf-8")
    readme = (unpacked / "README.txt").read_text(encoding="utf-8")
    assert "html/index.html" in readme and wheels[0].name in readme
    # the learner's install, with no network; never the authors' 195 pins
    offline = '-m pip install --no-index --find-links wheels "selfattn[lab]" jupyterlab'
    assert offline in readme and "-r requirements.lock" not in readme
    # on Linux the CPU build of torch comes first, or pip fetches CUDA
    cpu = readme.index("--index-url https://download.pytorch.org/whl/cpu")
    assert cpu < readme.index('install --find-links wheels "selfattn[lab]"')
    # the venv is made on every system, not in the Linux-only step (F8)
    assert readme.index("python3 -m venv .venv") < readme.index("skip it")


# Every file the build copies into _static/, and the words of LICENSE that
# name it and its licence (issue 31, F16); None: the course's own.
STATIC = {
    r"custom\.css|favicon\.svg": None,
    r"mathjax/.*": "MathJax 3.2.2",
    r"(styles|scripts)/(pydata-sphinx-theme|sphinx-book-theme|theme)\b.*|locales/.*"
    r"|images/logo_.*|(sbt-)?webpack-macros\.html": "pydata-sphinx-theme, the theme",
    r"scripts/bootstrap\.js.*": "Bootstrap",
    r"scripts/fontawesome\.js.*|vendor/fontawesome/.*": "Font Awesome Free",
    r"basic\.css|doctools\.js|searchtools\.js|language_data\.js|sphinx_highlight\.js"
    r"|documentation_options\.js|(file|minus|plus)\.png": "Sphinx's scripts",
    r"pygments\.css": "Pygments' highlighting stylesheet",
    r"clipboard\.min\.js": "clipboard.js",
    r"copybutton.*|copy-button\.svg|check-solid\.svg": "sphinx-copybutton",
    r"togglebutton\.(css|js)": "sphinx-togglebutton",
    r"sphinx-design\.min\.css|design-tabs\.js": "sphinx-design",
    r"sphinx-thebe\.(css|js)|play-solid\.svg": "sphinx-thebe",
    r"exercise\.css": "sphinx-exercise",
    r"mystnb\.[0-9a-f]+\.css": "MyST-NB's stylesheet",
}


def unlicensed(static: Path) -> list[str]:
    """The files of ``static`` (a built _static/) that LICENSE does not name."""
    licence = re.sub(r"\s+", " ", (ROOT / "LICENSE").read_text(encoding="utf-8"))
    missing = []
    for path in sorted(p for p in static.rglob("*") if p.is_file()):
        name = path.relative_to(static).as_posix()
        words = [w for rx, w in STATIC.items() if re.fullmatch(rx, name)]
        if not words or (words[0] is not None and words[0] not in licence):
            missing.append(name)
    return missing


def test_license_names_every_third_party_file_of_the_book(unpacked: Path) -> None:
    assert unlicensed(unpacked / "html" / "_static") == []


def test_the_notebooks_are_the_reader_notebooks_without_outputs(
    unpacked: Path,
) -> None:
    for name in CHAPTERS:
        ours = json.loads((unpacked / "notebooks" / name).read_text(encoding="utf-8"))
        repo = json.loads((READER / name).read_text(encoding="utf-8"))
        code = [c for c in ours["cells"] if c["cell_type"] == "code"]
        assert code and all(c["outputs"] == [] for c in code), name
        assert all(c["execution_count"] is None for c in code), name
        # the install cell installs the bundle's wheel alone; every other cell as is
        install = "".join(code[0]["source"])
        assert 'sources = ["../wheels/selfattn-' in install and "github" not in install
        assert '["--no-index", "--find-links", "../wheels"]' in install  # offline
        assert ["".join(c["source"]) for c in ours["cells"] if c is not code[0]] == [
            "".join(c["source"]).replace(f"]({SITE}", "](../html/")
            for c in repo["cells"]
            if not "".join(c["source"]).startswith("# Install the course library")
        ], name
        prose = [
            "".join(c["source"]) for c in ours["cells"] if c["cell_type"] == "markdown"
        ]
        assert not [x for text in prose for x in myst_left(text)], f"MyST in {name}"
        assert len(FOLD.findall("\n".join(prose))) >= 3, f"no folded solution: {name}"


def test_the_notebooks_link_to_the_book_beside_them(unpacked: Path) -> None:
    """Links to the book lead to ../html/ in the bundle, and each one lands on
    a page that is there (issue 31, F9: none led there, 428 to the site)."""
    beside = 0
    for name in CHAPTERS:
        nb = json.loads((unpacked / "notebooks" / name).read_text(encoding="utf-8"))
        prose = "\n".join(
            "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
        )
        assert SITE not in prose, f"{name} links to the published book"
        for target in re.findall(r"\]\(\.\./html/([^)#\s]+)", prose):
            beside += 1
            assert (unpacked / "html" / target).is_file(), f"{name}: {target}"
    assert beside > 100, beside


def test_the_footer_links_to_license(unpacked: Path) -> None:
    """Every page's licence line links to LICENSE at the release's tag (issue
    31, F16; book/_ext/licence_link.py)."""
    url = yaml.safe_load((ROOT / "_config.yml").read_text("utf-8"))["repository"]["url"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    tag = f"v{project['version']}"
    link = f'See <a href="{url}/blob/{tag}/LICENSE">LICENSE</a> in'
    for page in ("book/intro.html", "notebooks/matrix-view.html"):
        html = (unpacked / "html" / page).read_text(encoding="utf-8")
        assert link in html, page


def _browser() -> Any:
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        reason = "no chromium/playwright for the bundle's browser test"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (CI=true)")
        pytest.skip(reason)
    return sync_playwright, chromium


def test_the_book_opens_from_the_file_with_no_network(unpacked: Path) -> None:
    sync_playwright, chromium = _browser()
    html = (unpacked / "html").resolve()
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=["--headless", "--no-sandbox", "--disable-gpu"],
        )
        page = browser.new_page()

        def route(r: Any) -> None:
            url = r.request.url
            if url.startswith("file://") and url[7:].startswith(str(html)):
                r.continue_()
            elif url.startswith(("data:", "blob:")):
                r.continue_()
            else:
                outside.append(url)
                r.abort()

        page.route("**/*", route)
        page.goto((html / "index.html").as_uri())  # redirects to the intro
        page.wait_for_url("**/book/intro.html")
        page.goto((html / "notebooks" / "matrix-view.html").as_uri())
        page.wait_for_function(
            "document.querySelectorAll('mjx-container').length > 10",
            timeout=30_000,
        )
        images = page.eval_on_selector_all(
            "main img", "els => els.map(e => [e.src, e.complete && e.naturalWidth])"
        )
        browser.close()
    assert not outside, f"the bundle asked for files outside itself: {outside[:5]}"
    assert images and all(width for _, width in images), images
