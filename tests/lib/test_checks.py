"""The argument checks every module runs through (``selfattn._checks``), each
message pinned whole (STYLE rule 7): what a learner reads when a call is wrong.

The library's own tests reach these through the public callables
(test_bad_input.py, test_bad_sizes.py, test_bad_widths.py); here each check is
called directly, so a changed message or bound fails one named test, and
mutation testing (tests/MUTATION.md) sees them even where test_bad_sizes.py
cannot run.
"""

from __future__ import annotations

import math
import re

import pytest
import torch

from selfattn import _checks as c

z = torch.zeros


def raises(error: type[Exception], message: str):
    """``pytest.raises`` matching ``message`` whole."""
    return pytest.raises(error, match="^" + re.escape(message) + "$")


@pytest.mark.parametrize(
    "args, kw, error, message",
    [
        (("T", True), {}, TypeError, "T must be an int, got bool"),
        (("T", 2.0), {}, TypeError, "T must be an int, got float"),
        (("T", None), {}, TypeError, "T must be an int, got NoneType"),
        (("T", 0), {}, ValueError, "T must be positive, got T=0"),
        (("T", -1), {"minimum": 0}, ValueError, "T must be non-negative, got T=-1"),
        (("T", 2), {"minimum": 3}, ValueError, "T must be at least 3, got T=2"),
    ],
)
def test_check_int_refuses(args, kw, error, message):
    with raises(error, message):
        c.check_int(*args, **kw)


def test_check_int_accepts_and_returns_a_python_int():
    assert c.check_int("T", 1) == 1 and c.check_int("T", 0, minimum=0) == 0
    assert c.check_int("T", 3, minimum=3) == 3
    n = c.check_int("T", torch.tensor(4).item())
    assert n == 4 and type(n) is int
    import numpy as np

    assert type(c.check_int("T", np.int64(5))) is int


def test_check_ints_names_the_first_bad_size():
    c.check_ints(B=1, T=2)
    with raises(ValueError, "T must be positive, got T=0"):
        c.check_ints(B=1, T=0, D=-1)
    with raises(TypeError, "D must be an int, got float"):
        c.check_ints(B=1, D=2.0)


def test_check_rate():
    assert c.check_rate("dropout", 0) == 0 and c.check_rate("dropout", 1.0) == 1.0
    assert c.check_rate("dropout", 0.5) == 0.5
    with raises(TypeError, "dropout must be a float in [0, 1], got bool"):
        c.check_rate("dropout", True)
    with raises(TypeError, "dropout must be a float in [0, 1], got str"):
        c.check_rate("dropout", "0.1")
    with raises(ValueError, "dropout must be in [0, 1], got dropout=1.5"):
        c.check_rate("dropout", 1.5)
    with raises(ValueError, "dropout must be in [0, 1], got dropout=-0.1"):
        c.check_rate("dropout", -0.1)


def test_ff_width():
    assert c.ff_width(None, 8) == 32 and c.ff_width(5, 8) == 5
    with raises(ValueError, "ff_dim must be positive, got ff_dim=0"):
        c.ff_width(0, 8)


def test_check_flag_and_default_scale():
    assert c.check_flag("causal", True) is True
    assert c.check_flag("causal", False) is False
    with raises(TypeError, "causal must be True or False, got 1"):
        c.check_flag("causal", 1)
    assert c.default_scale(16, None) == 0.25
    assert c.default_scale(2, None) == 1 / math.sqrt(2)
    assert c.default_scale(16, 2) == 2.0 and type(c.default_scale(16, 2)) is float
    assert c.default_scale(16, torch.tensor(0.5)) == 0.5
    with raises(TypeError, "scale must be a number or None, got True"):
        c.default_scale(16, True)


def test_shape_str():
    assert c.shape_str(z(2, 3, 4)) == "(2, 3, 4)" and c.shape_str(z(())) == "()"


def test_check_tensor():
    x = z(2, 3)
    assert c.check_tensor("x", x, min_dim=2) is x
    with raises(TypeError, "x must be a torch.Tensor, got list"):
        c.check_tensor("x", [1.0])
    with raises(TypeError, "x must be a floating-point tensor, got dtype torch.int64"):
        c.check_tensor("x", torch.arange(3))
    with raises(ValueError, "x must have at least 3 dimensions, got shape (2, 3)"):
        c.check_tensor("x", x, min_dim=3)
    with raises(ValueError, "x must have at least 1 dimension, got shape ()"):
        c.check_tensor("x", z(()), min_dim=1)


