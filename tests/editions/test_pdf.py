"""The PDF edition (``make pdf``): complete, Chinese included, nothing cut off.

Run by ``make pdf-check`` after ``make pdf``. The oracles are the LaTeX log
of the last xelatex run, the book's sources, and the PDF itself as poppler
reads it (``pdftotext``, ``pdfimages``, ``pdffonts``, ``pdftoppm``, Debian's
poppler-utils):

* the log has no "Missing character" (the trap of the default set-up: the
  build succeeds and every Chinese character is silently dropped) and no
  undefined reference or citation;
* every Chinese term of the sources is in the PDF's text, set in a CJK font;
* no text runs off the page or into the right margin (see
  ``test_no_text_runs_into_the_margin_or_off_the_page``);
* every figure of the notebooks is an image in the PDF, and the numbering of
  chapters and exercises is the HTML book's;
* one page of each kind (title, Chinese, formula, figure, exercise, solution,
  code) is found, rendered to ``_build/pdf/pages/<kind>.png`` (60 dpi, for a
  person to look at) and shows what it should.

Without poppler-utils the tests skip, except in CI (``CI=true``), where they
fail.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
NAME = "self-attention-executable"
LATEX = ROOT / "_build" / "pdf" / "_build" / "latex"
LOG = LATEX / f"{NAME}.log"
PDF = ROOT / "_build" / f"{NAME}.pdf"
PAGES = ROOT / "_build" / "pdf" / "pages"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOURCES = sorted((ROOT / "book").glob("*.md")) + sorted(
    (ROOT / "book" / "glossary").glob("_*.md")
)
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
MATH_ALPHANUMERIC = re.compile(r"[\U0001d400-\U0001d7ff]")  # 𝑄, 𝐾, 𝑑, ...
# Where text may end: the right edge of the text block plus this much (pt) of
# an overfull line, and no closer than this to the paper's edge, where viewers
# and printers cut.
MARGIN_SLACK = 12.0
EDGE = 18.0


def need(tool: str) -> None:
    if shutil.which(tool) is None:
        reason = f"{tool} is missing (Debian: apt-get install poppler-utils)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so the PDF checks fail instead of skip")
        pytest.skip(reason)


def run(*args: str) -> str:
    need(args[0])
    out = subprocess.run(args, capture_output=True, check=True, timeout=300)
    return out.stdout.decode("utf-8", errors="replace")


@functools.cache
def log() -> str:
    assert LOG.is_file(), "no LaTeX log: run `make pdf` first"
    return LOG.read_text(encoding="utf-8", errors="replace")


@functools.cache
def pages() -> tuple[str, ...]:
    """The text of every page (index 0 is page 1)."""
    assert PDF.is_file(), "no PDF: run `make pdf` first"
    return tuple(run("pdftotext", "-enc", "UTF-8", str(PDF), "-").split("\f")[:-1])


def body(text: str) -> str:
    """A page's text without its running head and foot.

    The head is the book's title; the foot is the page number and the section's
    title, in either order (a chapter's first page has no head, and the number
    alone). Without them a sentence that a page break splits reads on as one
    sentence when the pages are joined.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    headed = bool(lines) and lines[0].strip() == "Self-attention, executable"
    if headed:
        lines = lines[1:]
    # a chapter's first page has no head, and its foot is the page number alone
    foot = 2 if headed else 1
    if len(lines) >= foot and any(
        re.fullmatch(r"[0-9ivxlc]+", line.strip()) for line in lines[-foot:]
    ):
        lines = lines[:-foot]
    return "\n".join(lines)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def first_page(pattern: str, *, after: int = 0) -> int:
    """The first page (1-based) after page ``after`` whose text matches."""
    for number, text in enumerate(pages(), start=1):
        if number > after and re.search(pattern, text):
            return number
    raise AssertionError(f"no page matches {pattern!r}")


def images_on(page: int) -> int:
    rows = run("pdfimages", "-list", "-f", str(page), "-l", str(page), str(PDF))
    return len(rows.splitlines()[2:])  # two header lines


def render(page: int, kind: str) -> Path:
    """Page ``page`` as a 60 dpi PNG, ``_build/pdf/pages/<kind>.png``."""
    PAGES.mkdir(parents=True, exist_ok=True)
    stem = PAGES / kind
    run("pdftoppm", "-r", "60", "-f", str(page), "-l", str(page), "-png",
        "-singlefile", str(PDF), str(stem))  # fmt: skip
    png = stem.with_suffix(".png")
    assert png.is_file() and png.read_bytes()[:4] == b"\x89PNG", png
    return png


# --- the LaTeX log -------------------------------------------------------------
def test_the_pdf_is_built_with_its_title_page() -> None:
    assert len(pages()) > 100, f"only {len(pages())} pages"
    assert "Self-attention, executable" in pages()[0]


