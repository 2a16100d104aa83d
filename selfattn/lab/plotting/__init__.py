"""Figures for the course: attention heatmaps, encodings, scaling and training.

Every function draws on an ``ax`` you pass (or on a new figure), returns what
it drew on and never calls ``plt.show()``; importing the module changes no
global matplotlib setting. Colours are chosen for colour-vision deficiency
(CVD):

* ``CMAP = "viridis"`` for non-negative data such as attention weights:
  perceptually uniform, its lightness rises monotonically (it reads in
  greyscale) and it stays ordered for the common CVD types.
* ``DIVERGING_CMAP = "RdBu_r"`` for signed data in ``[-1, 1]`` such as
  sinusoidal encodings: ColorBrewer's red-blue scheme is rated colour-blind
  safe, because red against blue survives protanopia and deuteranopia (unlike
  red against green), and its light centre makes zero neutral.
* ``PALETTE``: the Okabe-Ito qualitative colours for lines, distinguishable
  under all common CVD types; lines also get distinct markers so they never
  rely on colour alone.

Chinese in a figure (a token, a title) needs a font with CJK glyphs, which
matplotlib's default, DejaVu Sans, lacks: every function here lets such text
fall back to ``cjk_font()`` (``cjk_fallback``, which you can call on a figure
drawn by hand too).

Modules: :mod:`~selfattn.lab.plotting.heatmaps`,
:mod:`~selfattn.lab.plotting.curves`, :mod:`~selfattn.lab.plotting.graphs`;
the fonts are :mod:`selfattn.lab.fonts`. Everything public is re-exported
here: ``selfattn.lab.plotting.attention_heatmap``.
"""

from selfattn.lab.fonts import CJK_FONTS, cjk_fallback, cjk_font
from selfattn.lab.plotting._style import CMAP, DIVERGING_CMAP, MARKERS, PALETTE
from selfattn.lab.plotting.curves import loglog_plot
from selfattn.lab.plotting.graphs import graph_attention_plot
from selfattn.lab.plotting.heatmaps import (
    attention_heads,
    attention_heatmap,
    positional_encoding_heatmap,
)

__all__ = [
    "CJK_FONTS",
    "CMAP",
    "DIVERGING_CMAP",
    "MARKERS",
    "PALETTE",
    "attention_heatmap",
    "attention_heads",
    "cjk_fallback",
    "cjk_font",
    "graph_attention_plot",
    "loglog_plot",
    "positional_encoding_heatmap",
]
