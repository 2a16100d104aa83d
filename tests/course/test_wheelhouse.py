"""tools/wheelhouse.py: the per-system download recipe of the offline section.

The recipe is run by the workflow (the wheelhouse job downloads for Linux,
macOS and Windows from Linux; the offline job installs each with
``--no-index`` on its own system). Here, with no network: the commands it
would run (issue 31, F4: resolve for the target, then download the exact pins
with no dependency resolution by pip).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "wheelhouse", ROOT / "tools" / "wheelhouse.py"
)
wheelhouse = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wheelhouse)


@pytest.mark.parametrize("system", ["linux", "macos", "windows"])
def test_uv_resolves_for_the_target_and_pip_downloads_the_pins_alone(
    system: str, tmp_path: Path
) -> None:
    resolve = wheelhouse.compile_command(system, "3.12", tmp_path)
    assert resolve[:3] == ["uv", "pip", "compile"]
    platform = resolve[resolve.index("--python-platform") + 1]
    assert platform == wheelhouse.SYSTEMS[system][0]
    assert resolve[resolve.index("--python-version") + 1] == "3.12"
    fetch = wheelhouse.download_command(system, "3.12", tmp_path)
    assert fetch[1:4] == ["-m", "pip", "download"]
    # pip judges dependency markers by the host: it must not resolve at all
    assert "--no-deps" in fetch and "--only-binary=:all:" in fetch
    tags = [fetch[i + 1] for i, a in enumerate(fetch) if a == "--platform"]
    assert tags == wheelhouse.SYSTEMS[system][1]
    assert fetch[fetch.index("--python-version") + 1] == "3.12"
    cpu = "https://download.pytorch.org/whl/cpu"
    assert (cpu in resolve, cpu in fetch) == (system == "linux",) * 2


def test_the_targets_are_the_supported_systems() -> None:
    assert wheelhouse.SYSTEMS["macos"][1] == ["macosx_14_0_arm64"]  # torch >= 2.12
    assert wheelhouse.SYSTEMS["windows"][1] == ["win_amd64"]
    linux = wheelhouse.SYSTEMS["linux"][1]
    assert all(re.fullmatch(r"manylinux(_2_\d+|2014)_x86_64", t) for t in linux)
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert f"torch=={wheelhouse.lock_torch()}\n" in lock


def test_a_dry_run_prints_both_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    wheel = tmp_path / "selfattn-2.0.0-py3-none-any.whl"
    assert wheelhouse.main(["windows", str(wheel), str(tmp_path), "--dry-run"]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("uv pip compile") and "x86_64-pc-windows-msvc" in first
    assert "pip download" in second and "--platform win_amd64" in second
