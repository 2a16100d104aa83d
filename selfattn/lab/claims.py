"""One way to state a claim about a trained or sampled quantity.

A number that comes out of training or sampling is one draw of a random
process: another base seed, another CPU or another set of kernels gives
another value. A chapter states what it claims of such a number with
:func:`claim`, never with a bare ``assert``, so that one tool can measure
every claim over many draws (``make sweep``, which writes
``tests/SEEDS.md``)::

    from selfattn.lab.claims import claim

    claim("every run reverses most strings", acc.min(), ">", 0.85)

In a chapter, :func:`claim` is an assert with a readable message. When the
environment variable ``SELFATTN_CLAIMS`` names a file (the sweep sets it),
each call also appends one JSON line to it: the claim's name, the value, the
comparison, the threshold and whether it held. With ``SELFATTN_CLAIMS_GO_ON=1``
as well, a claim that fails is recorded and the chapter goes on, so one sweep
run measures every claim of the chapter, not only those before the first
failure.
"""

from __future__ import annotations

import json
import math
import operator
import os
from numbers import Real

__all__ = ["ENV_RECORD", "ENV_GO_ON", "claim"]

ENV_RECORD = "SELFATTN_CLAIMS"
ENV_GO_ON = "SELFATTN_CLAIMS_GO_ON"

_OPS = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
}


def _number(value, what: str) -> float:
    """``value`` as a float: a Python or numpy number, a bool or a 1-element tensor."""
    if hasattr(value, "item") and getattr(value, "size", 1) in (1, ()):
        try:
            value = value.item()
        except (TypeError, ValueError, RuntimeError):
            pass
    if callable(getattr(value, "numel", None)) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, Real):
        raise TypeError(
            f"claim: {what} must be a real number (or a one-element array), "
            f"got {type(value).__name__}"
        )
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"claim: {what} is NaN")
    return value


def claim(name: str, value, op: str, threshold) -> None:
    """Assert ``value op threshold`` and, in a sweep, record it.

    Args:
        name: what is claimed, in words, unique within the chapter (the sweep's
            record lists claims by this name).
        value: the measured quantity: a number, a bool, or a one-element numpy
            array or tensor. Aggregate first (``acc.min()``, ``np.median(acc)``,
            ``(acc > 0.9).sum()``): a claim is about one number.
        op: one of ``">"``, ``">="``, ``"<"``, ``"<="``, ``"=="``.
        threshold: the number ``value`` is compared with.

    Returns nothing (a cell that ends on a claim prints nothing). In a sweep
    with ``SELFATTN_CLAIMS_GO_ON=1`` a failed claim is recorded and does not
    raise.

    Raises:
        AssertionError: the claim does not hold; the message gives the name,
            the value and the threshold.
        ValueError: ``op`` is not a comparison above, ``name`` is empty, or
            ``value`` is NaN.
        TypeError: ``value`` or ``threshold`` is not a number.

    Examples:
        >>> claim("a share", 0.93, ">", 0.85)
        >>> claim("a share", 0.5, ">", 0.85)
        Traceback (most recent call last):
        ...
        AssertionError: claim 'a share' does not hold: 0.5 > 0.85 is false
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"claim: name must be a non-empty string, got {name!r}")
    if op not in _OPS:
        raise ValueError(f"claim: op must be one of {sorted(_OPS)}, got {op!r}")
    v = _number(value, "value")
    t = _number(threshold, "threshold")
    held = bool(_OPS[op](v, t))
    path = os.environ.get(ENV_RECORD, "").strip()
    if path:
        record = {"name": name, "value": v, "op": op, "threshold": t, "held": held}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        if os.environ.get(ENV_GO_ON, "").strip() == "1":
            return
    if not held:
        raise AssertionError(f"claim {name!r} does not hold: {v:g} {op} {t:g} is false")
