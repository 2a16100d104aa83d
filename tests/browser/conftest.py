"""Fixtures that drive the built book (``_build/html``) in headless Chromium.

The book is served over http on 127.0.0.1 from a thread; one Chromium runs for
the whole session (Playwright's sync API with the system's ``chromium``, never
a browser downloaded by ``playwright install``). Each page is loaded once: it
is probed at desktop width, then the viewport shrinks to a phone's and the
page is probed again; the results are cached, so the parametrised tests only
read them. Every request to another host is aborted and recorded.

Without a browser or a built book the tests skip with the reason, except when
the environment variable ``CI`` is ``"true"``: then they fail, so CI cannot
silently skip them.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The built book; BOOK_HTML points the tests at another build of it.
BOOK = Path(os.environ.get("BOOK_HTML") or ROOT / "_build" / "html").resolve()
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 360, "height": 740}  # a small Android phone, in CSS pixels
MAX_WAIT_MS = 30_000

# Pages photographed at desktop and phone width (artefacts for a human to see).
SCREENSHOT_PAGES = {
    "book/intro.html": "intro",
    "book/notation.html": "notation",
    "notebooks/self-attention-qkv.html": "chapter",
    "book/glossary.html": "glossary",
    "book/exercises.html": "exercises",
    "book/references.html": "references",
}

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)


def book_pages() -> list[str]:
    """Every HTML page of the built book, relative to ``_build/html``.

    ``index.html`` is left out: it only redirects to the introduction (a test
    of its own checks that); so is the Chinese edition's, ``zh/index.html``.
    The Chinese edition's other pages (``zh/...``, ``make book-zh``) are
    checked as the English ones are.
    """
    if not BOOK.is_dir():
        return []
    pages = (p.relative_to(BOOK).as_posix() for p in BOOK.rglob("*.html"))
    return sorted(
        p
        for p in pages
        if not p.startswith("_")
        and "/_" not in p
        and p not in ("index.html", "zh/index.html")
    )


def unavailable(reason: str) -> None:
    """Skip with ``reason`` locally; fail when ``CI=true`` (CI must not skip)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true, so the browser tests fail instead of skip)")
    pytest.skip(reason)


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM`` if set, else the first on PATH."""
    override = os.environ.get("CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


# --- the site ----------------------------------------------------------------
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serve the built book without logging every request."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
        ".ipynb": "application/x-ipynb+json",
    }

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL (``http://127.0.0.1:<port>/``) of the built book."""
    if not (BOOK / "index.html").is_file():
        unavailable(f"the book is not built: run `make book` ({BOOK} is missing)")
    handler = functools.partial(_QuietHandler, directory=str(BOOK))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def browser(site: str) -> Iterator[Any]:
    """One headless Chromium for the whole session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package `playwright` is not installed")
    executable = find_chromium()
    if executable is None:
        unavailable(
            "no Chromium found (looked for $CHROMIUM, then "
            + ", ".join(CHROMIUM_NAMES)
            + " on PATH); install it with `apt-get install chromium`"
        )
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


# --- what is measured in a page --------------------------------------------------
# After `load`: wait for MathJax to finish typesetting and for every image.
SETTLE_JS = """
async () => {
  for (const img of document.images) { img.loading = 'eager'; }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await Promise.all(Array.from(document.images, img => img.complete ? null :
    new Promise(done => { img.onload = img.onerror = done; })));
  if (document.fonts) { await document.fonts.ready; }
}
"""

# Everything the desktop tests check, in one round trip.
PROBE_JS = r"""
() => {
  const article = document.querySelector('article') ||
                  document.querySelector('main') || document.body;
  const visible = el => !!(el.offsetWidth || el.offsetHeight ||
                           el.getClientRects().length);
  // Text outside code, scripts and typeset math: raw TeX must not show there.
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const tex = new RegExp('\\\\[()\\[\\]]|\\$\\$|\\\\(frac|mathbf|mathrm|top|' +
                         'sqrt|sum|alpha|begin|operatorname)\\b');
  const rawTex = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const parent = n.parentElement;
    if (!parent || parent.closest(skip)) continue;
    if (tex.test(n.nodeValue) && visible(parent)) {
      rawTex.push(n.nodeValue.trim().slice(0, 120));
    }
  }
  const captionOf = img => {
    const figure = img.closest('figure');
    const caption = figure && figure.querySelector('figcaption');
    return caption ? caption.textContent.trim() : '';
  };
  const mathEls = Array.from(document.querySelectorAll('.math'));
  return {
    title: document.title,
    lang: document.documentElement.lang,
    links: Array.from(document.querySelectorAll('a[href]'), a => ({
      href: a.href, raw: a.getAttribute('href'), text: a.textContent.trim(),
      classes: a.className})),
    images: Array.from(document.images, img => ({
      src: img.currentSrc || img.src,
      loaded: img.complete && img.naturalWidth > 0,
      alt: (img.getAttribute('alt') || '').trim(),
      caption: captionOf(img),
    })),
    headings: Array.from(article.querySelectorAll('h1, h2, h3, h4, h5, h6'))
      .filter(visible)
      .map(h => ({level: Number(h.tagName[1]), text: h.textContent.trim()})),
    math: {
      elements: mathEls.length,
      untypeset: mathEls.filter(e => !e.querySelector('mjx-container'))
                        .map(e => e.textContent.trim().slice(0, 80)),
      errors: Array.from(document.querySelectorAll('mjx-merror'),
                         e => e.getAttribute('data-mjx-error') || e.textContent),
      mathjax: !!(window.MathJax && window.MathJax.version),
    },
    rawTex: rawTex,
    exercises: Array.from(document.querySelectorAll('.exercise[id]'), e => ({
      id: e.id,
      title: (e.querySelector('.admonition-title') || e).textContent.trim()})),
    solutions: Array.from(document.querySelectorAll('.solution'), e => {
      const body = Array.from(e.children).filter(
        c => !c.classList.contains('admonition-title'));
      const shown = c => visible(c) && getComputedStyle(c).visibility !== 'hidden';
      return {
        dropdown: e.classList.contains('dropdown'),
        hidden: body.length > 0 && body.every(c => !shown(c)),
        target: ((e.querySelector('.admonition-title a') || {}).hash || ''),
      };
    }),
  };
}
"""

# After the viewport shrinks to a phone's: does anything scroll sideways?
OVERFLOW_JS = r"""
async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const root = document.documentElement;
  const visible = el => !!(el.offsetWidth || el.offsetHeight ||
                           el.getClientRects().length);
  const offCanvas = '.bd-sidebar-primary, .bd-sidebar-secondary, .dropdown-menu';
  const scrolls = e => {  // inside a box that scrolls or clips on its own
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== 'visible') return true;
    }
    return false;
  };
  const overflows = root.scrollWidth > root.clientWidth;
  return {
    scrollWidth: root.scrollWidth,
    clientWidth: root.clientWidth,
    wide: !overflows ? [] : Array.from(document.querySelectorAll('body *'))
      .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1 &&
                   visible(e) && !e.closest(offCanvas) && !scrolls(e))
      .slice(0, 5)
      .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                (typeof e.className === 'string' && e.className.trim() ?
                 '.' + e.className.trim().split(/\s+/).join('.') : '')),
  };
}
"""


NO_TRANSITIONS = (
    "*, *::before, *::after { transition: none !important;"
    " animation: none !important; }"
)


@dataclass
class PageVisit:
    """What one page did and showed when it was loaded in the browser."""

    path: str
    url: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    bad_responses: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    phone: dict[str, Any] = field(default_factory=dict)


def is_local(url: str, origin: str) -> bool:
    """True for the test server and for in-page data (``data:``, ``blob:``)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return f"{parts.scheme}://{parts.netloc}" == origin