def test_check_sequence():
    x = z(2, 3, 4)
    assert c.check_sequence("x", x, 4) is x
    with raises(ValueError, "x must have shape (B, T, 5), got (2, 3, 4)"):
        c.check_sequence("x", x, 5)
    with raises(ValueError, "x must have shape (B, T, 4), got (1, 2, 3, 4)"):
        c.check_sequence("x", z(1, 2, 3, 4), 4)
    with raises(ValueError, "x must have at least 3 dimensions, got shape (3, 4)"):
        c.check_sequence("x", z(3, 4), 4)


def test_check_kv():
    k = z(2, 3, 5, 4)
    c.check_kv("past", k, k, 2, 3, 4)
    message = (
        "past must be keys and values (B, H, T_k, d_k) = (2, 3, T_k, 4) as "
        "project_kv returns them, got {}, {}"
    )
    for kk, vv in [
        (k, z(2, 3, 6, 4)),
        (z(1, 3, 5, 4), z(1, 3, 5, 4)),
        (k, z(2, 3, 5, 1)),
    ]:
        with raises(ValueError, message.format(c.shape_str(kk), c.shape_str(vv))):
            c.check_kv("past", kk, vv, 2, 3, 4)
    with raises(
        ValueError, "past must have at least 4 dimensions, got shape (3, 5, 4)"
    ):
        c.check_kv("past", k, z(3, 5, 4), 2, 3, 4)
    with raises(ValueError, message.format("(2, 3, 5, 4, 1)", "(2, 3, 5, 4, 1)")):
        c.check_kv("past", z(2, 3, 5, 4, 1), z(2, 3, 5, 4, 1), 2, 3, 4)


def test_check_no_nan():
    c.check_no_nan("q", torch.tensor([1.0, math.inf, -math.inf]))  # scores may be inf
    c.check_no_nan("q", torch.empty(2, device="meta"))
    with raises(ValueError, "q contains NaN (shape (1, 2))"):
        c.check_no_nan("q", torch.tensor([[0.0, math.nan]]))


def test_check_qkv():
    q, k, v = z(2, 3, 4), z(2, 5, 4), z(2, 5, 6)
    c.check_qkv(q, k, v)
    with raises(
        TypeError,
        "q, k, v must share a dtype, got torch.float32, torch.float64, torch.float32",
    ):
        c.check_qkv(q, k.double(), v)
    with raises(
        ValueError,
        "q has d_k=4 but k has d_k=3; queries and keys must "
        "have the same width (q (2, 3, 4), k (2, 5, 3))",
    ):
        c.check_qkv(q, z(2, 5, 3), v)
    with raises(
        ValueError,
        "k has T_k=5 positions but v has 4; every key needs a "
        "value (k (2, 5, 4), v (2, 4, 6))",
    ):
        c.check_qkv(q, k, z(2, 4, 6))
    with raises(
        ValueError,
        "q, k, v must have the same leading (batch/head) "
        "dimensions, got q (1, 3, 4), k (2, 5, 4), v (2, 5, 6)",
    ):
        c.check_qkv(z(1, 3, 4), k, v)
    with raises(ValueError, "v contains NaN (shape (2, 5, 6))"):
        c.check_qkv(q, k, torch.full((2, 5, 6), math.nan))
    with raises(ValueError, "v must have at least 2 dimensions, got shape (6)"):
        c.check_qkv(q, k, z(6))


def test_check_mask():
    shape = torch.Size((2, 3, 5))
    m = torch.ones(3, 5, dtype=torch.bool)
    assert c.check_mask(m, shape) is m
    with raises(TypeError, "mask must be a bool torch.Tensor, got list"):
        c.check_mask([[True]], shape)
    with raises(
        TypeError,
        "memory_mask must have dtype torch.bool (True = may "
        "attend), got torch.float32; convert with mask.bool() or build "
        "it with selfattn.masks",
    ):
        c.check_mask(m.float(), shape, name="memory_mask")
    for bad in (torch.ones(4, 5, dtype=torch.bool), torch.ones(2, 2, 3, 5).bool()):
        with raises(
            ValueError,
            f"mask of shape {c.shape_str(bad)} does not "
            "broadcast to the scores' shape (2, 3, 5) = (..., T_q, T_k)",
        ):
            c.check_mask(bad, shape)


def test_check_images():
    x = z(2, 1, 4, 4)
    assert c.check_images(x) is x
    with raises(ValueError, "images must have shape (B, C, H, W), got (2, 1, 4, 4, 1)"):
        c.check_images(z(2, 1, 4, 4, 1))
    with raises(
        ValueError, "images must have at least 4 dimensions, got shape (1, 4, 4)"
    ):
        c.check_images(z(1, 4, 4))
