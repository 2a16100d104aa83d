"""The built book, read in a real browser (headless Chromium via Playwright).

Every page of ``_build/html`` is served from 127.0.0.1 with every request to
another host blocked, loaded once, and checked at desktop and at phone width.
The book must work offline: no console errors, nothing requested from another
host, mathematics typeset by the MathJax copy the site serves, every image
loaded and described, internal links and anchors resolved, headings in order,
nothing scrolling sideways on a phone. Then the book as a product: search
finds glossary terms, the glossary links both ways, exercises are numbered per
chapter with collapsed solutions and all listed on one page, and every chapter
opens in Colab or Binder and downloads as an ``.ipynb`` that installs
``selfattn`` itself. Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest
import yaml

from .conftest import BOOK, ROOT, SCREENSHOT_PAGES, SCREENSHOTS, Visitor, book_pages

pytestmark = pytest.mark.browser

# Without a built book the `site` fixture skips (or, in CI, fails) with the
# reason; one placeholder per list keeps every test visible in that report.
PAGES = book_pages() or ["book/intro.html"]
CHAPTERS = [p for p in PAGES if p.startswith("notebooks/")] or [
    "notebooks/why-attention.html"
]
GLOSSARY = "book/glossary.html"
EXERCISES = "book/exercises.html"
GENERATED = {"search.html", "genindex.html"}  # Sphinx's pages, not prose
PDF_EDITION = "self-attention-executable.pdf"  # `make pdf` puts it here
CJK = re.compile(r"[\u3400-\u9fff]")
# Colour maps that stay readable with the common colour-vision deficiencies
# (perceptually uniform, or diverging maps designed for it).
SAFE_CMAPS = {
    "viridis",
    "cividis",
    "magma",
    "inferno",
    "plasma",
    "Greys",
    "gray",
    "binary",
    "PuOr",
    "RdBu",
    "BrBG",
    "coolwarm",
}


def repository() -> str:
    """``owner/name`` of the repository, as the launch buttons use it."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return urlsplit(config["repository"]["url"]).path.strip("/")


# --- helpers -----------------------------------------------------------------
class _Anchors(HTMLParser):
    """Collects every ``id`` (and ``<a name>``) of an HTML file."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value and (key == "id" or (tag == "a" and key == "name")):
                self.ids.add(value)


_ANCHORS: dict[Path, set[str]] = {}


def anchors(path: Path) -> set[str]:
    """The anchors defined in the HTML file ``path`` (parsed once)."""
    if path not in _ANCHORS:
        parser = _Anchors()
        parser.feed(path.read_text(encoding="utf-8"))
        _ANCHORS[path] = parser.ids
    return _ANCHORS[path]


def local_target(url: str, site: str) -> tuple[Path, str] | None:
    """The file and fragment a link on the site points at (None: other host)."""
    if not url.startswith(site):
        return None
    parts = urlsplit(url)
    path = BOOK / unquote(parts.path).lstrip("/")
    if path.is_dir():
        path = path / "index.html"
    return path, unquote(parts.fragment)


def page_path(url: str, site: str) -> str:
    """``notebooks/x.html`` for a URL on the site (query and fragment dropped)."""
    return unquote(urlsplit(url).path).lstrip("/") if url.startswith(site) else url


def chapter_number(visit_data: dict) -> str | None:
    """The chapter number shown in the page's ``<h1>`` ("3." -> "3")."""
    headings = visit_data["headings"]
    match = re.match(r"(\d+)\.", headings[0]["text"]) if headings else None
    return match.group(1) if match else None


# --- every page ----------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_errors(book: Visitor, page: str) -> None:
    visit = book.visit(page)
    assert visit.page_errors == [], f"JavaScript exceptions on {page}"
    assert visit.console_errors == [], f"console errors on {page}"
    assert visit.bad_responses == [], f"failed requests on {page}"
    lang = "zh-CN" if page.startswith("zh/") else "en"  # the Chinese edition
    assert visit.data["lang"] == lang, "<html> must declare the page's language"


@pytest.mark.parametrize("page", PAGES)
def test_page_requests_nothing_from_another_host(book: Visitor, page: str) -> None:
    requests = book.visit(page).external_requests
    assert requests == [], (
        f"{page} tried to load from another host (blocked: the book must work "
        f"offline): {requests}"
    )


