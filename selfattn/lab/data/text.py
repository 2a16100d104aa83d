"""A synthetic part-of-speech corpus whose ambiguous words need context."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from selfattn._checks import check_int
from selfattn.lab.data._common import PAD_TAG, _rng

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
        lengths: ``(N,)`` the real length of each sentence.
        ambiguous: ``(N, T)`` bool, True at the words that can be NOUN or VERB.
        cue_distance: ``(N, T)`` for each ambiguous word, how many positions
            to its left the word that decides its tag is (1 = the neighbour);
            -1 elsewhere.
        vocab: the words, ``vocab[i]`` is word id ``i``.
        tag_names: the tags, ``tag_names[t]`` is tag id ``t``.
    """

    tokens: Tensor
    tags: Tensor
    lengths: Tensor
    ambiguous: Tensor
    cue_distance: Tensor
    vocab: tuple[str, ...]
    tag_names: tuple[str, ...] = TAGS

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def words(self, i: int) -> list[str]:
        """The words of sentence ``i`` (padding removed)."""
        n = int(self.lengths[i])
        return [self.vocab[t] for t in self.tokens[i, :n].tolist()]

    def tag_strings(self, i: int) -> list[str]:
        """The tags of sentence ``i`` as strings (padding removed)."""
        n = int(self.lengths[i])
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
    generator: np.random.Generator | int,
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
        generator: an int or a ``numpy.random.Generator`` (the only randomness).
        distant_fraction: share of sentences with a distant cue.
        min_gap, max_gap: range of the number of fillers ``g`` (inclusive).

    Returns:
        A :class:`PosCorpus`, padded to the longest sentence ``T``.
    """
    check_int("num_sentences", num_sentences)
    if not 0.0 <= distant_fraction <= 1.0:
        raise ValueError(f"distant_fraction must lie in [0, 1], got {distant_fraction}")
    if not 0 <= min_gap <= max_gap:
        raise ValueError(
            f"need 0 <= min_gap <= max_gap, got min_gap={min_gap}, max_gap={max_gap}"
        )
    rng = _rng(generator)
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
        lengths=torch.tensor([len(s) for s in sents]),
        ambiguous=torch.isin(tokens, amb_ids),
        cue_distance=cue,
        vocab=vocab,
    )
