r"""The encoder–decoder Transformer (Vaswani et al., 2017) over token ids.

Encoder blocks over the source, decoder blocks (causal self-attention,
cross-attention) over the target; ``generate`` decodes greedily through the
blocks' :class:`~selfattn.transformer.KVCache`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._params import init_from
from selfattn.seq2seq._tokens import (
    check_ids,
    check_pad_id,
    check_sizes_and_ids,
    draw_embeddings_and_grus,
    embed,
)
from selfattn.transformer import (
    KVCache,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
)

__all__ = ["EncoderDecoderTransformer"]


class EncoderDecoderTransformer(nn.Module):
    r"""A small pre-norm encoder–decoder Transformer (Vaswani et al., 2017).

    .. math::
        X_{\text{src}} = \operatorname{LN}(\operatorname{Enc}^{N}(e_s(x) + P)),
        \quad \text{logits} = \operatorname{LN}(\operatorname{Dec}^{N}(e_t(y) + P,\
            X_{\text{src}}))\, W_{\text{out}}

    The source's padding (``pad_id``) is masked as a key in the encoder and
    in every cross-attention. Taught in
    :doc:`/notebooks/transformer-end-to-end`.

    Args:
        src_vocab, tgt_vocab: vocabulary sizes.
        embed_dim: ``D``; num_heads: ``H``; num_layers: ``N`` blocks each.
        ff_dim, dropout: of every block. pad_id: the padding token (an id, 0
            or more).
        generator: draws every initial weight; None = torch's global one.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> model = EncoderDecoderTransformer(12, 12, embed_dim=16, generator=g)
        >>> src = torch.tensor([[3, 4, 5, 0]])  # one source, padded
        >>> model(src, torch.tensor([[1, 5, 4]])).shape  # (B, T_q, V)
        torch.Size([1, 3, 12])
        >>> model.generate(src, 4, bos_id=1).shape
        torch.Size([1, 4])
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        *,
        embed_dim: int = 32,
        num_heads: int = 2,
        num_layers: int = 1,
        ff_dim: int | None = None,
        dropout: float = 0.0,
        pad_id: int = 0,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        check_sizes_and_ids(
            {"pad_id": pad_id}, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
            embed_dim=embed_dim, num_heads=num_heads, num_layers=num_layers
        )  # fmt: skip
        check_pad_id(pad_id, src_vocab, tgt_vocab)
        with init_from(self, generator):  # the weights come from the generator
            D, H, n = embed_dim, num_heads, num_layers
            self.src_vocab, self.tgt_vocab, self.pad_id = src_vocab, tgt_vocab, pad_id
            self.src_embed = nn.Embedding(src_vocab, D)
            self.tgt_embed = nn.Embedding(tgt_vocab, D)
            self.encoder = nn.ModuleList(
                TransformerEncoderBlock(D, H, ff_dim, dropout) for _ in range(n)
            )
            self.decoder = nn.ModuleList(
                TransformerDecoderBlock(D, H, ff_dim, dropout) for _ in range(n)
            )
            self.enc_norm, self.dec_norm = nn.LayerNorm(D), nn.LayerNorm(D)
            self.head = nn.Linear(D, tgt_vocab)

    def reset_parameters_from(self, generator: torch.Generator | None) -> None:
        """Draw the embeddings again (N(0, 1)).

        ``selfattn._params.init_from`` calls it.
        """
        draw_embeddings_and_grus(self, generator)

    def source_mask(self, src: Tensor) -> Tensor:
        """``(B, 1, T_k)``: True at the source's real tokens (keys one may attend)."""
        return (src != self.pad_id)[:, None, :]

    def encode(self, src: Tensor) -> Tensor:
        """src ``(B, T_k)`` -> memory ``(B, T_k, D)``, the decoder's keys and values."""
        x = embed(self.src_embed, check_ids("src", src, self.src_vocab))  # (B, T_k, D)
        mask = self.source_mask(src)  # (B, 1, T_k)
        for block in self.encoder:
            x = block(x, mask)  # (B, T_k, D)
        return self.enc_norm(x)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """src ``(B, T_k)``, tgt ``(B, T_q)`` (shifted right) -> ``(B, T_q, V)``."""
        memory, mask = self.encode(src), self.source_mask(src)
        y = embed(self.tgt_embed, check_ids("tgt", tgt, self.tgt_vocab))
        for block in self.decoder:
            y = block(y, memory, memory_mask=mask)  # (B, T_q, D)
        return self.head(self.dec_norm(y))  # (B, T_q, V)

    def attention_weights(self, src: Tensor, tgt: Tensor) -> dict[str, list[Tensor]]:
        """Per layer: ``"encoder"`` ``(B, H, T_k, T_k)``, ``"self"``
        ``(B, H, T_q, T_q)`` and ``"cross"`` ``(B, H, T_q, T_k)`` (eval mode)."""
        x = embed(self.src_embed, check_ids("src", src, self.src_vocab))  # (B, T_k, D)
        mask, out = self.source_mask(src), {"encoder": [], "self": [], "cross": []}
        for block in self.encoder:
            out["encoder"].append(block.attention_weights(x, mask))
            x = block(x, mask)
        memory = self.enc_norm(x)
        y = embed(self.tgt_embed, check_ids("tgt", tgt, self.tgt_vocab))
        for block in self.decoder:
            for key, w in block.attention_weights(y, memory, memory_mask=mask).items():
                out[key].append(w)
            y = block(y, memory, memory_mask=mask)
        return out

    def decode_step(
        self, tgt: Tensor, memory: Tensor, caches: list[KVCache] | None, src: Tensor
    ) -> tuple[Tensor, list[KVCache]]:
        """New target tokens ``(B, T_new)`` after the cached ones -> their
        logits ``(B, T_new, V)`` and the grown caches (one per block)."""
        t = 0 if caches is None else caches[0].k.shape[2]
        y = embed(self.tgt_embed, check_ids("tgt", tgt, self.tgt_vocab), start=t)
        new, mask = [], self.source_mask(src)
        for i, block in enumerate(self.decoder):
            cache = None if caches is None else caches[i]
            y, c = block.step(y, memory if cache is None else None, cache, mask)
            new.append(c)
        return self.head(self.dec_norm(y)), new

    @torch.no_grad()
    def generate(
        self, src: Tensor, steps: int, *, bos_id: int, eos_id: int | None = None
    ) -> Tensor:
        """Greedy decoding with the K/V cache: ``(B, steps)`` tokens, ``pad_id``
        after ``eos_id``. Each step feeds one token and projects only it."""
        check_sizes_and_ids({"bos_id": bos_id, "eos_id": eos_id}, steps=steps)
        memory, caches = self.encode(src), None  # (B, T_k, D)
        token = src.new_full((src.shape[0], 1), bos_id)  # (B, 1)
        done, out = torch.zeros_like(token[:, 0], dtype=torch.bool), []
        for _ in range(steps):
            logits, caches = self.decode_step(token, memory, caches, src)  # (B, 1, V)
            token = logits.argmax(dim=-1)  # (B, 1): the most likely next token
            out.append(token[:, 0].masked_fill(done, self.pad_id))
            if eos_id is not None:
                done = done | (token[:, 0] == eos_id)
        return torch.stack(out, dim=1)  # (B, steps)
