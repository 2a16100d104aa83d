"""selfattn.efficient.linformer (Wang et al., 2020) against dense softmax
attention written out (``dense_attention``) on the projected keys and values,
and errors that name the argument. Linformer calls PyTorch's kernel on the
projected sequence, so the oracle is never that kernel."""

from __future__ import annotations

import pytest
import torch
from oracles import dense_attention, qkv

from selfattn.efficient import linformer_attention


@pytest.mark.parametrize("T_q,T_k", [(10, 10), (7, 12)])
def test_linformer_identity_projection_is_dense(gen, T_q, T_k):
    q, k, v = qkv(gen, 2, 3, T_q=T_q, T_k=T_k, d_v=5)
    eye = torch.eye(T_k, dtype=torch.float64)
    expected = dense_attention(q, k, v)
    torch.testing.assert_close(linformer_attention(q, k, v, eye, eye), expected)


def test_linformer_projects_keys_and_values(gen):
    q, k, v = qkv(gen, 2, T_q=10, T_k=12)
    E = torch.randn(4, 12, generator=gen, dtype=torch.float64)
    Fp = torch.randn(4, 12, generator=gen, dtype=torch.float64)
    expected = dense_attention(
        q, torch.einsum("pt,btd->bpd", E, k), torch.einsum("pt,btd->bpd", Fp, v)
    )
    torch.testing.assert_close(linformer_attention(q, k, v, E, Fp), expected)
    with pytest.raises(ValueError, match="E"):
        linformer_attention(q, k, v, E[:, :5], Fp)
    with pytest.raises(ValueError, match="k_proj"):
        linformer_attention(q, k, v, E, Fp[:3])


def test_linformer_projections_take_the_inputs_dtype(gen):
    """float32 projections (as a float32 module holds them) on float64 inputs:
    cast to the inputs' dtype, the same result as float64 projections."""
    q, k, v = qkv(gen, 2, T_q=6, T_k=8)
    E, Fp = (torch.randn(3, 8, generator=gen) for _ in range(2))  # float32
    out = linformer_attention(q, k, v, E, Fp)
    assert out.dtype == torch.float64
    torch.testing.assert_close(
        out, linformer_attention(q, k, v, E.double(), Fp.double())
    )


z = torch.zeros


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(2, 4), z(2, 5)),
            ValueError,
            r"\bE must\b.*\(k_proj, T_k=5\), got \(2, 4\)",
        ),
        (
            lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(2, 5), z(2, 5, 1)),
            ValueError,
            r"\bF must\b.*\(k_proj, T_k=5\), got \(2, 5, 1\)",
        ),
        (
            lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(2, 5), z(3, 5)),
            ValueError,
            r"\bE \(2, 5\) and F \(3, 5\).*\bk_proj\b",
        ),
        (
            lambda: linformer_attention(z(3, 4), z(5, 4), z(5, 4), z(5), z(2, 5)),
            ValueError,
            r"^E must have at least 2 dimensions, got shape \(5\)$",
        ),
        (
            lambda: linformer_attention(
                z(3, 4), z(5, 4), z(5, 4), z(2, 5), z(2, 5, dtype=torch.long)
            ),
            TypeError,
            r"^F must be a floating-point tensor, got dtype torch.int64$",
        ),
    ],
)
def test_linformer_errors_name_the_argument(call, error, match):
    """The argument's name and the shapes seen (and expected)."""
    with pytest.raises(error, match=match):
        call()
