"""selfattn.lab.notebook.glue: what MyST-NB's glue stores, a no-op without MyST-NB."""

from __future__ import annotations

import pytest
import torch

from selfattn.lab.notebook import glue

myst_glue = pytest.importorskip("myst_nb.ext.glue")
RECORD = "application/papermill.record/"


@pytest.fixture
def displayed(monkeypatch):
    """Record what glue hands to IPython's display instead of showing it."""
    import IPython.display

    calls = []

    def fake_display(bundle, raw=False, metadata=None):
        assert raw
        calls.append((bundle, metadata))

    monkeypatch.setattr(IPython.display, "display", fake_display)
    monkeypatch.setattr(myst_glue, "ipy_display", fake_display)
    return calls


@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize("value", [0.25, 42, "cat", [1, 2], {"a": 1}])
def test_glue_stores_exactly_what_myst_nb_stores(displayed, value, display):
    glue("x", value, display=display)
    myst_glue.glue("x", value, display=display)
    ours, theirs = displayed
    assert ours == theirs


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


def test_glue_without_myst_nb_is_a_silent_no_op(monkeypatch, capsys, displayed):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "myst_nb" else real(n)
    )
    assert glue("x", 1.5, display=True) == 1.5
    assert capsys.readouterr() == ("", "")
    assert displayed == []


@pytest.mark.parametrize("name", ["", None, 3])
def test_glue_name_must_be_a_string(name):
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        glue(name, 1)


def test_glue_stores_numpy_and_torch_scalars_as_python_numbers(displayed):
    import numpy as np

    for name, value in [("a", np.float64(0.25)), ("b", torch.tensor(3)), ("c", 7)]:
        assert glue(name, value) is value
    texts = [bundle[RECORD + "text/plain"] for bundle, _ in displayed]
    assert texts == ["0.25", "3", "7"]  # not np.float64(0.25), not tensor(3)
