"""selfattn.lab.diagrams (Agg): what is drawn equals what the library computes."""

from __future__ import annotations

import math
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattn import paths  # noqa: E402
from selfattn.lab import diagrams  # noqa: E402
from selfattn.masks import window_mask  # noqa: E402

DRAWINGS = {
    "qkv_rows": lambda: diagrams.qkv_pipeline("rows"),
    "qkv_columns": lambda: diagrams.qkv_pipeline(convention="columns"),
    "multi_head_flow": diagrams.multi_head_flow,
    "connectivity": diagrams.connectivity,
    "truncated_band": diagrams.truncated_band,
    "online_softmax_tiling": diagrams.online_softmax_tiling,
    "lsh_buckets": diagrams.lsh_buckets,
    "memory_hierarchy": diagrams.memory_hierarchy,
}


def texts(fig: Figure) -> list[str]:
    """The figure's texts, each also with its mathtext shapes read back
    (``$T \\times d_k$`` as ``T × d_k``)."""
    raw = [t.get_text() for t in fig.findobj(Text)]
    return raw + [t.replace(r" \times ", " × ").replace("$", "") for t in raw]


def shown(fig: Figure, *wanted: str) -> None:
    """Every string in ``wanted`` is (part of) some text of ``fig``."""
    all_text = texts(fig)
    for w in wanted:
        assert any(w in t for t in all_text), f"{w!r} not among {all_text}"


# --- every diagram -------------------------------------------------------------


@pytest.mark.parametrize("name", DRAWINGS)
def test_a_white_figure_drawn_without_warnings_that_closes(name):
    rng_state = torch.get_rng_state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "Glyph ... missing from font(s)"
        fig = DRAWINGS[name]()
        fig.canvas.draw()
    assert isinstance(fig, Figure)
    assert len(fig.axes) >= 1
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert torch.equal(torch.get_rng_state(), rng_state)  # no global randomness
    plt.close(fig)
    assert fig.number not in plt.get_fignums()


def test_random_content_is_the_same_on_every_call():
    first, second = diagrams.lsh_buckets(), diagrams.lsh_buckets()  # a fixed generator
    assert texts(first) == texts(second)
    for ax_a, ax_b in zip(first.axes, second.axes, strict=True):
        for a, b in zip(ax_a.collections, ax_b.collections, strict=True):
            np.testing.assert_array_equal(a.get_offsets(), b.get_offsets())
    np.testing.assert_array_equal(
        first.axes[1].images[0].get_array(), second.axes[1].images[0].get_array()
    )


def test_every_public_function_is_documented():
    for name in diagrams.__all__:
        obj = getattr(diagrams, name)
        if callable(obj):
            assert obj.__doc__ and "Returns" in obj.__doc__ or name == "MemoryLevel"


# --- 1. the single-head pipeline -----------------------------------------------


def test_qkv_rows_shows_the_shapes_of_the_row_convention():
    T, D, d_k, d_v = 5, 7, 2, 3
    fig = diagrams.qkv_pipeline("rows", T=T, D=D, d_k=d_k, d_v=d_v)
    shown(
        fig,
        f"T × D\n({T} × {D})",
        f"T × d_k\n({T} × {d_k})",
        f"T × d_v\n({T} × {d_v})",
        f"T_q × T_k\n({T} × {T})",
        f"D × d_k\n({D} × {d_k})",
        f"D × d_v\n({D} × {d_v})",
        "$W_q$",
        "$W_v$",
        "row",
    )
    assert not any("(" + f"{D} × {T})" in t for t in texts(fig))  # nothing transposed


def test_qkv_columns_shows_the_shapes_of_the_column_convention():
    T, D, d_k, d_v = 5, 7, 2, 3
    fig = diagrams.qkv_pipeline("columns", T=T, D=D, d_k=d_k, d_v=d_v)
    shown(
        fig,
        f"D × T\n({D} × {T})",
        f"d_k × T\n({d_k} × {T})",
        f"d_v × T\n({d_v} × {T})",
        f"T_k × T_q\n({T} × {T})",
        f"d_k × D\n({d_k} × {D})",
        "$W^q$",
        "$O = VA'$",
        "column",
    )


def test_qkv_shapes_come_from_a_run_of_the_library(monkeypatch):
    """A library whose values came out one column wider shows it in the figure."""
    from selfattn import reference

    original = reference.self_attention_columns

    def wider(I, W_q, W_k, W_v):  # noqa: N803 (the lecture's names)
        O, A, A_prime = original(I, W_q, W_k, W_v)
        return reference.ColumnAttention(np.vstack([O, O[:1]]), A, A_prime)

    monkeypatch.setattr(reference, "self_attention_columns", wider)
    fig = diagrams.qkv_pipeline("columns", T=4, D=6, d_k=3, d_v=3)
    shown(fig, "d_v × T\n(4 × 4)")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"convention": "cols"}, "convention"),
        ({"T": 0}, "T"),
        ({"D": -1}, "D"),
        ({"d_k": 0}, "d_k"),
        ({"d_v": 0}, "d_v"),
    ],
)
def test_qkv_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        diagrams.qkv_pipeline(**kwargs)


