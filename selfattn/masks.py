"""Boolean attention masks. One convention everywhere: True = may attend.

Every mask here is a ``torch.bool`` tensor that broadcasts against scores of
shape ``(..., T_q, T_k)``: row ``i`` says which keys query ``i`` may attend.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import Tensor

from selfattn._checks import check_flag, check_int, shape_str

__all__ = [
    "causal_mask",
    "length_mask",
    "window_mask",
    "graph_mask",
    "from_key_padding_mask",
]


class GraphLike(Protocol):
    """A graph with ``nodes`` and ``edges`` (pairs of nodes), such as a
    networkx graph: an ``adjacency`` that :func:`graph_mask` reads."""

    nodes: Iterable
    edges: Iterable


def causal_mask(
    T_q: int, T_k: int | None = None, *, device: torch.device | str | None = None
) -> Tensor:
    """Query ``i`` may attend keys ``j <= i`` (top-left aligned, like PyTorch).

    Taught in :doc:`/notebooks/matrix-view`.

    Args:
        T_q: number of queries; T_k: number of keys (default ``T_q``); 0 or
            more.
    Returns:
        ``(T_q, T_k)`` bool, lower triangular.

    Examples:
        >>> causal_mask(3)
        tensor([[ True, False, False],
                [ True,  True, False],
                [ True,  True,  True]])
    """
    T_q = check_int("T_q", T_q, minimum=0)
    T_k = T_q if T_k is None else check_int("T_k", T_k, minimum=0)
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril()


def length_mask(lengths: Tensor | list[int], T: int) -> Tensor:
    """True at the real tokens of padded sequences: key ``j`` of sequence ``b``
    may be attended iff ``j < lengths[b]``.

    The polarity is the library's (True = may attend), the opposite of
    PyTorch's ``key_padding_mask``, which is True at the *padding*
    (:func:`from_key_padding_mask` translates).

    Taught in :doc:`/notebooks/scoring-functions` and
    :doc:`/notebooks/sequence-labelling`.

    Args:
        lengths: ``(B,)`` integers, the real length of each sequence.
        T: the padded length (0 or more).
    Returns:
        ``(B, 1, T)`` bool, broadcastable to scores ``(B, T_q, T)``; use
        ``mask[:, None]`` for per-head scores ``(B, H, T_q, T)``.

    Examples:
        >>> length_mask([2, 3], T=4)  # two sequences padded to length 4
        tensor([[[ True,  True, False, False]],
        <BLANKLINE>
                [[ True,  True,  True, False]]])
    """
    check_int("T", T, minimum=0)
    lens = torch.as_tensor(lengths)
    if lens.dim() != 1 or lens.is_floating_point() or lens.dtype == torch.bool:
        raise ValueError(
            f"lengths must be a 1-D integer sequence (B,), got shape "
            f"{shape_str(lens)} and dtype {lens.dtype}"
        )
    if ((lens < 0) | (lens > T)).any():
        raise ValueError(f"lengths must lie in [0, T={T}], got {lens.tolist()}")
    positions = torch.arange(T, device=lens.device)
    return (positions[None, :] < lens[:, None])[:, None, :]  # (B, 1, T)


def window_mask(
    T: int,
    radius: int,
    *,
    causal: bool = False,
    device: torch.device | str | None = None,
) -> Tensor:
    """Truncated (local) attention: query ``i`` sees keys with ``|i - j| <= radius``.

    Taught in :doc:`/notebooks/speech-truncated-attention`.

    Args:
        T: sequence length (0 or more); radius: how far each side a query
            may look (0: itself only).
        causal: look only backwards (``0 <= i - j <= radius``).
    Returns:
        ``(T, T)`` bool, a band around the diagonal.

    Examples:
        >>> window_mask(4, 1).int()
        tensor([[1, 1, 0, 0],
                [1, 1, 1, 0],
                [0, 1, 1, 1],
                [0, 0, 1, 1]], dtype=torch.int32)
    """
    check_int("radius", radius, minimum=0)
    check_int("T", T, minimum=0)
    check_flag("causal", causal)
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    band = (i - j).abs() <= radius
    return band & (j <= i) if causal else band


def graph_mask(adjacency: ArrayLike | GraphLike, self_loops: bool = True) -> Tensor:
    """Attention along edges only: node ``i`` may attend ``j`` iff ``A[i, j] != 0``.

    Taught in :doc:`/notebooks/graph-attention`.

    Args:
        adjacency: ``(N, N)`` array or tensor (non-zero = edge from i to j),
            or a graph object with ``nodes`` and ``edges`` such as a
            networkx graph (nodes in ``G.nodes`` order; every edge counts, in
            both directions unless ``G.is_directed()``).
        self_loops: let every node attend to itself as well.
    Returns:
        ``(N, N)`` bool.

    Examples:
        >>> graph_mask([[0, 1], [0, 0]], self_loops=False)  # one edge, 0 -> 1
        tensor([[False,  True],
                [False, False]])
    """
    if hasattr(adjacency, "nodes") and hasattr(adjacency, "edges"):
        adjacency = _graph_to_matrix(adjacency)
    if not torch.is_tensor(adjacency):
        adjacency = np.asarray(adjacency)
    A = torch.as_tensor(adjacency)
    if A.dim() != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(
            f"adjacency must be a square (N, N) matrix, got shape {shape_str(A)}"
        )
    mask = A != 0
    if self_loops:
        mask = mask | torch.eye(A.shape[0], dtype=torch.bool, device=mask.device)
    return mask


def _graph_to_matrix(G: GraphLike) -> np.ndarray:
    """The ``(N, N)`` 0/1 adjacency of a graph with ``nodes`` and ``edges``."""
    index = {node: i for i, node in enumerate(G.nodes)}
    A = np.zeros((len(index), len(index)))
    directed = bool(getattr(G, "is_directed", lambda: False)())
    for edge in G.edges:
        i, j = index[edge[0]], index[edge[1]]
        A[i, j] = 1.0
        if not directed:
            A[j, i] = 1.0
    return A


def from_key_padding_mask(key_padding_mask: Tensor) -> Tensor:
    """Translate PyTorch's ``key_padding_mask`` (True = *ignore*) to our polarity.

    ``torch.nn.MultiheadAttention`` marks padded keys with True; here True
    means *may attend*, so the translation is a negation plus a query axis.

    Taught in :doc:`/notebooks/multi-head-attention`.

    Args:
        key_padding_mask: ``(B, T_k)`` bool, True where key ``j`` of sequence
            ``b`` is padding.
    Returns:
        ``(B, 1, T_k)`` bool, broadcastable to scores ``(B, T_q, T_k)``.

    Examples:
        >>> pad = torch.tensor([[False, False, True]])  # PyTorch: True = padding
        >>> from_key_padding_mask(pad)  # here: True = may attend
        tensor([[[ True,  True, False]]])
    """
    if not isinstance(key_padding_mask, Tensor) or key_padding_mask.dtype != torch.bool:
        raise TypeError(
            "key_padding_mask must be a bool torch.Tensor (B, T_k), got "
            f"{getattr(key_padding_mask, 'dtype', type(key_padding_mask).__name__)}"
        )
    if key_padding_mask.dim() != 2:
        raise ValueError(
            "key_padding_mask must have shape (B, T_k), got "
            f"{shape_str(key_padding_mask)}"
        )
    return ~key_padding_mask[:, None, :]  # (B, 1, T_k)
