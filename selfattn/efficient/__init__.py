r"""Efficient attention: exact (local, chunked) and approximate (linear, low-rank).

Dense attention builds a ``(T_q, T_k)`` score matrix: time and memory
:math:`O(T^2)`. The functions here avoid that matrix in three ways.

* **Exact, same result, less memory.** :func:`local_attention` computes only
  the band ``|i - j| <= radius`` (restricted self-attention, Vaswani et al.,
  2017, Table 1). :func:`chunked_attention` computes *full* attention block by
  block with an online softmax (Milakov & Gimelshein, 2018; Rabe & Staats,
  2021), the idea behind FlashAttention (Dao et al., 2022): memory
  :math:`O(T d)` instead of :math:`O(T^2)`.
* **A different model, linear time.** :func:`linear_attention` replaces
  :math:`\exp(q^\top k)` by :math:`\phi(q)^\top \phi(k)` (Katharopoulos et al.,
  2020); causal, it is an RNN (:func:`linear_attention_recurrent`).
* **An approximation of softmax attention.** :func:`performer_attention`
  (random features, Choromanski et al., 2021) and :func:`linformer_attention`
  (low-rank projection along the sequence, Wang et al., 2020).

Shapes follow the package legend: ``q`` ``(..., T_q, d_k)``, ``k``
``(..., T_k, d_k)``, ``v`` ``(..., T_k, d_v)``; masks are bool, True = may attend.

Modules: :mod:`~selfattn.efficient.exact` (local, chunked),
:mod:`~selfattn.efficient.flash` (FlashAttention's backward pass, in pure
PyTorch), :mod:`~selfattn.efficient.linear` (linear attention, recurrent
form), :mod:`~selfattn.efficient.performer`,
:mod:`~selfattn.efficient.linformer`, :mod:`~selfattn.efficient.lsh`
(Reformer's hashing); the blocks that the exact ones share are in
``_blocks``.
Everything public is re-exported here: ``selfattn.efficient.local_attention``.
"""

from selfattn.efficient._blocks import tiles
from selfattn.efficient.exact import chunked_attention, local_attention
from selfattn.efficient.flash import FlashAttention
from selfattn.efficient.linear import (
    elu_feature_map,
    linear_attention,
    linear_attention_recurrent,
)
from selfattn.efficient.linformer import linformer_attention
from selfattn.efficient.lsh import angular_lsh
from selfattn.efficient.performer import (
    orthogonal_random_matrix,
    performer_attention,
    performer_features,
)

__all__ = [
    "local_attention",
    "chunked_attention",
    "tiles",
    "FlashAttention",
    "elu_feature_map",
    "linear_attention",
    "linear_attention_recurrent",
    "orthogonal_random_matrix",
    "performer_features",
    "performer_attention",
    "linformer_attention",
    "angular_lsh",
]
