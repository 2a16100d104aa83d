"""Speech-like sequences of 10 ms frames with one label per frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from selfattn._checks import check_int
from selfattn.lab.data._common import _rng

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
    check_int("num_features", num_features)
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
    generator: np.random.Generator | int,
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
        generator: an int or a ``numpy.random.Generator``.
        num_features: ``F``, bins per frame (like a small filter bank).
        num_phonemes: ``P`` (at most 8): sil, a, i, u, s, m, n, e, in order.
        noise: the noise standard deviation :math:`\sigma`.
        min_frames, max_frames: range of the phoneme durations, in frames.

    Returns:
        A :class:`SpeechFrames`.
    """
    check_int("num_utterances", num_utterances)
    T = round(FRAME_RATE * seconds)
    if T < 1:
        raise ValueError(f"seconds={seconds} gives no frame; need seconds >= 0.01")
    check_int("min_frames", min_frames)
    if check_int("max_frames", max_frames) < min_frames:
        raise ValueError(
            f"need 1 <= min_frames <= max_frames, got {min_frames}, {max_frames}"
        )
    if noise < 0:
        raise ValueError(f"noise must be non-negative, got {noise}")
    spectra = phoneme_spectra(num_phonemes, num_features)  # (P, F)
    rng = _rng(generator)
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