@pytest.mark.parametrize("page", PAGES)
def test_math_is_typeset(book: Visitor, page: str) -> None:
    data = book.visit(page).data
    math = data["math"]
    if math["elements"]:
        assert math["mathjax"], f"{page} has mathematics but MathJax did not run"
    assert math["untypeset"] == [], f"mathematics left as raw TeX on {page}"
    assert math["errors"] == [], f"MathJax errors on {page}"
    assert data["rawTex"] == [], f"raw TeX visible in the text of {page}"


@pytest.mark.parametrize("page", PAGES)
def test_images_load(book: Visitor, page: str) -> None:
    broken = [i["src"] for i in book.visit(page).data["images"] if not i["loaded"]]
    assert broken == [], f"images that did not load on {page}"


@pytest.mark.parametrize("page", PAGES)
def test_images_have_alt_text_or_caption(book: Visitor, page: str) -> None:
    images = book.visit(page).data["images"]
    undescribed = [i["src"] for i in images if not (i["alt"] or i["caption"])]
    assert undescribed == [], f"images with neither alt text nor caption on {page}"


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_and_anchors_resolve(
    book: Visitor, site: str, page: str
) -> None:
    broken = []
    for link in book.visit(page).data["links"]:
        target = local_target(link["href"], site)
        if target is None:
            continue  # another host: a link is fine, a load is not
        path, fragment = target
        pdf = path.name.startswith(PDF_EDITION[:-4]) and path.suffix == ".pdf"
        if pdf and not path.is_file():  # the Chinese edition's too (-zh.pdf)
            # Built by `make pdf` (make editions, after make test), which then
            # checks this link: tests/editions/test_pdf.py.
            continue
        if not path.is_file():
            broken.append(f"{link['raw']} -> missing file {path.relative_to(BOOK)}")
        elif fragment and path.suffix == ".html" and fragment not in anchors(path):
            broken.append(f"{link['raw']} -> no anchor #{fragment}")
    assert broken == [], f"broken internal links on {page}"


@pytest.mark.parametrize("page", [p for p in PAGES if p not in GENERATED])
def test_headings_are_in_order(book: Visitor, page: str) -> None:
    headings = book.visit(page).data["headings"]
    levels = [h["level"] for h in headings]
    assert levels[:1] == [1], f"{page} must start with an <h1>: {headings[:3]}"
    assert levels.count(1) == 1, f"{page} has more than one <h1>"
    skips = [
        f"h{a} -> h{b} {h['text']!r}"
        for a, b, h in zip(levels, levels[1:], headings[1:], strict=False)
        if b > a + 1
    ]
    assert skips == [], f"heading levels skipped on {page}"


@pytest.mark.parametrize("page", PAGES)
def test_no_horizontal_scrolling_on_a_phone(book: Visitor, page: str) -> None:
    phone = book.visit(page).phone
    assert phone["scrollWidth"] <= phone["clientWidth"], (
        f"{page} scrolls sideways at 360 px: {phone['scrollWidth']} px wide; "
        f"too wide: {phone['wide']}"
    )


# --- the book as a whole ---------------------------------------------------------
def test_index_redirects_to_the_introduction(book: Visitor, site: str) -> None:
    page = book.context.new_page()
    try:
        page.goto(site + "index.html")
        page.wait_for_url("**/book/intro.html")
    finally:
        page.close()


def test_screenshots_are_saved(book: Visitor) -> None:
    for path, name in SCREENSHOT_PAGES.items():
        if path in PAGES:
            book.visit(path)
            for width in ("desktop", "phone"):
                shot = SCREENSHOTS / f"{name}-{width}.png"
                assert shot.is_file() and shot.stat().st_size > 5_000, shot


