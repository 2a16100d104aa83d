"""The offline bundle installs and runs a chapter with the network off (issue 31).

Run by ``make bundle-check`` (so by ``make editions`` in CI), after
``make bundle``. The bundle is unpacked into a temporary folder, and two
Pythons are made that see every package of this environment but selfattn
(``tests/install_cell_env.py``: a fresh venv, the other packages linked in,
as a learner's venv is after unzipping the wheelhouse of their system into
the bundle's wheels/; which wheels a wheelhouse holds is
``tools/wheelhouse.py``'s business, and the workflow's). selfattn is checked
to be missing from both before anything is installed.

* **The README's install.** The line of the bundle's README.txt that
  installs with ``--no-index`` is run as written, in the bundle's folder.
* **A chapter, installing itself.** The quickest chapter's notebook (it
  trains nothing) is executed from the bundle's notebooks/ with nbconvert, in
  a kernel of the other Python, so its install cell installs the wheel beside
  it; every cell must run without an error.

Nothing may reach the network: pip reads no configuration file (this
machine's may name other wheel folders or indexes), no ``PIP_*`` variable
(``PIP_NO_INDEX`` included: the README and the cell must turn the index off
themselves), and every proxy variable points at a closed port, so that any
connection fails. pip's log (``PIP_LOG``) must show the bundle's wheel
installed from the bundle's folder and no attempt at the network, not even
pip's own version check; a control shows that an attempt would be in the log.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from install_cell_env import IMPORTS, colab_like, own_packages

from .test_bundle import unpacked  # noqa: F401 (the unpacked bundle, a fixture)

# The quickest chapter (about 12 CPU s in tests/SEEDS.md's sweep): it trains nothing.
CHAPTER = "positional-encoding.ipynb"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a proxy refused
PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
# What pip logs when it opens, or tries to open, a connection
NETWORK = re.compile(
    r"Getting page|Fetching project page|Could not fetch URL|Starting new HTTP"
    r"|Retrying|ProxyError|NewConnectionError|Looking in indexes"
)
# The README's install with no network, as a learner types it on Linux or macOS
README_LINE = re.compile(r"(?m)^ +(\.venv/bin/python -m pip install --no-index .*)$")


def offline(where: Path, log: Path) -> dict[str, str]:
    """This environment, with pip's settings and the network taken away."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(("PIP_", "PYTHON", "JUPYTER", "IPYTHON"))
        and k.lower() not in PROXIES
    }
    proxies = {k: CLOSED for k in PROXIES[:3]}
    jupyter = where / "jupyter"
    return {
        **keep,
        **proxies,
        **{k.upper(): v for k, v in proxies.items()},
        "PIP_CONFIG_FILE": os.devnull,  # no pip.conf: no other index or folder
        "PIP_LOG": str(log),  # pip's verbose log, appended to by each pip run
        "JUPYTER_PATH": str(jupyter / "data"),  # the kernel below, first
        "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
        "JUPYTER_DATA_DIR": str(jupyter / "data"),
        "IPYTHONDIR": str(jupyter / "ipython"),
        "OMP_NUM_THREADS": "1",
    }


def without_selfattn(where: Path) -> Path:
    """A venv that sees this environment's packages but selfattn; checked."""
    python = colab_like(where)
    assert own_packages(python) == set()
    probe = subprocess.run(
        [python, "-c", "import selfattn, torch, numpy, matplotlib"],
        cwd=where,
        capture_output=True,
        text=True,
    )
    assert "No module named 'selfattn'" in probe.stderr, probe.stderr
    return python


def assert_offline(log: Path, links: str, wheel: Path, cwd: Path) -> None:
    """pip's log: the index off, ``links`` its only folder, no connection, and
    ``wheel`` (pip ran in ``cwd``) the one thing installed."""
    text = log.read_text(encoding="utf-8")
    assert "Ignoring indexes:" in text
    assert set(re.findall(r"Looking in links: (.*)", text)) == {links}, text
    assert not NETWORK.findall(text), NETWORK.findall(text)
    (processed,) = re.findall(r"Processing (.*\.whl)$", text, re.M)
    assert (cwd / processed).resolve() == wheel.resolve()
    assert re.findall(r"Successfully installed (.*)", text) == [
        "-".join(wheel.name.split("-")[:2])
    ]


def test_a_closed_proxy_stops_pip_and_its_log_shows_the_attempt(
    tmp_path: Path,
) -> None:
    """The control: with the same settings, pip asked for an index fails, and
    the log shows the attempt (so a clean log means none was made)."""
    log = tmp_path / "pip.log"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "0"]
        + ["--dest", str(tmp_path / "d"), "selfattn-no-such-package"],
        cwd=tmp_path,
        env=offline(tmp_path, log),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    text = log.read_text(encoding="utf-8")
    assert NETWORK.search(text), text
    assert "Looking in links" not in text  # no folder from a pip.conf


def test_the_readme_s_install_takes_the_bundle_s_wheel_with_no_network(
    unpacked: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    python = without_selfattn(tmp_path)
    readme = (unpacked / "README.txt").read_text(encoding="utf-8")
    (line,) = README_LINE.findall(readme)
    command = shlex.split(line)
    assert command[:2] == [".venv/bin/python", "-m"]
    log = tmp_path / "pip.log"
    done = subprocess.run(
        [str(python), *command[1:]],
        cwd=unpacked,
        env=offline(tmp_path, log),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert own_packages(python) == {"selfattn"}  # it alone was installed
    (wheel,) = (unpacked / "wheels").glob("selfattn-*.whl")
    assert_offline(log, "wheels", wheel, unpacked)
    subprocess.run([python, "-c", IMPORTS], cwd=tmp_path, check=True)


def test_a_chapter_installs_its_wheel_and_runs_with_no_network(
    unpacked: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    python = without_selfattn(tmp_path)
    log = tmp_path / "pip.log"
    env = offline(tmp_path, log)
    kernel = Path(env["JUPYTER_DATA_DIR"]) / "kernels" / "python3"
    kernel.mkdir(parents=True)  # a kernel of this venv's Python, no other
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "Python 3", "language": "python"}
    (kernel / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    out = tmp_path / "executed.ipynb"
    done = subprocess.run(
        [python, "-m", "nbconvert", "--to", "notebook", "--execute"]
        + ["--ExecutePreprocessor.kernel_name=python3"]
        + ["--ExecutePreprocessor.timeout=600", "--output", str(out), CHAPTER],
        cwd=unpacked / "notebooks",
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(c["execution_count"] for c in code)
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    # the install cell installed selfattn, alone, from the wheel beside it
    assert own_packages(python) == {"selfattn"}
    (wheel,) = (unpacked / "wheels").glob("selfattn-*.whl")
    assert_offline(log, "../wheels", wheel, unpacked / "notebooks")
