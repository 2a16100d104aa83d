"""selfattn.notebook.glue: MyST-NB's glue when installed, a no-op without it."""

from __future__ import annotations

import sys

import pytest
import torch

from selfattn.notebook import glue

myst_glue = pytest.importorskip("myst_nb.ext.glue")
RECORD = "application/papermill.record/"


@pytest.fixture
def displayed(monkeypatch):
    """Record what MyST-NB hands to IPython's display instead of showing it."""
    calls = []

    def fake_display(bundle, raw=False, metadata=None):
        calls.append((bundle, metadata))

    monkeypatch.setattr(myst_glue, "ipy_display", fake_display)
    return calls


@pytest.mark.parametrize("value", [3, 0.1234, "text", [1, 2], torch.tensor([1.5])])
def test_glue_returns_its_value(displayed, value):
    assert glue("x", value) is value


@pytest.mark.parametrize("value, text", [(0.25, "0.25"), (42, "42"), ("cat", "'cat'")])
def test_glue_records_the_value_hidden_by_default(displayed, value, text):
    glue("ratio", value)
    [(bundle, metadata)] = displayed
    assert bundle == {RECORD + "text/plain": text}
    assert metadata["scrapbook"] == {"name": "ratio", "mime_prefix": RECORD}


def test_glue_display_true_shows_the_value(displayed):
    glue("n", 7, display=True)
    [(bundle, metadata)] = displayed
    assert bundle == {"text/plain": "7"}
    assert metadata["scrapbook"] == {"name": "n", "mime_prefix": ""}


def test_glue_without_myst_nb_is_a_silent_no_op(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import now raises ImportError
    assert glue("x", 1.5, display=True) == 1.5
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("name", ["", None, 3])
def test_glue_name_must_be_a_string(name):
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        glue(name, 1)


def test_glue_stores_numpy_and_torch_scalars_as_python_numbers(monkeypatch):
    import numpy as np
    import torch

    import selfattn.notebook as nbmod

    seen = {}

    def fake_glue(name, value, display=False):
        seen[name] = value

    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", fake_glue)
    for name, value in [("a", np.float64(0.25)), ("b", torch.tensor(3)), ("c", 7)]:
        assert nbmod.glue(name, value) is value
    assert type(seen["a"]) is float and seen["a"] == 0.25
    assert type(seen["b"]) is int and seen["b"] == 3
    assert seen["c"] == 7
