r"""What a layer costs: Table 1 of Vaswani et al. (2017), counted and measured.

Analytic counts are in **multiply-adds** (``*_madds``: one multiply and one
add), per layer, for a sequence of ``n`` positions of width ``d``, dropping the
softmax and other ``O(n^2)`` or ``O(n d)`` terms as Table 1 does. PyTorch's
``torch.utils.flop_counter.FlopCounterMode`` counts **2 FLOPs per
multiply-add**, so its ``get_total_flops()`` is ``2 ×`` these counts:
FLOPs = 2 × madds.

==========================  ====================  ===============  ==================
Layer                       Complexity per layer  Sequential ops   Max. path length
==========================  ====================  ===============  ==================
Self-attention              O(n^2 d)              O(1)             O(1)
Recurrent                   O(n d^2)              O(n)             O(n)
Convolutional               O(k n d^2)            O(1)             O(n/k), O(log_k n)
Self-attention, restricted  O(r n d)              O(1)             O(n/r)
==========================  ====================  ===============  ==================

Measuring helpers: :func:`measure` (median wall time, peak bytes allocated by
PyTorch), :func:`median_times` (median wall times of several calls taking
turns), :func:`cpu_time` and :func:`cpu_times` (least CPU time of one call, of
several calls taking turns), :func:`peak_memory_bytes`, and
:func:`loglog_slope` (the exponent of a power law ``y = c x^p``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

__all__ = [
    "self_attention_madds",
    "multi_head_madds",
    "recurrent_madds",
    "convolution_madds",
    "restricted_self_attention_madds",
    "sequential_operations",
    "max_path_length",
    "table1",
    "measure",
    "median_times",
    "cpu_time",
    "cpu_times",
    "peak_memory_bytes",
    "loglog_slope",
]

KINDS = ("self_attention", "recurrent", "convolutional", "restricted")


def _pos(**sizes: object) -> None:
    """Raise unless every size is a positive int (messages name the argument)."""
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{name} must be an int, got {type(n).__name__}")
        if n <= 0:
            raise ValueError(f"{name} must be positive, got {name}={n}")


def self_attention_madds(n: int, d: int, *, projections: bool = False) -> int:
    r"""Multiply-adds of one self-attention layer: :math:`2 n^2 d` (:math:`+ 4 n d^2`).

    Scores :math:`q k^\top`: :math:`n \cdot n \cdot d`; weighted sum of values:
    :math:`n \cdot n \cdot d`. With ``projections=True``, add the four
    :math:`d \times d` projections :math:`W_q, W_k, W_v, W_o` applied to ``n``
    positions: :math:`4 n d^2` (Table 1 of Vaswani et al., 2017, lists only
    the order of the first part, :math:`O(n^2 d)`; the constant 2 is this
    count's own).

    Args:
        n: sequence length; d: model width; projections: include them.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d)
    return 2 * n * n * d + (4 * n * d * d if projections else 0)


def multi_head_madds(n: int, d: int, h: int, *, projections: bool = False) -> int:
    r"""Multiply-adds of ``h``-head attention of width ``d``: the same as one head.

    Each head works in width :math:`d/h`: :math:`h \cdot 2 n^2 (d/h) = 2 n^2 d`,
    independent of ``h`` (Vaswani et al., 2017, sec. 3.2.2: "the total
    computational cost is similar to that of single-head attention").

    Args:
        n: sequence length; d: model width; h: heads (must divide ``d``);
        projections: add :math:`4 n d^2` for the projections.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d, h=h)
    if d % h != 0:
        raise ValueError(f"h={h} must divide d={d} (each head has width d // h)")
    per_head = 2 * n * n * (d // h)  # scores + weighted sum in width d/h
    return h * per_head + (4 * n * d * d if projections else 0)


def recurrent_madds(n: int, d: int) -> int:
    r"""Multiply-adds of a recurrent layer: :math:`n d^2`.

    One :math:`d \times d` matrix-vector product :math:`W h_{t-1}` per step:
    the recurrent product alone, :math:`n d^2` (Table 1 gives only the order,
    :math:`O(n d^2)`); a real cell also multiplies the input (another :math:`n d^2`)
    and an LSTM has four gates: constants that :math:`O(n d^2)` drops.

    Args:
        n: sequence length; d: hidden width.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d)
    return n * d * d


