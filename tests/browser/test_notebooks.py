"""A reader notebook as learners see it: in JupyterLab, and as nbconvert's HTML.

JupyterLab (the ``jupyterlab`` of the dev extra) is started on 127.0.0.1 with
no token, in a temporary folder holding the reader notebooks
(``_build/notebooks/reader``, written by ``make reader-notebooks``), with its
own settings and no news or update check; Chromium opens one chapter there,
with every request to another host blocked. The chapter must show a glued
number inside its sentence, every worked solution folded (and unfolding on a
click), every figure with its numbered caption under it, typeset mathematics,
and no MyST. The same chapter rendered by nbconvert's HTML exporter (what
GitHub and ``jupyter nbconvert`` show) is checked for the same things.
Screenshots: ``test-artifacts/screenshots/jupyterlab-*.png``, ``nbconvert-*.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import DESKTOP, MAX_WAIT_MS, ROOT, SCREENSHOTS, unavailable

pytestmark = [
    pytest.mark.browser,
    # the glue records of the source's outputs: nothing to show, as in the book
    pytest.mark.filterwarnings("ignore:Your element with mimetype"),
]

CHAPTER = "matrix-view"  # glued numbers, figures, gated and plain solutions
READER = ROOT / "_build" / "notebooks" / "reader"
SOURCE = ROOT / "notebooks" / f"{CHAPTER}.ipynb"
GLUED = re.compile(r"((?:[A-Za-z,]+ ){3})\{glue:text\}`([^`]+)`((?: [A-Za-z]+){2})")

# What the page shows, in one round trip (JupyterLab and nbconvert alike).
PROBE_JS = r"""
() => {
  // a closed <details> hides its content with content-visibility (Chromium
  // lays it out all the same): checkVisibility() tells
  const visible = el => el.checkVisibility ? el.checkVisibility() :
    !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const cells = Array.from(document.querySelectorAll('.jp-Cell'));
  const figures = [];
  cells.forEach((cell, i) => {
    const img = cell.querySelector('.jp-OutputArea-output img');
    if (!img || !cell.classList.contains('jp-CodeCell')) return;
    const next = cells[i + 1];
    const md = next && next.querySelector('.jp-RenderedMarkdown');
    figures.push({loaded: img.complete && img.naturalWidth > 0,
                  caption: md ? md.innerText.trim().slice(0, 80) : ''});
  });
  const folds = Array.from(document.querySelectorAll('.jp-RenderedMarkdown details'));
  return {
    text: Array.from(document.querySelectorAll('.jp-RenderedMarkdown'),
                     e => e.innerText).join('\n'),
    figures: figures,
    folds: folds.map(d => ({
      open: d.open,
      summary: (d.querySelector('summary') || {innerText: ''}).innerText.trim(),
      hidden: Array.from(d.children).filter(c => c.tagName !== 'SUMMARY')
                   .every(c => !visible(c)),
    })),
    math: document.querySelectorAll('.jp-RenderedMarkdown mjx-container').length,
  };
}
"""


def reader_notebook() -> Path:
    path = READER / f"{CHAPTER}.ipynb"
    if not path.is_file():
        unavailable(f"no {path}: run `make reader-notebooks` first")
    return path


def expected_sentence() -> str:
    """A sentence of the source with a glued number, as the book prints it."""
    from myst_nb.core.variables import format_plain_text

    source = json.loads(SOURCE.read_text(encoding="utf-8"))
    prose = " ".join(
        " ".join("".join(c["source"]).split())
        for c in source["cells"]
        if c["cell_type"] == "markdown"
    )
    before, ref, after = GLUED.search(prose).groups()
    key, _, spec = ref.rpartition(":") if ":" in ref else (ref, "", "s")
    values = {}
    for cell in source["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                data = out["data"]
                values[name] = "".join(
                    next(v for k, v in data.items() if k.endswith("text/plain"))
                )
    assert "{" not in before + after, "choose a sentence with plain words around"
    return f"{before}{format_plain_text(values[key], spec)}{after}"


def solutions_in_source() -> int:
    text = SOURCE.read_text(encoding="utf-8")
    return len(re.findall(r"[`:]{3,}\{solution(?:-start)?\}", text))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab serving a folder with the reader notebooks, on 127.0.0.1."""
    reader_notebook()
    jupyter = Path(sys.executable).parent / "jupyter-lab"
    if not jupyter.exists():
        unavailable("jupyterlab is not installed (pip install -e '.[dev]')")
    home = tmp_path_factory.mktemp("lab")
    work = home / "work"
    shutil.copytree(READER, work)
    for extension, name, value in [
        # every cell rendered, not only those in view (JupyterLab 4 windows them)
        ("notebook-extension", "tracker", {"windowingMode": "none"}),
        # no "get notified about Jupyter news?" toast, and no fetch of them
        ("apputils-extension", "notification", {"fetchNews": "false"}),
    ]:
        folder = home / "settings" / "@jupyterlab" / extension
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.jupyterlab-settings").write_text(
            json.dumps(value), encoding="utf-8"
        )
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    command = [
        str(jupyter),
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.allow_root=True",
        f"--ServerApp.root_dir={work}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    log = (home / "lab.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "api/status", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(
                        "JupyterLab did not start:\n" + (home / "lab.log").read_text()
                    )
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def blocked_page(browser: Any) -> tuple[Any, Any, list[str]]:
    """A page of its own context; requests off 127.0.0.1 and file:// fail."""
    context = browser.new_context(viewport=DESKTOP, service_workers="block")
    context.set_default_timeout(MAX_WAIT_MS)
    outside: list[str] = []

    def route(r: Any) -> None:
        url = r.request.url
        if url.startswith(("http://127.0.0.1", "file://", "data:", "blob:")):
            r.continue_()
        else:
            outside.append(url)
            r.abort("blockedbyclient")

    context.route("**/*", route)
    return context, context.new_page(), outside


def check(seen: dict[str, Any], *, math: bool) -> None:
    """What a reader notebook must show, wherever it is rendered."""
    text = " ".join(seen["text"].split())
    assert expected_sentence() in text, "the glued number is not in its sentence"
    assert "{glue" not in text and not re.search(r"\{[a-z][\w:-]*\}`", text), "MyST"
    folds = seen["folds"]
    assert len(folds) == solutions_in_source() >= 3, folds
    assert all(f["summary"] == "Solution" and not f["open"] for f in folds), folds
    assert all(f["hidden"] for f in folds), "a solution shows before it is unfolded"
    assert seen["figures"] and all(f["loaded"] for f in seen["figures"])
    captions = [f["caption"] for f in seen["figures"]]
    assert all(re.match(r"Fig\. \d+\.\d+ \S", c) for c in captions), captions
    if math:
        assert seen["math"] > 20, "mathematics is not typeset"


def test_a_reader_notebook_reads_like_the_book_in_jupyterlab(
    browser: Any, lab: str, screenshots: Path
) -> None:
    context, page, outside = blocked_page(browser)
    try:
        page.goto(f"{lab}lab/tree/{CHAPTER}.ipynb", wait_until="load")
        page.wait_for_selector(".jp-Notebook .jp-RenderedMarkdown", timeout=60_000)
        # every markdown cell rendered and its mathematics typeset
        page.wait_for_function(
            "document.querySelectorAll('.jp-RenderedMarkdown mjx-container')"
            ".length > 20",
            timeout=60_000,
        )
        page.wait_for_timeout(1000)
        page.screenshot(path=SCREENSHOTS / "jupyterlab-top.png")
        seen = page.evaluate(PROBE_JS)
        check(seen, math=True)
        # the first figure and its caption, then the exercises with a fold
        page.locator(
            ".jp-Cell .jp-OutputArea-output img"
        ).first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "jupyterlab-figure.png")
        summary = page.locator(".jp-RenderedMarkdown details summary").first
        summary.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "jupyterlab-folded.png")
        summary.click()
        page.wait_for_timeout(500)
        opened = page.evaluate(PROBE_JS)["folds"][0]
        assert opened["open"] and not opened["hidden"], "the fold does not unfold"
        page.screenshot(path=SCREENSHOTS / "jupyterlab-unfolded.png")
    finally:
        context.close()
    assert not outside, f"JupyterLab asked another host: {outside[:5]}"


def test_a_reader_notebook_reads_like_the_book_in_nbconvert_html(
    browser: Any, screenshots: Path, tmp_path: Path
) -> None:
    import nbformat
    from nbconvert import HTMLExporter

    notebook = nbformat.read(reader_notebook(), as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    page_file = tmp_path / f"{CHAPTER}.html"
    page_file.write_text(body, encoding="utf-8")
    context, page, outside = blocked_page(browser)
    try:
        page.goto(page_file.as_uri(), wait_until="load")
        page.screenshot(path=SCREENSHOTS / "nbconvert-top.png")
        seen = page.evaluate(PROBE_JS)
        # nbconvert's page loads MathJax from a CDN: blocked here, so its
        # mathematics stays TeX; the prose, folds and captions are checked
        check(seen, math=False)
        page.locator("details summary").first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "nbconvert-folded.png")
    finally:
        context.close()
    assert all("mathjax" in u.lower() or "require" in u.lower() for u in outside), (
        outside
    )
