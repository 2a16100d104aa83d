"""Argument checks shared by the efficient-attention modules."""

from __future__ import annotations

from torch import Tensor

from selfattn._checks import shape_str


def _identity(x: Tensor) -> Tensor:
    return x


def _check_same_length(q: Tensor, k: Tensor, why: str) -> int:
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{why} needs T_q == T_k, got q {shape_str(q)} and k {shape_str(k)}"
        )
    return q.shape[-2]
