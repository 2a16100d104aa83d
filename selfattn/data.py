r"""Small data sets for the chapters: generated, or shipped inside a package.

Nothing here downloads. Every generator is deterministic given ``seed`` (an
``int`` or a ``numpy.random.Generator``); the library never seeds globally.

* :func:`pos_corpus`: a synthetic part-of-speech corpus whose ambiguous words
  (*saw*, *watch*, *fly*, *book*, *play*: noun or verb) need sentence
  context, sometimes from a word far away.
* :func:`speech_frames`: speech-like sequences of 10 ms frames (100 per
  second), one label per frame, that need only local context.
* :func:`digits`: scikit-learn's bundled 8x8 handwritten digits (the UCI
  optical digits test set), with a deterministic stratified split.
* :func:`karate_club`: Zachary's (1977) karate club from networkx, for
  semi-supervised node classification with a few labelled nodes (Kipf and
  Welling, 2017).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "PAD_TAG",
    "TAGS",
    "AMBIGUOUS",
    "PosCorpus",
    "pos_corpus",
    "FRAME_RATE",
    "PHONEMES",
    "SpeechFrames",
    "phoneme_spectra",
    "speech_frames",
    "ImageSplit",
    "digits",
    "KarateClub",
    "karate_club",
]

PAD_TAG = -100  # tag of padding positions: ``F.cross_entropy``'s ignore_index


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    """A numpy generator from an explicit seed (never the global state)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(int(seed))
    raise TypeError(
        f"seed must be an int or a numpy.random.Generator, got {type(seed).__name__}"
    )


def _positive(name: str, value: Any) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {name}={value}")


# --- part-of-speech tagging -------------------------------------------------

TAGS = ("PRON", "VERB", "NOUN", "DET", "ADJ", "ADP", "ADV", "INTJ", "PUNCT")
_WORDS = {
    "PRON": ("i", "you", "we", "they"),
    "DET": ("the", "a", "this", "every"),
    "ADJ": ("old", "red", "big", "new", "small"),
    "NOUN": ("cat", "dog", "house", "garden", "city", "table", "man", "girl"),
    "VERB": ("sees", "likes", "wants", "finds"),  # after a noun phrase
    "ADP": ("in", "near", "on"),
    "ADV": ("then", "now"),
    "INTJ": ("uh", "um", "er", "hmm"),  # hesitations: neutral fillers
    "PUNCT": (".",),
}
AMBIGUOUS = ("saw", "watch", "fly", "book", "play")  # NOUN or VERB


@dataclass
class PosCorpus:
    """Sentences with one part-of-speech tag per token, padded to length ``T``.

    Attributes:
        tokens: ``(N, T)`` word ids; padding is id 0 (``vocab[0] == "<pad>"``).
        tags: ``(N, T)`` tag ids into ``tag_names``; padding is ``PAD_TAG``.
        valid_lens: ``(N,)`` the real length of each sentence.
        ambiguous: ``(N, T)`` bool, True at the words that can be NOUN or VERB.
        cue_distance: ``(N, T)`` for each ambiguous word, how many positions
            to its left the word that decides its tag is (1 = the neighbour);
            -1 elsewhere.
        vocab: the words, ``vocab[i]`` is word id ``i``.
        tag_names: the tags, ``tag_names[t]`` is tag id ``t``.
    """

    tokens: Tensor
    tags: Tensor
    valid_lens: Tensor
    ambiguous: Tensor
    cue_distance: Tensor
    vocab: tuple[str, ...]
    tag_names: tuple[str, ...] = TAGS

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def words(self, i: int) -> list[str]:
        """The words of sentence ``i`` (padding removed)."""
        n = int(self.valid_lens[i])
        return [self.vocab[t] for t in self.tokens[i, :n].tolist()]

    def tag_strings(self, i: int) -> list[str]:
        """The tags of sentence ``i`` as strings (padding removed)."""
        n = int(self.valid_lens[i])
        return [self.tag_names[t] for t in self.tags[i, :n].tolist()]


