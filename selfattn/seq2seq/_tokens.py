"""What both sequence-to-sequence models share: token ids, sizes, embeddings."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from selfattn._checks import check_int, shape_str
from selfattn.positional import sinusoidal_encoding


def draw_embeddings_and_grus(
    module: nn.Module, generator: torch.Generator | None
) -> None:
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


def check_sizes_and_ids(ids: dict[str, int | None], **sizes: int) -> None:
    """Sizes positive, token ids (``None`` skipped) 0 or more; errors name them."""
    for name, n in sizes.items():
        check_int(name, n)
    for name, n in ids.items():
        if n is not None:
            check_int(name, n, minimum=0)


def check_pad_id(pad_id: int, src_vocab: int, tgt_vocab: int) -> None:
    """``pad_id`` pads sources and generated targets: an id of both vocabularies."""
    if pad_id >= min(src_vocab, tgt_vocab):
        raise ValueError(
            f"pad_id={pad_id} must be an id of both vocabularies (below "
            f"src_vocab={src_vocab} and tgt_vocab={tgt_vocab})"
        )


def check_ids(name: str, x: object, vocab: int) -> Tensor:
    """``x`` as a ``(B, T)`` torch.long tensor of ids in ``[0, vocab)``; else raise."""
    if not isinstance(x, Tensor) or x.dtype != torch.long or x.dim() != 2:
        got = f"{x.dtype} {shape_str(x)}" if isinstance(x, Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a (B, T) torch.long tensor of ids, got {got}")
    if not x.is_meta and x.numel() and (x.min() < 0 or x.max() >= vocab):
        raise ValueError(
            f"{name} holds ids outside [0, {vocab}) (min {int(x.min())}, max "
            f"{int(x.max())}); the vocabulary has {vocab} tokens"
        )
    return x


def embed(emb: nn.Embedding, tokens: Tensor, start: int = 0) -> Tensor:
    """Token embeddings plus the sinusoidal positions ``start, start + 1, ...``."""
    x = emb(tokens)  # (B, T, D)
    P = sinusoidal_encoding(start + tokens.shape[1], x.shape[-1], device=x.device)
    return x + P[start:].to(x.dtype)  # (B, T, D)
