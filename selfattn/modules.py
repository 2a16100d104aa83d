r"""Attention layers as ``nn.Module``: one head, many heads.

Thin wrappers around :func:`selfattn.attention.scaled_dot_product_attention`.
Modules keep no side outputs: ``module(x)`` returns the output only (so
modules compose, e.g. in ``nn.Sequential``), and ``module.attention_weights(x)``
(same arguments as the call) returns the attention weights. ``forward`` takes
PyTorch's fused kernel where it can; ``attention_weights`` computes the
weights explicitly, with the softmax written out.

Shapes (batch first): ``x`` is ``(B, T, D)``; per-head tensors are
``(B, H, T, d_k)`` with ``d_k = D / H``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn import _torch_compat
from selfattn._checks import check_int, check_kv, check_mask, check_sequence, shape_str
from selfattn._params import init_from
from selfattn.attention import attend, scaled_dot_product_attention

__all__ = ["SelfAttention", "MultiHeadAttention"]


def _head_mask(
    mask: Tensor | None, B: int, H: int, T_q: int, T_k: int
) -> Tensor | None:
    """Check a mask ``(T_q, T_k)``, ``(B, T_q, T_k)`` or ``(B, H, T_q, T_k)``
    and lift it to broadcast over heads."""
    if mask is None:
        return None
    if isinstance(mask, Tensor) and mask.dim() == 4:
        return check_mask(mask, torch.Size((B, H, T_q, T_k)))
    check_mask(mask, torch.Size((B, T_q, T_k)))
    return mask if mask.dim() < 3 else mask.unsqueeze(-3)  # (B, 1, T_q, T_k)


class SelfAttention(nn.Module):
    r"""One head of self-attention: :math:`q = x W_q,\ k = x W_k,\ v = x W_v`.

    .. math:: \operatorname{softmax}(q k^\top / \sqrt{d_k})\, v

    The only learned parameters are :math:`W_q, W_k, W_v` (no bias by default,
    as in the lecture).

    Taught in :doc:`/notebooks/self-attention-qkv`.

    Args:
        embed_dim: input width ``D``; d_k: query/key width; d_v: value width
            (default ``d_k``); bias: add biases to the projections.
        generator: draws the initial weights (PyTorch's default
            distribution); None = torch's global generator.

    Examples:
        >>> layer = SelfAttention(embed_dim=4, d_k=3, generator=torch.Generator())
        >>> x = torch.randn(2, 5, 4)  # a batch of 2 sequences of 5 tokens
        >>> layer(x).shape, layer.attention_weights(x).shape
        (torch.Size([2, 5, 3]), torch.Size([2, 5, 5]))
    """

    def __init__(
        self,
        embed_dim: int,
        d_k: int,
        d_v: int | None = None,
        *,
        bias: bool = False,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        for name, n in (("embed_dim", embed_dim), ("d_k", d_k), ("d_v", d_v)):
            if n is not None:  # d_v None: d_k
                check_int(name, n)
        with init_from(self, generator):
            self.embed_dim, self.d_k = embed_dim, d_k
            self.d_v = d_k if d_v is None else d_v
            self.W_q = nn.Linear(embed_dim, d_k, bias=bias)
            self.W_k = nn.Linear(embed_dim, d_k, bias=bias)
            self.W_v = nn.Linear(embed_dim, self.d_v, bias=bias)

    def _project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        check_sequence("x", x, self.embed_dim)
        return self.W_q(x), self.W_k(x), self.W_v(x)  # (B, T, d_k|d_k|d_v)

    def forward(
        self, x: Tensor, mask: Tensor | None = None, *, causal: bool = False
    ) -> Tensor:
        """x ``(B, T, D)`` -> out ``(B, T, d_v)``.

        ``mask``: bool, broadcastable to ``(B, T, T)``; True = may attend.
        ``causal``: query ``i`` attends only keys ``j <= i``.
        """
        q, k, v = self._project(x)
        return attend(q, k, v, mask, causal=causal)  # (B, T, d_v)

    def attention_weights(
        self, x: Tensor, mask: Tensor | None = None, *, causal: bool = False
    ) -> Tensor:
        """The weights ``(B, T, T)`` of the call ``self(x, mask, causal=causal)``.

        Row ``i`` of ``weights[b]`` is how query ``i`` spreads its attention
        over the keys; it sums to 1 (0 for a query with no allowed key).
        """
        q, k, v = self._project(x)
        return scaled_dot_product_attention(q, k, v, mask, causal=causal)[1]


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention (Vaswani et al., 2017, sec. 3.2.2).

    .. math::
        \operatorname{head}_h
            = \operatorname{Attention}(Q W^Q_h, K W^K_h, V W^V_h),\quad
        \operatorname{MHA}
            = [\operatorname{head}_1; \dots; \operatorname{head}_H]\, W^O

    All heads are computed at once by reshaping the projections to
    ``(B, H, T, d_k)``; no Python loop over heads. With ``key`` and ``value``
    omitted it is self-attention. The cached path, for decoding: :meth:`step`
    (causal self-attention that appends to a cache of keys and values),
    :meth:`project_kv` and :meth:`forward_kv` (a memory projected once).

    Taught in :doc:`/notebooks/multi-head-attention`.

    Args:
        embed_dim: model width ``D``; num_heads: ``H`` (must divide ``D``).
        bias: biases in the four projections (as ``torch.nn.MultiheadAttention``).
        generator: draws the initial weights (PyTorch's default
            distribution); None = torch's global generator.

    Examples:
        >>> mha = MultiHeadAttention(8, num_heads=2, generator=torch.Generator())
        >>> x, memory = torch.randn(1, 5, 8), torch.randn(1, 7, 8)
        >>> mha(x).shape, mha(x, memory).shape  # self-attention, cross-attention
        (torch.Size([1, 5, 8]), torch.Size([1, 5, 8]))
        >>> mha.attention_weights(x, memory).shape  # (B, H, T_q, T_k)
        torch.Size([1, 2, 5, 7])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        *,
        bias: bool = True,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        check_int("embed_dim", embed_dim)
        check_int("num_heads", num_heads)
        with init_from(self, generator):
            if embed_dim % num_heads != 0:
                raise ValueError(
                    f"embed_dim={embed_dim} must be divisible by num_heads={num_heads} "
                    "(each head gets embed_dim // num_heads dimensions)"
                )
            self.embed_dim, self.num_heads = embed_dim, num_heads
            self.d_k = embed_dim // num_heads
            self.W_q = nn.Linear(embed_dim, embed_dim, bias=bias)
            self.W_k = nn.Linear(embed_dim, embed_dim, bias=bias)
            self.W_v = nn.Linear(embed_dim, embed_dim, bias=bias)
            self.W_o = nn.Linear(embed_dim, embed_dim, bias=bias)

    def _split(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, T, d_k)

    def _heads_and_mask(
        self,
        query: Tensor,
        key: Tensor | None,
        value: Tensor | None,
        mask: Tensor | None,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
        """Check the inputs; return the per-head ``q, k, v`` and the mask."""
        key = query if key is None else key
        value = key if value is None else value
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_sequence(name, x, self.embed_dim)
        B, T_q = query.shape[:2]
        if key.shape[0] != B or value.shape[:2] != key.shape[:2]:
            raise ValueError(
                "query, key, value must share the batch size and key/value the "
                f"length, got query {shape_str(query)}, key {shape_str(key)}, "
                f"value {shape_str(value)}"
            )
        mask = _head_mask(mask, B, self.num_heads, T_q, key.shape[1])
        q = self._split(self.W_q(query))  # (B, H, T_q, d_k)
        return (q, *self._project_kv(key, value), mask)

    def _project_kv(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        k = self._split(self.W_k(key))  # (B, H, T_k, d_k)
        v = self._split(self.W_v(value))  # (B, H, T_k, d_k)
        return k, v

    def _merge(self, heads: Tensor) -> Tensor:
        """Concatenate the heads ``(B, H, T_q, d_k)`` and apply ``W_o``."""
        B, H, T_q, d_k = heads.shape
        concat = heads.transpose(1, 2).reshape(B, T_q, H * d_k)  # (B, T_q, D)
        return self.W_o(concat)  # (B, T_q, D)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        causal: bool = False,
    ) -> Tensor:
        """query ``(B, T_q, D)``, key/value ``(B, T_k, D)`` -> ``(B, T_q, D)``.

        ``key`` defaults to ``query`` (self-attention), ``value`` to ``key``.
        ``mask``: bool ``(T_q, T_k)`` or ``(B, T_q, T_k)`` (e.g. from
        :func:`selfattn.masks.length_mask`), or already per head
        ``(B, H, T_q, T_k)``; True = may attend. ``causal``: query ``i``
        attends only keys ``j <= i``.
        """
        # 1) project and split into heads, 2) attend, 3) concatenate and W_o
        q, k, v, mask = self._heads_and_mask(query, key, value, mask)  # (B, H, T, d_k)
        heads = attend(q, k, v, mask, causal=causal)  # (B, H, T_q, d_k)
        return self._merge(heads)  # (B, T_q, D)

    def attention_weights(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        causal: bool = False,
    ) -> Tensor:
        """The per-head weights ``(B, H, T_q, T_k)`` in ``self(query, ...)``.

        ``weights[b, h, i]`` is how query ``i`` of head ``h`` spreads its
        attention over the keys; it sums to 1 (0 for a query with no allowed
        key). PyTorch's ``nn.MultiheadAttention`` returns these with
        ``average_attn_weights=False``.
        """
        q, k, v, mask = self._heads_and_mask(query, key, value, mask)  # (B, H, T, d_k)
        return scaled_dot_product_attention(q, k, v, mask, causal=causal)[1]

    def project_kv(
        self, key: Tensor, value: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        r"""The per-head keys :math:`K W^K_h` and values :math:`V W^V_h` (a cache's).

        key, value ``(B, T_k, D)`` -> ``(k, v)``, each ``(B, H, T_k, d_k)``;
        ``value`` defaults to ``key``. ``self(query, key, value)`` equals
        ``self.forward_kv(query, *self.project_kv(key, value))``: a decoder
        projects its memory once and reuses it at every step.

        Examples:
            >>> mha = MultiHeadAttention(8, num_heads=2, generator=torch.Generator())
            >>> x, memory = torch.randn(1, 5, 8), torch.randn(1, 7, 8)
            >>> k, v = mha.project_kv(memory)  # (B, H, T_k, d_k) each
            >>> torch.allclose(mha.forward_kv(x, k, v), mha(x, memory))
            True
        """
        value = key if value is None else value
        for name, x in (("key", key), ("value", value)):
            check_sequence(name, x, self.embed_dim)
        if value.shape[:2] != key.shape[:2]:
            raise ValueError(
                "key and value must share the batch size and the length, got "
                f"key {shape_str(key)}, value {shape_str(value)}"
            )
        return self._project_kv(key, value)

    def forward_kv(
        self, query: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        r"""Attention of ``query`` to keys and values already projected.

        .. math:: [\operatorname{softmax}(Q W^Q_h k_h^\top / \sqrt{d_k})\,
            v_h]_{h=1..H}\, W^O

        query ``(B, T_q, D)``; ``k``, ``v`` ``(B, H, T_k, d_k)`` as
        :meth:`project_kv` returns them -> ``(B, T_q, D)``. ``mask`` as in
        ``forward`` (True = may attend). Only ``query`` is projected.

        Examples:
            >>> mha = MultiHeadAttention(8, num_heads=2, generator=torch.Generator())
            >>> k, v = mha.project_kv(torch.randn(2, 7, 8))  # a memory, once
            >>> mha.forward_kv(torch.randn(2, 1, 8), k, v).shape  # at every step
            torch.Size([2, 1, 8])
        """
        check_sequence("query", query, self.embed_dim)
        B, T_q = query.shape[:2]
        check_kv("k, v", k, v, B, self.num_heads, self.d_k)
        mask = _head_mask(mask, B, self.num_heads, T_q, k.shape[2])
        q = self._split(self.W_q(query))  # (B, H, T_q, d_k)
        return self._merge(attend(q, k, v, mask))  # (B, T_q, D)

    def step(
        self, x: Tensor, cache: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        r"""Causal self-attention of new positions, appending their keys and values.

        ``x`` ``(B, T_new, D)`` holds positions ``t, ..., t + T_new - 1`` and
        ``cache = (k, v)`` the per-head keys and values ``(B, H, t, d_k)`` of
        the positions before (None: ``t = 0``). Position ``t + i`` attends to
        :math:`j \le t + i`, so ``out`` ``(B, T_new, D)`` is the last ``T_new``
        rows of ``self(prefix, causal=True)``, and only the new positions are
        projected. Returns ``(out, (k, v))``, ``k, v`` ``(B, H, t + T_new, d_k)``.

        Examples:
            >>> mha = MultiHeadAttention(8, num_heads=2, generator=torch.Generator())
            >>> x = torch.randn(1, 5, 8)
            >>> _, cache = mha.step(x[:, :3])  # a prompt of 3 positions
            >>> out, cache = mha.step(x[:, 3:], cache)  # then 2 more
            >>> torch.allclose(out, mha(x, causal=True)[:, 3:], atol=1e-6)
            True
        """
        check_sequence("x", x, self.embed_dim)
        k, v = self._project_kv(x, x)  # (B, H, T_new, d_k)
        if cache is not None:
            check_kv("cache", *cache, x.shape[0], self.num_heads, self.d_k)
            k = torch.cat([cache[0], k], dim=2)  # (B, H, t + T_new, d_k)
            v = torch.cat([cache[1], v], dim=2)  # (B, H, t + T_new, d_k)
        T_new = x.shape[1]
        t = k.shape[2] - T_new  # positions before the new ones
        # new query i sits at position t + i: it may see keys j <= t + i
        ones = torch.ones(T_new, t + T_new, dtype=torch.bool, device=x.device)
        mask = None if T_new == 1 else ones.tril(t)  # (T_new, t + T_new)
        return self.forward_kv(x, k, v, mask), (k, v)

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a ``torch.nn.MultiheadAttention`` (same outputs).

        The copy is batch first whatever ``module.batch_first`` says, and has
        no dropout (it matches ``module`` in eval mode or with dropout 0). Only
        the standard configuration is supported: equal query/key/value widths,
        no ``add_bias_kv``, no ``add_zero_attn``.

        Mask polarity differs: PyTorch's ``key_padding_mask`` ``(B, T_k)`` and
        boolean ``attn_mask`` ``(T_q, T_k)`` use True = *ignore*; here
        ``mask = ~attn_mask & ~key_padding_mask[:, None, :]`` (True = may
        attend). PyTorch's weights are averaged over heads unless
        ``average_attn_weights=False``; ours are per head ``(B, H, T_q, T_k)``.
        """
        return _torch_compat.mha_from_torch(cls, module)

    @staticmethod
    def state_dict_from_torch(module: nn.MultiheadAttention) -> dict[str, Tensor]:
        """The weights of a ``torch.nn.MultiheadAttention`` as this class's state dict.

        PyTorch stacks :math:`W_q, W_k, W_v` in one ``in_proj_weight``
        ``(3 D, D)``; here they are three ``nn.Linear``. ``load_state_dict``
        copies them into a ``MultiHeadAttention`` of the same size, as
        :meth:`from_torch` and the blocks' ``from_torch`` do.

        Examples:
            >>> torch_mha = nn.MultiheadAttention(8, 2)
            >>> state = MultiHeadAttention.state_dict_from_torch(torch_mha)
            >>> torch.equal(state["W_k.weight"], torch_mha.in_proj_weight[8:16])
            True
        """
        return _torch_compat.mha_state_dict(module)
