"""selfattn.efficient.performer: FAVOR+ (Choromanski et al., 2021).

Oracles: the estimator's ratio written out in float64 from
``performer_features`` (``_performer_ref``), the normalised positive-feature
kernel written out, Monte Carlo expectations for the random features, and
dense softmax attention written out (``dense_attention``) for the error as
the number of features grows.
"""

from __future__ import annotations

import math

import pytest
import torch
from oracles import dense_attention, qkv

from selfattn import causal_mask
from selfattn.efficient import (
    orthogonal_random_matrix,
    performer_attention,
    performer_features,
)

# --- orthogonal random features -----------------------------------------------


@pytest.mark.parametrize("m,d", [(16, 16), (20, 8), (5, 8)])
def test_orthogonal_random_matrix_blocks(m, d):
    W = orthogonal_random_matrix(m, d, generator=torch.Generator().manual_seed(1))
    assert W.shape == (m, d)
    for start in range(0, m, d):
        block = W[start : start + d]
        unit = block / block.norm(dim=1, keepdim=True)
        torch.testing.assert_close(unit @ unit.T, torch.eye(len(block)))
    again = orthogonal_random_matrix(m, d, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(W, again)  # reproducible from the generator


def test_orthogonal_random_matrix_norms_are_chi():
    d = 8
    W = orthogonal_random_matrix(4000, d, generator=torch.Generator().manual_seed(2))
    sq = (W * W).sum(dim=1)  # chi^2(d): mean d, variance 2d
    assert abs(sq.mean().item() - d) < 4 * math.sqrt(2 * d / 4000)
    with pytest.raises(TypeError, match="generator"):
        orthogonal_random_matrix(4, 4, generator=None)
    with pytest.raises(ValueError, match=r"\br must\b"):
        orthogonal_random_matrix(0, 4, generator=torch.Generator())


def test_performer_features_of_one_vector(gen):
    """x may be a single (d,) vector: its (r,) features, as row 0 of a batch."""
    W = orthogonal_random_matrix(6, 3, generator=gen, dtype=torch.float64)
    x = torch.randn(2, 3, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(performer_features(x[0], W), performer_features(x, W)[0])


def test_performer_features_positive_and_unbiased(gen):
    d = 4
    x = torch.randn(6, d, generator=gen, dtype=torch.float64) * 0.5
    y = torch.randn(6, d, generator=gen, dtype=torch.float64) * 0.5
    estimates = []
    for seed in range(200):
        W = orthogonal_random_matrix(
            64, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
        )
        phi_x, phi_y = performer_features(x, W), performer_features(y, W)
        assert (phi_x > 0).all() and (phi_y > 0).all()
        estimates.append(phi_x @ phi_y.T)  # (6, 6) estimate of exp(x y^T)
    est = torch.stack(estimates)  # (200, 6, 6)
    truth = torch.exp(x @ y.T)
    standard_error = est.std(dim=0) / math.sqrt(len(estimates))
    assert ((est.mean(dim=0) - truth).abs() < 5 * standard_error + 1e-3).all()


# --- the estimator ------------------------------------------------------------


def _performer_ref(q, k, v, W):
    """The FAVOR+ ratio written out in float64 from performer_features, with
    no stabilising constants (float64 has the range for these inputs)."""
    c = q.shape[-1] ** -0.25
    fq = performer_features(q.double() * c, W.double())  # (..., T_q, r)
    fk = performer_features(k.double() * c, W.double())  # (..., T_k, r)
    num = fq @ (fk.transpose(-2, -1) @ v.double())  # (..., T_q, d_v)
    return num / (fq @ fk.sum(-2, keepdim=True).transpose(-2, -1))


def test_performer_error_decreases_with_features(gen):
    q, k, v = qkv(gen, 2, T_q=32, d_k=16)
    q, k = 0.5 * q, 0.5 * k
    exact = dense_attention(q, k, v)

    def mean_error(m):
        errors = [
            (
                performer_attention(
                    q, k, v, m, generator=torch.Generator().manual_seed(s)
                )
                - exact
            )
            .abs()
            .mean()
            for s in range(6)
        ]
        return torch.stack(errors).mean().item()

    err_16, err_1024 = mean_error(16), mean_error(1024)
    assert err_1024 < 0.5 * err_16  # ~ 1/sqrt(m): expect about 8x smaller


def test_performer_projection_argument_and_causal(gen):
    q, k, v = qkv(gen, 2, T_q=20, d_k=8)
    W = orthogonal_random_matrix(32, 8, generator=gen, dtype=torch.float64)
    out = performer_attention(q, k, v, projection=W, eps=0.0)
    # the same estimator written out: normalised positive-feature kernel
    c = 8**-0.25
    kernel = performer_features(q * c, W) @ performer_features(k * c, W).mT
    torch.testing.assert_close(out, kernel @ v / kernel.sum(-1, keepdim=True))
    kernel_causal = kernel * causal_mask(20)
    torch.testing.assert_close(
        performer_attention(q, k, v, projection=W, causal=True, eps=0.0),
        kernel_causal @ v / kernel_causal.sum(-1, keepdim=True),
    )
    with pytest.raises(ValueError, match="generator"):
        performer_attention(q, k, v)
    with pytest.raises(ValueError, match="projection"):
        performer_attention(q, k, v, projection=W[:, :4])


def test_performer_default_draw_is_256_float32_features(gen):
    q, k, v = (torch.randn(2, 6, 4, generator=gen) for _ in range(3))
    out = performer_attention(q, k, v, generator=torch.Generator().manual_seed(5))
    W = orthogonal_random_matrix(256, 4, generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(out, performer_attention(q, k, v, projection=W))
    # the draw is float32 whatever the default dtype (one generator, one draw)
    default = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        q64, k64, v64 = q.double(), k.double(), v.double()
        out64 = performer_attention(
            q64, k64, v64, generator=torch.Generator().manual_seed(5)
        )
    finally:
        torch.set_default_dtype(default)
    torch.testing.assert_close(
        out64, performer_attention(q64, k64, v64, projection=W.double())
    )


def test_performer_matches_the_written_out_ratio(gen):
    """The default eps (1e-6) barely moves the ratio (denominators of order
    one after the stabilising division)."""
    q, k, v = (torch.randn(2, 3, 7, 4, generator=gen) for _ in range(3))
    W = orthogonal_random_matrix(32, 4, generator=gen)
    out = performer_attention(q.double(), k.double(), v.double(), projection=W)
    torch.testing.assert_close(out, _performer_ref(q, k, v, W), rtol=1e-3, atol=1e-4)


def test_performer_stabilises_each_query_row_and_each_key_set(gen):
    """Float32, rows of very different norms. A long row x (|x c| = 17) has
    features of about exp(x w - |x c|^2 / 2) < exp(-90), below float32's
    range, unless each query row is divided by its own largest feature and
    each batch's keys by their own largest. Batch 0 has one long query and
    short keys, batch 1 short queries and long keys."""
    d = 4
    W = orthogonal_random_matrix(16, d, generator=gen)
    q, k = torch.randn(2, 5, d, generator=gen), torch.randn(2, 6, d, generator=gen)
    v = torch.randn(2, 6, 3, generator=gen)
    long = 17 / d**-0.25  # |x| with |x c| = 17
    q = q / q.norm(dim=-1, keepdim=True)  # unit rows
    k = k / k.norm(dim=-1, keepdim=True)
    q[0, 0] *= long
    k[1] *= long
    out = performer_attention(q, k, v, projection=W)
    assert out.dtype == torch.float32 and torch.isfinite(out).all()
    torch.testing.assert_close(
        out.double(), _performer_ref(q, k, v, W), rtol=1e-3, atol=1e-4
    )


# --- errors -------------------------------------------------------------------


z = torch.zeros


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: performer_attention(z(3, 4), z(3, 4), z(3, 4)),
            ValueError,
            r"\bgenerator=.*\bprojection=.*\bgot neither\b",
        ),
        (
            lambda: performer_attention(z(3, 4), z(3, 4), z(3, 4), projection=z(5, 3)),
            ValueError,
            r"\bprojection must\b.*\(r, d_k=4\), got \(5, 3\)",
        ),
        (
            lambda: performer_attention(
                z(3, 4), z(5, 4), z(5, 4), 8, causal=True, generator=torch.Generator()
            ),
            ValueError,
            r"\bcausal performer_attention\b.*\bT_q == T_k\b.*"
            r"\bq \(3, 4\) and k \(5, 4\)",
        ),
        (
            lambda: orthogonal_random_matrix(4, 2, generator=3),
            TypeError,
            r"\bgenerator must\b.*\bint\b",
        ),
        (
            lambda: performer_features([1.0], z(2, 1)),
            TypeError,
            r"\bx must\b.*\blist\b",
        ),
        (
            lambda: performer_features(torch.tensor(1.0), z(2, 1)),
            ValueError,
            r"^x must have at least 1 dimension, got shape \(\)$",
        ),
    ],
)
def test_performer_errors_name_the_argument(call, error, match):
    """The argument's name and what it got (its shape, or its type)."""
    with pytest.raises(error, match=match):
        call()


def test_the_performer_names_its_bad_arguments_whole():
    """STYLE rule 7, the messages pinned whole."""
    import re

    def raises(error, message):
        return pytest.raises(error, match="^" + re.escape(message) + "$")

    g = torch.Generator().manual_seed(0)
    q = torch.zeros(1, 3, 4)
    with raises(TypeError, "d must be an int, got bool"):
        orthogonal_random_matrix(2, True, generator=g)
    with raises(ValueError, "num_features must be positive, got num_features=0"):
        performer_attention(q, q, q, num_features=0, generator=g)
    with raises(TypeError, "projection must be a torch.Tensor, got list"):
        performer_attention(q, q, q, projection=[[1.0]])
    with raises(
        ValueError, "projection must have at least 2 dimensions, got shape (4)"
    ):
        performer_attention(q, q, q, projection=torch.zeros(4))
