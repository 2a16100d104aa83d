"""The Chinese edition as built: its own root, its language, the switch between the two.

`make book-prebuilt` (run by `make test`) builds the English book into
_build/html and the Chinese edition into _build/html/zh (`make book-zh`).
These tests read the built files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
ZH = HTML / "zh"
CJK = re.compile(r"[\u4e00-\u9fff]")

pytestmark = pytest.mark.skipif(
    not (ZH / "book" / "intro.html").exists()
    or not (HTML / "book" / "intro.html").exists(),
    reason="no English book and Chinese edition built (make book-prebuilt)",
)


def _pages(root: Path) -> list[Path]:
    skip = {"genindex.html", "search.html", "py-modindex.html"}
    return sorted(
        p
        for p in root.rglob("*.html")
        if p.name not in skip
        and p != root / "index.html"  # a redirect to the introduction
        and "_static" not in p.parts
        and "_sources" not in p.parts
        and (root != HTML or "zh" not in p.relative_to(HTML).parts[:1])
    )


def _switch(page: Path) -> str | None:
    m = re.search(
        r'<p class="language-switch"><a href="([^"]+)"',
        page.read_text(encoding="utf-8"),
    )
    return m.group(1) if m else None


def test_the_chinese_edition_says_it_is_chinese():
    text = (ZH / "book" / "intro.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in text
    assert "<title>" in text and "可执行的自注意力" in text


@pytest.mark.parametrize("root", [HTML, ZH], ids=["English", "Chinese"])
def test_every_page_links_to_its_twin_in_the_other_language(root: Path):
    pages = _pages(root)
    assert len(pages) > 30
    missing, dead = [], []
    for page in pages:
        href = _switch(page)
        if href is None:
            missing.append(str(page.relative_to(HTML)))
        elif not (page.parent / href).resolve().is_file():
            dead.append(f"{page.relative_to(HTML)} -> {href}")
    assert missing == [], f"pages without a language switch: {missing[:5]}"
    assert dead == [], f"language switches to no page: {dead[:5]}"
    # the twin is the same page: the switch there leads back here
    page = root / "notebooks" / "matrix-view.html"
    twin = (page.parent / _switch(page)).resolve()
    assert (twin.parent / _switch(twin)).resolve() == page.resolve()


def test_no_bold_marker_is_printed_in_the_chinese_text():
    printed = []
    for page in _pages(ZH):
        body = re.sub(
            r"<(script|style|pre|code|dt)\b.*?</\1>",
            " ",
            page.read_text(encoding="utf-8"),
            flags=re.S,
        )  # not code, not signatures
        text = re.sub(r"<[^>]+>", " ", body)
        if "**" in text:
            at = text.index("**")
            printed.append(
                f"{page.relative_to(ZH)}: {text[max(0, at - 30) : at + 30]!r}"
            )
    assert printed == [], (
        "literal ** in the Chinese edition (CommonMark did not read it as bold)"
    )


def test_references_read_as_chinese():
    """Sphinx's zh_CN catalogue says 图 for figures, sphinx-exercise's 练习."""
    text = (ZH / "notebooks" / "matrix-view.html").read_text(encoding="utf-8")
    assert re.search(r"图 \d+\.\d+", text)
    assert re.search(r"练习 \d+\.\d+", text)


def test_search_indexes_chinese_words():
    """With jieba installed, Sphinx's Chinese search splits Chinese text into words."""
    index = (ZH / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(re.search(r'"terms":\s*(\{.*?\})\s*[,}]', index, re.S).group(1))
    chinese = [t for t in terms if CJK.search(t)]
    assert len(chinese) > 50, "the Chinese edition's search index has no Chinese words"
    assert "注意力" in terms
