"""selfattn.lab.diagrams.vit_pipeline and patch_attention (Agg): the shapes
drawn are those of a forward pass, the panels hold the weights given, and
the titles count what the weights say."""

from __future__ import annotations

import math
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattn.lab import diagrams  # noqa: E402
from selfattn.lab.diagrams.vit import vit_shapes  # noqa: E402
from selfattn.vision import ViT  # noqa: E402


def vit(pool: str = "mean", depth: int = 1, patch: int = 2) -> ViT:
    gen = torch.Generator().manual_seed(0)
    model = ViT(8, patch, 1, 10, embed_dim=12, depth=depth, num_heads=2,
                pool=pool, generator=gen)  # fmt: skip
    return model.eval()


def image() -> torch.Tensor:
    return torch.rand(1, 8, 8, generator=torch.Generator().manual_seed(1))


def texts(fig) -> str:
    return "\n".join(t.get_text() for t in fig.findobj(Text))


@pytest.mark.parametrize(("patch", "pool", "depth"), [(2, "mean", 1), (4, "cls", 2)])
def test_the_shapes_are_those_of_a_forward_pass(patch, pool, depth):
    model = vit(pool, depth, patch)
    s = vit_shapes(model, image())
    T_p = (8 // patch) ** 2
    assert s["patches"] == (T_p, patch * patch)
    assert s["embedded"] == (T_p, 12) and s["tokens"] == (T_p + 1, 12)
    assert s["encoded"] == (T_p + 1, 12)
    assert s["summary"] == (1, 12) and s["logits"] == (1, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a missing glyph
        fig = diagrams.vit_pipeline(model, image())
        fig.canvas.draw()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    shown = texts(fig)
    for shape in [(T_p, patch * patch), (T_p, 12), (T_p + 1, 12), (1, 10)]:
        assert f"({shape[0]} × {shape[1]})" in shown
    assert f"{T_p} patches" in shown
    assert ("mean of\npatch rows" in shown) == (pool == "mean")
    assert f"×{depth}" in shown


def test_a_model_whose_pieces_do_not_add_up_is_refused():
    model = vit()
    model.forward = lambda x: torch.zeros(len(x), 10)  # not its pieces
    with pytest.raises(RuntimeError, match="do not give"):
        vit_shapes(model, image())
    with pytest.raises(ValueError, match="one image"):
        vit_shapes(vit(), image()[None])


def test_effective_keys_counts_one_hot_and_equal_rows():
    w = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    torch.testing.assert_close(diagrams.effective_keys(w), torch.tensor([1.0, 4.0]))
    half = torch.tensor([0.5, 0.5, 0.0])
    assert math.isclose(float(diagrams.effective_keys(half)), 2.0, rel_tol=1e-6)


def weights_of(model: ViT, images: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.attention_weights(images)[0]  # (R, H, T, T)


def test_patch_attention_draws_the_query_row_over_the_grid():
    model, images = vit(), torch.rand(2, 1, 8, 8)
    w = weights_of(model, images)
    fig = diagrams.patch_attention(
        images, {"h1": w[:, 0], "h2": w[:, 1]}, patch=2, query=5, titles=["a", "b"]
    )
    fig.canvas.draw()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    cols = 3
    for r in range(2):
        for c, h in ((1, 0), (2, 1)):
            ax = fig.axes[r * cols + c]
            grid = ax.images[0].get_array()
            np.testing.assert_allclose(grid, w[r, h, 6, 1:].reshape(4, 4).numpy())
            n_eff = float(diagrams.effective_keys(w[r, h, 6]))
            assert f"{n_eff:.1f} keys" in ax.get_title()
            assert f"[CLS] {float(w[r, h, 6, 0]):.2f}" in ax.get_title()
        assert fig.axes[r * cols].get_title() == "ab"[r]


def test_the_dashed_block_is_the_convolutions_field_clipped_to_the_grid():
    model, images = vit(), torch.rand(1, 1, 8, 8)
    w = weights_of(model, images)
    corner = diagrams.patch_attention(images, {"h": w[:, 0]}, patch=2, query=0)
    dashed = [p for p in corner.axes[1].patches if p.get_linestyle() == "--"]
    size = (dashed[0].get_width(), dashed[0].get_height())
    assert len(dashed) == 1 and size == (2, 2)
    centre = diagrams.patch_attention(images, {"h": w[:, 0]}, patch=2, query=5)
    dashed = [p for p in centre.axes[1].patches if p.get_linestyle() == "--"]
    assert (dashed[0].get_width(), dashed[0].get_height()) == (3, 3)
    none = diagrams.patch_attention(images, {"h": w[:, 0]}, patch=2, query=5,
                                    field=None)  # fmt: skip
    assert not [p for p in none.axes[1].patches if p.get_linestyle() == "--"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"images": torch.rand(1, 8, 8)}, "images must"),
        ({"patch": 3}, "must divide"),
        ({"query": 16}, "query must"),
        ({"weights": {}}, "at least one head"),
        ({"weights": {"h": torch.rand(2, 17, 17)}}, "must have shape"),
        ({"titles": ["a", "b"]}, "titles has 2"),
        ({"field": 2}, "field must be odd"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    model, images = vit(), torch.rand(1, 1, 8, 8)
    args = {"images": images, "weights": {"h": weights_of(model, images)[:, 0]},
            "patch": 2, "query": 5}  # fmt: skip
    args.update(kwargs)
    images_, weights_ = args.pop("images"), args.pop("weights")
    with pytest.raises(ValueError, match=match):
        diagrams.patch_attention(images_, weights_, **args)
