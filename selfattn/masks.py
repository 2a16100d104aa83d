"""Boolean attention masks. One convention everywhere: True = may attend.

Every mask here is a ``torch.bool`` tensor that broadcasts against scores of
shape ``(..., T_q, T_k)``: row ``i`` says which keys query ``i`` may attend.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from selfattn._checks import shape_str

__all__ = ["causal_mask", "padding_mask", "window_mask", "graph_mask"]


def causal_mask(T_q: int, T_k: int | None = None, *, device=None) -> Tensor:
    """Query ``i`` may attend keys ``j <= i`` (top-left aligned, like PyTorch).

    Args:
        T_q: number of queries; T_k: number of keys (default ``T_q``).
    Returns:
        ``(T_q, T_k)`` bool, lower triangular.
    """
    T_k = T_q if T_k is None else T_k
    for name, n in (("T_q", T_q), ("T_k", T_k)):
        if n < 0:
            raise ValueError(f"{name} must be non-negative, got {n}")
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril()


def padding_mask(valid_lens: Tensor | list[int], T: int) -> Tensor:
    """Keys at positions ``>= valid_lens[b]`` of sequence ``b`` are padding.

    Args:
        valid_lens: ``(B,)`` integers, the real length of each sequence.
        T: the padded length.
    Returns:
        ``(B, 1, T)`` bool, broadcastable to scores ``(B, T_q, T)``; use
        ``mask[:, None]`` for per-head scores ``(B, H, T_q, T)``.
    """
    lens = torch.as_tensor(valid_lens)
    if lens.dim() != 1 or lens.is_floating_point():
        raise ValueError(
            f"valid_lens must be a 1-D integer sequence (B,), got shape "
            f"{shape_str(lens)} and dtype {lens.dtype}"
        )
    if ((lens < 0) | (lens > T)).any():
        raise ValueError(f"valid_lens must lie in [0, T={T}], got {lens.tolist()}")
    positions = torch.arange(T, device=lens.device)
    return (positions[None, :] < lens[:, None])[:, None, :]  # (B, 1, T)


def window_mask(T: int, radius: int, *, causal: bool = False, device=None) -> Tensor:
    """Truncated (local) attention: query ``i`` may attend keys with ``|i - j| <= radius``.

    Args:
        T: sequence length; radius: how far each side a query may look.
        causal: look only backwards (``0 <= i - j <= radius``).
    Returns:
        ``(T, T)`` bool, a band around the diagonal.
    """
    if radius < 0:
        raise ValueError(f"radius must be non-negative, got radius={radius}")
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    band = (i - j).abs() <= radius
    return band & (j <= i) if causal else band


def graph_mask(adjacency, self_loops: bool = True) -> Tensor:
    """Attention only along edges: node ``i`` may attend node ``j`` iff ``A[i, j] != 0``.

    Args:
        adjacency: ``(N, N)`` array or tensor (non-zero = edge from i to j),
            or a networkx graph (nodes in ``G.nodes`` order).
        self_loops: let every node attend to itself as well.
    Returns:
        ``(N, N)`` bool.
    """
    if hasattr(adjacency, "nodes") and hasattr(adjacency, "edges"):
        import networkx as nx

        adjacency = nx.to_numpy_array(adjacency)
    A = torch.as_tensor(np.asarray(adjacency) if not torch.is_tensor(adjacency) else adjacency)
    if A.dim() != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(
            f"adjacency must be a square (N, N) matrix, got shape {shape_str(A)}"
        )
    mask = A != 0
    if self_loops:
        mask = mask | torch.eye(A.shape[0], dtype=torch.bool, device=mask.device)
    return mask
