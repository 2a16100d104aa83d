"""Every chapter has its text twin, and the twin is up to date (tools/twins.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import twins  # noqa: E402


def test_every_chapter_has_an_up_to_date_twin() -> None:
    bad = twins.stale()
    assert not bad, f"run `make twins`: {bad}"


def test_a_twin_holds_the_prose_and_code_but_no_output() -> None:
    nb = ROOT / "notebooks" / "complexity.ipynb"
    text = twins.twin_of(nb).read_text(encoding="utf-8")
    assert text.startswith("# ")  # no metadata header: the chapter's title first
    assert "```{code-cell}" in text and "import selfattn" in text.replace(
        "from selfattn", "import selfattn"
    )
    assert '"output_type"' not in text and "image/png" not in text


def test_the_check_fires_on_a_stale_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebooks = tmp_path / "notebooks"
    (notebooks / "twins").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "complexity.ipynb", notebooks)
    monkeypatch.setattr(twins, "ROOT", tmp_path)
    monkeypatch.setattr(twins, "NOTEBOOKS", notebooks)
    monkeypatch.setattr(twins, "TWINS", notebooks / "twins")
    assert twins.stale() == ["notebooks/twins/complexity.md"]  # missing
    twins.write()
    assert twins.stale() == []
    twin = notebooks / "twins" / "complexity.md"
    twin.write_text(twin.read_text(encoding="utf-8") + "\nan edit\n", encoding="utf-8")
    assert twins.stale() == ["notebooks/twins/complexity.md"]  # out of date
    (notebooks / "twins" / "gone.md").write_text("# gone\n", encoding="utf-8")
    twins.write()  # rewrites the stale twin, removes the orphan
    assert twins.stale() == [] and not (notebooks / "twins" / "gone.md").exists()


def test_the_launch_branches_carry_no_twin(tmp_path: Path) -> None:
    # the student branch must not hold the solutions the twins carry
    import reader_notebooks

    (tmp_path / "nb").mkdir()
    reader_notebooks.tree(tmp_path / "nb", tmp_path / "branch")
    assert (tmp_path / "branch" / "notebooks" / "complexity.ipynb").is_file()
    assert not (tmp_path / "branch" / "notebooks" / "twins").exists()
    assert not (tmp_path / "branch" / "jupytext.toml").exists()
