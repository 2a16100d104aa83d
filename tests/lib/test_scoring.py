"""Scoring functions against explicit per-pair formulas and torch's own ops."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from selfattn import (
    AdditiveScore,
    BilinearScore,
    cosine_score,
    dot_score,
    scaled_dot_score,
)

SHAPES = [((), 3, 4, 5), ((2,), 4, 6, 3), ((2, 3), 1, 2, 8)]  # (batch, T_q, T_k, d)


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def pairwise(fn, q, k):
    """Score every (query, key) pair one at a time: the nested-loop oracle."""
    out = torch.empty(*q.shape[:-1], k.shape[-2], dtype=q.dtype)
    for idx in itertools.product(*(range(n) for n in q.shape[:-2])):
        for i in range(q.shape[-2]):
            for j in range(k.shape[-2]):
                out[idx + (i, j)] = fn(q[idx + (i,)], k[idx + (j,)])
    return out


@pytest.mark.parametrize("batch, T_q, T_k, d", SHAPES)
def test_dot_and_scaled_dot(gen, batch, T_q, T_k, d):
    q, k = randn(gen, *batch, T_q, d), randn(gen, *batch, T_k, d)
    expected = pairwise(torch.dot, q, k)
    torch.testing.assert_close(dot_score(q, k), expected)
    torch.testing.assert_close(scaled_dot_score(q, k), expected / math.sqrt(d))


@pytest.mark.parametrize("batch, T_q, T_k, d", SHAPES)
def test_cosine_matches_torch_cosine_similarity(gen, batch, T_q, T_k, d):
    q, k = randn(gen, *batch, T_q, d), randn(gen, *batch, T_k, d)
    expected = F.cosine_similarity(q.unsqueeze(-2), k.unsqueeze(-3), dim=-1)
    torch.testing.assert_close(cosine_score(q, k), expected)
    assert (cosine_score(q, k).abs() <= 1 + 1e-12).all()


def test_cosine_zero_vector_scores_zero(gen):
    q = torch.zeros(1, 3, dtype=torch.float64)
    assert torch.equal(cosine_score(q, randn(gen, 4, 3)), torch.zeros(1, 4).double())


@pytest.mark.parametrize("batch, T_q, T_k", [((), 3, 4), ((2,), 2, 5)])
@pytest.mark.parametrize("d_q, d_k, hidden_dim", [(4, 4, 8), (3, 5, 2)])
def test_additive_score_matches_formula(gen, batch, T_q, T_k, d_q, d_k, hidden_dim):
    score = AdditiveScore(d_q, d_k, hidden_dim).double()
    q, k = randn(gen, *batch, T_q, d_q), randn(gen, *batch, T_k, d_k)
    Wq, Wk = score.W_q.weight, score.W_k.weight
    wv = score.w_v.weight[0]

    def s(qi, kj):  # w_v^T tanh(W_q q + W_k k)  (Bahdanau et al., 2015)
        return wv @ torch.tanh(Wq @ qi + Wk @ kj)

    torch.testing.assert_close(score(q, k), pairwise(s, q, k).detach())


@pytest.mark.parametrize("d_q, d_k", [(4, 4), (3, 6)])
def test_bilinear_score_matches_formula(gen, d_q, d_k):
    score = BilinearScore(d_q, d_k).double()
    q, k = randn(gen, 2, 3, d_q), randn(gen, 2, 5, d_k)
    W = score.W.detach()
    torch.testing.assert_close(
        score(q, k).detach(), pairwise(lambda a, b: a @ W @ b, q, k)
    )


def test_bilinear_with_identity_is_dot(gen):
    score = BilinearScore(4, 4).double()
    with torch.no_grad():
        score.W.copy_(torch.eye(4))
    q, k = randn(gen, 3, 4), randn(gen, 5, 4)
    torch.testing.assert_close(score(q, k).detach(), dot_score(q, k))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda q, k: dot_score(q, k[..., :3]), r"q has width 4 but k has width 3"),
        (lambda q, k: cosine_score(q, k[None]), r"leading dimensions.*\(1, 5, 4\)"),
        (lambda q, k: AdditiveScore(3, 4, 2)(q, k), r"q width 3.*\(2, 4\)"),
        (lambda q, k: BilinearScore(4, 5)(q, k), r"k width 5.*\(5, 4\)"),
        (lambda q, k: dot_score(q * float("nan"), k), r"q contains NaN"),
    ],
)
def test_scoring_bad_input(gen, call, match):
    q, k = randn(gen, 2, 4), randn(gen, 5, 4)
    with pytest.raises(ValueError, match=match):
        call(q.float(), k.float())