def _sentence(
    rng: np.random.Generator, distant: bool, min_gap: int, max_gap: int
) -> list[tuple[str, str, int]]:
    """One sentence as ``(word, tag, cue_distance)`` triples."""

    def pick(tag: str) -> str:
        return _WORDS[tag][rng.integers(len(_WORDS[tag]))]

    def amb() -> str:
        return AMBIGUOUS[rng.integers(len(AMBIGUOUS))]

    out: list[tuple[str, str, int]] = []
    if rng.random() < 0.3:
        out.append((pick("ADV"), "ADV", -1))
    if distant:  # CUE filler^g AMB [ADP DET NOUN] .  (cue: PRON -> VERB, DET -> NOUN)
        verb = rng.random() < 0.5
        out.append((pick("PRON"), "PRON", -1) if verb else (pick("DET"), "DET", -1))
        gap = int(rng.integers(min_gap, max_gap + 1))
        out += [(pick("INTJ"), "INTJ", -1) for _ in range(gap)]
        out.append((amb(), "VERB" if verb else "NOUN", gap + 1))
    elif rng.random() < 0.5:  # PRON AMB_v DET [ADJ] (AMB_n | NOUN): "i saw a saw"
        out += [
            (pick("PRON"), "PRON", -1),
            (amb(), "VERB", 1),
            (pick("DET"), "DET", -1),
        ]
        if rng.random() < 0.5:
            out.append((pick("ADJ"), "ADJ", -1))
        out.append(
            (amb(), "NOUN", 1) if rng.random() < 0.5 else (pick("NOUN"), "NOUN", -1)
        )
    else:  # DET [ADJ] (AMB_n | NOUN) VERB DET NOUN: "the old fly sees a cat"
        out.append((pick("DET"), "DET", -1))
        if rng.random() < 0.5:
            out.append((pick("ADJ"), "ADJ", -1))
        out.append(
            (amb(), "NOUN", 1) if rng.random() < 0.5 else (pick("NOUN"), "NOUN", -1)
        )
        out += [(pick("VERB"), "VERB", -1), (pick("DET"), "DET", -1)]
        out.append((pick("NOUN"), "NOUN", -1))
    if rng.random() < 0.5:
        out += [(pick("ADP"), "ADP", -1), (pick("DET"), "DET", -1)]
        out.append((pick("NOUN"), "NOUN", -1))
    out.append((".", "PUNCT", -1))
    return out


def pos_corpus(
    num_sentences: int,
    *,
    seed: int | np.random.Generator,
    distant_fraction: float = 0.5,
    min_gap: int = 0,
    max_gap: int = 6,
) -> PosCorpus:
    r"""A synthetic part-of-speech corpus in which context decides some tags.

    English words, a toy grammar. Five words are ambiguous (*saw, watch, fly,
    book, play* are nouns or verbs). Two kinds of sentence:

    * **local** cues, the neighbour decides: *i saw a saw .*,
      *the old fly sees a cat in the city .*
    * **distant** cues (fraction ``distant_fraction``): a pronoun or a
      determiner, then ``g`` hesitation fillers (*uh, um, er, hmm*, tag INTJ),
      then the ambiguous word, then the same continuation for both readings:
      *we uh um er saw .* (VERB) versus *the uh um er saw .* (NOUN). The
      deciding word is ``g + 1`` positions away, with ``g`` uniform in
      ``[min_gap, max_gap]``; the words around the ambiguous one carry no
      information, so a window of radius ``r`` tags it correctly only when
      :math:`g + 1 \le r` and is at chance otherwise.

    Tags (a subset of the Universal POS tags): PRON, VERB, NOUN, DET, ADJ,
    ADP, ADV, INTJ, PUNCT. Ambiguous words are nouns or verbs with equal
    probability (overall and at each cue distance), so the best guess from
    the word alone is right about half the time.

    Args:
        num_sentences: ``N``.
        seed: an int or a ``numpy.random.Generator`` (the only randomness).
        distant_fraction: share of sentences with a distant cue.
        min_gap, max_gap: range of the number of fillers ``g`` (inclusive).

    Returns:
        A :class:`PosCorpus`, padded to the longest sentence ``T``.
    """
    _positive("num_sentences", num_sentences)
    if not 0.0 <= distant_fraction <= 1.0:
        raise ValueError(f"distant_fraction must lie in [0, 1], got {distant_fraction}")
    if not 0 <= min_gap <= max_gap:
        raise ValueError(
            f"need 0 <= min_gap <= max_gap, got min_gap={min_gap}, max_gap={max_gap}"
        )
    rng = _rng(seed)
    vocab = (
        "<pad>",
        *sorted({w for ws in _WORDS.values() for w in ws} | set(AMBIGUOUS)),
    )
    word_id = {w: i for i, w in enumerate(vocab)}
    tag_id = {t: i for i, t in enumerate(TAGS)}
    sents = [
        _sentence(rng, rng.random() < distant_fraction, min_gap, max_gap)
        for _ in range(num_sentences)
    ]
    N, T = len(sents), max(len(s) for s in sents)
    tokens = torch.zeros(N, T, dtype=torch.long)
    tags = torch.full((N, T), PAD_TAG, dtype=torch.long)
    cue = torch.full((N, T), -1, dtype=torch.long)
    for n, sent in enumerate(sents):
        tokens[n, : len(sent)] = torch.tensor([word_id[w] for w, _, _ in sent])
        tags[n, : len(sent)] = torch.tensor([tag_id[t] for _, t, _ in sent])
        cue[n, : len(sent)] = torch.tensor([d for _, _, d in sent])
    amb_ids = torch.tensor([word_id[w] for w in AMBIGUOUS])
    return PosCorpus(
        tokens=tokens,
        tags=tags,
        valid_lens=torch.tensor([len(s) for s in sents]),
        ambiguous=torch.isin(tokens, amb_ids),
        cue_distance=cue,
        vocab=vocab,
    )


