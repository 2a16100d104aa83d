"""Chinese in the course's figures: find a font with CJK glyphs, and fall back to it.

Matplotlib's default font, DejaVu Sans, has no Chinese glyphs: a figure with a
Chinese token or title would show empty boxes. :func:`cjk_fallback` gives the
texts that hold Chinese a fallback font, :func:`cjk_font`'s choice from
``CJK_FONTS``; every function of :mod:`selfattn.lab.plotting` calls it.
"""

from __future__ import annotations

import contextlib
import functools
import re

from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = ["CJK_FONTS", "cjk_font", "cjk_fallback"]

# Fonts with Chinese glyphs, in order of preference (Debian: fonts-noto-cjk,
# fonts-wqy-microhei; "JP" is the first face of Noto's .ttc files).
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK JP",
    "Source Han Sans",
    "Microsoft YaHei",
    "SimHei",
    "PingFang SC",
    "Heiti SC",
    "Arial Unicode MS",
)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


@functools.cache
def cjk_font() -> str | None:
    """The name of an installed font with Chinese glyphs (from ``CJK_FONTS``).

    Matplotlib lists the system's fonts once and caches the list on disk, so a
    font installed after matplotlib first ran (on a CI machine, a fresh
    laptop) is not in it, and Chinese shows as empty boxes with a warning
    "Glyph ... missing from font(s) DejaVu Sans". When no font of
    ``CJK_FONTS`` is listed, the system's font files that the list lacks are
    added to it, for this process (the cache on disk is left as it is).

    Returns:
        The font's family name, or None if no such font is installed.
    """

    def listed() -> str | None:
        names = {f.name for f in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in names), None)

    if listed() is None:
        known = {f.fname for f in font_manager.fontManager.ttflist}
        for path in font_manager.findSystemFonts():
            if path not in known:
                with contextlib.suppress(OSError, RuntimeError, ValueError):
                    font_manager.fontManager.addfont(path)
    return listed()


def cjk_fallback(artist: Figure | Axes) -> None:
    """Let the Chinese characters in ``artist``'s texts fall back to ``cjk_font()``.

    Each text with Chinese in it keeps its fonts and gets the CJK font last in
    its family list, which matplotlib uses for the glyphs the others lack.
    Text without Chinese is left as it is; nothing changes where no CJK font
    is installed.

    Args:
        artist: a figure or axes; every text in it is looked at (titles,
            labels, tick labels, legends, annotations).
    """
    texts = [t for t in artist.findobj(Text) if _CJK.search(t.get_text())]
    font = cjk_font() if texts else None
    for text in texts if font else ():
        families = [f for f in text.get_fontfamily() if f != font]
        text.set_fontfamily([*families, font])
