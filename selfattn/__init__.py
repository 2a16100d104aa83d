"""selfattn: a small, exact, tested attention library for the course.

Shape legend (used in every docstring and on the book's notation page)::

    B    batch size              H    number of heads
    T_q  number of queries       T_k  number of keys (= values)
    T    sequence length when T_q = T_k
    D    model width             d_k  query/key width per head
                                 d_v  value width per head

Conventions:

* Row convention, batch first: a token is a *row*, ``q = x @ W_q``,
  ``q`` is ``(B, T_q, d_k)`` or ``(B, H, T_q, d_k)``. The lecture's column
  convention (``Q = W^q I``) lives in :mod:`selfattn.reference`.
* Masks are boolean, **True = may attend** (as in PyTorch's
  ``scaled_dot_product_attention``). A query with no allowed key gets
  all-zero weights and a zero output, never NaN.
* Functions return what they compute: ``out, weights =
  scaled_dot_product_attention(q, k, v)`` (also ``edge_attention``,
  ``gat_attention``, ``conv2d_as_attention``); a function that never forms
  the ``(T_q, T_k)`` weight matrix (the local, chunked, linear, Performer and
  Linformer attention of :mod:`selfattn.efficient`) returns ``out`` only.
  Modules keep no side outputs: ``module(x)``
  returns the output only, and ``module.attention_weights(x)`` (the same
  arguments) returns the weights.
* Randomness is explicit: functions that draw take a ``torch.Generator`` or
  ``numpy.random.Generator``; the library never seeds globally.
* Bad input raises ``ValueError`` / ``TypeError`` naming the argument and
  the shapes it saw.

Modules, in teaching order: ``reference`` (numpy oracle, column and row
conventions), ``scoring``, ``attention``, ``masks``, ``modules``,
``positional``, ``graph``, ``vision``, ``convolution``, ``complexity`` and
``paths`` (Table 1's counts), ``efficient``, ``transformer`` (the encoder and
decoder blocks), ``seq2seq`` (the models made of them). The library depends
on torch and numpy only. The course's bench (figures, diagrams, training,
data, seeds, notebook glue, measuring) is the subpackage :mod:`selfattn.lab`,
which the library never imports; its extra dependencies come with
``pip install "selfattn[lab]"``. Submodules load on first use:
``selfattn.positional`` works after ``import selfattn``.
"""

from __future__ import annotations

import importlib

from selfattn.attention import (
    masked_softmax,
    relu_weights,
    scaled_dot_product_attention,
)
from selfattn.masks import causal_mask, graph_mask, length_mask, window_mask
from selfattn.modules import MultiHeadAttention, SelfAttention
from selfattn.scoring import (
    AdditiveScore,
    BilinearScore,
    cosine_score,
    dot_score,
    scaled_dot_score,
)
from selfattn.transformer import TransformerEncoderBlock

__version__ = "2.0.0"

_SUBMODULES = (
    "reference",
    "scoring",
    "attention",
    "masks",
    "modules",
    "positional",
    "graph",
    "vision",
    "convolution",
    "complexity",
    "paths",
    "efficient",
    "transformer",
    "seq2seq",
    "lab",
)

__all__ = [
    "AdditiveScore",
    "BilinearScore",
    "MultiHeadAttention",
    "SelfAttention",
    "TransformerEncoderBlock",
    "causal_mask",
    "cosine_score",
    "dot_score",
    "graph_mask",
    "masked_softmax",
    "length_mask",
    "relu_weights",
    "scaled_dot_product_attention",
    "scaled_dot_score",
    "window_mask",
]


def __getattr__(name: str):
    """Load submodules lazily (``selfattn.positional`` after ``import selfattn``)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"selfattn.{name}")
    raise AttributeError(f"module 'selfattn' has no attribute {name!r}")