# --- speech-like frames -----------------------------------------------------

FRAME_RATE = 100  # frames per second: one feature vector every 10 ms
PHONEMES = ("sil", "a", "i", "u", "s", "m", "n", "e")
# Cartoon spectra on a frequency axis u in [0, 1]: formant bumps for vowels,
# high-frequency hiss for /s/, a low murmur for nasals, nothing for silence.
_SPECTRA = {
    "sil": (),
    "a": ((0.25, 1.0), (0.55, 1.0)),
    "i": ((0.10, 1.0), (0.80, 1.0)),
    "u": ((0.10, 1.0), (0.30, 1.0)),
    "s": ((0.85, 1.0), (0.95, 1.0)),
    "m": ((0.05, 1.5),),
    "n": ((0.05, 1.0), (0.45, 0.5)),
    "e": ((0.20, 1.0), (0.68, 1.0)),
}


@dataclass
class SpeechFrames:
    """Utterances as sequences of 10 ms feature frames, one phoneme label each.

    Attributes:
        features: ``(N, T, F)`` float32, ``T = round(seconds * 100)``.
        labels: ``(N, T)`` phoneme ids into ``phonemes``.
        spectra: ``(P, F)`` the clean spectral pattern of each phoneme.
        phonemes: the ``P`` phoneme names.
        frame_rate: frames per second (100).
    """

    features: Tensor
    labels: Tensor
    spectra: Tensor
    phonemes: tuple[str, ...]
    frame_rate: int = FRAME_RATE

    def __len__(self) -> int:
        return self.features.shape[0]


def phoneme_spectra(num_phonemes: int, num_features: int) -> Tensor:
    r"""The clean pattern of each phoneme: a sum of Gaussian bumps over ``F`` bins.

    .. math:: s_p(u) = \sum_{(c, a)} a\, \exp\!\big(-(u - c)^2 / (2 \cdot 0.06^2)\big),
        \qquad u = 0, \tfrac{1}{F-1}, \dots, 1

    with the bump centres ``c`` and heights ``a`` of phoneme ``p`` fixed in a
    table (vowels have two formants, /s/ high-frequency energy, nasals a low
    murmur, silence nothing). A cartoon, not acoustics.

    Returns:
        ``(P, F)`` float32.
    """
    if not 2 <= num_phonemes <= len(PHONEMES):
        raise ValueError(
            f"num_phonemes must lie in [2, {len(PHONEMES)}], got {num_phonemes}"
        )
    _positive("num_features", num_features)
    u = np.linspace(0.0, 1.0, num_features)
    rows = [
        sum(
            (a * np.exp(-((u - c) ** 2) / (2 * 0.06**2)) for c, a in _SPECTRA[p]), 0 * u
        )
        for p in PHONEMES[:num_phonemes]
    ]
    return torch.tensor(np.stack(rows), dtype=torch.float32)  # (P, F)


