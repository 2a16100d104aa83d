"""The bench's dependencies are an extra: without it, a clear message."""

from __future__ import annotations


def test_the_bench_without_its_extra_says_how_to_install_it():
    """Without the extra "lab", importing the bench names the missing modules
    and the pip command, instead of a bare ModuleNotFoundError."""
    import subprocess
    import sys

    code = "import sys; sys.modules['networkx'] = None; import selfattn.lab"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0
    assert "missing: networkx" in done.stderr and "selfattn[lab]" in done.stderr
