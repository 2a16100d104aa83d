"""Argument checks shared by the efficient-attention modules."""

from __future__ import annotations

import torch
from torch import Tensor

from selfattn._checks import shape_str

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def _check_positive_int(name: str, n: object, *, allow_zero: bool = False) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 0 or (n == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {name}={n}")
    return n


def _identity(x: Tensor) -> Tensor:
    return x


def _check_same_length(q: Tensor, k: Tensor, why: str) -> int:
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{why} needs T_q == T_k, got q {shape_str(q)} and k {shape_str(k)}"
        )
    return q.shape[-2]
