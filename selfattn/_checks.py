"""Input checks shared by the library: errors a learner can act on.

Every public function validates its arguments with these helpers, so bad
input raises a ``ValueError`` or ``TypeError`` that names the argument and the
shapes it saw, instead of failing deep inside a matmul or returning NaN.
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor

#: Dtypes that the library computes in float32 and casts back.
LOW_PRECISION = (torch.float16, torch.bfloat16)


def check_int(name: str, n: object, *, minimum: int = 1) -> int:
    """Return ``n`` if it is an int (not a bool) of at least ``minimum``; else raise.

    ``TypeError`` for a non-integer, ``ValueError`` naming the bound for one
    that is too small (``minimum=1``: positive; ``minimum=0``: non-negative).
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < minimum:
        bound = {0: "non-negative", 1: "positive"}.get(minimum, f"at least {minimum}")
        raise ValueError(f"{name} must be {bound}, got {name}={n}")
    return int(n)


def check_ints(**sizes: object) -> None:
    """:func:`check_int` on every keyword: each size a positive int (errors name it)."""
    for name, n in sizes.items():
        check_int(name, n)


def check_rate(name: str, p: object) -> float:
    """Return ``p`` if it is a number in ``[0, 1]`` (a dropout rate, as
    ``nn.Dropout`` takes it; 1 drops everything; not a bool); else
    ``TypeError`` or ``ValueError`` naming ``name``."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{name} must be a float in [0, 1], got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"{name} must be in [0, 1], got {name}={p}")
    return p


def ff_width(ff_dim: object, embed_dim: int) -> int:
    """The hidden width of a block's feed-forward network: ``ff_dim``, or
    ``4 * embed_dim`` when it is None (Vaswani et al., 2017); 0 or less raises."""
    return 4 * embed_dim if ff_dim is None else check_int("ff_dim", ff_dim)


def check_flag(name: str, value: object) -> bool:
    """``value`` if it is a bool; ``TypeError`` naming ``name`` otherwise (a
    string such as ``'no'`` would read as true)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def default_scale(d_k: int, scale: float | None) -> float:
    """The scale of the scores: ``1 / sqrt(d_k)`` unless ``scale`` is given."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, int | float | Tensor):
        raise TypeError(f"scale must be a number or None, got {scale!r}")
    return float(scale)


def shape_str(x: Tensor) -> str:
    """``(2, 3, 4)`` for a tensor of that shape (readable in messages)."""
    return "(" + ", ".join(str(s) for s in x.shape) + ")"


def check_tensor(name: str, x: object, *, min_dim: int = 0) -> Tensor:
    """Raise ``TypeError`` unless ``x`` is a floating-point tensor of enough dims."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.dim() < min_dim:
        raise ValueError(
            f"{name} must have at least {min_dim} dimension{'s' * (min_dim != 1)}, "
            f"got shape {shape_str(x)}"
        )
    return x


def check_sequence(name: str, x: object, width: int) -> Tensor:
    """Check a batch of sequences ``(B, T, width)``: a module's input; return it."""
    check_tensor(name, x, min_dim=3)
    if x.dim() != 3 or x.shape[-1] != width:
        raise ValueError(f"{name} must have shape (B, T, {width}), got {shape_str(x)}")
    return x


def check_kv(name: str, k: object, v: object, B: int, H: int, d_k: int) -> None:
    """Check per-head keys and values ``(B, H, T_k, d_k)`` (a cache's, as
    ``MultiHeadAttention.project_kv`` returns them)."""
    for x in (k, v):
        check_tensor(name, x, min_dim=4)
    if k.dim() != 4 or k.shape != (B, H, k.shape[2], d_k) or v.shape != k.shape:
        raise ValueError(
            f"{name} must be keys and values (B, H, T_k, d_k) = ({B}, {H}, T_k, "
            f"{d_k}) as project_kv returns them, got {shape_str(k)}, {shape_str(v)}"
        )


def check_no_nan(name: str, x: Tensor) -> None:
    """Raise ``ValueError`` if ``x`` holds NaN (infinities are allowed: scores).

    A NaN anywhere makes the sum NaN, so the cheap reduction screens the
    tensor and the elementwise test runs only when the sum is NaN (which
    also happens for +inf and -inf together): exact, and one pass in the
    common case. A tensor on PyTorch's ``meta`` device has no values: skipped.
    """
    if x.is_meta:
        return
    if torch.isnan(x.sum()) and torch.isnan(x).any():
        raise ValueError(f"{name} contains NaN (shape {shape_str(x)})")


def check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    """Check queries ``(..., T_q, d_k)``, keys ``(..., T_k, d_k)``, values
    ``(..., T_k, d_v)`` for types, matching widths, lengths and batch dims."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, x, min_dim=2)
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(
            f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q has d_k={q.shape[-1]} but k has d_k={k.shape[-1]}; queries and "
            f"keys must have the same width (q {shape_str(q)}, k {shape_str(k)})"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k has T_k={k.shape[-2]} positions but v has {v.shape[-2]}; every key "
            f"needs a value (k {shape_str(k)}, v {shape_str(v)})"
        )
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        raise ValueError(
            "q, k, v must have the same leading (batch/head) dimensions, got "
            f"q {shape_str(q)}, k {shape_str(k)}, v {shape_str(v)}"
        )
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_no_nan(name, x)


def check_mask(mask: object, scores_shape: torch.Size, *, name: str = "mask") -> Tensor:
    """Check a boolean mask (True = may attend) broadcastable to ``scores_shape``."""
    if not isinstance(mask, Tensor):
        raise TypeError(
            f"{name} must be a bool torch.Tensor, got {type(mask).__name__}"
        )
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "convert with mask.bool() or build it with selfattn.masks"
        )
    try:
        ok = torch.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except RuntimeError:  # the shapes do not broadcast at all
        ok = False
    if not ok:
        raise ValueError(
            f"{name} of shape {shape_str(mask)} does not broadcast to the scores' "
            f"shape ({', '.join(str(s) for s in scores_shape)}) = (..., T_q, T_k)"
        )
    return mask


def check_images(images: object) -> Tensor:
    """Check a batch of images ``(B, C, H, W)``; return it."""
    check_tensor("images", images, min_dim=4)
    if images.dim() != 4:
        raise ValueError(
            f"images must have shape (B, C, H, W), got {shape_str(images)}"
        )
    return images
