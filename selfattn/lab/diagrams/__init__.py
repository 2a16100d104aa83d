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
safe under colour-vision deficiency), one per role (queries blue, keys
vermillion, values green, scores and weights orange, output purple), and every
colour code has a legend. The text is large enough to read with the figure
shrunk to a 700-pixel page. The figures hold no Chinese; a chapter that adds a
Chinese title calls :func:`selfattn.lab.plotting.cjk_fallback` on the figure
afterwards. The only numbers not computed here are the memory sizes and
bandwidths of :func:`memory_hierarchy`, quoted from Dao et al. (2022) in
``MEMORY_HIERARCHY``.

One module per figure (or pair of figures), in teaching order, as listed
below; each is drawn from the shared private primitives of ``_draw`` (a matrix,
a labelled arrow, a legend by role), and every figure is re-exported here:
``selfattn.lab.diagrams.qkv_pipeline``.
"""

from selfattn.lab.diagrams.addressing import encoder_decoder
from selfattn.lab.diagrams.decoder_only import decoder_only_masks
from selfattn.lab.diagrams.favourites import favourite_keys, favourite_stats
from selfattn.lab.diagrams.first_output import first_output
from selfattn.lab.diagrams.heads import multi_head_flow
from selfattn.lab.diagrams.kv_memory import key_value_memory
from selfattn.lab.diagrams.lsh import lsh_buckets
from selfattn.lab.diagrams.memory import MemoryLevel, memory_hierarchy
from selfattn.lab.diagrams.paths import connectivity
from selfattn.lab.diagrams.pipeline import qkv_pipeline
from selfattn.lab.diagrams.products import score_product
from selfattn.lab.diagrams.receptive import receptive_fields
from selfattn.lab.diagrams.rotation import offset_circles
from selfattn.lab.diagrams.taggers import tagger_reads, tagger_views
from selfattn.lab.diagrams.tiling import online_softmax_tiling, truncated_band
from selfattn.lab.diagrams.vit import effective_keys, patch_attention, vit_pipeline

__all__ = [  # in teaching order
    "encoder_decoder",
    "key_value_memory",
    "qkv_pipeline",
    "first_output",
    "score_product",
    "multi_head_flow",
    "offset_circles",
    "connectivity",
    "receptive_fields",
    "tagger_views",
    "tagger_reads",
    "truncated_band",
    "vit_pipeline",
    "patch_attention",
    "effective_keys",
    "favourite_keys",
    "favourite_stats",
    "online_softmax_tiling",
    "lsh_buckets",
    "MemoryLevel",
    "memory_hierarchy",
    "decoder_only_masks",
]
