"""A wheelhouse: every wheel a learner's install needs, for one system.

Usage::

    python tools/wheelhouse.py SYSTEM WHEEL OUTPUT_DIR [--python 3.12] [--dry-run]

SYSTEM is ``linux`` (x86_64, CPU build of torch), ``macos`` (Apple silicon,
macOS 14 or newer) or ``windows`` (x64); WHEEL is the ``selfattn`` wheel.
OUTPUT_DIR receives the wheels of ``selfattn[lab]`` and JupyterLab for
CPython ``--python`` on that system, and ``requirements.txt``, the pins. On
the target, with no network::

    python -m pip install --no-index --find-links OUTPUT_DIR "selfattn[lab]" jupyterlab

It runs on any machine: the workflow's ``wheelhouse`` job builds all three on
Linux, and its ``offline`` job installs each one with ``--no-index`` on its
own system (``.github/workflows/book.yml``).

Why two steps. ``pip download --platform X --only-binary=:all:`` resolves
dependencies with the markers of the machine it runs on (pypa/pip#11664), so
from Linux it asks for torch's Linux-only CUDA packages and fails for
Windows and macOS (ResolutionImpossible). Here uv resolves the set for the
target (``uv pip compile --python-platform``), then pip downloads exactly
those pins with ``--no-deps``, where markers no longer matter. torch is held
to the version of ``requirements.lock`` (the notebooks' outputs were made with
it); on Linux it comes from PyTorch's CPU index (no CUDA libraries).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# The lock's torch needs macOS 14 on Apple silicon (torch >= 2.12 ships only
# macosx_14_0_arm64 wheels); uv's default target would be macOS 12.
MACOS = "14.0"
MANYLINUX = [f"manylinux_2_{minor}_x86_64" for minor in range(28, 16, -1)]
# system -> (uv's --python-platform, pip's --platform tags)
SYSTEMS: dict[str, tuple[str, list[str]]] = {
    "linux": ("x86_64-manylinux_2_28", [*MANYLINUX, "manylinux2014_x86_64"]),
    "macos": ("aarch64-apple-darwin", ["macosx_14_0_arm64"]),
    "windows": ("x86_64-pc-windows-msvc", ["win_amd64"]),
}
LEARNER = ("jupyterlab",)  # beside selfattn[lab]: what how-to-run installs


def lock_torch() -> str:
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    return re.search(r"(?m)^torch==(\S+)$", lock).group(1)


def compile_command(system: str, python: str, out: Path) -> list[str]:
    """uv resolves the learner's set for the target system."""
    platform, _ = SYSTEMS[system]
    command = [
        "uv",
        "pip",
        "compile",
        "--quiet",
        "--no-header",
        "--no-annotate",
        "--python-platform",
        platform,
        "--python-version",
        python,
        "--constraint",
        str(out / "constraints.txt"),
        "--output-file",
        str(out / "requirements.txt"),
        str(out / "in.txt"),
    ]
    if system == "linux":  # torch's CPU build; the other packages from PyPI too
        command[3:3] = [
            "--extra-index-url",
            TORCH_CPU_INDEX,
            "--index-strategy",
            "unsafe-best-match",
        ]
    return command


def download_command(system: str, python: str, out: Path) -> list[str]:
    """pip downloads exactly the pins, for the target's tags, no dependencies."""
    _, tags = SYSTEMS[system]
    command = [sys.executable, "-m", "pip", "download", "--quiet"]
    command += ["--disable-pip-version-check", "--no-deps", "--only-binary=:all:"]
    for tag in tags:
        command += ["--platform", tag]
    command += ["--python-version", python, "--implementation", "cp"]
    command += ["--dest", str(out), "--requirement", str(out / "pins.txt")]
    if system == "linux":
        command += ["--extra-index-url", TORCH_CPU_INDEX]
    return command


def build(system: str, wheel: Path, out: Path, python: str, dry_run: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "in.txt").write_text(
        f"selfattn[lab] @ {wheel.resolve().as_uri()}\n"
        + "".join(f"{name}\n" for name in LEARNER),
        encoding="utf-8",
    )
    (out / "constraints.txt").write_text(f"torch=={lock_torch()}\n", encoding="utf-8")
    resolve = compile_command(system, python, out)
    fetch = download_command(system, python, out)
    if dry_run:
        print(" ".join(resolve))
        print(" ".join(fetch))
        return 0
    env = dict(os.environ, MACOSX_DEPLOYMENT_TARGET=MACOS)
    subprocess.run(resolve, check=True, env=env)
    pins = (out / "requirements.txt").read_text(encoding="utf-8").splitlines()
    others = [p for p in pins if p.strip() and not p.startswith(("selfattn", "#"))]
    (out / "pins.txt").write_text("\n".join(others) + "\n", encoding="utf-8")
    subprocess.run(fetch, check=True)
    shutil.copy2(wheel, out / wheel.name)
    for scratch in ("in.txt", "constraints.txt", "pins.txt"):
        (out / scratch).unlink()
    wheels = sorted(out.glob("*.whl"))
    print(f"{out}: {len(wheels)} wheels for {system}, Python {python}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("system", choices=sorted(SYSTEMS))
    parser.add_argument("wheel", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--dry-run", action="store_true", help="print the commands")
    args = parser.parse_args(argv)
    if not args.dry_run and shutil.which("uv") is None:
        raise SystemExit("tools/wheelhouse.py needs uv (https://docs.astral.sh/uv/)")
    out = args.output if not args.dry_run else Path(tempfile.mkdtemp())
    return build(args.system, args.wheel, out, args.python, args.dry_run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