def test_no_character_is_missing() -> None:
    missing = re.findall(r"^Missing character: There is no (\S+)", log(), re.M)
    assert not missing, (
        f"{len(missing)} characters dropped from the PDF, "
        f"most often {Counter(missing).most_common(8)}: a font lacks them"
    )


def test_no_reference_or_citation_is_undefined() -> None:
    text = log()
    undefined = re.findall(
        r"(?:Hyper reference|Reference|Citation) `([^']*)'\s+on\s+page\s+\d+\s+"
        r"undefined",
        text,
    )
    undefined = [squeeze(u) for u in undefined]  # TeX wraps log lines at 79
    assert not undefined, f"undefined in the PDF: {undefined[:10]}"
    assert "There were undefined references" not in text
    assert "There were undefined citations" not in text
    assert "Label(s) may have changed" not in text, "the last run was not final"


# --- the Chinese ---------------------------------------------------------------
def chinese_terms() -> set[str]:
    """Every run of Chinese characters in the prose and the notebooks' markdown."""
    texts = [p.read_text(encoding="utf-8") for p in SOURCES]
    for nb in NOTEBOOKS:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return {term for text in texts for term in CJK.findall(text)}


def test_every_chinese_term_is_in_the_pdf() -> None:
    terms = chinese_terms()
    assert len(terms) > 50, "the sources have fewer Chinese terms than expected"
    text = squeeze("".join(body(page) for page in pages()))
    absent = sorted(t for t in terms if t not in text)
    assert not absent, f"{len(absent)} Chinese terms not in the PDF: {absent[:10]}"


def test_chinese_is_set_in_a_cjk_font() -> None:
    fonts = run("pdffonts", str(PDF))
    assert re.search(r"Noto\w*CJK|WenQuanYi", fonts), fonts


# --- the layout ----------------------------------------------------------------
WORD = re.compile(
    r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>'
)


def test_no_text_runs_into_the_margin_or_off_the_page() -> None:
    """Code lines wrap (``verbatimforcewraps``); nothing else overflows either.

    The check reads where every word lands on its page, not the log: with
    forced wrapping, Sphinx first sets each long code line in a scratch box
    to measure it, which writes an "Overfull \\hbox" to the log although the
    printed line is wrapped, so the log cannot tell a clipped line from a
    wrapped one. The right edge of the text block is where most lines end
    (justified text); a word may overshoot it by ``MARGIN_SLACK`` pt at most,
    and nothing may come within ``EDGE`` pt of the paper's edge.
    """
    bbox = run("pdftotext", "-bbox", "-enc", "UTF-8", str(PDF), "-")
    words = []
    for number, page in enumerate(bbox.split("<page ")[1:], start=1):
        width = float(re.match(r'width="([\d.]+)"', page).group(1))
        for x_min, x_max, word in WORD.findall(page):
            words.append((number, width, float(x_min), float(x_max), word))
    assert len(words) > 10_000
    right = Counter(round(w[3]) for w in words).most_common(1)[0][0]
    assert right > words[0][1] / 2, right
    over = [
        f"page {n}: {word!r} ends at {x1:.0f}pt (text block: {right}pt)"
        for n, width, x0, x1, word in words
        if x1 > right + MARGIN_SLACK or x1 > width - EDGE or x0 < EDGE
    ]
    assert not over, f"{len(over)} words in the margin or off the page: {over[:10]}"


# --- the content ---------------------------------------------------------------
FIGURES = ("image/png", "application/pdf")  # a picture, or its vector copy


def included(extension: str) -> int:
    """How many figure files of this kind the LaTeX source includes."""
    tex = (LATEX / f"{NAME}.tex").read_text(encoding="utf-8")
    pattern = r"\\sphinxincludegraphics(\[[^]]*\])?\{\{\w+\}\." + extension + r"\}"
    return len(re.findall(pattern, tex))


def test_every_figure_of_the_notebooks_is_in_the_pdf() -> None:
    figures = vector = 0
    for nb in NOTEBOOKS:
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] != "code" or {"remove-output", "remove-cell"} & set(
                tags
            ):
                continue
            for out in cell["outputs"]:
                figures += any(f in out.get("data", {}) for f in FIGURES)
                vector += "application/pdf" in out.get("data", {})
    images = run("pdfimages", "-list", str(PDF)).splitlines()[2:]
    # An image with transparency is listed twice: as "image" and its "smask".
    drawn = [row for row in images if row.split()[2] == "image"]
    assert figures > 20
    # a figure with a vector copy is drawn from it (issue 31, F14): no picture
    assert included("pdf") >= vector, "a figure's vector copy left out"
    assert included("png") + vector >= figures
    assert len(drawn) + vector >= figures, f"{len(drawn)} images, {figures} figures"


BOX_TITLE = re.compile(r"(Solution to )?Exercise \d+\.\d+ \(★+ .*\)")