def glossary_entries(book: Visitor) -> list[dict]:
    """Every glossary entry: ``{ids, terms, term, text, chapter}``.

    An entry may have several terms (aliases such as "recurrent neural network"
    and "RNN"): several ``<dt>`` before one ``<dd>``.
    """
    book.visit(GLOSSARY)  # the page must load; its HTML is then read as text
    html = (BOOK / GLOSSARY).read_text(encoding="utf-8")
    entries = []
    pattern = r'((?:<dt id="term-[^"]+">.*?</dt>\s*)+)<dd>(.*?)</dd>'
    for dts, dd in re.findall(pattern, html, re.S):
        terms = re.findall(r'<dt id="(term-[^"]+)">(.*?)<a class="headerlink"', dts)
        chapter = re.search(r'href="\.\./(notebooks/[^"#]+\.html)"', dd)
        names = [re.sub(r"<[^>]+>", "", name).strip() for _, name in terms]
        entries.append(
            {
                "ids": [term_id for term_id, _ in terms],
                "terms": names,
                "term": names[0],
                "text": re.sub(r"<[^>]+>", "", dd),
                "chapter": chapter.group(1) if chapter else None,
            }
        )
    return entries


def test_glossary_is_bilingual_and_names_the_defining_chapter(book: Visitor) -> None:
    entries = glossary_entries(book)
    assert entries, "the glossary has no entries"
    malformed, no_chinese = [], []
    for entry in entries:
        meta = re.match(r"\s*(.+?) · symbol: (.+?) · defined in ", entry["text"], re.S)
        if not meta:
            malformed.append(entry["term"])
        elif not (
            CJK.search(meta.group(1))  # a Chinese term, or a name kept as is
            or meta.group(1).strip().casefold()
            in {t.casefold() for t in entry["terms"]}
        ):
            no_chinese.append(entry["term"])
    no_chapter = [e["term"] for e in entries if e["chapter"] not in CHAPTERS]
    assert malformed == [], "entries not in the form '中文 · symbol: … · defined in …'"
    assert no_chinese == [], "glossary entries without a Chinese term"
    assert no_chapter == [], "glossary entries that link to no chapter"


def test_glossary_terms_are_linked_from_their_chapter(book: Visitor, site: str) -> None:
    unlinked = []
    for entry in glossary_entries(book):
        if entry["chapter"] not in CHAPTERS:
            continue
        links = book.visit(entry["chapter"]).data["links"]
        targets = {
            (page_path(a["href"], site), urlsplit(a["href"]).fragment) for a in links
        }
        if not any((GLOSSARY, term_id) in targets for term_id in entry["ids"]):
            unlinked.append(f"{entry['term']} (in {entry['chapter']})")
    assert unlinked == [], (
        "terms whose defining chapter never links to their glossary entry "
        f"(use {{term}}`...` at the first use): {unlinked}"
    )


def test_every_glossary_fragment_is_included() -> None:
    source = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    fragments = sorted((ROOT / "book" / "glossary").glob("_*.md"))
    missing = [f.name for f in fragments if f"glossary/{f.name}" not in source]
    assert missing == [], "fragments not included by book/glossary.md"


