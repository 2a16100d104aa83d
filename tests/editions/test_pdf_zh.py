"""The Chinese edition's PDF (``make pdf-zh``): built, Chinese, no glyph lost.

Run by ``make pdf-zh-check`` after ``make book-zh``. Oracles: the last xelatex
log (a CJK character that no font has is reported there as "Missing
character", and is silently dropped from the page) and the PDF's own text
(``pdftotext``, poppler-utils).
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
LATEX = ROOT / "_build" / "pdf-zh" / "_build" / "latex"
PDF = ROOT / "_build" / "self-attention-executable-zh.pdf"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _text() -> str:
    assert PDF.is_file(), "no Chinese PDF: run `make pdf-zh`"
    out = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(PDF), "-"], capture_output=True, check=True
    )
    return out.stdout.decode("utf-8")


def test_the_title_page_gives_the_version_and_the_url_on_a4():
    """As the English PDF's (tests/editions/test_licence_pdf.py): A4 (PAPER=
    letter aside), and the version and the repository's address on page 1,
    in the Chinese notice of book/_latex/booklicence.sty."""
    assert PDF.is_file(), "no Chinese PDF: run `make pdf-zh`"
    first = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", "-f", "1", "-l", "1", str(PDF), "-"],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    squeezed = re.sub(r"\s+", "", first)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert f"版本{version['version']}。" in squeezed, first
    url = yaml.safe_load((ROOT / "_config.yml").read_text("utf-8"))["repository"]["url"]
    assert url in squeezed, first
    info = subprocess.run(
        ["pdfinfo", str(PDF)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert re.search(r"Page size:.*\(A4\)", info), info


def test_no_character_is_missing_from_any_font():
    log = (LATEX / "self-attention-executable.log").read_text(errors="replace")
    missing = sorted(set(re.findall(r"Missing character: There is no (\S+)", log)))
    assert missing == [], f"characters no font has (dropped from the PDF): {missing}"


def test_the_pdf_is_the_chinese_edition():
    text = _text()
    assert "可执行的自注意力" in text  # its title
    front = text[: text.index("入门")]  # the title page and the contents' heading
    assert "许可证" in front and "目录" in front, "the front matter is not in Chinese"
    assert len(CJK.findall(text)) > 20000, "too little Chinese for the Chinese edition"
    # references as the Chinese edition writes them (Sphinx's zh_CN catalogue)
    assert re.search(r"图 ?\d+\.\d+", text) and re.search(r"练习 ?\d+\.\d+", text)
    # a translated chapter's heading
    assert "逐步计算自注意力" in text


def test_the_chinese_intro_links_to_the_chinese_pdf():
    """make pdf-zh puts the PDF beside the Chinese book, where its intro links."""
    html = ROOT / "_build" / "html" / "zh"
    intro = (html / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="../self-attention-executable-zh.pdf"' in intro
    assert (html / "self-attention-executable-zh.pdf").is_file()
