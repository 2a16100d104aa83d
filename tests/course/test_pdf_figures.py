"""Every figure has a vector copy for the PDF edition (issue 31, F14), and
nbval compares neither copy.

``tools/execute_notebooks.py``, which writes the committed outputs, starts
each kernel asking for PNG (the HTML book, Jupyter) and PDF (the PDF edition:
myst-nb's LaTeX builder prefers it) figures: checked here on a kernel that
draws one figure. The root ``conftest.py`` adds the PDF copy to the outputs
nbval leaves out: checked on the cells of a notebook that pytest collects
(and does not run). Every committed figure has both copies (a PNG alone
would print at 100 pixels per inch). The built PDF is checked by
tests/editions/test_pdf.py.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "execute_notebooks", ROOT / "tools" / "execute_notebooks.py"
)
execute_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(execute_notebooks)

PLOT = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"


def png_only_figures(path: Path) -> int:
    """The figures of ``path`` that the PDF edition shows and that have no
    vector copy: PNG outputs without application/pdf, outside cells tagged
    remove-output (which no edition shows)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(
        "image/png" in out.get("data", {}) and "application/pdf" not in out["data"]
        for cell in cells
        if cell["cell_type"] == "code"
        and "remove-output" not in cell["metadata"].get("tags", [])
        for out in cell.get("outputs", [])
    )


def test_every_committed_figure_has_a_vector_copy() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    missing = {nb.name: n for nb in notebooks if (n := png_only_figures(nb))}
    assert not missing, (
        f"figures without application/pdf (re-execute with make execute): {missing}"
    )


def test_a_figure_without_its_pdf_copy_is_found(tmp_path: Path) -> None:
    figure = {"output_type": "display_data", "metadata": {}}
    png = {**figure, "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}}
    both = {**figure, "data": {**png["data"], "application/pdf": "JVBER"}}
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [png, both]},
        {
            "cell_type": "code",
            "metadata": {"tags": ["remove-output"]},
            "outputs": [png],
        },
        {"cell_type": "markdown", "metadata": {}, "source": ""},
    ]
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert png_only_figures(path) == 1


def test_the_executing_kernel_stores_each_figure_as_png_and_pdf() -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0"}
    km, kc = start_new_kernel(
        kernel_name="python3",
        extra_arguments=execute_notebooks.KERNEL_ARGUMENTS,
        env=env,
        cwd=str(ROOT / "notebooks"),
    )
    try:
        msg_id = kc.execute(PLOT)
        figures = []
        while True:
            msg = kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "display_data":
                figures.append(msg["content"]["data"])
            done = msg["content"].get("execution_state") == "idle"
            if msg["msg_type"] == "status" and done:
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    (figure,) = figures
    assert {"image/png", "application/pdf"} <= set(figure)
    pdf = base64.b64decode(figure["application/pdf"])
    assert pdf.startswith(b"%PDF")
    assert b"/FontFile2" in pdf  # TrueType: the text stays text
    assert b"(D:19700101000000Z)" in pdf  # no date: re-executing changes nothing


def test_nbval_compares_neither_copy_of_a_figure(tmp_path: Path) -> None:
    probe = tmp_path / "skipprobe.py"
    probe.write_text(
        "def pytest_collection_finish(session):\n"
        "    for item in session.items:\n"
        "        print('SKIP', sorted(item.parent.skip_compare))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "skipprobe"]
        + [str(ROOT / "templates" / "chapter.ipynb")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    skips = {line for line in out.stdout.splitlines() if line.startswith("SKIP ")}
    assert len(skips) == 1, out.stdout + out.stderr
    (skip,) = skips
    assert "'application/pdf'" in skip and "'image/png'" in skip
