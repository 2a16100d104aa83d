r"""Structural diagrams of attention, drawn by code from the library itself.

Each function returns a new matplotlib ``Figure`` (white background, so it
reads in the book's dark mode too) and never calls ``plt.show()``. What a
diagram shows is computed, not typed: the shapes in :func:`qkv_pipeline` and
:func:`multi_head_flow` come from a forward pass of ``selfattn`` on a dummy
input, the band of :func:`truncated_band` is :func:`selfattn.masks.window_mask`,
the tiles of :func:`online_softmax_tiling` are the blocks that
:func:`selfattn.efficient.chunked_attention` visits, and the path lengths of
:func:`connectivity` come from a breadth-first search over its graphs. Change
the library and the pictures change with it.

Colours are those of :mod:`selfattn.lab.plotting` (the Okabe-Ito ``PALETTE``,
safe under colour-vision deficiency), and every colour code has a legend.
The text is large enough to read with the figure shrunk to a 700-pixel page.
The figures hold no Chinese; a chapter that adds a Chinese title calls
:func:`selfattn.lab.plotting.cjk_fallback` on the figure afterwards.
The only numbers not computed here are the memory sizes and bandwidths of
:func:`memory_hierarchy`, quoted from Dao et al. (2022) in
``MEMORY_HIERARCHY``.

Modules, in teaching order: :mod:`~selfattn.lab.diagrams.pipeline` (single-head
and multi-head pipelines), :mod:`~selfattn.lab.diagrams.paths` (what convolution,
recurrence and self-attention connect), :mod:`~selfattn.lab.diagrams.tiling`
(the truncated band, the tiles of the online softmax),
:mod:`~selfattn.lab.diagrams.lsh` (Reformer's buckets; the hashing itself is
:func:`selfattn.efficient.angular_lsh`), :mod:`~selfattn.lab.diagrams.memory` (the
GPU memory hierarchy); their shared drawing primitives are private
(``_draw``). Every figure is re-exported here:
``selfattn.lab.diagrams.qkv_pipeline``.
"""

from selfattn.lab.diagrams.lsh import lsh_buckets
from selfattn.lab.diagrams.memory import MemoryLevel, memory_hierarchy
from selfattn.lab.diagrams.paths import connectivity
from selfattn.lab.diagrams.pipeline import multi_head_flow, qkv_pipeline
from selfattn.lab.diagrams.tiling import online_softmax_tiling, truncated_band

__all__ = [  # in teaching order
    "qkv_pipeline",
    "multi_head_flow",
    "connectivity",
    "truncated_band",
    "online_softmax_tiling",
    "lsh_buckets",
    "MemoryLevel",
    "memory_hierarchy",
]
