r"""Positional encodings: telling a permutation-equivariant layer about order.

Self-attention treats its input as a set: permute the tokens and the outputs
are permuted the same way. Position must be added to the input.

* Sinusoidal (Vaswani et al., 2017), with :math:`\omega_f = 1/\text{base}^{2f/d}`:

  .. math::

      p_{i, 2f} = \sin(i\,\omega_f),\qquad p_{i, 2f+1} = \cos(i\,\omega_f),
      \qquad i = 0, 1, \dots

  A fixed offset :math:`\delta` is a rotation of every pair
  :math:`(p_{i,2f}, p_{i,2f+1})`, independent of :math:`i`
  (:func:`offset_rotation`).
* Learned: a table of ``max_len`` trainable vectors; it cannot encode a
  position it has no row for (:class:`LearnedPositionalEmbedding`).
* Rotary, RoPE (Su et al., 2024): rotate the pairs of queries and keys by
  :math:`m\,\omega_f`, so :math:`\langle \text{rope}(q, m),
  \text{rope}(k, n)\rangle` depends only on :math:`m - n`
  (:func:`apply_rotary`).

Angles are computed in float64 and cast, so the tables are exact to the
precision of the requested dtype.

Modules: :mod:`~selfattn.positional.sinusoidal`,
:mod:`~selfattn.positional.learned`, :mod:`~selfattn.positional.rotary`.
Everything public is re-exported here: ``selfattn.positional.apply_rotary``.
"""

from selfattn.positional.learned import LearnedPositionalEmbedding
from selfattn.positional.rotary import apply_rotary
from selfattn.positional.sinusoidal import (
    SinusoidalPositionalEncoding,
    frequencies,
    offset_matrix,
    offset_rotation,
    sinusoidal_encoding,
)

__all__ = [
    "frequencies",
    "sinusoidal_encoding",
    "offset_rotation",
    "offset_matrix",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    "apply_rotary",
]