def test_search_finds_a_glossary_term(book: Visitor, site: str) -> None:
    entries = glossary_entries(book)
    assert entries, "the glossary has no entries to search for"
    simple = [
        e["term"] for e in entries if re.fullmatch(r"[A-Za-z][A-Za-z ]{4,}", e["term"])
    ]
    term = (simple or [entries[0]["term"]])[len(simple) // 2 if simple else 0]
    page, visit = book.open(f"search.html?q={quote(term)}")
    try:
        page.wait_for_selector("#search-results .search-summary", state="attached")
        hits = page.eval_on_selector_all(
            "#search-results ul.search li a", "links => links.map(a => a.href)"
        )
    finally:
        page.close()
    assert visit.page_errors == [] and visit.console_errors == []
    assert any(page_path(h, site) == GLOSSARY for h in hits), (
        f"searching for {term!r} did not find the glossary; results: {hits}"
    )


# --- exercises ----------------------------------------------------------------------
def test_exercises_are_numbered_per_chapter(book: Visitor) -> None:
    unnumbered, wrong = [], []
    for chapter in CHAPTERS:
        data = book.visit(chapter).data
        number = chapter_number(data)
        if number is None:
            unnumbered.append(chapter)
            continue
        for i, exercise in enumerate(data["exercises"], start=1):
            if not exercise["title"].startswith(f"Exercise {number}.{i}"):
                wrong.append(f"{chapter}: {exercise['title']!r} is not {number}.{i}")
    assert unnumbered == [], (
        "chapters without a number, so their exercises are numbered through the "
        "whole book: number the parts of _toc.yml (numbered: true)"
    )
    assert wrong == [], "exercises not numbered <chapter>.<n>"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_exercises_have_collapsed_solutions(book: Visitor, chapter: str) -> None:
    data = book.visit(chapter).data
    exercises = {e["id"] for e in data["exercises"]}
    solved = {s["target"].lstrip("#") for s in data["solutions"]}
    assert exercises, f"{chapter} has no exercises"
    assert exercises - solved == set(), f"exercises without a solution on {chapter}"
    opened = [s for s in data["solutions"] if not (s["dropdown"] and s["hidden"])]
    assert opened == [], f"solutions on {chapter} that are not collapsed"


def test_exercise_page_lists_every_exercise(book: Visitor, site: str) -> None:
    listed = {
        (page_path(a["href"], site), urlsplit(a["href"]).fragment)
        for a in book.visit(EXERCISES).data["links"]
        if page_path(a["href"], site) in CHAPTERS and a["text"].startswith("Exercise")
    }
    present = {
        (chapter, exercise["id"])
        for chapter in CHAPTERS
        for exercise in book.visit(chapter).data["exercises"]
    }
    assert present, "no chapter has exercises"
    assert present - listed == set(), "exercises missing from the list page"
    assert listed - present == set(), "the list page links to exercises that vanished"


# --- launch and download ------------------------------------------------------------
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_opens_in_colab_and_binder_and_downloads(
    book: Visitor, site: str, chapter: str
) -> None:
    repo = repository()
    notebook = chapter.removesuffix(".html") + ".ipynb"
    hrefs = [a["href"] for a in book.visit(chapter).data["links"]]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    branch = config["sphinx"]["config"]["notebooks_branch"]  # the reader notebooks
    colab = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{notebook}"
    assert colab in hrefs, f"no 'open in Colab' link on {chapter}"
    binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath="
    assert any(h.startswith(binder) and h.endswith(notebook) for h in hrefs), (
        f"no Binder link on {chapter}"
    )
    downloads = [h for h in hrefs if page_path(h, site) == f"_sources/{notebook}"]
    assert downloads, f"no .ipynb download link on {chapter}"
    source = json.loads((BOOK / "_sources" / notebook).read_text(encoding="utf-8"))
    first = next(c for c in source["cells"] if c["cell_type"] == "code")
    code = "".join(first["source"])
    assert code.startswith("# Install the course library") and (
        "util.find_spec" in code and '"selfattn' in code and "pip" in code
    ), f"the first code cell of {notebook} must install selfattn when missing"
    assert "remove-cell" in first.get("metadata", {}).get("tags", []), (
        f"the install cell of {notebook} must be tagged remove-cell"
    )


def test_install_cell_is_the_same_everywhere() -> None:
    """Every notebook's first cell installs from the repository in _config.yml,
    exactly as book/how-to-run.md shows it (no drift when the URL changes)."""
    url = f"git+https://github.com/{repository()}"
    page = (ROOT / "book" / "how-to-run.md").read_text(encoding="utf-8")
    shown = re.search(r"```python\n(.*?)```", page, re.S)
    assert shown, "book/how-to-run.md must show the install cell"
    different = []
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        first = next(c for c in cells if c["cell_type"] == "code")
        code = "".join(first["source"]).strip()
        if url not in code or code != shown.group(1).strip():
            different.append(notebook.name)
    assert different == [], (
        f"install cells that differ from book/how-to-run.md or do not install {url}"
    )


# --- accessibility -----------------------------------------------------------------
def test_colour_maps_are_colour_blind_safe() -> None:
    from selfattn.lab import plotting

    maps = {plotting.CMAP, getattr(plotting, "DIVERGING_CMAP", plotting.CMAP)}
    used = set()
    pattern = re.compile(r"""cmap\s*=\s*["']([A-Za-z_]+)["']""")
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "code":
                used.update(pattern.findall("".join(cell["source"])))
    unsafe = {m.removesuffix("_r") for m in maps | used} - SAFE_CMAPS
    assert unsafe == set(), "colour maps that are not colour-blind safe"
