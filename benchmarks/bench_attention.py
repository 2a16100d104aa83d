"""Benchmark selfattn's attention against PyTorch's fused kernel (CPU).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_attention.py            # full, ~10-20 min
    .venv/bin/python benchmarks/bench_attention.py --quick    # fewer repeats

Measures, for B=1, H=8, d=64, float32 and ``torch.set_num_threads(2)``:

1. the path of selfattn's modules (``selfattn.attention.attend``: the checks,
   then PyTorch's fused kernel) vs ``torch.nn.functional.
   scaled_dot_product_attention`` at T = 1024, 4096 (target ratio <= 1.1);
2. ``selfattn.efficient.chunked_attention`` vs the fused kernel (target <= 2);
3. the extra peak memory of ``chunked_attention`` at T = 16384 (target < 64 MiB;
   a dense score matrix needs T^2 * 4 bytes = 1 GiB per head);
4. ``linear_attention`` (causal and not) for T = 1k ... 16k and the log-log slope
   of time against T (target <= 1.15);
5. training: forward + backward of ``chunked_attention`` (FlashAttention's
   backward pass) vs forward + backward of the fused kernel at T = 4096 and
   16384 (target <= 2), and its peak memory at T = 16384 beyond the output and
   the three gradients (target < 64 MiB).

Timings of two functions are interleaved (a, b, a, b, ...) and medians are
compared (:func:`median_times` below), which resists a shared, noisy machine;
still, read them as rough.
Writes ``benchmarks/results/bench.json`` and ``benchmarks/results/bench.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from selfattn.attention import attend  # noqa: E402  (the modules' fast path)
from selfattn.complexity import loglog_slope  # noqa: E402
from selfattn.efficient import chunked_attention, linear_attention  # noqa: E402
from selfattn.lab.measure import peak_memory_bytes  # noqa: E402

B, H, D_HEAD = 1, 8, 64
MiB = 2**20


def qkv(T: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, T, D_HEAD, generator=gen) for _ in range(3))


def median_times(
    calls: Sequence[Callable[[], object]], *, repeats: int = 5, warmup: int = 1
) -> list[float]:
    """Median wall-clock seconds of several calls that take turns.

    ``warmup`` untimed rounds, then ``repeats`` rounds in which every call runs
    once, timed with :func:`time.perf_counter`, the calls in turn (a, b, c, a,
    b, c, ...): a burst of load from another program hits all of them alike,
    so their ratios are steadier than those of calls timed one after another.
    """
    for _ in range(warmup):
        for call in calls:
            call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for ts, call in zip(times, calls, strict=True):
            start = time.perf_counter()
            call()
            ts.append(time.perf_counter() - start)
    return [statistics.median(ts) for ts in times]


def paired_times(fns: dict, repeats: int, warmup: int) -> dict[str, float]:
    """Median seconds of each function, calls interleaved round-robin."""
    medians = median_times(list(fns.values()), repeats=repeats, warmup=warmup)
    return dict(zip(fns, medians, strict=True))


def bench_ratios(Ts: list[int], repeats: int, warmup: int) -> list[dict]:
    rows = []
    for T in Ts:
        q, k, v = qkv(T)
        t = paired_times(
            {
                "torch_fused": partial(F.scaled_dot_product_attention, q, k, v),
                "selfattn_attend": partial(attend, q, k, v),
                "chunked": partial(chunked_attention, q, k, v),
            },
            repeats,
            warmup,
        )
        rows.append(
            {
                "T": T,
                **{f"{name}_s": s for name, s in t.items()},
                "attend_ratio": t["selfattn_attend"] / t["torch_fused"],
                "chunked_ratio": t["chunked"] / t["torch_fused"],
            }
        )
        print(f"  T={T}: " + ", ".join(f"{n} {s * 1e3:.1f} ms" for n, s in t.items()))
    return rows


def bench_memory(T: int) -> dict:
    q, k, v = qkv(T)
    out_bytes = B * H * T * D_HEAD * 4
    peak = peak_memory_bytes(chunked_attention, q, k, v)
    return {
        "T": T,
        "chunked_peak_bytes": peak,
        "output_bytes": out_bytes,
        "chunked_extra_bytes_excluding_output": None
        if peak is None
        else peak - out_bytes,
        "dense_scores_bytes": B * H * T * T * 4,
    }


def train_step(attention, q, k, v, dout) -> None:
    """Forward and backward: the gradients of ``<attention(q, k, v), dout>``."""
    torch.autograd.grad(attention(q, k, v), (q, k, v), dout)


def train_inputs(T: int) -> tuple[torch.Tensor, ...]:
    q, k, v = (t.requires_grad_() for t in qkv(T))
    dout = qkv(T, seed=1)[0]  # the gradient arriving at the output
    return q, k, v, dout


def bench_train(Ts: list[int], repeats: list[int], warmups: list[int]) -> list[dict]:
    rows = []
    for T, rep, warm in zip(Ts, repeats, warmups, strict=True):
        args = train_inputs(T)
        t = paired_times(
            {
                "torch_fused_train": partial(
                    train_step, F.scaled_dot_product_attention, *args
                ),
                "chunked_train": partial(train_step, chunked_attention, *args),
            },
            rep,
            warm,
        )
        rows.append(
            {
                "T": T,
                "repeats": rep,
                **{f"{name}_s": s for name, s in t.items()},
                "train_ratio": t["chunked_train"] / t["torch_fused_train"],
            }
        )
        print(f"  T={T}: " + ", ".join(f"{n} {s:.2f} s" for n, s in t.items()))
    return rows


def bench_train_memory(T: int) -> dict:
    """Peak bytes of forward + backward, ours and the fused kernel's."""
    args = train_inputs(T)
    tensor_bytes = B * H * T * D_HEAD * 4
    peaks = {
        name: peak_memory_bytes(train_step, fn, *args)
        for name, fn in (
            ("chunked", chunked_attention),
            ("torch_fused", F.scaled_dot_product_attention),
        )
    }
    out_and_grads = 4 * tensor_bytes  # the output and dq, dk, dv
    return {
        "T": T,
        **{f"{name}_peak_bytes": peak for name, peak in peaks.items()},
        "output_and_gradients_bytes": out_and_grads,
        **{
            f"{name}_extra_bytes": None if peak is None else peak - out_and_grads
            for name, peak in peaks.items()
        },
    }


