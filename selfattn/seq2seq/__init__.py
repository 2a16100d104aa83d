r"""Sequence-to-sequence models: a Transformer and a recurrent baseline.

* :class:`EncoderDecoderTransformer`: encoder blocks over the source, decoder
  blocks (causal self-attention, cross-attention) over the target
  (Vaswani et al., 2017).
* :class:`BahdanauSeq2Seq`: a bidirectional GRU encoder and a GRU decoder
  with additive attention (Bahdanau et al., 2015).

Tokens are integer tensors ``(B, T)``. Training uses *teacher forcing*: the
model reads the true target shifted right (``tgt``, starting with a
begin-of-sequence token) and returns logits ``(B, T, V)`` for the next token
at every position at once. ``generate`` decodes greedily, one token at a time
(the Transformer through its :class:`~selfattn.transformer.KVCache`), and
fills the positions after ``eos_id`` with ``pad_id``.

Modules: :mod:`~selfattn.seq2seq.encoder_decoder`,
:mod:`~selfattn.seq2seq.bahdanau`. Everything public is re-exported here.
"""

from selfattn.seq2seq.bahdanau import BahdanauSeq2Seq
from selfattn.seq2seq.encoder_decoder import EncoderDecoderTransformer

__all__ = ["BahdanauSeq2Seq", "EncoderDecoderTransformer"]