# --- 2. multi-head attention ---------------------------------------------------


def test_multi_head_flow_shows_heads_from_one_and_their_shapes():
    fig = diagrams.multi_head_flow(T=3, D=12, H=3)
    shown(
        fig,
        "head 1",
        "head 2",
        "head 3",
        "T × D\n(3 × 12)",
        "T × T\n(3 × 3)",
        "T × d_k\n(3 × 4)",
        "d_k = D/H = 4",
        "D × D\n(12 × 12)",
    )
    assert not any("head 0" in t or "head 4" in t for t in texts(fig))


def test_multi_head_flow_with_many_heads_draws_the_first_two_and_the_last():
    fig = diagrams.multi_head_flow(T=2, D=16, H=8)
    lanes = [t for t in texts(fig) if t.startswith("head ")]
    assert {"head 1", "head 2", "head 8"} <= set(lanes)
    assert "⋮" in texts(fig)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"D": 6, "H": 4}, "divisible"), ({"H": 0}, "H"), ({"T": 0}, "T")],
)
def test_multi_head_flow_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        diagrams.multi_head_flow(**kwargs)


# --- 3. connectivity (the path lengths: tests/lib/test_paths.py) ---------------


def n_edges(ax) -> int:
    """Segments drawn as lines broken by NaN: (x0, x1, nan) per edge."""
    return sum(len(line.get_xdata()) // 3 for line in ax.lines)


def test_connectivity_draws_the_edges_and_prints_the_computed_numbers():
    T, kernel = 6, 5
    fig = diagrams.connectivity(T=T, kernel=kernel)
    conv, rnn, attn = fig.axes
    band = int(window_mask(T, (kernel - 1) // 2).sum())  # edges of one conv layer
    assert n_edges(conv) == band
    assert n_edges(attn) == T * T
    assert n_edges(rnn) == T and len(rnn.patches) == T - 1  # x_t -> h_t, h chain
    found = paths.path_lengths(T, kernel)
    assert found == {"convolution": 3, "recurrence": 5, "self-attention": 1}
    for ax, kind, steps in ((conv, "convolution", 1), (rnn, "recurrence", T),
                            (attn, "self-attention", 1)):  # fmt: skip
        shown(ax, f"max path length: {found[kind]}", f"sequential operations: {steps}")


def test_connectivity_bad_arguments():
    with pytest.raises(ValueError, match="kernel"):
        diagrams.connectivity(kernel=2)
    with pytest.raises(ValueError, match="T"):
        diagrams.connectivity(T=0)


# --- 4. truncated attention ----------------------------------------------------


@pytest.mark.parametrize(
    "T, radius, causal", [(12, 2, False), (12, 2, True), (7, 0, False), (5, 9, True)]
)
def test_truncated_band_draws_window_mask(T, radius, causal):
    fig = diagrams.truncated_band(T=T, radius=radius, causal=causal)
    drawn = np.asarray(fig.axes[0].images[0].get_array())
    mask = window_mask(T, radius, causal=causal).numpy()
    np.testing.assert_array_equal(drawn > 0, mask)
    highlighted = drawn == 2  # the receptive field of query T // 2
    np.testing.assert_array_equal(highlighted[T // 2], mask[T // 2])
    assert not highlighted[np.arange(T) != T // 2].any()
    assert fig.axes[0].get_legend() is not None


@pytest.mark.parametrize("kwargs, name", [({"T": 0}, "T"), ({"radius": -1}, "radius")])
def test_truncated_band_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        diagrams.truncated_band(**kwargs)


# --- 5. online softmax tiling --------------------------------------------------


@pytest.mark.parametrize(
    "T_q, T_k, B_q, B_k", [(8, 8, 4, 4), (10, 14, 4, 4), (5, 7, 2, 3), (3, 3, 8, 8)]
)
def test_tiling_draws_the_tiles_of_chunked_attention(T_q, T_k, B_q, B_k):
    fig = diagrams.online_softmax_tiling(T_q=T_q, T_k=T_k, B_q=B_q, B_k=B_k)
    tiles = [p for p in fig.axes[0].patches if p.get_gid() == "tile"]
    drawn = [(p.get_y(), p.get_x(), p.get_height(), p.get_width()) for p in tiles]
    expected = [
        (qs, ks, min(B_q, T_q - qs), min(B_k, T_k - ks))
        for qs in range(0, T_q, B_q)  # query blocks outside,
        for ks in range(0, T_k, B_k)  # key blocks inside, as the loop visits them
    ]
    assert drawn == expected
    shown(fig, f"B_q={B_q}, B_k={B_k}")
    n_key_tiles = math.ceil(T_k / B_k)
    numbers = {t for t in texts(fig.axes[0]) if t.isdigit() and len(t) <= 2}
    assert {str(n) for n in range(1, n_key_tiles + 1)} <= numbers


def test_forward_backward_and_figure_walk_the_same_tiles(monkeypatch):
    """One iterator for all three: record what the passes of chunked_attention
    visit (forward, then FlashAttention's backward) and compare with the figure."""
    from selfattn.efficient import _blocks, chunked_attention

    T_q, T_k, B_q, B_k = 7, 9, 3, 4
    seen, original = [], _blocks.tiles

    def recording(*args, **kwargs):
        walked = list(original(*args, **kwargs))
        seen.append([(qs, ks) for (qs, _), keys in walked for ks, _ in keys])
        return iter(walked)

    monkeypatch.setattr(_blocks, "tiles", recording)
    q, k, v = (torch.randn(1, n, 2, requires_grad=True) for n in (T_q, T_k, T_k))
    chunked_attention(q, k, v, B_q=B_q, B_k=B_k).sum().backward()
    fig = diagrams.online_softmax_tiling(T_q=T_q, T_k=T_k, B_q=B_q, B_k=B_k)
    drawn = [
        (int(p.get_y()), int(p.get_x()))
        for p in fig.axes[0].patches
        if p.get_gid() == "tile"
    ]
    assert len(seen) == 2 and seen[0] == seen[1] == drawn  # forward, backward
    from selfattn.lab.diagrams import tiling

    assert tiling.tiles is original  # and the figure calls the same iterator


def test_tiling_annotates_the_running_statistics():
    fig = diagrams.online_softmax_tiling()
    shown(fig, r"\ell_i", "m_i^{(1)}", r"\exp(m_i^{(1)} - m_i^{(2)})", "8 × 8 matrix")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"B_q": 0}, "B_q"),
        ({"B_k": -2}, "B_k"),
        ({"T_q": 0}, "T_q"),
        ({"T_k": 0}, "T_k"),
    ],
)
def test_tiling_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        diagrams.online_softmax_tiling(**kwargs)


# --- 6. angular LSH (the hashing: tests/lib/test_lsh.py) -----------------------


def seeded(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_lsh_buckets_draws_blocks_on_the_diagonal():
    n = 40
    fig = diagrams.lsh_buckets(n_points=n, n_buckets=6, generator=seeded(7))
    points, pattern = fig.axes
    assert sum(len(c.get_offsets()) for c in points.collections) == n
    counts = [len(c.get_offsets()) for c in points.collections]  # one per bucket
    allowed = np.asarray(pattern.images[0].get_array()) > 0
    assert allowed.shape == (n, n) and (allowed == allowed.T).all()
    assert allowed.sum() == sum(c * c for c in counts)  # a block per bucket
    for i in range(n):  # each row: one contiguous run that holds the diagonal
        cols = np.flatnonzero(allowed[i])
        assert cols[0] <= i <= cols[-1] and len(cols) == cols[-1] - cols[0] + 1
    shown(fig, f"{int(allowed.sum())} of {n * n} pairs")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n_buckets": 5}, "n_buckets"),
        ({"n_buckets": 10}, "n_buckets"),
        ({"n_points": 0}, "n_points"),
    ],  # fmt: skip
)
def test_lsh_buckets_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        diagrams.lsh_buckets(**kwargs)


# --- 7. the memory hierarchy ---------------------------------------------------


def test_memory_hierarchy_quotes_dao_et_al():
    levels = diagrams.memory.MEMORY_HIERARCHY
    assert [lv.name for lv in levels] == ["GPU SRAM", "GPU HBM", "CPU DRAM"]
    assert [lv.bandwidth_text for lv in levels] == ["19 TB/s", "1.5 TB/s", "12.8 GB/s"]
    assert [lv.size_text for lv in levels] == ["20 MB", "40 GB", "> 1 TB"]
    bandwidths = [lv.bandwidth for lv in levels]
    assert bandwidths == sorted(bandwidths, reverse=True)  # faster on top
    assert [lv.size for lv in levels] == sorted(lv.size for lv in levels)
    fig = diagrams.memory_hierarchy()
    shown(fig, "19 TB/s", "1.5 TB/s", "12.8 GB/s", "20 MB", "40 GB", "> 1 TB")
    shown(fig, "13× the", "117× the", "never written")
