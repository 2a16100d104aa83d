r"""Attention on graphs: every node attends only to its neighbours.

A graph is a set of node vectors ``x`` ``(N, F)`` plus edges. The edges say
which pairs are related, so attention is computed only along them: the mask
of :func:`selfattn.masks.graph_mask` (True = may attend) sets every other
weight to exactly zero. Two scores are offered:

* **dot product** (:func:`edge_attention`): ordinary scaled dot-product
  self-attention restricted to edges; on a complete graph it *is* ordinary
  self-attention.
* **graph attention network, GAT** (Veličković et al., 2018), per head
  :math:`h`, with :math:`z_i = W_h x_i`:

  .. math::

      e_{ij} = \operatorname{LeakyReLU}\big(a_h^\top [\, z_i \,\|\, z_j \,]\big),
      \qquad
      \alpha_{ij} = \frac{\exp e_{ij}}{\sum_{l \in \mathcal{N}(i)} \exp e_{il}},
      \qquad
      x'_i = \sum_{j \in \mathcal{N}(i)} \alpha_{ij}\, z_j ,

  where :math:`\mathcal{N}(i)` are the neighbours of :math:`i` (itself
  included when the mask has self-loops). Heads are concatenated (hidden
  layers) or averaged (the output layer).

The implementation is dense, ``(N, N)`` per head: exact and simple, right for
graphs of up to a few thousand nodes; large sparse graphs need edge lists.

Modules: :mod:`~selfattn.graph.functional` (the two scores as functions),
:mod:`~selfattn.graph.layers` (a GAT layer and the two-layer network).
Everything public is re-exported here: ``selfattn.graph.GAT``.
"""

from selfattn.graph.functional import edge_attention, gat_attention
from selfattn.graph.layers import GAT, GraphAttentionLayer

__all__ = ["edge_attention", "gat_attention", "GraphAttentionLayer", "GAT"]