def bench_linear(Ts: list[int], repeats: int, warmup: int, dense: bool) -> dict:
    series: dict[str, list[float]] = {"linear_causal": [], "linear": []}
    if dense:
        series["torch_fused"] = []
    for T in Ts:
        q, k, v = qkv(T)
        fns = {
            "linear_causal": partial(linear_attention, q, k, v, causal=True),
            "linear": partial(linear_attention, q, k, v),
        }
        if dense:
            fns["torch_fused"] = partial(F.scaled_dot_product_attention, q, k, v)
        t = paired_times(fns, repeats, warmup)
        for name, s in t.items():
            series[name].append(s)
        print(f"  T={T}: " + ", ".join(f"{n} {s * 1e3:.1f} ms" for n, s in t.items()))
    slopes = {name: loglog_slope(Ts, ts) for name, ts in series.items()}
    return {"T": Ts, "time_s": series, "slope": slopes}


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(14, 4))
    lin = results["linear"]
    for name, ts in lin["time_s"].items():
        label = f"{name} (slope {lin['slope'][name]:.2f})"
        ax1.loglog(lin["T"], [t * 1e3 for t in ts], "o-", label=label)
    ax1.set(xlabel="sequence length T", ylabel="time (ms)", title="Time against T")
    ax1.legend(fontsize=8)
    rows = results["ratios"]
    x = range(len(rows))
    ax2.bar(
        [i - 0.2 for i in x],
        [r["attend_ratio"] for r in rows],
        0.4,
        label="selfattn (modules' path)",
    )
    ax2.bar(
        [i + 0.2 for i in x], [r["chunked_ratio"] for r in rows], 0.4, label="chunked"
    )
    ax2.axhline(1.1, color="C0", ls="--", lw=1)
    ax2.axhline(2.0, color="C1", ls="--", lw=1)
    ax2.set_xticks(list(x), [f"T={r['T']}" for r in rows])
    ax2.set(ylabel="time / torch fused", title="Forward, ratio to torch")
    ax2.legend(fontsize=8)
    train = results["train"]
    ax3.bar(range(len(train)), [r["train_ratio"] for r in train], 0.4, color="C1")
    ax3.axhline(2.0, color="C1", ls="--", lw=1)
    ax3.set_xticks(range(len(train)), [f"T={r['T']}" for r in train])
    ax3.set(
        ylabel="time / torch fused",
        title="Forward + backward, chunked / torch (dashed: target)",
    )
    fig.suptitle(
        f"B={B}, H={H}, d={D_HEAD}, float32, {results['threads']} threads (CPU)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def summary(results: dict) -> str:
    """The results as a table: what, measured, target, ok / MISSED."""
    rows = [("what", "measured", "target", "")]

    def add(what: str, measured: str, target: str, ok: bool | None) -> None:
        rows.append(
            (what, measured, target, "" if ok is None else "ok" if ok else "MISSED")
        )

    def ratio(what: str, value: float, limit: float) -> None:
        add(what, f"{value:.2f}x", f"<= {limit:g}x", value <= limit)

    def mib(what: str, nbytes: int | None, limit: float | None = 64) -> None:
        """A memory figure against ``limit`` MiB (None: no target)."""
        if nbytes is None:  # not measured
            return
        m = nbytes / MiB
        target, ok = ("", None) if limit is None else (f"< {limit:g} MiB", m < limit)
        add(what, f"{m:.1f} MiB", target, ok)

    for r in results["ratios"]:
        ratio(
            f"selfattn modules' path / torch fused, T={r['T']}", r["attend_ratio"], 1.1
        )
        ratio(f"chunked / torch fused, T={r['T']}", r["chunked_ratio"], 2)
    mem = results["memory"]
    mib(f"chunked peak memory, T={mem['T']} (incl. output)", mem["chunked_peak_bytes"])
    if mem["chunked_peak_bytes"] is not None:
        output = f"  of which the output {B}x{H}x{mem['T']}x{D_HEAD} float32"
        mib(output, mem["output_bytes"], None)
    for r in results["train"]:
        ratio(f"chunked fwd+bwd / torch fused fwd+bwd, T={r['T']}", r["train_ratio"], 2)
    tmem = results["train_memory"]
    mib(
        f"chunked fwd+bwd peak beyond output + grads, T={tmem['T']}",
        tmem["chunked_extra_bytes"],
    )
    mib(
        "  the same for torch fused (for comparison)",
        tmem["torch_fused_extra_bytes"],
        None,
    )
    for name, slope in results["linear"]["slope"].items():
        linear = name.startswith("linear")
        add(
            f"log-log slope of {name} time, T=1k..16k",
            f"{slope:.2f}",
            "<= 1.15" if linear else "(~2)",
            slope <= 1.15 if linear else None,
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True))
        + "  "
        + row[3]
        for row in rows
    ]
    dense = mem["dense_scores_bytes"] / MiB
    load = results["loadavg_start"][0], results["loadavg_end"][0]
    lines.append(
        f"(dense scores at T={mem['T']} would need {dense:.0f} MiB; load average "
        f"{load[0]:.1f} -> {load[1]:.1f}; {results['wall_s']:.0f} s; "
        f"{results['threads']} threads)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer repeats, no dense series"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    repeats, warmup = (5, 1) if args.quick else (11, 2)
    results: dict = {
        "threads": args.threads,
        "quick": args.quick,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
    }
    start = time.perf_counter()
    print("1-2) time against torch's fused scaled_dot_product_attention")
    results["ratios"] = bench_ratios([1024, 4096], repeats, warmup)
    print("3) extra peak memory of chunked_attention at T=16384")
    results["memory"] = bench_memory(16384)
    print("4) linear attention against T")
    Ts = [1024, 2048, 4096, 8192, 16384]
    results["linear"] = bench_linear(Ts, repeats, warmup, dense=not args.quick)
    print("5) forward + backward against torch's fused kernel")
    # T = 16384 takes minutes a call: fewer repeats, warm from T = 4096
    train_repeats = [3, 1] if args.quick else [5, 3]
    results["train"] = bench_train([4096, 16384], train_repeats, [1, 0])
    print("   and its peak memory at T=16384")
    results["train_memory"] = bench_train_memory(16384)
    results["loadavg_end"] = os.getloadavg()
    results["wall_s"] = time.perf_counter() - start

    print()
    print(summary(results))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(results, indent=2))
    plot(results, args.out / "bench.png")
    print(f"wrote {args.out / 'bench.json'} and {args.out / 'bench.png'}")
    return results


if __name__ == "__main__":
    main()