def convolution_madds(n: int, d: int, k: int) -> int:
    r"""Multiply-adds of a 1-D convolution with kernel width ``k``: :math:`k n d^2`.

    ``d`` channels in and ``d`` out: each output position sums ``k d`` inputs
    for each of ``d`` channels.

    Args:
        n: sequence length; d: channels; k: kernel width.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d, k=k)
    return k * n * d * d


def restricted_self_attention_madds(n: int, d: int, r: int) -> int:
    r"""Multiply-adds of self-attention restricted to ``r`` keys: :math:`2 r n d`.

    ``r`` is the size of the neighbourhood (Table 1); a window of radius
    :math:`\rho` (:func:`selfattn.efficient.local_attention`) has
    :math:`r = 2\rho + 1`. With ``r = n`` this is :func:`self_attention_madds`.

    Args:
        n: sequence length; d: width; r: keys per query.

    Returns:
        The number of multiply-adds; ``FlopCounterMode`` counts ``2 ×`` as
        many FLOPs.
    """
    _pos(n=n, d=d, r=r)
    return 2 * r * n * d


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got kind={kind!r}")


def sequential_operations(kind: str, n: int) -> float:
    """Minimum number of sequential operations (Table 1): ``1`` or ``n`` for an RNN.

    Args:
        kind: one of ``"self_attention"``, ``"recurrent"``, ``"convolutional"``,
            ``"restricted"``; n: sequence length.

    Returns:
        The expression inside the ``O(.)``.
    """
    _check_kind(kind)
    _pos(n=n)
    return float(n) if kind == "recurrent" else 1.0


def max_path_length(
    kind: str, n: int, *, k: int = 3, r: int = 3, dilated: bool = False
) -> float:
    r"""Maximum path length between two positions (Table 1), the expression in ``O(.)``.

    Self-attention: ``1``; recurrent: ``n``; restricted self-attention:
    ``n / r``; convolution: ``n / k`` for contiguous kernels (the lecture's
    value: each layer widens the receptive field by about ``k``) or
    :math:`\log_k n` for dilated ones (``dilated=True``). Table 1 prints
    :math:`O(\log_k n)`, the dilated case.

    Args:
        kind: as in :func:`sequential_operations`; n: sequence length;
        k: kernel width; r: neighbourhood size; dilated: dilated convolutions.
    """
    _check_kind(kind)
    _pos(n=n, k=k, r=r)
    if kind == "self_attention":
        return 1.0
    if kind == "recurrent":
        return float(n)
    if kind == "restricted":
        return n / r
    if dilated:
        return math.log(n, k) if k > 1 else float(n)
    return n / k


def table1(
    n: int | None = None, d: int | None = None, k: int = 3, r: int = 3
) -> list[dict[str, Any]]:
    """Rows of Table 1 (Vaswani et al., 2017), optionally evaluated at ``n, d``.

    Each row has ``layer``, ``complexity``, ``sequential``, ``path`` (the
    symbolic entries); with ``n`` and ``d`` also ``madds`` (multiply-adds;
    FLOPs are twice as many), ``sequential_ops`` and ``path_length``.
    Convolution paths are ``n/k`` (contiguous kernels). Display them as a
    Markdown table or with a loop.
    """
    rows = [
        ("Self-attention", "O(n^2 d)", "O(1)", "O(1)", "self_attention"),
        ("Recurrent", "O(n d^2)", "O(n)", "O(n)", "recurrent"),
        ("Convolutional", "O(k n d^2)", "O(1)", "O(n/k)", "convolutional"),
        ("Self-attention (restricted)", "O(r n d)", "O(1)", "O(n/r)", "restricted"),
    ]
    out = []
    for layer, cx, seq, path, kind in rows:
        row: dict[str, Any] = {
            "layer": layer,
            "complexity": cx,
            "sequential": seq,
            "path": path,
        }
        if n is not None and d is not None:
            row["madds"] = {
                "self_attention": lambda: self_attention_madds(n, d),
                "recurrent": lambda: recurrent_madds(n, d),
                "convolutional": lambda: convolution_madds(n, d, k),
                "restricted": lambda: restricted_self_attention_madds(n, d, r),
            }[kind]()
            row["sequential_ops"] = sequential_operations(kind, n)
            row["path_length"] = max_path_length(kind, n, k=k, r=r)
        out.append(row)
    return out


# --- measuring ---------------------------------------------------------------


def peak_memory_bytes(fn: Callable[..., Any], *args: Any) -> int:
    """Peak bytes of tensor storage allocated on the CPU while ``fn(*args)`` runs.

    Runs ``fn`` once under ``torch.profiler.profile(profile_memory=True)`` and
    reads the allocation events from the profiler's public Chrome-trace export
    (``export_chrome_trace``): one ``[memory]`` event per allocation
    (``Bytes > 0``) or free (``Bytes < 0``). Replayed in time order, the peak
    of their running total is the *extra* memory the call needed: its output
    included, its inputs (allocated before) not.

    Precision: exact, to the byte, for tensor storage on the CPU (every
    allocation and free of PyTorch's CPU allocator is an event). Not counted:
    Python objects, memory that a library such as BLAS allocates on its own,
    and the allocator's caching or the operating system's view (RSS). A
    tensor allocated before the call and freed during it is not seen
    (PyTorch warns about it); the figure is then an upper bound.

    Kineto writes a log line to file descriptor 2 when the profiler starts
    and when it stops; the descriptor points at ``os.devnull`` during those
    two moments only (never while ``fn`` runs), and ``os.environ`` is left
    alone.

    Returns:
        The peak in bytes (0 if nothing was allocated).

    Raises:
        RuntimeError: the trace has no event list (an export format this
            function does not know: another version of PyTorch).
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _quiet_fd2():
        prof.start()
    try:
        fn(*args)
    finally:
        with _quiet_fd2():
            prof.stop()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise RuntimeError(
            "peak_memory_bytes: the profiler's trace has no event list "
            f"(torch {torch.__version__}); the course pins the torch it reads"
        )
    memory = [  # device type 0 = CPU
        e
        for e in events
        if e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == 0
    ]
    memory.sort(key=lambda e: e["ts"])  # stable: ties keep the recorded order
    running = peak = 0
    for nbytes in (e["args"]["Bytes"] for e in memory):  # allocation > 0, free < 0
        running += nbytes
        peak = max(peak, running)
    return peak


@contextlib.contextmanager
def _quiet_fd2() -> Iterator[None]:
    """Point file descriptor 2 (stderr, as C++ code sees it) at ``os.devnull``."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2: nothing to silence
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def measure(
    fn: Callable[..., Any],
    *args: Any,
    repeats: int = 5,
    warmup: int = 1,
    memory: bool = True,
) -> dict[str, Any]:
    """Median wall-clock time of ``fn(*args)`` and the peak memory it allocates.

    Time: ``warmup`` untimed calls, then ``repeats`` calls timed with
    :func:`time.perf_counter`; the median resists a noisy (shared) machine.
    Memory: one more call under :func:`peak_memory_bytes` (not timed: the
    profiler slows the call down).

    Returns:
        ``{"time_s": median, "times_s": [...], "peak_bytes": int | None}``.
    """
    _pos(repeats=repeats)
    _warm_up([lambda: fn(*args)], warmup)
    times = _timed_runs(fn, args, repeats, time.perf_counter)
    peak = peak_memory_bytes(fn, *args) if memory else None
    return {"time_s": statistics.median(times), "times_s": times, "peak_bytes": peak}


def median_times(
    calls: Sequence[Callable[[], Any]], *, repeats: int = 5, warmup: int = 1
) -> list[float]:
    """Median wall-clock seconds of several calls that take turns.

    ``warmup`` untimed rounds, then ``repeats`` rounds in which every call
    runs once, timed with :func:`time.perf_counter`, the calls in turn (a, b,
    c, a, b, c, ...): a burst of load from another program hits all of them
    alike, so their ratios are steadier than those of calls timed one after
    the other. For a single call it is :func:`measure` without the memory.

    Args:
        calls: functions of no argument, e.g. ``partial(f, x)``.
        repeats: timed rounds; warmup: untimed rounds before them.

    Returns:
        The median seconds of each call, in the order of ``calls``.
    """
    _pos(repeats=repeats)
    _warm_up(calls, warmup)
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for ts, call in zip(times, calls, strict=True):
            ts += _timed_runs(call, (), 1, time.perf_counter)
    return [statistics.median(ts) for ts in times]


def cpu_time(fn: Callable[..., Any], *args: Any, repeats: int = 5) -> float:
    """Least CPU seconds of ``fn(*args)`` on the calling thread over a few runs.

    CPU time (:func:`time.thread_time`), unlike wall-clock time, does not count
    the moments when other programs have the core; interference can only add
    time, so the smallest of a few runs is the steadiest estimate on a busy
    machine. One untimed warm-up call comes first. Meant for
    ``torch.set_num_threads(1)``: work done by other threads is not counted.

    Returns:
        The minimum over ``repeats`` timed calls, in seconds.
    """
    _pos(repeats=repeats)
    fn(*args)
    return min(_timed_runs(fn, args, repeats, time.thread_time))


def cpu_times(calls: Sequence[Callable[[], Any]], *, rounds: int = 4) -> list[float]:
    """Least CPU seconds of several calls that take turns, ``rounds`` times.

    In each round every call is timed once by :func:`cpu_time` with
    ``repeats=1`` (an untimed warm-up call, then a timed one), the calls in
    turn; each call keeps its least time. Taking turns means a burst of load
    from another program cannot hit one call alone. Typical use: one function
    at several sizes, ``cpu_times([partial(f, x) for x in xs])``, then
    :func:`loglog_slope` of the times against the sizes.

    Args:
        calls: functions of no argument.
        rounds: how many times each call is timed.

    Returns:
        The least CPU seconds of each call, in the order of ``calls``.
    """
    _pos(rounds=rounds)
    best = [math.inf] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            best[i] = min(best[i], cpu_time(call, repeats=1))
    return best


def _warm_up(calls: Sequence[Callable[[], Any]], warmup: int) -> None:
    """Call every call ``warmup`` times, untimed (caches, lazy initialisation)."""
    if warmup < 0:
        raise ValueError(f"warmup must be non-negative, got warmup={warmup}")
    for _ in range(warmup):
        for call in calls:
            call()


def _timed_runs(
    fn: Callable[..., Any], args: tuple, repeats: int, clock: Callable[[], float]
) -> list[float]:
    """Seconds of ``repeats`` calls of ``fn(*args)``, each timed with ``clock``."""
    times = []
    for _ in range(repeats):
        start = clock()
        fn(*args)
        times.append(clock() - start)
    return times


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    r"""Least-squares slope of :math:`\log y` on :math:`\log x`: ``p`` in ``y = c x^p``.

    A slope near 2 over a range of sequence lengths means quadratic growth,
    near 1 linear.

    Args:
        xs, ys: positive numbers, at least two distinct ``xs``.
    """
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(
            f"xs and ys must be 1-D of the same length >= 2, got {x.shape}, {y.shape}"
        )
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("xs and ys must be positive to take logarithms")
    lx, ly = np.log(x), np.log(y)
    if np.ptp(lx) == 0:
        raise ValueError("xs must contain at least two distinct values")
    return float(np.polyfit(lx, ly, 1)[0])
