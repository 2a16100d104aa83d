r"""Sequence-to-sequence models: a Transformer and a recurrent baseline.

* :class:`EncoderDecoderTransformer`: encoder blocks over the source, decoder
  blocks (causal self-attention, cross-attention) over the target
  (Vaswani et al., 2017).
* :class:`BahdanauSeq2Seq`: a bidirectional GRU encoder and a GRU decoder
  with additive attention (Bahdanau et al., 2015).

Tokens are integer tensors ``(B, T)``. Training uses *teacher forcing*: the
model reads the true target shifted right (``tgt``, starting with a
begin-of-sequence token) and returns logits ``(B, T, V)`` for the next token
at every position at once. ``generate`` decodes greedily, one token at a time
(the Transformer through its :class:`~selfattn.transformer.KVCache`), and
fills the positions after ``eos_id`` with ``pad_id``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from selfattn._checks import check_int, shape_str
from selfattn._params import init_from
from selfattn.attention import masked_softmax
from selfattn.positional import sinusoidal_encoding
from selfattn.scoring import AdditiveScore
from selfattn.transformer import (
    KVCache,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
)

__all__ = ["BahdanauSeq2Seq", "EncoderDecoderTransformer"]


def _draw_embeddings_and_grus(module: nn.Module, generator) -> None:
    """PyTorch's defaults, from ``generator`` (the global one when None):
    embeddings N(0, 1), GRU weights U(-1/sqrt(hidden), 1/sqrt(hidden))."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, generator=generator)
            elif isinstance(m, (nn.GRU, nn.GRUCell)):
                bound = 1 / math.sqrt(m.hidden_size)
                for p in m.parameters():
                    nn.init.uniform_(p, -bound, bound, generator=generator)


def _check_ints(ids: dict[str, int | None], **sizes: int) -> None:
    """Sizes positive, token ids (``None`` skipped) 0 or more; errors name them."""
    for name, n in sizes.items():
        check_int(name, n)
    for name, n in ids.items():
        if n is not None:
            check_int(name, n, minimum=0)


def _check_pad_id(pad_id: int, src_vocab: int, tgt_vocab: int) -> None:
    """``pad_id`` pads sources and generated targets: an id of both vocabularies."""
    if pad_id >= min(src_vocab, tgt_vocab):
        raise ValueError(
            f"pad_id={pad_id} must be an id of both vocabularies (below "
            f"src_vocab={src_vocab} and tgt_vocab={tgt_vocab})"
        )


