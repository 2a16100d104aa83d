r"""Small data sets for the chapters: generated, or shipped inside a package.

Nothing here downloads. Every generator is deterministic given ``generator`` (a
``numpy.random.Generator``, or an ``int`` seed); the library never seeds globally.

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

Modules: :mod:`~selfattn.lab.data.text`, :mod:`~selfattn.lab.data.speech`,
:mod:`~selfattn.lab.data.images`, :mod:`~selfattn.lab.data.graphs`; everything public
is re-exported here (``selfattn.lab.data.pos_corpus``).
"""

from selfattn.lab.data._common import PAD_TAG
from selfattn.lab.data.graphs import KarateClub, karate_club
from selfattn.lab.data.images import ImageSplit, digits
from selfattn.lab.data.speech import (
    FRAME_RATE,
    PHONEMES,
    SpeechFrames,
    phoneme_spectra,
    speech_frames,
)
from selfattn.lab.data.text import AMBIGUOUS, TAGS, PosCorpus, pos_corpus

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
