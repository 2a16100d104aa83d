r"""Numpy reference implementations: the oracle, in both conventions.

Independent of torch, written for clarity, computed in float64. The library
(:mod:`selfattn.attention`) is tested against these functions.

**Column convention** (the lecture notes). The inputs :math:`a^1, \dots, a^T`
are the *columns* of :math:`I \in \mathbb{R}^{D \times T}`:

.. math::

    Q = W^q I,\quad K = W^k I,\quad V = W^v I,\qquad
    A = K^\top Q\ \ (T_k \times T_q),\qquad
    A' = \operatorname{softmax}_{\text{columns}}(A),\qquad O = V A'.

Column ``j`` of ``A`` holds the scores of query ``j``; each column of ``A'``
sums to 1; column ``j`` of ``O`` is the output :math:`b^j`.

**Row convention** (PyTorch, and the rest of this library). A token is a
*row* of :math:`X \in \mathbb{R}^{T \times D}`: ``Q = X W_q``, weights
``softmax_rows(Q K^T)``, ``out = weights V``.

**Correspondence.** With :math:`X = I^\top` and
:math:`W_q = (W^q)^\top` (likewise ``W_k``, ``W_v``), every row quantity is
the transpose of its column twin:
:math:`Q_{\text{row}} = X W_q = (W^q I)^\top = Q_{\text{col}}^\top`,
:math:`Q_{\text{row}} K_{\text{row}}^\top = Q^\top K = (K^\top Q)^\top = A^\top`,
weights :math:`= A'^\top` and :math:`\text{out} = A'^\top V^\top = (V A')^\top
= O^\top`.

**Scale.** Everywhere in ``selfattn``, ``scale=None`` means
:math:`1/\sqrt{d_k}` (Vaswani et al., 2017). The lecture's matrix view uses
plain dot products: pass ``scale=1.0`` to reproduce it.

**Masks** are boolean, True = may attend; a query with no allowed key gets
zero weights and a zero output.

Modules: :mod:`~selfattn.reference.columns` (the column convention),
:mod:`~selfattn.reference.rows` (the row convention), and the softmax both
use. Everything public is re-exported here: ``selfattn.reference.softmax``.
"""

from selfattn.reference._common import masked_softmax, softmax
from selfattn.reference.columns import (
    ColumnAttention,
    column_to_row_weights,
    columns_to_rows,
    self_attention_columns,
)
from selfattn.reference.rows import attention_loop, attention_rows

__all__ = [
    "ColumnAttention",
    "softmax",
    "masked_softmax",
    "self_attention_columns",
    "attention_rows",
    "attention_loop",
    "columns_to_rows",
    "column_to_row_weights",
]
