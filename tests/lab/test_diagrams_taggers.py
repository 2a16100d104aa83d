"""selfattn.lab.diagrams.taggers (Agg): the inputs drawn are those each tagger reads."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattn.lab import diagrams  # noqa: E402
from selfattn.lab.diagrams.taggers import PAD, TAGGERS  # noqa: E402

SENTENCE = "we uh um er saw in the city .".split()


def reads_oracle(length: int, T: int, radius: int) -> dict[str, list[list[bool]]]:
    """Nested loops: output i of each tagger reads input j when ..."""
    return {
        "per-token": [[i == j for j in range(T)] for i in range(T)],
        "window": [[abs(i - j) <= radius for j in range(T)] for i in range(T)],
        "self-attention": [[j < length for j in range(T)] for _ in range(T)],
    }


@pytest.mark.parametrize(
    ("length", "T", "radius"), [(1, 1, 0), (5, 5, 2), (4, 9, 1), (9, 11, 3), (3, 6, 10)]
)
def test_tagger_reads_matches_nested_loops(length, T, radius):
    reads = diagrams.tagger_reads(length, T, radius=radius)
    assert set(reads) == set(TAGGERS)
    for kind, rows in reads_oracle(length, T, radius).items():
        assert reads[kind].dtype == torch.bool and reads[kind].shape == (T, T)
        assert reads[kind].tolist() == rows, kind


def test_tagger_reads_without_padding_and_its_errors():
    assert diagrams.tagger_reads(4, radius=1)["window"].shape == (4, 4)
    with pytest.raises(ValueError, match="T=3 must be at least length=4"):
        diagrams.tagger_reads(4, 3, radius=1)
    with pytest.raises(ValueError, match="radius must be non-negative"):
        diagrams.tagger_reads(4, radius=-1)
    with pytest.raises(ValueError, match="length must be positive"):
        diagrams.tagger_reads(0, radius=1)
    with pytest.raises(TypeError, match="radius must be an int"):
        diagrams.tagger_reads(4, radius=1.5)


def words_drawn(ax) -> dict[int, tuple[str, bool]]:
    """{position: (label, read)} from the gids of the word artists of one panel."""
    out = {}
    for t in ax.findobj(Text):
        gid = t.get_gid() or ""
        if gid.count(":") == 2:
            _, j, state = gid.split(":")
            out[int(j)] = (t.get_text(), state == "read")
    return out


def n_edges(ax) -> int:
    """Segments drawn as NaN-broken lines: three points per segment."""
    return sum(len(line.get_xdata()) // 3 for line in ax.lines)


@pytest.mark.parametrize(
    ("position", "radius", "pad"), [(4, 2, 2), (0, 1, 0), (8, 3, 1)]
)
def test_tagger_views_draws_what_each_tagger_reads(position, radius, pad):
    fig = diagrams.tagger_views(SENTENCE, position, radius=radius, pad=pad)
    assert isinstance(fig, Figure) and len(fig.axes) == len(TAGGERS)
    T = len(SENTENCE) + pad
    reads = diagrams.tagger_reads(len(SENTENCE), T, radius=radius)
    for ax, kind in zip(fig.axes, TAGGERS, strict=True):
        drawn = words_drawn(ax)
        assert [drawn[j][0] for j in range(T)] == SENTENCE + [PAD] * pad
        assert [drawn[j][1] for j in range(T)] == reads[kind][position].tolist()
        assert n_edges(ax) == int(reads[kind][position].sum())
        assert any(t.get_text() == f"tag of '{SENTENCE[position]}'" for t in ax.texts)
    window = fig.axes[1]
    n_window = int(reads["window"][position].sum())
    assert f"reads the 2r + 1 = {n_window} positions" in window.get_title(loc="left")
    offsets = {t.get_text() for t in window.texts if t.get_text()[:1] in "+-"}
    expected = {f"{j - position:+d}" for j in range(T) if abs(j - position) <= radius}
    assert offsets == expected
    attention = fig.axes[2].get_title(loc="left")
    assert f"reads all {len(SENTENCE)} words" in attention


def test_tagger_views_says_who_sees_the_deciding_word():
    fig = diagrams.tagger_views(SENTENCE, 4, radius=2, clue=0)
    notes = [
        [t.get_text() for t in ax.texts if "deciding word" in t.get_text()]
        for ax in fig.axes
    ]
    assert notes == [
        ["cannot see the deciding word"],
        ["cannot see the deciding word"],
        ["sees the deciding word"],
    ]
    near = diagrams.tagger_views(SENTENCE, 4, radius=2, clue=2)
    assert "sees the deciding word" in [t.get_text() for t in near.axes[1].texts]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "the deciding word" in labels
    quiet = diagrams.tagger_views(SENTENCE, 4)
    assert "the deciding word" not in [
        t.get_text() for t in quiet.legends[0].get_texts()
    ]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(words=SENTENCE, position=9), ValueError, "position=9 must be a word"),
        (
            dict(words=SENTENCE, position=-1),
            ValueError,
            "position must be non-negative",
        ),
        (
            dict(words=SENTENCE, position=4, clue=4),
            ValueError,
            "clue=4 must be another",
        ),
        (
            dict(words=SENTENCE, position=4, clue=9),
            ValueError,
            "clue=9 must be another",
        ),
        (
            dict(words=SENTENCE, position=4, pad=-1),
            ValueError,
            "pad must be non-negative",
        ),
        (dict(words=SENTENCE, position=4, radius=-2), ValueError, "radius must be"),
        (dict(words=[], position=0), ValueError, "at least one word"),
        (dict(words="we saw", position=0), TypeError, "sequence of strings"),
        (dict(words=SENTENCE, position=2.0), TypeError, "position must be an int"),
    ],
)
def test_tagger_views_refuses_bad_arguments(kwargs, error, match):
    words = kwargs.pop("words")
    position = kwargs.pop("position")
    with pytest.raises(error, match=match):
        diagrams.tagger_views(words, position, **kwargs)
