r"""Structural diagrams of attention, drawn by code from the library itself.

Each function returns a new matplotlib ``Figure`` (white background, so it
reads in the book's dark mode too) and never calls ``plt.show()``. What a
diagram shows is computed, not typed (the shapes of :func:`qkv_pipeline` come
from a forward pass, the band of :func:`truncated_band` is
:func:`selfattn.masks.window_mask`, ...): change the library and the pictures
change with it. The only numbers typed are the memory sizes and bandwidths of
:func:`memory_hierarchy`, quoted from Dao et al. (2022).

Colours are the Okabe-Ito ``PALETTE`` of :mod:`selfattn.lab.plotting` (safe
under colour-vision deficiency), one per role (queries blue, keys vermillion,
values green, scores and weights orange, output purple), each with a legend.
The text reads at a 700-pixel page width. The figures hold no Chinese; a
chapter adds a Chinese title with :func:`selfattn.lab.plotting.cjk_fallback`.

One module per figure (or pair), in teaching order, each drawn from the
private primitives of ``_draw``; every figure is re-exported here.
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
