"""A learned table of positions (as in BERT, Devlin et al., 2019)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import check_int
from selfattn._params import init_from
from selfattn.positional.sinusoidal import _check_x

__all__ = ["LearnedPositionalEmbedding"]


class LearnedPositionalEmbedding(nn.Module):
    """A trainable vector per position, up to ``max_len`` (as in Devlin et al., 2019).

    Unlike the sinusoidal table it has no row for a position beyond
    ``max_len - 1``: longer sequences raise a ``ValueError``.

    Taught in :doc:`/notebooks/positional-encoding` and
    :doc:`/notebooks/sequence-labelling`.

    Args:
        max_len: number of positions in the table; embed_dim: width ``D``.
        generator: for the initial values (normal, std 0.02); optional.

    Examples:
        >>> table = LearnedPositionalEmbedding(16, 4, generator=torch.Generator())
        >>> x = torch.randn(2, 10, 4)
        >>> torch.equal(table(x), x + table.rows(10))
        True
    """

    def __init__(
        self, max_len: int, embed_dim: int, *, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        check_int("max_len", max_len)
        check_int("embed_dim", embed_dim)
        with init_from(self, generator):
            self.max_len, self.embed_dim = max_len, embed_dim
            self.weight = nn.Parameter(torch.empty(max_len, embed_dim))

    def reset_parameters_from(self, generator: torch.Generator | None) -> None:
        """Draw the table again: normal, std 0.02, from ``generator``."""
        with torch.no_grad():
            nn.init.normal_(self.weight, std=0.02, generator=generator)

    def forward(self, x: Tensor) -> Tensor:
        """x ``(B, T, D)`` or ``(T, D)`` -> ``x + E[:T]`` of the same shape."""
        _check_x(x, self.embed_dim)
        return x + self.rows(x.shape[-2]).to(x.dtype)  # (..., T, D)

    def rows(self, T: int) -> Tensor:
        """The table's first ``T`` rows ``E[:T]``, ``(T, D)``: the codes of
        positions ``0, ..., T - 1`` (``T = 0``: no rows)."""
        check_int("T", T, minimum=0)
        if T > self.max_len:
            raise ValueError(
                f"sequence length T={T} exceeds max_len={self.max_len} of this "
                "learned table; use a longer table or a sinusoidal/rotary encoding"
            )
        return self.weight[:T]  # (T, D)