def speech_frames(
    num_utterances: int,
    seconds: float,
    *,
    seed: int | np.random.Generator,
    num_features: int = 16,
    num_phonemes: int = 6,
    noise: float = 1.0,
    min_frames: int = 6,
    max_frames: int = 15,
) -> SpeechFrames:
    r"""Speech-like utterances: phonemes lasting several 10 ms frames, plus noise.

    Each utterance is a random sequence of phonemes (never the same one twice
    in a row), each lasting ``d`` frames with ``d`` uniform in
    ``[min_frames, max_frames]`` (60-150 ms by default, as real phonemes).
    Frame ``t`` of phoneme ``p`` has features

    .. math:: x_t = s_p + \sigma\, \varepsilon_t,\qquad
        \varepsilon_t \sim \mathcal{N}(0, I_F)

    (:func:`phoneme_spectra` gives :math:`s_p`; :math:`\sigma` = ``noise``).
    One frame alone is often misread; its neighbours (same phoneme, fresh
    noise) make the label clear. Distant frames carry no information, because
    the phoneme order is random: labelling needs only *local* context.

    Args:
        num_utterances: ``N``.
        seconds: length of each utterance; ``T = round(100 * seconds)`` frames.
        seed: an int or a ``numpy.random.Generator``.
        num_features: ``F``, bins per frame (like a small filter bank).
        num_phonemes: ``P`` (at most 8): sil, a, i, u, s, m, n, e, in order.
        noise: the noise standard deviation :math:`\sigma`.
        min_frames, max_frames: range of the phoneme durations, in frames.

    Returns:
        A :class:`SpeechFrames`.
    """
    _positive("num_utterances", num_utterances)
    T = round(FRAME_RATE * seconds)
    if T < 1:
        raise ValueError(f"seconds={seconds} gives no frame; need seconds >= 0.01")
    if not 1 <= min_frames <= max_frames:
        raise ValueError(
            f"need 1 <= min_frames <= max_frames, got {min_frames}, {max_frames}"
        )
    if noise < 0:
        raise ValueError(f"noise must be non-negative, got {noise}")
    spectra = phoneme_spectra(num_phonemes, num_features)  # (P, F)
    rng = _rng(seed)
    labels = np.empty((num_utterances, T), dtype=np.int64)
    for n in range(num_utterances):
        t, p = 0, int(rng.integers(num_phonemes))
        while t < T:
            d = int(rng.integers(min_frames, max_frames + 1))
            labels[n, t : t + d] = p
            t += d
            p = (p + int(rng.integers(1, num_phonemes))) % num_phonemes  # a new one
    eps = rng.standard_normal((num_utterances, T, num_features))
    y = torch.from_numpy(labels)
    x = spectra[y] + noise * torch.from_numpy(eps).float()  # (N, T, F)
    return SpeechFrames(x, y, spectra, PHONEMES[:num_phonemes])


# --- images -----------------------------------------------------------------


@dataclass
class ImageSplit:
    """Images ``(N, C, H, W)`` in ``[0, 1]`` with labels, split into train/test."""

    X_train: Tensor
    y_train: Tensor
    X_test: Tensor
    y_test: Tensor
    class_names: tuple[str, ...] = field(default=tuple("0123456789"))


