"""PyTorch's attention layers copied into the library's: the bodies of ``from_torch``.

The entry points are the classes' own methods, whose docstrings are the
contract: :meth:`selfattn.MultiHeadAttention.from_torch` and
:meth:`~selfattn.MultiHeadAttention.state_dict_from_torch` (from
``nn.MultiheadAttention``), and the blocks' ``from_torch`` (from
``nn.TransformerEncoderLayer`` and ``nn.TransformerDecoderLayer``). The code
lives here, one concept apart from the modules it converts into. It imports
torch only (each entry point passes its class in), so ``selfattn.modules``
and ``selfattn.transformer`` import it without a cycle.
"""

from __future__ import annotations

from torch import Tensor, nn


def mha_state_dict(module: nn.MultiheadAttention) -> dict[str, Tensor]:
    """``MultiHeadAttention.state_dict_from_torch``: split ``in_proj_weight``
    ``(3 D, D)`` into ``W_q``, ``W_k``, ``W_v`` ``(D, D)``, biases alike."""
    if not isinstance(module, nn.MultiheadAttention):
        raise TypeError(
            f"module must be torch.nn.MultiheadAttention, got {type(module).__name__}"
        )
    if (
        not module._qkv_same_embed_dim
        or module.bias_k is not None
        or module.add_zero_attn
    ):
        raise ValueError(
            "from_torch supports nn.MultiheadAttention with kdim == vdim == "
            "embed_dim, add_bias_kv=False and add_zero_attn=False"
        )
    W_q, W_k, W_v = module.in_proj_weight.detach().chunk(3, dim=0)  # (D, D) each
    state = {"W_q.weight": W_q, "W_k.weight": W_k, "W_v.weight": W_v}
    state["W_o.weight"] = module.out_proj.weight.detach()
    if module.in_proj_bias is not None:
        b_q, b_k, b_v = module.in_proj_bias.detach().chunk(3)  # (D,) each
        state |= {"W_q.bias": b_q, "W_k.bias": b_k, "W_v.bias": b_v}
        state["W_o.bias"] = module.out_proj.bias.detach()
    return state


def mha_from_torch(cls: type, module: nn.MultiheadAttention) -> nn.Module:
    """``MultiHeadAttention.from_torch``: a ``cls`` of ``module``'s size, on its
    device and in its dtype, holding its weights."""
    state = mha_state_dict(module)  # checks module
    W = module.in_proj_weight
    new = cls(module.embed_dim, module.num_heads, bias="W_o.bias" in state)
    new = new.to(device=W.device, dtype=W.dtype)  # copy in W's precision
    new.load_state_dict(state)
    return new


#: ours -> PyTorch's, for each block: the attention layers, then the norms.
ENCODER = {"attn": "self_attn"}, {"norm1": "norm1", "norm2": "norm2"}
DECODER = (
    {"self_attn": "self_attn", "cross_attn": "multihead_attn"},
    {"norm1": "norm1", "norm2": "norm2", "norm3": "norm3"},
)


def block_from_torch(
    cls: type, layer: nn.Module, expected: type, names: tuple[dict, dict]
) -> nn.Module:
    """A block's ``from_torch``: check that ``layer`` (an ``expected``) is
    pre-norm with GELU and biases, build a ``cls`` of its sizes, and copy its
    attention layers, its norms (weights and ``eps``) and its FFN."""
    if not isinstance(layer, expected):
        raise TypeError(
            f"layer must be torch.nn.{expected.__name__}, got {type(layer).__name__}"
        )
    if (
        not layer.norm_first
        or layer.activation is not nn.functional.gelu
        or layer.linear1.bias is None
    ):
        raise ValueError(
            "from_torch copies a pre-norm layer with GELU and biases: build "
            "it with norm_first=True, activation='gelu' and bias=True"
        )
    D, H = layer.linear1.in_features, layer.self_attn.num_heads
    W = layer.linear1.weight
    new = cls(D, H, layer.linear1.out_features).to(device=W.device, dtype=W.dtype)
    attention, norms = names
    for ours, theirs in attention.items():
        getattr(new, ours).load_state_dict(mha_state_dict(getattr(layer, theirs)))
    for ours, theirs in norms.items():
        norm = getattr(layer, theirs)
        getattr(new, ours).load_state_dict(norm.state_dict())
        getattr(new, ours).eps = norm.eps  # the layer's layer_norm_eps
    for ours, theirs in ((new.ffn[0], layer.linear1), (new.ffn[2], layer.linear2)):
        ours.load_state_dict(theirs.state_dict())
    return new