class Visitor:
    """Loads each page once, probes it at desktop then phone width, caches it.

    Screenshots at both widths are saved for the pages in ``screenshots`` (a
    mapping from page path to a short file name).
    """

    def __init__(
        self, browser: Any, site: str, screenshots: dict[str, str] | None = None
    ) -> None:
        self.site = site
        self.origin = site.rstrip("/")
        self.screenshots = screenshots or {}
        self.context = browser.new_context(viewport=DESKTOP, service_workers="block")
        self.context.set_default_timeout(MAX_WAIT_MS)
        self.external: list[str] = []
        self.context.route("**/*", self._route)
        self.cache: dict[str, PageVisit] = {}

    def _route(self, route: Any) -> None:
        url = route.request.url
        if is_local(url, self.origin):
            route.continue_()
        else:
            self.external.append(url)
            route.abort("blockedbyclient")

    def open(self, path: str) -> tuple[Any, PageVisit]:
        """Open ``path`` in a new tab and wait until it settles."""
        visit = PageVisit(path=path, url=self.site + path)
        page = self.context.new_page()
        page.on(
            "console",
            lambda m: (
                visit.console_errors.append(m.text) if m.type == "error" else None
            ),
        )
        page.on("pageerror", lambda e: visit.page_errors.append(str(e)))
        page.on(
            "response",
            lambda r: (
                visit.bad_responses.append(f"{r.status} {r.url}")
                if r.status >= 400
                else None
            ),
        )
        self.external.clear()
        page.goto(visit.url, wait_until="load")
        page.evaluate(SETTLE_JS)
        return page, visit

    def visit(self, path: str) -> PageVisit:
        """The cached visit of ``path`` (loaded and probed on first use)."""
        if path not in self.cache:
            page, visit = self.open(path)
            try:
                visit.data = page.evaluate(PROBE_JS)
                name = self.screenshots.get(path)
                if name:
                    page.screenshot(path=SCREENSHOTS / f"{name}-desktop.png")
                # The theme animates its sidebars across the breakpoint; measure
                # (and photograph) the settled layout, not a frame mid-slide.
                page.add_style_tag(content=NO_TRANSITIONS)
                page.set_viewport_size(PHONE)
                visit.phone = page.evaluate(OVERFLOW_JS)
                if name:
                    page.screenshot(path=SCREENSHOTS / f"{name}-phone.png")
                visit.external_requests = list(self.external)
            finally:
                page.close()
            self.cache[path] = visit
        return self.cache[path]

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Folder for the screenshot artefacts (git-ignored ``test-artifacts/``)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def book(browser: Any, site: str, screenshots: Path) -> Iterator[Visitor]:
    """The built book in one browser context; each page is visited once."""
    visitor = Visitor(browser, site, SCREENSHOT_PAGES)
    yield visitor
    visitor.close()
