r"""The recurrent baseline: a GRU encoder–decoder with additive attention.

A bidirectional GRU encoder and a GRU decoder that attends to its
annotations with :class:`selfattn.scoring.AdditiveScore` (Bahdanau et al.,
2015), one target position at a time.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from selfattn._checks import shape_str
from selfattn._params import init_from
from selfattn.attention import masked_softmax
from selfattn.scoring import AdditiveScore
from selfattn.seq2seq._tokens import (
    check_ids,
    check_pad_id,
    check_sizes_and_ids,
    draw_embeddings_and_grus,
)

__all__ = ["BahdanauSeq2Seq"]


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
        check_sizes_and_ids(
            {"pad_id": pad_id}, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
            embed_dim=embed_dim, hidden_dim=hidden_dim
        )  # fmt: skip
        check_pad_id(pad_id, src_vocab, tgt_vocab)
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
        draw_embeddings_and_grus(self, generator)

    def _run(self, src: Tensor, tgt: Tensor, steps: int | None = None):
        """Teacher forcing over ``tgt``, or (``steps``) greedy feeding back."""
        check_ids("src", src, self.src_vocab)
        if check_ids("tgt", tgt, self.tgt_vocab).shape[1] == 0:
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
        check_sizes_and_ids({"bos_id": bos_id, "eos_id": eos_id}, steps=steps)
        logits, _ = self._run(src, src.new_full((src.shape[0], 1), bos_id), steps)
        token = logits.argmax(dim=-1)  # (B, steps)
        if eos_id is None:
            return token
        after = (token == eos_id).long().cumsum(dim=1) - (token == eos_id).long()
        return token.masked_fill(after > 0, self.pad_id)
