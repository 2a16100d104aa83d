"""The PDF edition's title page states its licences (``make pdf`` first), and
LICENSE names every font the PDF embeds.

Text, figures and notebooks: CC BY-SA 4.0; code: MIT, with both URLs, as
``book/_latex/booklicence.sty`` prints them at the foot of the title page.
Read with poppler's ``pdftotext``; without it the test skips, except in CI
(``CI=true``), where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "_build" / "self-attention-executable.pdf"


def need(tool: str) -> None:
    """Skip without a poppler tool; under CI=true, fail instead."""
    if shutil.which(tool) is None:
        reason = f"{tool} is missing (Debian: apt-get install poppler-utils)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so the PDF checks fail instead of skip")
        pytest.skip(reason)


def first_page_text() -> str:
    """The PDF's first page as text."""
    need("pdftotext")
    assert PDF.is_file(), "no PDF: run `make pdf` first"
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", "-f", "1", "-l", "1", str(PDF), "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_the_title_page_states_both_licences() -> None:
    first = first_page_text()
    text = re.sub(r"\s+", " ", first)
    assert "Self-attention, executable" in text, "page 1 is not the title page"
    assert "CC BY-SA 4.0" in text and "MIT licence" in text, text
    assert "creativecommons.org/licenses/by-sa/4.0" in text.replace(" ", "")
    assert "opensource.org/license/mit" in text.replace(" ", "")


def test_the_title_page_gives_the_version_and_the_addresses_on_a4() -> None:
    """Issue 31, F14 (book/_ext/pdf_titlepage.py; A4 in _config.yml)."""
    need("pdfinfo")
    first = first_page_text()
    squeezed = re.sub(r"\s+", "", first)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert f"Version{version['version']}." in squeezed, first
    url = yaml.safe_load((ROOT / "_config.yml").read_text("utf-8"))["repository"]["url"]
    assert url in squeezed, first
    info = subprocess.run(
        ["pdfinfo", str(PDF)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert re.search(r"Page size:.*\(A4\)", info), info


# The fonts the PDF may embed, and the words of LICENSE that name each (issue
# 31, F16); a font the build starts to embed fails until LICENSE names it.
FONTS = {
    r"Free(Serif|Sans|Mono)[\w-]*": "GNU FreeFont",
    r"LatinModernMath-[\w-]+": "Latin Modern Math",
    r"MSAM10|MSBM10": "The AMS symbol fonts",
    r"Noto(Serif|Sans)CJK[\w-]*": "Noto Serif CJK and Noto Sans CJK",
    r"WenQuanYi[\w-]*": "WenQuanYi Micro Hei",
    r"DejaVu[\w-]*": "DejaVu Sans, matplotlib's font",  # the vector figures
    r"STIX[\w-]*": "The STIX fonts",  # matplotlib's large mathematical symbols
    r"Cm[a-z]+\d+": "The BaKoMa Computer Modern fonts",  # matplotlib's mathtext
}


def test_license_names_every_font_the_pdf_embeds() -> None:
    need("pdffonts")
    assert PDF.is_file(), "no PDF: run `make pdf` first"
    rows = subprocess.run(
        ["pdffonts", str(PDF)], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()[2:]
    fonts = {re.sub(r"^[A-Z]{6}\+", "", row.split()[0]) for row in rows}
    licence = re.sub(r"\s+", " ", (ROOT / "LICENSE").read_text(encoding="utf-8"))
    unnamed = [
        font
        for font in sorted(fonts)
        if not any(
            re.fullmatch(rx, font.removesuffix("-Identity-H")) and words in licence
            for rx, words in FONTS.items()
        )
    ]
    assert fonts and unnamed == [], f"fonts LICENSE does not name: {unnamed}"
