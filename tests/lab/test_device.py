"""selfattn.lab.device: ``SELFATTN_DEVICE`` decides when it is set (and is
refused when it names no device of this machine); otherwise the CPU, even on a
machine with a GPU (the book's numbers, and its claims' record, come from the
CPU). The GPU branches run on any machine: the availability
checks are replaced by ones that answer as a machine with that GPU would."""

from __future__ import annotations

import pytest
import torch

from selfattn.lab.device import ENV_VAR, pick_device


@pytest.fixture
def machine(monkeypatch):
    """Make this machine look as if it had ``cuda`` GPUs and/or MPS."""
    monkeypatch.delenv(ENV_VAR, raising=False)

    def have(*, cuda: int = 0, mps: bool = False) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    return have


def test_the_variable_is_named_selfattn_device():
    assert ENV_VAR == "SELFATTN_DEVICE"


@pytest.mark.parametrize("value", ["cpu", " cpu ", "cpu\n"])
def test_the_variable_picks_the_cpu_even_beside_a_gpu(machine, monkeypatch, value):
    """The book's numbers come from the CPU: ``SELFATTN_DEVICE=cpu`` wins."""
    machine(cuda=1, mps=True)
    monkeypatch.setenv(ENV_VAR, value)
    assert pick_device() == torch.device("cpu")


@pytest.mark.parametrize(
    "value, have, expected",
    [
        ("cuda", {"cuda": 1}, torch.device("cuda")),
        ("cuda:1", {"cuda": 2}, torch.device("cuda", 1)),
        ("mps", {"mps": True}, torch.device("mps")),
    ],
)
def test_the_variable_picks_a_device_the_machine_has(
    machine, monkeypatch, value, have, expected
):
    machine(**have)
    monkeypatch.setenv(ENV_VAR, value)
    assert pick_device() == expected


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "graphics card"])
def test_a_name_that_is_not_a_device_is_refused(machine, monkeypatch, value):
    machine(cuda=1)
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(ValueError, match=rf"\b{ENV_VAR}='{value}'.*\bnot a device"):
        pick_device()


@pytest.mark.parametrize(
    "value, have",
    [
        ("cuda", {}),
        ("cuda:0", {"mps": True}),
        ("cuda:1", {"cuda": 1}),
        ("mps", {"cuda": 1}),
        ("meta", {}),
    ],
)
def test_a_device_the_machine_lacks_is_refused(machine, monkeypatch, value, have):
    machine(**have)
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(ValueError, match=rf"\b{ENV_VAR}='{value}'.*\bno such device"):
        pick_device()


@pytest.mark.parametrize(
    "have", [{"cuda": 1, "mps": True}, {"cuda": 2}, {"mps": True}, {}]
)
@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_the_cpu_even_beside_a_gpu(machine, monkeypatch, have, value):
    """Unset (or blank), the variable leaves the chapters on the CPU: a GPU is
    an opt-in (``SELFATTN_DEVICE=cuda`` or ``mps``), never a silent switch."""
    machine(**have)
    if value is not None:
        monkeypatch.setenv(ENV_VAR, value)
    assert pick_device() == torch.device("cpu")


def test_a_torch_without_mps_support_falls_back_to_the_cpu(machine, monkeypatch):
    """Older or stripped builds of torch have no ``torch.backends.mps``."""
    machine()
    monkeypatch.delattr(torch.backends, "mps")
    assert pick_device() == torch.device("cpu")
    monkeypatch.setenv(ENV_VAR, "mps")
    with pytest.raises(ValueError, match="no such device"):
        pick_device()