def digits(
    *, test_fraction: float = 0.25, seed: int | np.random.Generator = 0
) -> ImageSplit:
    """scikit-learn's 1,797 handwritten digits (8x8, bundled: no download).

    Pixel intensities 0..16 are scaled to ``[0, 1]``. The split is stratified:
    of each digit's images, a fraction ``test_fraction`` (rounded) goes to the
    test set, chosen by ``seed``; indices are kept in their original order.

    Args:
        test_fraction: share of each class held out, in ``(0, 1)``.
        seed: an int or a ``numpy.random.Generator``.

    Returns:
        An :class:`ImageSplit` with ``X_*`` of shape ``(n, 1, 8, 8)`` float32
        and ``y_*`` of shape ``(n,)`` int64.
    """
    from sklearn.datasets import load_digits

    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    rng = _rng(seed)
    data = load_digits()
    X = torch.tensor(data.images / 16.0, dtype=torch.float32)[:, None]  # (N, 1, 8, 8)
    y = torch.tensor(data.target, dtype=torch.long)
    test = np.zeros(len(y), dtype=bool)
    for c in range(10):
        idx = np.flatnonzero(data.target == c)
        test[rng.permutation(idx)[: round(test_fraction * len(idx))]] = True
    test_t = torch.from_numpy(test)
    return ImageSplit(X[~test_t], y[~test_t], X[test_t], y[test_t])


# --- graphs -----------------------------------------------------------------


@dataclass
class KarateClub:
    """Zachary's karate club as tensors for node classification.

    Attributes:
        graph: the networkx graph (34 nodes, 78 edges); node ``i`` is row ``i``.
        adjacency: ``(N, N)`` float32, 1 where two members interacted, else 0.
        features: ``(N, F)`` float32 node features.
        labels: ``(N,)`` 0 = Mr. Hi's club, 1 = the Officer's club.
        train_mask: ``(N,)`` bool, the labelled nodes; test_mask: the others.
        class_names: ``("Mr. Hi", "Officer")``.
    """

    graph: Any
    adjacency: Tensor
    features: Tensor
    labels: Tensor
    train_mask: Tensor
    test_mask: Tensor
    class_names: tuple[str, ...] = ("Mr. Hi", "Officer")


def karate_club(
    *,
    features: str = "identity",
    labelled_per_class: int = 1,
    seed: int | np.random.Generator | None = None,
) -> KarateClub:
    """Zachary's (1977) karate club, split for semi-supervised learning.

    The club split in two after a dispute between the instructor (node 0,
    "Mr. Hi") and the administrator (node 33, "Officer"); the label of a
    member is the club they joined. As in the semi-supervised setting of Kipf
    and Welling (2017), only a few nodes are labelled: always the two leaders,
    plus ``labelled_per_class - 1`` more per club drawn with ``seed``. The
    graph's interaction counts are ignored: an edge is an edge.

    Args:
        features: ``"identity"``: one-hot node ids, ``(N, N)``, so features
            say nothing about the club and only the edges can help;
            ``"degree"``: ``(N, 2)``, the degree divided by the largest
            degree, and a constant 1.
        labelled_per_class: labelled nodes per club (at least 1).
        seed: required when ``labelled_per_class > 1``.

    Returns:
        A :class:`KarateClub`.
    """
    import networkx as nx

    _positive("labelled_per_class", labelled_per_class)
    G = nx.karate_club_graph()
    N = G.number_of_nodes()
    A = torch.tensor(nx.to_numpy_array(G, nodelist=range(N)) != 0, dtype=torch.float32)
    labels = torch.tensor([int(G.nodes[i]["club"] != "Mr. Hi") for i in range(N)])
    if features == "identity":
        X = torch.eye(N)
    elif features == "degree":
        deg = A.sum(1)
        X = torch.stack([deg / deg.max(), torch.ones(N)], dim=1)  # (N, 2)
    else:
        raise ValueError(f"features must be 'identity' or 'degree', got {features!r}")
    train = torch.zeros(N, dtype=torch.bool)
    train[[0, 33]] = True
    if labelled_per_class > 1:
        if seed is None:
            raise ValueError("labelled_per_class > 1 draws nodes at random: pass seed")
        rng = _rng(seed)
        for c in (0, 1):
            pool = [i for i in range(N) if labels[i] == c and not train[i]]
            train[rng.choice(pool, labelled_per_class - 1, replace=False)] = True
    return KarateClub(G, A, X, labels, train, ~train)
