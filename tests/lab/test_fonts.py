"""Chinese in figures renders with a CJK font, on a fresh machine too.

Matplotlib's default font has no CJK glyphs, and its font list is cached the
first time it runs, so fonts installed later are missing from it: a figure
then shows empty boxes and warns "Glyph 27880 (...) missing from font(s)
DejaVu Sans". ``selfattn.lab.plotting`` falls back to a CJK font and refreshes a
stale list (``cjk_font``, ``cjk_fallback``); these tests hold it to that, and
hold every committed notebook output free of the warning.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from selfattn.lab import plotting  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GLYPH_MISSING = re.compile(r"Glyph \d+ .{0,80}?missing from (?:current )?font", re.S)


def output_texts(output: dict) -> list[str]:
    """The text of one notebook output: a stream, an error, or text data."""
    texts = ["".join(output.get("text", "")), "\n".join(output.get("traceback", []))]
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/"):
            texts.append("".join(value))
    return texts


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_notebook_output_warns_of_a_missing_glyph(nb: Path) -> None:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    found = [
        f"cell {i}: {m.group(0)!r}"
        for i, cell in enumerate(cells)
        for output in cell.get("outputs", [])
        for text in output_texts(output)
        for m in GLYPH_MISSING.finditer(text)
    ]
    assert not found, f"a figure lacks glyphs (use selfattn.lab.plotting): {found[:3]}"


def test_the_pattern_finds_matplotlibs_warning() -> None:
    warning = "Glyph 27880 (\\N{CJK UNIFIED IDEOGRAPH-6CE8}) missing from font(s) "
    assert GLYPH_MISSING.search(warning + "DejaVu Sans.")
    assert GLYPH_MISSING.search("Glyph 27880 missing from current font.")


def no_cjk_font_installed() -> bool:
    return not any(
        re.search(r"cjk|wqy|wenquanyi|sourcehan|simhei|msyh", Path(p).name, re.I)
        for p in font_manager.findSystemFonts()
    )


needs_cjk_font = pytest.mark.skipif(
    no_cjk_font_installed(),
    reason="no CJK font installed (Debian: fonts-noto-cjk or fonts-wqy-microhei)",
)


@needs_cjk_font
def test_a_chinese_label_renders_without_a_missing_glyph() -> None:
    tokens = ["我", "爱", "注意力"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax = plotting.attention_heatmap(
            torch.eye(3), queries=tokens, keys=tokens, title="自注意力"
        )
        ax.figure.canvas.draw()
    plt.close(ax.figure)
    glyphs = [str(w.message) for w in caught if GLYPH_MISSING.search(str(w.message))]
    assert not glyphs, glyphs
    font = plotting.cjk_font()
    assert font in plotting.CJK_FONTS
    assert ax.title.get_fontfamily()[-1] == font
    assert all(t.get_fontfamily()[-1] == font for t in ax.get_yticklabels())


def test_text_without_chinese_keeps_its_font() -> None:
    ax = plotting.attention_heatmap(torch.eye(2), queries=["a", "b"], title="plain")
    plt.close(ax.figure)
    assert ax.title.get_fontfamily() == ["sans-serif"]


@needs_cjk_font
def test_a_font_list_cached_before_the_fonts_were_installed_is_refreshed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fresh-machine trap: matplotlib's cached list predates the CJK fonts."""
    stale = copy.deepcopy(font_manager.fontManager)
    cjk_files = {f.fname for f in stale.ttflist if f.name in plotting.CJK_FONTS}
    stale.ttflist = [f for f in stale.ttflist if f.fname not in cjk_files]
    monkeypatch.setattr(font_manager, "fontManager", stale)
    plotting.cjk_font.cache_clear()
    try:
        font = plotting.cjk_font()
        assert font in plotting.CJK_FONTS
        assert font in {f.name for f in stale.ttflist}
    finally:
        plotting.cjk_font.cache_clear()
