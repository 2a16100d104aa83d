"""selfattn.lab.data: generated corpora and bundled data sets, checked by rule."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from selfattn.lab.data import (
    AMBIGUOUS,
    PAD_TAG,
    digits,
    karate_club,
    phoneme_spectra,
    pos_corpus,
    speech_frames,
)

# --- pos_corpus ---------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus():
    return pos_corpus(3000, generator=0)


def _rule_tag(words: list[str], t: int) -> str:
    """Oracle: an ambiguous word is a VERB iff the nearest word to its left
    that is not a hesitation is a (subject) pronoun."""
    j = t - 1
    while words[j] in ("uh", "um", "er", "hmm"):
        j -= 1
    return "VERB" if words[j] in ("i", "you", "we", "they") else "NOUN"


def test_pos_shapes_and_padding(corpus):
    N, T = corpus.tokens.shape
    assert N == len(corpus) == 3000
    assert corpus.tags.shape == corpus.ambiguous.shape == (N, T)
    assert int(corpus.lengths.max()) == T
    pad = torch.arange(T)[None, :] >= corpus.lengths[:, None]
    assert (corpus.tokens[pad] == 0).all() and (corpus.tokens[~pad] != 0).all()
    assert (corpus.tags[pad] == PAD_TAG).all() and (corpus.tags[~pad] >= 0).all()
    assert not corpus.ambiguous[pad].any()
    assert corpus.vocab[0] == "<pad>"


def test_pos_ambiguous_mask_matches_word_list(corpus):
    words = np.array(corpus.vocab)[corpus.tokens.numpy()]
    assert np.array_equal(np.isin(words, AMBIGUOUS), corpus.ambiguous.numpy())


def test_pos_tags_follow_the_rule(corpus):
    """Every ambiguous word's tag is the one the left cue dictates, and the
    cue sits exactly ``cue_distance`` positions to the left."""
    for i in range(len(corpus)):
        words, tags = corpus.words(i), corpus.tag_strings(i)
        for t, w in enumerate(words):
            d = int(corpus.cue_distance[i, t])
            if w not in AMBIGUOUS:
                assert d == -1
                continue
            assert tags[t] == _rule_tag(words, t)
            assert d >= 1 and words[t - d] not in ("uh", "um", "er", "hmm")
            assert all(x in ("uh", "um", "er", "hmm") for x in words[t - d + 1 : t])


def test_pos_unambiguous_words_have_one_tag(corpus):
    seen: dict[int, set[int]] = {}
    valid = corpus.tags != PAD_TAG
    for w, t in zip(
        corpus.tokens[valid].tolist(), corpus.tags[valid].tolist(), strict=True
    ):
        seen.setdefault(w, set()).add(t)
    for w, tags in seen.items():
        expected = 2 if corpus.vocab[w] in AMBIGUOUS else 1
        assert len(tags) == expected, (corpus.vocab[w], tags)


def test_pos_distant_cues_are_invisible_locally(corpus):
    """Beyond the cue, a distant ambiguous word's surroundings are the same for
    both readings, and the two readings are about equally frequent."""
    verb = corpus.tag_names.index("VERB")
    far = corpus.cue_distance >= 3
    right_words = {"in", "near", "on", "."}
    for i, t in far.nonzero().tolist():
        assert corpus.vocab[corpus.tokens[i, t + 1]] in right_words
    share_verb = (corpus.tags[far] == verb).float().mean().item()
    assert 0.45 < share_verb < 0.55
    amb_verb = (corpus.tags[corpus.ambiguous] == verb).float().mean().item()
    assert 0.45 < amb_verb < 0.55


@pytest.mark.parametrize("min_gap, max_gap", [(0, 0), (2, 5), (4, 4)])
def test_pos_gap_range(min_gap, max_gap):
    c = pos_corpus(
        400, generator=1, distant_fraction=1.0, min_gap=min_gap, max_gap=max_gap
    )
    d = c.cue_distance[c.ambiguous]
    assert int(d.min()) == min_gap + 1 and int(d.max()) == max_gap + 1


def test_pos_deterministic_and_generator_equivalent():
    a = pos_corpus(50, generator=7)
    b = pos_corpus(50, generator=np.random.default_rng(7))
    c = pos_corpus(50, generator=8)
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.tags, b.tags)
    assert not torch.equal(a.tokens[:, :5], c.tokens[:, :5])


@pytest.mark.parametrize(
    "kwargs, err",
    [
        ({"num_sentences": 0, "generator": 0}, ValueError),
        ({"num_sentences": 5, "generator": "0"}, TypeError),
        ({"num_sentences": 5, "generator": 0, "min_gap": 3, "max_gap": 2}, ValueError),
        ({"num_sentences": 5, "generator": 0, "distant_fraction": 1.5}, ValueError),
    ],
)
def test_pos_bad_input(kwargs, err):
    with pytest.raises(err):
        pos_corpus(**kwargs)


# --- speech_frames ------------------------------------------------------------


def _segments(row: list[int]) -> list[tuple[int, int]]:
    """Oracle: (label, length) runs of a label sequence."""
    runs: list[list[int]] = []
    for x in row:
        if runs and runs[-1][0] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    return [(a, b) for a, b in runs]


@pytest.mark.parametrize("seconds, F, P", [(0.5, 8, 3), (2.0, 16, 6), (1.23, 5, 8)])
def test_speech_shapes_and_durations(seconds, F, P):
    s = speech_frames(4, seconds, generator=0, num_features=F, num_phonemes=P)
    T = round(100 * seconds)
    assert s.features.shape == (4, T, F) and s.labels.shape == (4, T)
    assert s.spectra.shape == (P, F) and len(s.phonemes) == P
    assert s.frame_rate == 100
    for row in s.labels.tolist():
        runs = _segments(row)
        for k, (_, length) in enumerate(runs):
            assert length <= 15
            if k < len(runs) - 1:  # the last phoneme may be cut by the end
                assert length >= 6


def test_speech_features_are_spectrum_plus_noise():
    clean = speech_frames(3, 1.0, generator=3, noise=0.0)
    assert torch.equal(clean.features, clean.spectra[clean.labels])
    noisy = speech_frames(40, 2.0, generator=3, noise=0.7)
    eps = noisy.features - noisy.spectra[noisy.labels]
    assert abs(eps.mean().item()) < 0.01
    assert abs(eps.std().item() - 0.7) < 0.01


def test_phoneme_spectra_formula():
    """Oracle: the /a/ row from the Gaussian-bump formula, written out."""
    S = phoneme_spectra(6, 11)
    u = np.linspace(0, 1, 11)
    bump = [
        np.exp(-((x - 0.25) ** 2) / 0.0072) + np.exp(-((x - 0.55) ** 2) / 0.0072)
        for x in u
    ]
    np.testing.assert_allclose(S[1].numpy(), bump, rtol=1e-6, atol=1e-7)
    assert (S[0] == 0).all()  # silence


def test_speech_needs_only_local_context():
    """Averaging a few neighbouring frames before the nearest-spectrum rule
    labels better than one frame: local context helps."""
    s = speech_frames(20, 3.0, generator=0)

    def nearest(x):
        return torch.cdist(x, s.spectra[None].expand(len(x), -1, -1)).argmin(-1)

    single = (nearest(s.features) == s.labels).float().mean()
    smooth = torch.nn.functional.avg_pool1d(
        s.features.transpose(1, 2), 5, stride=1, padding=2, count_include_pad=False
    ).transpose(1, 2)
    assert (nearest(smooth) == s.labels).float().mean() > single + 0.15


def test_speech_bad_input():
    with pytest.raises(ValueError, match="num_phonemes"):
        speech_frames(2, 1.0, generator=0, num_phonemes=9)
    with pytest.raises(ValueError, match="seconds"):
        speech_frames(2, 0.001, generator=0)
    with pytest.raises(ValueError, match="min_frames"):
        speech_frames(2, 1.0, generator=0, min_frames=5, max_frames=4)


# --- digits ---------------------------------------------------------------------


def test_digits_split_is_a_stratified_partition():
    d = digits(test_fraction=0.25, generator=0)
    ref = load_digits()
    assert d.X_train.shape[1:] == (1, 8, 8) and d.X_train.dtype == torch.float32
    assert len(d.y_train) + len(d.y_test) == len(ref.target) == 1797
    assert 0.0 <= float(d.X_train.min()) and float(d.X_train.max()) <= 1.0
    # every image appears exactly once, with its label (oracle: sklearn itself)
    both = torch.cat([d.X_train, d.X_test]).reshape(-1, 64).numpy() * 16
    labels = torch.cat([d.y_train, d.y_test]).numpy()
    key = {tuple(r): t for r, t in zip(ref.data, ref.target, strict=True)}
    assert len({tuple(r) for r in both}) == len(key)
    assert all(key[tuple(r)] == t for r, t in zip(both, labels, strict=True))
    for c in range(10):
        n_c = int((ref.target == c).sum())
        assert int((d.y_test == c).sum()) == round(0.25 * n_c)


def test_digits_deterministic():
    a, b, c = digits(generator=1), digits(generator=1), digits(generator=2)
    assert torch.equal(a.X_test, b.X_test) and torch.equal(a.y_test, b.y_test)
    assert not torch.equal(a.X_test, c.X_test)
    with pytest.raises(ValueError, match="test_fraction"):
        digits(test_fraction=1.0, generator=0)


# --- karate_club ------------------------------------------------------------


def test_karate_matches_networkx():
    k = karate_club()
    G = nx.karate_club_graph()
    N = G.number_of_nodes()
    assert k.adjacency.shape == (N, N) == (34, 34)
    for i in range(N):
        for j in range(N):
            assert bool(k.adjacency[i, j]) == G.has_edge(i, j)
    assert int(k.adjacency.sum()) == 2 * G.number_of_edges() == 156
    assert k.labels.tolist() == [int(G.nodes[i]["club"] == "Officer") for i in range(N)]
    assert torch.equal(k.features, torch.eye(N))
    assert k.train_mask.nonzero().flatten().tolist() == [0, 33]
    assert torch.equal(k.test_mask, ~k.train_mask)


def test_karate_split_and_features():
    k = karate_club(labelled_per_class=3, generator=0, features="degree")
    assert k.features.shape == (34, 2)
    deg = torch.tensor(
        [d for _, d in nx.karate_club_graph().degree()], dtype=torch.float
    )
    np.testing.assert_allclose(k.features[:, 0].numpy(), (deg / deg.max()).numpy())
    for c in (0, 1):
        assert int((k.labels[k.train_mask] == c).sum()) == 3
    assert k.train_mask[0] and k.train_mask[33]
    again = karate_club(labelled_per_class=3, generator=0)
    assert torch.equal(again.train_mask, k.train_mask)
    with pytest.raises(ValueError, match="generator"):
        karate_club(labelled_per_class=2)
    with pytest.raises(ValueError, match="features"):
        karate_club(features="random")
