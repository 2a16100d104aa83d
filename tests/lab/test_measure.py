"""selfattn.lab.measure: peak memory against known allocations, CPU time,
and the one protocol by which a chapter asserts a measured time."""

from __future__ import annotations

import math
import os

import pytest
import torch

from selfattn.lab.measure import (
    MIN_FACTOR,
    assert_faster,
    cpu_times,
    peak_memory_bytes,
)


def test_peak_memory_counts_allocations():
    x = torch.zeros(1000, 1000)  # 4 MB, allocated before: not counted

    def two_temporaries(x):
        y = x + 1  # 4 MB
        z = y * 2  # 4 MB, both alive: peak 8 MB
        del y
        return z.sum()

    peak = peak_memory_bytes(two_temporaries, x)
    assert peak is not None, "the profiler's trace export has no event list"
    assert 8_000_000 <= peak < 8_000_000 + 4096
    assert peak_memory_bytes(lambda x: x.view(-1), x) == 0  # a view is free


@pytest.mark.parametrize("shape", [(1024, 1024), (3, 5), (2, 512, 512)])
def test_peak_memory_of_one_known_allocation(shape):
    """A float32 tensor of n elements made inside fn: exactly 4 n bytes."""
    peak = peak_memory_bytes(lambda: torch.empty(shape))
    assert peak == 4 * math.prod(shape)


def test_peak_memory_sees_the_peak_not_the_end():
    """Allocate 4 MiB, free it, allocate 1 MiB: the peak is 4 MiB, the end 1."""

    def fn():
        a = torch.ones(1024, 1024)  # 4 MiB
        del a
        return torch.ones(256, 1024)  # 1 MiB, kept

    assert peak_memory_bytes(fn) == 4 * 2**20


def test_peak_memory_touches_no_environment_and_prints_nothing(capfd):
    # PyTorch's profiler sets TORCHINDUCTOR_CACHE_DIR itself, once, the first
    # time it starts (torch 2.13 imports part of inductor): start it once first.
    peak_memory_bytes(lambda: None)
    capfd.readouterr()
    before = dict(os.environ)
    peak_memory_bytes(lambda: torch.ones(10))
    assert dict(os.environ) == before
    out, err = capfd.readouterr()
    assert out == "" and err == "", (out, err)


def test_peak_memory_stops_the_profiler_when_fn_raises():
    def boom():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        peak_memory_bytes(boom)
    assert peak_memory_bytes(lambda: torch.empty(4)) == 16  # a new profile runs


def test_cpu_time_is_the_least_of_the_timed_runs(monkeypatch):
    import selfattn.lab.measure as cx

    ticks = iter([0.0, 0.5, 1.0, 1.2, 2.0, 2.9])  # three runs: 0.5, 0.2, 0.9
    monkeypatch.setattr(cx.time, "thread_time", lambda: next(ticks))
    calls = []
    assert cx.cpu_time(lambda x: calls.append(x), 7, repeats=3) == pytest.approx(0.2)
    assert calls == [7, 7, 7, 7]  # one warm-up call, then three timed


def test_cpu_times_take_turns_and_keep_the_least(monkeypatch):
    import selfattn.lab.measure as cx

    seen = []  # (call, repeats) in the order cpu_time is asked
    fake = {"a": iter([0.5, 0.2, 0.4]), "b": iter([0.1, 0.3, 0.05])}

    def fake_cpu_time(fn, repeats):
        name = fn()
        seen.append((name, repeats))
        return next(fake[name])

    monkeypatch.setattr(cx, "cpu_time", fake_cpu_time)
    calls = [lambda: "a", lambda: "b"]
    assert cpu_times(calls, rounds=3) == [0.2, 0.05]
    assert seen == [("a", 1), ("b", 1)] * 3  # a, b, a, b, a, b
    with pytest.raises(ValueError, match="rounds"):
        cpu_times(calls, rounds=0)


def test_cpu_times_of_real_calls():
    times = cpu_times([lambda: sum(range(10)), lambda: sum(range(100_000))], rounds=2)
    assert len(times) == 2 and all(t >= 0 for t in times)
    assert times[0] < times[1]


def test_cpu_time_rejects_a_non_positive_repeat_count():
    import selfattn.lab.measure as cx

    with pytest.raises(ValueError, match="repeats"):
        cx.cpu_time(lambda: None, repeats=0)


def test_assert_faster_passes_a_clear_gap_and_returns_its_ratio():
    ratio = assert_faster(
        lambda: sum(range(100)), lambda: sum(range(200_000)), factor=10
    )
    assert ratio >= 10


def test_assert_faster_fails_an_absent_gap_after_every_try(monkeypatch):
    import selfattn.lab.measure as cx

    attempts = []

    def fake_cpu_times(calls, rounds):
        attempts.append(rounds)
        return [1.0, 2.0]  # a gap of 2, every time

    monkeypatch.setattr(cx, "cpu_times", fake_cpu_times)
    with pytest.raises(AssertionError, match=r"2\.00, 2\.00, 2\.00.*factor=3"):
        assert_faster(lambda: None, lambda: None, factor=3, rounds=4, tries=3)
    assert attempts == [4, 4, 4]  # measured again before failing


def test_assert_faster_measures_again_before_failing(monkeypatch):
    import selfattn.lab.measure as cx

    results = iter([[1.0, 2.0], [1.0, 5.0]])  # a noisy first attempt
    monkeypatch.setattr(cx, "cpu_times", lambda calls, rounds: next(results))
    assert assert_faster(lambda: None, lambda: None, factor=4) == 5.0


def test_assert_faster_takes_turns_on_one_thread(monkeypatch):
    import selfattn.lab.measure as cx

    seen = []

    def fake_cpu_times(calls, rounds):
        seen.append((torch.get_num_threads(), [c() for c in calls]))
        return [1.0, 10.0]

    monkeypatch.setattr(cx, "cpu_times", fake_cpu_times)
    threads = torch.get_num_threads()
    assert_faster(lambda: "fast", lambda: "slow", factor=3)
    assert seen == [(1, ["fast", "slow"])]  # one list, fast first: they alternate
    assert torch.get_num_threads() == threads  # restored


@pytest.mark.parametrize("factor", [1.2, 2.9, 0, -4, "10"])
def test_assert_faster_refuses_a_small_factor(factor):
    with pytest.raises(ValueError, match="factor must be at least 3"):
        assert_faster(lambda: None, lambda: None, factor=factor)
    assert MIN_FACTOR == 3


@pytest.mark.parametrize("name", ["rounds", "tries"])
def test_assert_faster_rejects_non_positive_counts(name):
    with pytest.raises(ValueError, match=name):
        assert_faster(lambda: None, lambda: None, factor=3, **{name: 0})


def test_a_coarse_clock_times_short_calls_over_several_calls(monkeypatch):
    """Windows' thread clock moves in steps of about 15.6 ms: a call of 4 ms
    would read 0. Simulated: a clock that ticks every 10 ms and a call that
    advances it 4 ms."""
    import selfattn.lab.measure as cx

    now = [0.0]  # CPU seconds spent so far
    monkeypatch.setattr(cx.time, "thread_time", lambda: 0.010 * (now[0] // 0.010))
    monkeypatch.setattr(cx, "_MIN_SPAN", 10 * 0.010)

    def call():
        now[0] += 0.004

    t = cx.cpu_time(call, repeats=2)
    assert 0.0035 < t < 0.0045  # not 0: several calls per timed span
