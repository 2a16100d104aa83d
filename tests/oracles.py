"""The oracles that several test files share, and the inputs they are fed.

An oracle computes what the library should return without the library: a
formula written out with ``torch.softmax`` on explicitly masked scores, or a
Python loop over positions. Each oracle lives here once; a test file imports
it (``from oracles import dense_attention``). An oracle that one file alone
uses stays in that file, next to its tests.
"""

from __future__ import annotations

import math

import torch
from torch import nn

# --- attention, written out --------------------------------------------------


def softmax_oracle(scores, mask=None, dim=-1):
    """Softmax with the forbidden scores at -inf, then ``torch.softmax``.

    ``mask`` is bool, True = may attend, and broadcasts to ``scores``. A row
    with no allowed entry gets zero weights (softmax's NaN set to 0), the
    library's rule.
    """
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=dim).nan_to_num(0.0)


def dense_attention(q, k, v, mask=None, *, causal=False, scale=None):
    """softmax(q k^T * scale) v over the allowed keys: ``(..., T_q, d_v)``.

    ``causal`` is top-left aligned (key j <= query i); ``mask`` (bool, True =
    may attend) broadcasts to ``(..., T_q, T_k)``. A query with no allowed key
    gets a zero output.
    """
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (..., T_q, T_k)
    allowed = torch.ones(T_q, T_k, dtype=torch.bool)
    if causal:
        allowed = torch.arange(T_k) <= torch.arange(T_q)[:, None]  # (T_q, T_k)
    if mask is not None:
        allowed = allowed & mask
    return softmax_oracle(scores, allowed) @ v  # (..., T_q, d_v)


def loop_mask(T_q, T_k, allowed):
    """The ``(T_q, T_k)`` bool mask with ``allowed(i, j)`` at query i, key j,
    one entry at a time (also for ``T_q = 0`` or ``T_k = 0``)."""
    return torch.tensor(
        [[allowed(i, j) for j in range(T_k)] for i in range(T_q)], dtype=torch.bool
    ).reshape(T_q, T_k)


# --- positions ---------------------------------------------------------------


def p_loop(i: float, dim: int, base: float = 10000.0) -> list[float]:
    """p[i, 2j] = sin(i / base^(2j/d)), p[i, 2j+1] = cos(i / base^(2j/d))."""
    row = []
    for j in range(dim // 2):
        angle = i / base ** (2 * j / dim)
        row += [math.sin(angle), math.cos(angle)]
    return row


def rope_loop(x: torch.Tensor, m: float, base: float = 10000.0) -> torch.Tensor:
    """Rotate pair (2j, 2j+1) of the vector x by the angle m * w_j, one at a time."""
    d = x.shape[-1]
    out = torch.empty_like(x)
    for j in range(d // 2):
        a = m / base ** (2 * j / d)
        R = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
        out[2 * j : 2 * j + 2] = torch.tensor(R, dtype=x.dtype) @ x[2 * j : 2 * j + 2]
    return out


# --- inputs ------------------------------------------------------------------


def qkv(gen, *lead, T_q=20, T_k=None, d_k=8, d_v=None, dtype=torch.float64):
    """Random q ``(*lead, T_q, d_k)``, k ``(*lead, T_k, d_k)``, v ``(*lead, T_k, d_v)``,
    drawn in that order from ``gen`` (``T_k = T_q``, ``d_v = d_k`` unless given)."""
    T_k = T_q if T_k is None else T_k
    d_v = d_k if d_v is None else d_v
    q = torch.randn(*lead, T_q, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*lead, T_k, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*lead, T_k, d_v, generator=gen, dtype=dtype)
    return q, k, v


def separable(gen, n=200):
    """Two classes split by the line x0 + 2 x1 = 0, with a margin of 0.1."""
    X = torch.randn(n, 2, generator=gen)
    X = X[(X[:, 0] + 2 * X[:, 1]).abs() > 0.1]
    y = (X[:, 0] + 2 * X[:, 1] > 0).long()
    return X, y


def new_linear(seed=0):
    """nn.Linear(2, 2) initialised from an explicit generator (no global seed)."""
    model, g = nn.Linear(2, 2), torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model