def _tokens(name: str, x: object, vocab: int) -> Tensor:
    if not isinstance(x, Tensor) or x.dtype != torch.long or x.dim() != 2:
        got = f"{x.dtype} {shape_str(x)}" if isinstance(x, Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a (B, T) torch.long tensor of ids, got {got}")
    if not x.is_meta and x.numel() and (x.min() < 0 or x.max() >= vocab):
        raise ValueError(
            f"{name} holds ids outside [0, {vocab}) (min {int(x.min())}, max "
            f"{int(x.max())}); the vocabulary has {vocab} tokens"
        )
    return x


def _embed(emb: nn.Embedding, tokens: Tensor, start: int = 0) -> Tensor:
    """Token embeddings plus the sinusoidal positions ``start, start + 1, ...``."""
    x = emb(tokens)  # (B, T, D)
    P = sinusoidal_encoding(start + tokens.shape[1], x.shape[-1], device=x.device)
    return x + P[start:].to(x.dtype)  # (B, T, D)


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
        _check_ints(
            {"pad_id": pad_id}, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
            embed_dim=embed_dim, num_heads=num_heads, num_layers=num_layers
        )  # fmt: skip
        _check_pad_id(pad_id, src_vocab, tgt_vocab)
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
        _draw_embeddings_and_grus(self, generator)

    def source_mask(self, src: Tensor) -> Tensor:
        """``(B, 1, T_k)``: True at the source's real tokens (keys one may attend)."""
        return (src != self.pad_id)[:, None, :]

    def encode(self, src: Tensor) -> Tensor:
        """src ``(B, T_k)`` -> memory ``(B, T_k, D)``, the decoder's keys and values."""
        x = _embed(self.src_embed, _tokens("src", src, self.src_vocab))  # (B, T_k, D)
        mask = self.source_mask(src)  # (B, 1, T_k)
        for block in self.encoder:
            x = block(x, mask)  # (B, T_k, D)
        return self.enc_norm(x)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """src ``(B, T_k)``, tgt ``(B, T_q)`` (shifted right) -> ``(B, T_q, V)``."""
        memory, mask = self.encode(src), self.source_mask(src)
        y = _embed(self.tgt_embed, _tokens("tgt", tgt, self.tgt_vocab))
        for block in self.decoder:
            y = block(y, memory, memory_mask=mask)  # (B, T_q, D)
        return self.head(self.dec_norm(y))  # (B, T_q, V)

    def attention_weights(self, src: Tensor, tgt: Tensor) -> dict[str, list[Tensor]]:
        """Per layer: ``"encoder"`` ``(B, H, T_k, T_k)``, ``"self"``
        ``(B, H, T_q, T_q)`` and ``"cross"`` ``(B, H, T_q, T_k)`` (eval mode)."""
        x = _embed(self.src_embed, _tokens("src", src, self.src_vocab))  # (B, T_k, D)
        mask, out = self.source_mask(src), {"encoder": [], "self": [], "cross": []}
        for block in self.encoder:
            out["encoder"].append(block.attention_weights(x, mask))
            x = block(x, mask)
        memory = self.enc_norm(x)
        y = _embed(self.tgt_embed, _tokens("tgt", tgt, self.tgt_vocab))
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
        y = _embed(self.tgt_embed, _tokens("tgt", tgt, self.tgt_vocab), start=t)
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
        _check_ints({"bos_id": bos_id, "eos_id": eos_id}, steps=steps)
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


class BahdanauSeq2Seq(nn.Module):
    r"""A GRU encoder–decoder with additive attention (Bahdanau et al., 2015).

    .. math::
        h_j &= [\overrightarrow{h}_j; \overleftarrow{h}_j],\qquad
        H_0 = \tanh(W_s \overleftarrow{h}_1 + b_s),\qquad
        \alpha'_{i,j} = \operatorname{softmax}_j\,
            w_v^\top \tanh(U^q H_{i-1} + U^k h_j),\\
        C_i &= \textstyle\sum_j \alpha'_{i,j} h_j,\qquad
        H_i = \operatorname{GRU}([e(y_{i-1}); C_i],\ H_{i-1}),\qquad
        \text{logits}_i = [H_i; C_i; e(y_{i-1})]\, W_{\text{out}}

    Every matrix multiplies a column vector from the left (the logits' row
    vector is the one exception, as written). The scores are those of
    :class:`selfattn.scoring.AdditiveScore` (:math:`U^q, U^k` are its ``W_q``,
    ``W_k``), with :math:`U^k h_j` computed once per source (as Bahdanau et
    al. note); the
    source's padding is masked. The decoder is a loop over the target
    positions. Taught in :doc:`/notebooks/transformer-end-to-end`.

    Args:
        src_vocab, tgt_vocab: vocabulary sizes; embed_dim: token embedding
            width; hidden_dim: GRU state width (the annotations are twice it).
        pad_id: the padding token (an id, 0 or more). generator: draws every
            initial weight.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> model = BahdanauSeq2Seq(12, 12, embed_dim=8, hidden_dim=8, generator=g)
        >>> model(torch.tensor([[3, 4, 5]]), torch.tensor([[1, 5]])).shape
        torch.Size([1, 2, 12])
        >>> model.generate(torch.tensor([[3, 4, 5]]), 4, bos_id=1).shape
        torch.Size([1, 4])
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        *,
        embed_dim: int = 32,
        hidden_dim: int = 32,
        pad_id: int = 0,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        _check_ints(
            {"pad_id": pad_id}, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
            embed_dim=embed_dim, hidden_dim=hidden_dim
        )  # fmt: skip
        _check_pad_id(pad_id, src_vocab, tgt_vocab)
        with init_from(self, generator):  # the weights come from the generator
            E, h = embed_dim, hidden_dim
            self.src_vocab, self.tgt_vocab, self.pad_id = src_vocab, tgt_vocab, pad_id
            self.src_embed = nn.Embedding(src_vocab, E)
            self.tgt_embed = nn.Embedding(tgt_vocab, E)
            self.encoder = nn.GRU(E, h, batch_first=True, bidirectional=True)
            self.init_state = nn.Linear(h, h)  # W_s
            self.score = AdditiveScore(h, 2 * h, h)
            self.cell = nn.GRUCell(E + 2 * h, h)
            self.head = nn.Linear(h + 2 * h + E, tgt_vocab)

    def reset_parameters_from(self, generator: torch.Generator | None) -> None:
        """Draw the embeddings and GRUs again (PyTorch's defaults)."""
        _draw_embeddings_and_grus(self, generator)

    def _run(self, src: Tensor, tgt: Tensor, steps: int | None = None):
        """Teacher forcing over ``tgt``, or (``steps``) greedy feeding back."""
        _tokens("src", src, self.src_vocab)
        if _tokens("tgt", tgt, self.tgt_vocab).shape[1] == 0:
            raise ValueError(
                f"tgt must hold at least one position, got {shape_str(tgt)}"
            )
        mask = (src != self.pad_id)[:, None, :]  # (B, 1, T_k)
        lengths = mask.sum(-1)[:, 0].cpu()  # the backward GRU starts at the end
        if not lengths.all():
            raise ValueError(
                f"src rows {(lengths == 0).nonzero().flatten().tolist()} hold only "
                f"padding (pad_id={self.pad_id}), src {shape_str(src)}: the GRU "
                "encoder needs a real token in every source"
            )
        packed = nn.utils.rnn.pack_padded_sequence(
            self.src_embed(src), lengths, batch_first=True, enforce_sorted=False
        )
        ann = nn.utils.rnn.pad_packed_sequence(
            self.encoder(packed)[0], batch_first=True, total_length=src.shape[1]
        )[0]  # (B, T_k, 2h): the annotations h_j
        h, a = self.cell.hidden_size, self.score  # a: the AdditiveScore
        s = torch.tanh(self.init_state(ann[:, 0, h:]))  # backward state at j = 1
        keys = a.W_k(ann)  # (B, T_k, hidden_dim): W_k h_j, the same at every step
        y, outs, weights = tgt[:, 0], [], []
        for i in range(tgt.shape[1] if steps is None else steps):
            y = tgt[:, i] if steps is None else y  # teacher forcing: the true y_{i-1}
            scores = a.w_v(torch.tanh(a.W_q(s)[:, None] + keys))  # (B, T_k, 1)
            w = masked_softmax(scores.transpose(1, 2), mask)  # (B, 1, T_k)
            context = (w @ ann)[:, 0]  # (B, 2h): C_i
            e = self.tgt_embed(y)  # (B, E)
            s = self.cell(torch.cat([e, context], dim=-1), s)  # (B, h)
            outs.append(torch.cat([s, context, e], dim=-1))
            weights.append(w[:, 0])
            if steps is not None:  # greedy: the argmax is the next input
                y = self.head(outs[-1]).argmax(dim=-1)
        return self.head(torch.stack(outs, dim=1)), torch.stack(weights, dim=1)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """src ``(B, T_k)``, tgt ``(B, T_q)`` (shifted right) -> ``(B, T_q, V)``."""
        return self._run(src, tgt)[0]

    def attention_weights(self, src: Tensor, tgt: Tensor) -> Tensor:
        """The weights of ``self(src, tgt)``, ``(B, T_q, T_k)``."""
        return self._run(src, tgt)[1]

    @torch.no_grad()
    def generate(
        self, src: Tensor, steps: int, *, bos_id: int, eos_id: int | None = None
    ) -> Tensor:
        """Greedy decoding: ``(B, steps)`` tokens, ``pad_id`` after ``eos_id``."""
        _check_ints({"bos_id": bos_id, "eos_id": eos_id}, steps=steps)
        logits, _ = self._run(src, src.new_full((src.shape[0], 1), bos_id), steps)
        token = logits.argmax(dim=-1)  # (B, steps)
        if eos_id is None:
            return token
        after = (token == eos_id).long().cumsum(dim=1) - (token == eos_id).long()
        return token.masked_fill(after > 0, self.pad_id)
