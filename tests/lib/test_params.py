"""Modules take ``generator=``: their initial weights are a function of it alone.

The modules are discovered: every ``nn.Module`` of the package (library and
bench) whose constructor takes ``generator=`` must have a small build in
``BUILD``, so a new one cannot skip these tests (STYLE.md, rule 5).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest
import torch
from torch import nn

import selfattn
from selfattn import MultiHeadAttention, SelfAttention, TransformerEncoderBlock
from selfattn._params import init_from, redraw_parameters
from selfattn.graph import GAT, GraphAttentionLayer
from selfattn.lab.baselines import SmallCNN
from selfattn.positional import LearnedPositionalEmbedding
from selfattn.scoring import AdditiveScore, BilinearScore
from selfattn.seq2seq import BahdanauSeq2Seq, EncoderDecoderTransformer
from selfattn.transformer import TransformerDecoderBlock
from selfattn.vision import ViT


def _modules_taking_a_generator() -> set[type]:
    found = set()
    for info in pkgutil.walk_packages(selfattn.__path__, "selfattn."):
        for obj in vars(importlib.import_module(info.name)).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, nn.Module)
                and obj.__module__.startswith("selfattn")
                and "generator" in inspect.signature(obj.__init__).parameters
            ):
                found.add(obj)
    return found


BUILD = {  # a small one of each, every kind of parameter present
    SelfAttention: lambda g: SelfAttention(6, 4, bias=True, generator=g),
    MultiHeadAttention: lambda g: MultiHeadAttention(8, 2, generator=g),
    TransformerEncoderBlock: lambda g: TransformerEncoderBlock(8, 2, generator=g),
    TransformerDecoderBlock: lambda g: TransformerDecoderBlock(8, 2, generator=g),
    EncoderDecoderTransformer: lambda g: EncoderDecoderTransformer(
        7, 9, embed_dim=8, generator=g
    ),
    BahdanauSeq2Seq: lambda g: BahdanauSeq2Seq(
        7, 9, embed_dim=4, hidden_dim=3, generator=g
    ),
    ViT: lambda g: ViT(8, 4, 1, 3, embed_dim=8, depth=1, num_heads=2, generator=g),
    SmallCNN: lambda g: SmallCNN(1, 3, channels=(2, 3), generator=g),
    AdditiveScore: lambda g: AdditiveScore(3, 4, 5, generator=g),
    BilinearScore: lambda g: BilinearScore(3, 4, generator=g),
    GAT: lambda g: GAT(5, 4, 2, num_heads=2, generator=g),
    GraphAttentionLayer: lambda g: GraphAttentionLayer(3, 5, num_heads=2, generator=g),
    LearnedPositionalEmbedding: lambda g: LearnedPositionalEmbedding(6, 4, generator=g),
}
MAKERS = {cls.__name__: build for cls, build in BUILD.items()}


def test_every_module_taking_a_generator_is_built_here():
    missing = _modules_taking_a_generator() - set(BUILD)
    assert not missing, f"add a small build of {sorted(c.__name__ for c in missing)}"
    assert len(BUILD) >= 13


def _params(module):
    """The parameters, then the buffers (a buffer may hold draws too)."""
    return [p.detach().clone() for p in (*module.parameters(), *module.buffers())]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_same_generator_same_weights_whatever_the_global_rng(name):
    torch.manual_seed(1)
    a = _params(MAKERS[name](torch.Generator().manual_seed(7)))
    torch.manual_seed(2)
    b = _params(MAKERS[name](torch.Generator().manual_seed(7)))
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_other_generator_other_weights(name):
    a = _params(MAKERS[name](torch.Generator().manual_seed(7)))
    b = _params(MAKERS[name](torch.Generator().manual_seed(8)))
    random = [i for i, x in enumerate(a) if x.std() > 0]  # LayerNorm, cls: constant
    assert len(random) > len(a) // 2
    assert all(not torch.equal(a[i], b[i]) for i in random)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_building_with_a_generator_leaves_the_global_rng_alone(name):
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    MAKERS[name](torch.Generator().manual_seed(7))
    assert torch.equal(torch.rand(4), expected)


def test_building_without_a_generator_draws_from_the_global_rng():
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    MultiHeadAttention(8, 2)
    assert not torch.equal(torch.rand(4), expected)


def test_redraw_uses_pytorchs_default_ranges():
    """Weights and biases of a Linear lie in +-1/sqrt(fan_in), and fill it."""
    layer = nn.Linear(50, 400)
    redraw_parameters(layer, torch.Generator().manual_seed(0))
    bound = 1 / 50**0.5
    for p in (layer.weight, layer.bias):
        assert p.abs().max() <= bound
        assert p.abs().max() > 0.95 * bound  # uniform over the whole range


def test_without_generator_the_global_rng_decides():
    torch.manual_seed(3)
    a = _params(SelfAttention(4, 4))
    torch.manual_seed(3)
    b = _params(SelfAttention(4, 4))
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)


def test_generator_must_be_a_generator():
    with pytest.raises(TypeError, match="generator"):
        MultiHeadAttention(8, 2, generator=0)


# --- the rule fails loudly -------------------------------------------------------


class _WithEmbedding(nn.Module):
    def __init__(self, generator=None):
        super().__init__()
        with init_from(self, generator):
            self.proj = nn.Linear(3, 3)
            self.embed = nn.Embedding(5, 3)  # PyTorch draws it from the global stream


class _WithRawParameter(nn.Module):
    def __init__(self, generator=None, *, hook=False):
        super().__init__()
        if hook:
            self.reset_parameters_from = lambda g: self.w.normal_(generator=g)
        with init_from(self, generator):
            self.w = nn.Parameter(torch.randn(3, 4))
            self.zero = nn.Parameter(torch.zeros(4))  # constant: nothing to draw
            self.norm = nn.LayerNorm(4)


def test_a_parameter_init_from_cannot_draw_raises_naming_its_module():
    with pytest.raises(TypeError, match=r"^_WithEmbedding\.embed \(Embedding\) has "):
        _WithEmbedding(torch.Generator())
    with pytest.raises(TypeError, match=r"^_WithRawParameter has parameters \['w'\]"):
        _WithRawParameter(torch.Generator())
    with pytest.raises(TypeError, match=r"reset_parameters_from\(generator\)"):
        _WithRawParameter(torch.Generator())


def test_a_module_that_draws_its_own_or_builds_without_a_generator_passes():
    _WithEmbedding(), _WithRawParameter()  # the global stream, as documented
    a = _WithRawParameter(torch.Generator().manual_seed(0), hook=True)
    b = _WithRawParameter(torch.Generator().manual_seed(0), hook=True)
    assert torch.equal(a.w, b.w)


class _WithScalar(nn.Module):
    """A learned temperature of one element, and the constants that need no draw."""

    def __init__(self, generator=None, *, hook=False):
        super().__init__()
        if hook:
            self.reset_parameters_from = lambda g: self.t.normal_(generator=g)
        with init_from(self, generator):
            self.t = nn.Parameter(torch.randn(1))  # from the global stream
            self.one, self.zero = (
                nn.Parameter(torch.ones(1)),
                nn.Parameter(torch.zeros(3)),
            )
            self.norm = nn.LayerNorm(4)  # ones and zeros


class _WithBuffer(nn.Module):
    """A random buffer (drawn again by reset_parameters_from with hook=True)
    beside a table computed without randomness and a constant count."""

    def __init__(self, generator=None, *, hook=False):
        super().__init__()
        if hook:
            self.reset_parameters_from = lambda g: self.R.normal_(generator=g)
        with init_from(self, generator):
            self.proj = nn.Linear(3, 4)  # draws from the global stream, then redrawn
            self.register_buffer("table", torch.arange(12.0).reshape(3, 4))
            self.register_buffer("R", torch.randn(3, 4))  # a random projection
            self.register_buffer("count", torch.zeros(()))


class _Outer(nn.Module):
    def __init__(self, generator=None):
        super().__init__()
        with init_from(self, generator):
            self.inner = _WithBuffer()


def test_a_one_element_parameter_from_the_global_stream_raises():
    """Only all zeros or all ones count as a constant initialisation: a single
    randn value would otherwise keep a global-stream value whatever the generator."""
    with pytest.raises(TypeError, match=r"^_WithScalar has parameters \['t'\] that "):
        _WithScalar(torch.Generator())
    torch.manual_seed(1)
    a = _WithScalar(torch.Generator().manual_seed(0), hook=True).t.item()
    torch.manual_seed(2)
    assert _WithScalar(torch.Generator().manual_seed(0), hook=True).t.item() == a


def test_a_random_buffer_must_be_drawn_from_the_generator():
    with pytest.raises(TypeError, match=r"^_WithBuffer has buffers \['R'\] registered"):
        _WithBuffer(torch.Generator())
    with pytest.raises(TypeError, match=r"^_Outer\.inner \(_WithBuffer\) has buffers"):
        _Outer(torch.Generator())
    _WithBuffer(), _Outer()  # without a generator: the global stream, as documented
    built = []
    for seed in (1, 2):  # the same generator, two global seeds
        torch.manual_seed(seed)
        built.append(_params(_WithBuffer(torch.Generator().manual_seed(0), hook=True)))
    for x, y in zip(*built, strict=True):
        torch.testing.assert_close(x, y, rtol=0, atol=0)


class _OwnLinear(nn.Linear):
    """A linear layer with its own rule: weights from N(0, 0.02)."""

    def reset_parameters_from(self, generator):
        self.weight.normal_(0.0, 0.02, generator=generator)
        self.bias.zero_()


def test_a_linear_subclass_keeps_its_own_reset_parameters_from():
    class Model(nn.Module):
        def __init__(self, generator=None):
            super().__init__()
            with init_from(self, generator):
                self.proj = _OwnLinear(64, 64)

    weight = Model(torch.Generator().manual_seed(0)).proj.weight
    expected = torch.empty(64, 64).normal_(
        0.0, 0.02, generator=torch.Generator().manual_seed(0)
    )
    torch.testing.assert_close(weight, expected, rtol=0, atol=0)


def test_the_messages_say_what_to_do_whole():
    """STYLE rule 7: the messages pinned whole, the advice included."""
    parameters = (
        "_WithRawParameter has parameters ['w'] that init_from cannot draw from "
        "the generator (it draws nn.Linear and nn.Conv1d/2d); give the module "
        "that owns them a reset_parameters_from(generator) that draws them "
        "(STYLE.md, rule 5)"
    )
    with pytest.raises(TypeError, match="^" + re.escape(parameters) + "$"):
        _WithRawParameter(torch.Generator())
    buffers = (
        "_WithBuffer has buffers ['R'] registered just after a draw from "
        "torch's global stream, that nothing drew from the generator; draw "
        "them in a reset_parameters_from(generator) (STYLE.md, rule 5)"
    )
    with pytest.raises(TypeError, match="^" + re.escape(buffers) + "$"):
        _WithBuffer(torch.Generator())


def test_without_a_generator_the_module_s_own_rule_still_runs():
    calls = []

    class Own(nn.Module):
        def __init__(self):
            super().__init__()
            with init_from(self, None):
                self.proj = nn.Linear(2, 2)

        def reset_parameters_from(self, generator):
            calls.append(generator)

    Own()
    assert calls == [None]