def test_no_box_title_is_left_at_the_foot_of_a_page() -> None:
    """An exercise's or a solution's box starts where its body fits below its
    title (issue 31, F14: "Solution to Exercise 10.1" ended a page)."""
    stranded = []
    for number, text in enumerate(pages(), start=1):
        lines = [line.strip() for line in body(text).splitlines() if line.strip()]
        if lines and BOX_TITLE.fullmatch(lines[-1]):
            stranded.append(f"p. {number}: {lines[-1]}")
    assert stranded == []


WORDS = "ONE TWO THREE FOUR FIVE SIX SEVEN EIGHT NINE TEN ELEVEN TWELVE".split()
WORDS += "THIRTEEN FOURTEEN FIFTEEN SIXTEEN SEVENTEEN EIGHTEEN NINETEEN".split()


def numbered_chapter_titles() -> list[str]:
    """The titles of the chapters the HTML book numbers, in order (``_toc.yml``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    default = toc.get("defaults", {}).get("numbered", False)
    titles = []
    for part in toc["parts"]:
        if not part.get("numbered", default):
            continue
        for chapter in part["chapters"]:
            cells = json.loads((ROOT / f"{chapter['file']}.ipynb").read_text("utf-8"))
            first = "".join(cells["cells"][0]["source"])
            titles.append(re.search(r"^# (.+)$", first, re.M).group(1))
    return titles


def test_chapters_are_numbered_as_in_the_html() -> None:
    """Chapter one is "Why attention"; "Getting started" and "Reference" have none."""
    heads = re.findall(r"CHAPTER\s+([A-Z]+)\s+([^\n]+)", "\n".join(pages()))
    titles = numbered_chapter_titles()
    assert [word for word, _ in heads] == WORDS[: len(titles)]
    for (_, head), title in zip(heads, titles, strict=True):
        assert title.upper().startswith(head.strip()), (head, title)


def test_exercises_are_numbered_as_in_the_html() -> None:
    """ "Exercise 3.2" as in the HTML, not Sphinx's LaTeX default "Exercise 3.9.2"."""
    text = "\n".join(pages())
    assert not re.search(r"Exercise \d+\.\d+\.\d+", text), "numbered in sections"
    start = first_page(r"ALL EXERCISES", after=len(pages()) // 2)
    end = first_page(r"API REFERENCE", after=start)
    in_list = "\n".join(pages()[start - 1 : end - 1])
    listed = set(re.findall(r"Exercise (\d+\.\d+)", in_list))
    total = int(re.search(r"(\d+) exercises in \d+ chapters", in_list).group(1))
    chapters = "\n".join(pages()[: start - 1])
    assert len(listed) == total
    assert listed == set(re.findall(r"Exercise (\d+\.\d+)", chapters))


KINDS = {
    # kind: (a pattern that finds the page, the page number to search after)
    "title": (r"Self-attention, executable", 0),
    "chinese": (r"自注意力", 2),
    "formula": (r"(?s)softmax.*[\U0001d400-\U0001d7ff]", 2),
    "figure": (r"Fig\. \d+\.\d+: ", 2),  # a caption, not a reference to one
    "exercise": (r"Exercise \d+\.\d+", 2),
    "solution": (r"Solution to Exercise \d+\.\d+", 2),
    "code": (r"scaled_dot_product_attention\(", 2),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_of_each_kind_shows_what_it_should(kind: str) -> None:
    pattern, after = KINDS[kind]
    page = first_page(pattern, after=after)
    text = pages()[page - 1]
    png = render(page, kind)
    assert png.stat().st_size > 2_000, f"{png} looks blank"
    if kind == "chinese":
        assert CJK.search(text)
    elif kind == "formula":
        assert MATH_ALPHANUMERIC.search(text), "no maths italic letter on the page"
    elif kind == "figure":  # a picture, or a vector figure with matplotlib's font
        fonts = run("pdffonts", "-f", str(page), "-l", str(page), str(PDF))
        assert images_on(page) > 0 or "DejaVu" in fonts, f"page {page}: no figure"
    elif kind in ("exercise", "solution"):
        number = re.search(pattern, text).group(0).split()[-1]
        assert f"Exercise {number}" in text


def test_the_html_book_links_to_this_pdf() -> None:
    """The intro's link (HTML only) reaches this PDF, copied next to the book."""
    html = ROOT / "_build" / "html"
    intro = (html / "book" / "intro.html").read_text(encoding="utf-8")
    hrefs = re.findall(r'href="([^"]*\.pdf)"', intro)
    assert hrefs == [f"../{NAME}.pdf"], hrefs
    target = (html / "book" / hrefs[0]).resolve()
    assert target.is_file(), "make pdf copies the PDF next to the HTML book"
    assert target.read_bytes() == PDF.read_bytes()
