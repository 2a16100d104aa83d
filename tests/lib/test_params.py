"""Modules take ``generator=``: their initial weights are a function of it alone."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from selfattn import MultiHeadAttention, SelfAttention, TransformerEncoderBlock
from selfattn._params import redraw_parameters
from selfattn.graph import GAT
from selfattn.lab.baselines import SmallCNN
from selfattn.positional import LearnedPositionalEmbedding
from selfattn.scoring import AdditiveScore, BilinearScore
from selfattn.vision import ViT

MAKERS = {
    "SelfAttention": lambda g: SelfAttention(6, 4, bias=True, generator=g),
    "MultiHeadAttention": lambda g: MultiHeadAttention(8, 2, generator=g),
    "TransformerEncoderBlock": lambda g: TransformerEncoderBlock(8, 2, generator=g),
    "ViT": lambda g: ViT(8, 4, 1, 3, embed_dim=8, depth=1, num_heads=2, generator=g),
    "SmallCNN": lambda g: SmallCNN(1, 3, channels=(2, 3), generator=g),
    "AdditiveScore": lambda g: AdditiveScore(3, 4, 5, generator=g),
    "BilinearScore": lambda g: BilinearScore(3, 4, generator=g),
    "GAT": lambda g: GAT(5, 4, 2, num_heads=2, generator=g),
    "LearnedPositionalEmbedding": lambda g: LearnedPositionalEmbedding(
        6, 4, generator=g
    ),
}


def _params(module):
    return [p.detach().clone() for p in module.parameters()]


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
    assert random and all(not torch.equal(a[i], b[i]) for i in random)


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
