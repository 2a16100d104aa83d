r"""Measuring a call: its CPU time and the memory it allocates.

The chapters *show* what these measure ("on the machine that built this
page") and assert it only through :func:`assert_faster`, the one helper that
implements the course's protocol for a timing claim (CONTRIBUTING, "Portable
lessons"): a cost claim (grows like :math:`T^2`, does fewer operations, keeps
less memory) is asserted on a count that no machine changes: multiply-adds
(:mod:`selfattn.complexity`, PyTorch's ``FlopCounterMode``), bytes allocated
(:func:`peak_memory_bytes`), sequential steps.

* :func:`cpu_time`, :func:`cpu_times`: least CPU seconds of a call on the
  calling thread, several calls taking turns.
* :func:`assert_faster`: a gap of at least 3x between two calls, measured so
  that load and noise cannot fake or hide it.
* :func:`peak_memory_bytes`: peak bytes of tensor storage a call allocates,
  counted from the profiler's allocation events (exact, not RSS).
* :func:`count_madds`: multiply-adds of the matrix products a call makes, as
  PyTorch's ``FlopCounterMode`` counts them (exact, the same on every CPU).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from selfattn._checks import check_int

__all__ = [
    "MIN_FACTOR",
    "assert_faster",
    "count_madds",
    "cpu_time",
    "cpu_times",
    "peak_memory_bytes",
]

MIN_FACTOR = 3.0  # the smallest gap a lesson may assert on a measured time

# A timed span must be at least ten ticks of the CPU clock: on Linux and macOS
# a tick is a nanosecond or a microsecond and one call is always enough; on
# Windows the thread clock moves in steps of about 15.6 ms, so a call of a few
# milliseconds would read 0 and is repeated until the span is long enough.
_TICK = time.get_clock_info("thread_time").resolution
_MIN_SPAN = 10 * _TICK


def _per_call(fn: Callable[..., Any], args: tuple) -> float:
    """CPU seconds of one call of ``fn(*args)``, over as many back-to-back calls
    (1, 2, 4, ...) as the clock needs to resolve them."""
    n = 1
    while True:
        start = time.thread_time()
        for _ in range(n):
            fn(*args)
        span = time.thread_time() - start
        if span >= _MIN_SPAN:
            return span / n
        n *= 2


def cpu_time(fn: Callable[..., Any], *args: Any, repeats: int = 5) -> float:
    """Least CPU seconds of ``fn(*args)`` on the calling thread over a few runs.

    CPU time (:func:`time.thread_time`), unlike wall-clock time, does not count
    the moments when other programs have the core; interference can only add
    time, so the smallest of a few runs is the steadiest estimate on a busy
    machine. One untimed warm-up call comes first. Meant for
    ``torch.set_num_threads(1)``: work done by other threads is not counted.
    Where the clock is coarse (Windows: steps of about 15.6 ms), a short call
    is repeated back to back until the clock resolves it, and the time per
    call is returned.

    Args:
        fn: the function to time; args: its arguments.
        repeats: timed calls (``>= 1``).

    Returns:
        The minimum over ``repeats`` timed calls, in seconds.

    Examples:
        >>> t = cpu_time(sum, range(1000), repeats=3)
        >>> t >= 0.0
        True
    """
    check_int("repeats", repeats)
    fn(*args)
    best = math.inf
    for _ in range(repeats):
        best = min(best, _per_call(fn, args))
    return best


def cpu_times(calls: Sequence[Callable[[], Any]], *, rounds: int = 4) -> list[float]:
    """Least CPU seconds of several calls that take turns, ``rounds`` times.

    In each round every call is timed once by :func:`cpu_time` with
    ``repeats=1`` (an untimed warm-up call, then a timed one), the calls in
    turn; each call keeps its least time. Taking turns means a burst of load
    from another program cannot hit one call alone. Typical use: one function
    at several sizes, ``cpu_times([partial(f, x) for x in xs])``, then
    :func:`selfattn.complexity.loglog_slope` of the times against the sizes.

    Args:
        calls: functions of no argument.
        rounds: how many times each call is timed (``>= 1``).

    Returns:
        The least CPU seconds of each call, in the order of ``calls``.

    Examples:
        >>> a, b = cpu_times([lambda: sum(range(10)), lambda: sum(range(10**5))])
        >>> a <= b
        True
    """
    check_int("rounds", rounds)
    best = [math.inf] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            best[i] = min(best[i], cpu_time(call, repeats=1))
    return best


def assert_faster(
    fast: Callable[[], Any],
    slow: Callable[[], Any],
    *,
    factor: float,
    rounds: int = 5,
    tries: int = 3,
) -> float:
    """Assert that ``slow()`` takes ``factor`` times the CPU time of ``fast()`` or more.

    The only way a chapter asserts a measured time. It is for gaps of an
    order of magnitude's class (``factor >= 3``; measure a gap several times
    the factor you assert), at sizes where the arithmetic dominates the fixed
    cost of a call, so the claim holds on every CPU, kernel set and load. The
    protocol resists noise three ways:

    1. the two calls take turns (fast, slow, fast, slow, ...), so a burst of
       load from another program hits both alike;
    2. each keeps its least CPU time over ``rounds`` turns on one thread
       (interference only adds time);
    3. if the ratio falls short, the pair is measured again, up to ``tries``
       times in all, before the assertion fails.

    Torch runs on one thread during the measurement (CPU time counts the
    calling thread only); the thread count is restored afterwards.

    Args:
        fast, slow: functions of no argument.
        factor: the least ratio ``time(slow) / time(fast)`` claimed (``>= 3``).
        rounds: turns per attempt; tries: attempts before failing.

    Returns:
        The ratio of the first attempt that reached ``factor``.

    Raises:
        AssertionError: no attempt reached ``factor`` (the message lists the
            ratio of each attempt).
        ValueError: ``factor`` below 3 (a gap that small is shown, not asserted).

    Examples:
        >>> ratio = assert_faster(lambda: sum(range(100)),
        ...                       lambda: sum(range(100_000)), factor=10)
        >>> ratio >= 10
        True
    """
    if not isinstance(factor, int | float) or not factor >= MIN_FACTOR:
        raise ValueError(
            f"factor must be at least {MIN_FACTOR:g} (an order-of-magnitude class "
            f"of gap; smaller gaps are shown, not asserted), got factor={factor!r}"
        )
    check_int("rounds", rounds)
    check_int("tries", tries)
    ratios = []
    with _one_thread():
        for _ in range(tries):
            t_fast, t_slow = cpu_times([fast, slow], rounds=rounds)
            ratios.append(t_slow / max(t_fast, 1e-9))
            if ratios[-1] >= factor:
                return ratios[-1]
    raise AssertionError(
        f"slow/fast CPU time reached {', '.join(f'{r:.2f}' for r in ratios)} in "
        f"{tries} attempts of {rounds} turns each, below factor={factor:g}"
    )


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


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


def count_madds(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    r"""Multiply-adds of the matrix products in ``fn(*args, **kwargs)``.

    Runs ``fn`` once under PyTorch's ``torch.utils.flop_counter.FlopCounterMode``
    and halves its total: the counter counts a multiply-add as 2 FLOPs. For
    :math:`A \in \mathbb{R}^{a \times b}` times :math:`B \in \mathbb{R}^{b
    \times c}` that is :math:`abc`. The count is exact and the same on every
    CPU and kernel set, which is why a chapter asserts a cost on it and only
    shows a time (CONTRIBUTING, "Portable lessons").

    What it sees: the matrix products (``mm``, ``bmm``, ``addmm``, ``matmul``,
    convolutions, PyTorch's fused attention). What it does not: elementwise
    work (a softmax's exponentials, additions, ``tanh``), which a chapter
    counts otherwise when its lesson needs it.

    Taught in: the chapters "Self-attention versus recurrent networks",
    "Complexity: self-attention, recurrence and convolution" and "Efficient
    attention".

    Args:
        fn: the call to count; its result is discarded.
        args, kwargs: the positional and keyword arguments passed to ``fn``.

    Returns:
        The number of multiply-adds (an ``int``; 0 if ``fn`` multiplies no
        matrices).

    Examples:
        >>> a, b, c = 7, 5, 3
        >>> count_madds(torch.mm, torch.ones(a, b), torch.ones(b, c)) == a * b * c
        True
        >>> count_madds(torch.tanh, torch.ones(4, 4))  # elementwise: not counted
        0
    """
    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter.get_total_flops() // 2  # PyTorch counts 2 FLOPs each


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
