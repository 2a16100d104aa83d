r"""The Transformer's decoder block, and decoding one position at a time.

A decoder block (Vaswani et al., 2017, sec. 3.1): masked self-attention over
the target, **cross-attention** (queries from the target, keys and values from
the encoder's output, the *memory*) and a feed-forward network, pre-norm like
:class:`selfattn.transformer.TransformerEncoderBlock` and PyTorch's
``TransformerDecoderLayer(norm_first=True)``. Without cross-attention it is
the block of a decoder-only (GPT-style) model.
:meth:`~selfattn.transformer.TransformerDecoderBlock.step`
decodes one position at a time with a :class:`KVCache` and gives the outputs
of the block run on the whole prefix. Shapes: target ``x`` ``(B, T_q, D)``,
memory ``(B, T_k, D)``, per-head keys and values ``(B, H, T, d_k)``.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn

from selfattn import _torch_compat
from selfattn._checks import (
    check_int,
    check_mask,
    check_rate,
    check_sequence,
    ff_width,
    shape_str,
)
from selfattn._params import init_from
from selfattn.modules import MultiHeadAttention

__all__ = ["KVCache", "TransformerDecoderBlock"]


class KVCache(NamedTuple):
    """What one decoder block keeps between decoding steps.

    Attributes:
        k, v: the self-attention keys and values of the ``t`` positions
            decoded so far, ``(B, H, t, d_k)`` each.
        memory_k, memory_v: the cross-attention keys and values of the
            memory, ``(B, H, T_k, d_k)``, projected once on the first step;
            None in a block without cross-attention.

    Taught in :doc:`/notebooks/cross-attention`.

    Examples:
        >>> block = TransformerDecoderBlock(8, 2, generator=torch.Generator())
        >>> _, cache = block.step(torch.randn(1, 3, 8), torch.randn(1, 5, 8))
        >>> cache.k.shape, cache.memory_k.shape  # (B, H, t, d_k), (B, H, T_k, d_k)
        (torch.Size([1, 2, 3, 4]), torch.Size([1, 2, 5, 4]))
    """

    k: Tensor
    v: Tensor
    memory_k: Tensor | None = None
    memory_v: Tensor | None = None


class TransformerDecoderBlock(nn.Module):
    r"""A pre-norm Transformer decoder block (Vaswani et al., 2017, sec. 3.1).

    .. math::
        h &= x + \operatorname{MHA}(\operatorname{LN}_1(x))
            \quad\text{(causal: query } i \text{ sees positions } j \le i)\\
        c &= h + \operatorname{MHA}(\operatorname{LN}_2(h),\
            \text{memory},\ \text{memory})\quad\text{(cross-attention)}\\
        y &= c + \operatorname{FFN}(\operatorname{LN}_3(c)),\qquad
        \operatorname{FFN}(z) = \operatorname{GELU}(z W_1 + b_1) W_2 + b_2

    Cross-attention takes its queries from the target and its keys and values
    from the memory, so ``T_q`` (target) and ``T_k`` (source) may differ.
    With ``cross_attention=False`` the middle line is left out. Taught in
    :doc:`/notebooks/cross-attention` and
    :doc:`/notebooks/transformer-end-to-end`.

    Args:
        embed_dim: model width ``D``; num_heads: ``H`` (must divide ``D``).
        ff_dim: hidden width of the FFN (None: ``4 D``; positive).
        dropout: after each sublayer (and its masks come from torch's global
            generator).
        cross_attention: include the cross-attention sublayer.
        generator: draws the initial weights (PyTorch's default
            distribution); None = torch's global generator.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> block = TransformerDecoderBlock(8, 2, generator=g)
        >>> y, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
        >>> block(y, memory).shape
        torch.Size([2, 3, 8])
        >>> block.attention_weights(y, memory)["cross"].shape  # (B, H, T_q, T_k)
        torch.Size([2, 2, 3, 5])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        ff_dim: int | None = None,
        dropout: float = 0.0,
        *,
        cross_attention: bool = True,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        ff_dim = ff_width(ff_dim, check_int("embed_dim", embed_dim))  # None: 4 D
        check_rate("dropout", dropout)
        with init_from(self, generator):  # the weights come from the generator
            self.embed_dim, self.num_heads = embed_dim, num_heads
            self.norm1 = nn.LayerNorm(embed_dim)
            self.self_attn = MultiHeadAttention(embed_dim, num_heads)
            self.norm2 = nn.LayerNorm(embed_dim) if cross_attention else None
            self.cross_attn = (
                MultiHeadAttention(embed_dim, num_heads) if cross_attention else None
            )
            self.norm3 = nn.LayerNorm(embed_dim)
            self.ffn = nn.Sequential(
                nn.Linear(embed_dim, ff_dim), nn.GELU(), nn.Linear(ff_dim, embed_dim)
            )
            self.drop = nn.Dropout(dropout)

    def _check(self, x: Tensor, memory: Tensor | None, *, cached: bool = False) -> None:
        check_sequence("x", x, self.embed_dim)
        if self.cross_attn is None and memory is not None:
            raise ValueError(
                "this block has no cross-attention (cross_attention=False): "
                f"pass memory=None, got memory {shape_str(memory)}"
            )
        if self.cross_attn is not None and memory is None and not cached:
            raise ValueError(
                f"memory (B, T_k, {self.embed_dim}) is required: the block has "
                "cross-attention (the encoder's outputs are its keys and values)"
            )
        if memory is not None:
            check_sequence("memory", memory, self.embed_dim)
            if memory.shape[0] != x.shape[0]:
                raise ValueError(
                    "x and memory must have the same batch size, got x "
                    f"{shape_str(x)} and memory {shape_str(memory)}"
                )

    def _check_memory_mask(
        self, memory_mask: Tensor | None, x: Tensor, T_k: int
    ) -> None:
        """``memory_mask`` broadcasts to ``(B, T_q, T_k)`` or, per head, is
        ``(B, H, T_q, T_k)`` (as ``MultiHeadAttention`` takes it)."""
        if memory_mask is None or self.cross_attn is None:
            return
        B, T_q = x.shape[:2]
        per_head = isinstance(memory_mask, Tensor) and memory_mask.dim() == 4
        shape = (B, self.num_heads, T_q, T_k) if per_head else (B, T_q, T_k)
        check_mask(memory_mask, torch.Size(shape), name="memory_mask")

    def forward(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        causal: bool = True,
    ) -> Tensor:
        """x ``(B, T_q, D)``, memory ``(B, T_k, D)`` -> ``(B, T_q, D)``.

        ``mask``: bool, broadcastable to ``(B, T_q, T_q)``, for the
        self-attention; ``memory_mask``: bool, broadcastable to
        ``(B, T_q, T_k)`` or per head ``(B, H, T_q, T_k)``, for the
        cross-attention (e.g.
        :func:`selfattn.masks.length_mask` of the source); True = may
        attend. ``causal``: query ``i`` attends only positions ``j <= i``
        of ``x`` (the default: a decoder must not see the future).
        """
        self._check(x, memory)
        if memory is not None:
            self._check_memory_mask(memory_mask, x, memory.shape[1])
        a = self.self_attn(self.norm1(x), mask=mask, causal=causal)  # (B, T_q, D)
        h = x + self.drop(a)  # (B, T_q, D)
        if self.cross_attn is not None:
            c = self.cross_attn(self.norm2(h), memory, memory, mask=memory_mask)
            h = h + self.drop(c)  # (B, T_q, D)
        return h + self.drop(self.ffn(self.norm3(h)))  # (B, T_q, D)

    def attention_weights(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        causal: bool = True,
    ) -> dict[str, Tensor]:
        """The weights in ``self(x, memory, ...)``: ``{"self": (B, H, T_q, T_q),
        "cross": (B, H, T_q, T_k)}`` ("cross" only with cross-attention)."""
        self._check(x, memory)
        if memory is not None:
            self._check_memory_mask(memory_mask, x, memory.shape[1])
        z = self.norm1(x)  # (B, T_q, D)
        out = {"self": self.self_attn.attention_weights(z, mask=mask, causal=causal)}
        if self.cross_attn is not None:
            h = x + self.self_attn(z, mask=mask, causal=causal)  # (B, T_q, D)
            out["cross"] = self.cross_attn.attention_weights(
                self.norm2(h), memory, memory, mask=memory_mask
            )
        return out

    def step(
        self,
        x: Tensor,
        memory: Tensor | None = None,
        cache: KVCache | None = None,
        memory_mask: Tensor | None = None,
    ) -> tuple[Tensor, KVCache]:
        """Decode new positions, reusing the keys and values of earlier ones.

        ``x`` ``(B, T_new, D)`` holds positions ``t, ..., t + T_new - 1``,
        where ``t`` is the number of positions in ``cache`` (0 without one).
        Each attends causally to the cached positions and to the new ones up
        to itself, so ``out`` equals the last ``T_new`` rows of
        ``self(prefix, memory)`` on the whole prefix, while only the new
        positions are projected. ``memory`` is needed on the first step; later
        steps reuse its keys and values from the cache. ``memory_mask``:
        bool, broadcastable to ``(B, T_new, T_k)``, or per head
        ``(B, H, T_new, T_k)``, as in ``forward``.

        Returns:
            ``(out, cache)``: ``out`` ``(B, T_new, D)`` and a new
            :class:`KVCache` holding ``t + T_new`` positions (the one passed
            in is not modified).
        """
        if cache is not None and not isinstance(cache, KVCache):  # not MHA's (k, v)
            raise TypeError(
                "cache must be the KVCache that a previous step returned, or None, "
                f"got {type(cache).__name__}"
            )
        self._check(x, memory, cached=cache is not None and cache.memory_k is not None)
        past = None if cache is None else (cache.k, cache.v)
        a, (k, v) = self.self_attn.step(self.norm1(x), past)  # (B, T_new, D)
        h = x + self.drop(a)  # (B, T_new, D)
        mem_k = mem_v = None
        if self.cross_attn is not None:
            ca = self.cross_attn
            if memory is not None:  # the first step (or a new memory)
                mem_k, mem_v = ca.project_kv(memory)  # (B, H, T_k, d_k)
            else:
                mem_k, mem_v = cache.memory_k, cache.memory_v  # (B, H, T_k, d_k)
            self._check_memory_mask(memory_mask, x, mem_k.shape[2])
            c = ca.forward_kv(self.norm2(h), mem_k, mem_v, memory_mask)  # (B, T_new, D)
            h = h + self.drop(c)
        out = h + self.drop(self.ffn(self.norm3(h)))  # (B, T_new, D)
        return out, KVCache(k, v, mem_k, mem_v)

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> TransformerDecoderBlock:
        """Copy a ``torch.nn.TransformerDecoderLayer`` built with
        ``norm_first=True`` and ``activation="gelu"``: its weights and its
        ``layer_norm_eps`` (same outputs with dropout 0 or in eval mode;
        batch first whatever ``layer`` says).

        PyTorch's masks mark what to *ignore*; here ``mask = ~tgt_mask`` and
        ``memory_mask = ~memory_key_padding_mask[:, None, :]``.
        """
        return _torch_compat.block_from_torch(
            cls, layer, nn.TransformerDecoderLayer, _torch_compat.DECODER
        )
