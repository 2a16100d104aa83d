"""What every test of the bench shares: figures drawn off screen (Agg), and a
fixture that fails a call of ``plt.show()`` and closes the figures a test
opened."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def no_open_figures(monkeypatch):
    """Fail if a function calls plt.show(); close every figure a test opened."""

    def show(*args, **kwargs):
        raise AssertionError("the bench must never call plt.show()")

    monkeypatch.setattr(plt, "show", show)
    before = set(plt.get_fignums())
    yield
    for num in set(plt.get_fignums()) - before:
        plt.close(num)
    assert set(plt.get_fignums()) == before
