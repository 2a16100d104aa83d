r"""The Transformer's blocks: an encoder block, a decoder block and its cache.

:class:`TransformerEncoderBlock` (self-attention and a feed-forward network)
and :class:`TransformerDecoderBlock` (masked self-attention, cross-attention
and a feed-forward network, with :class:`KVCache` for decoding one position
at a time), pre-norm (Vaswani et al., 2017; Ba et al., 2016). The models made
of them are in :mod:`selfattn.seq2seq`.

Modules: :mod:`~selfattn.transformer.encoder`,
:mod:`~selfattn.transformer.decoder`. Everything public is re-exported here.
"""

from selfattn.transformer.decoder import KVCache, TransformerDecoderBlock
from selfattn.transformer.encoder import TransformerEncoderBlock

__all__ = ["TransformerEncoderBlock", "TransformerDecoderBlock", "KVCache"]
