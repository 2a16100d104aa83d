"""MathJax is a checked-in copy of the files the book uses: no Node at set-up.

``book/_static/mathjax`` holds ``tex-chtml.js`` (MathJax 3.2.2) and the web
fonts it names, MathJax's LICENSE (Apache-2.0) and SHA256SUMS; the copy must
match its sums, and nothing in the set-up may call npm any more. The browser
tests (``tests/browser``) show that every formula of the built book renders
from it; ``tools/vendor_mathjax.py``, which writes the copy, is tested here
on a folder made from the copy itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MATHJAX = ROOT / "book" / "_static" / "mathjax"

spec = importlib.util.spec_from_file_location(
    "vendor_mathjax", ROOT / "tools" / "vendor_mathjax.py"
)
vendor_mathjax = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vendor_mathjax)


def sums(folder: Path = MATHJAX) -> dict[str, str]:
    """``{path: sha256}`` from the folder's SHA256SUMS."""
    lines = (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {ln.split("  ", 1)[1]: ln.split("  ", 1)[0] for ln in lines if ln}


def files(folder: Path = MATHJAX) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_copy_is_exactly_what_its_sums_list() -> None:
    listed = sums()
    assert files() == set(listed) | {"LICENSE", "SHA256SUMS", "README.txt"}
    for rel, digest in listed.items():
        data = (MATHJAX / rel).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, f"{rel} was modified"


def test_it_is_mathjax_3_2_2_with_every_font_it_names() -> None:
    entry = (MATHJAX / "tex-chtml.js").read_bytes()
    assert b'VERSION="3.2.2"' in entry
    fonts = vendor_mathjax.fonts_named_by(entry)
    assert len(fonts) == 22
    assert set(fonts) <= set(sums())


def test_it_carries_its_apache_licence() -> None:
    licence = (MATHJAX / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence


def test_the_book_loads_it_from_the_site() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config["sphinx"]["config"]
    assert sphinx["mathjax_path"] == "mathjax/tex-chtml.js"
    assert "book/_static" in sphinx["html_static_path"]


def test_set_up_needs_no_node() -> None:
    assert not (ROOT / "package.json").exists()
    assert not (ROOT / "package-lock.json").exists()
    npm = ("npm ci", "npm install", "node_modules", "package.json", "Node.js")
    for name in ("Makefile", "README.md", "CONTRIBUTING.md", ".gitignore"):
        text = (ROOT / name).read_text(encoding="utf-8")
        found = [word for word in npm if word in text]
        assert found == [], f"{name} still mentions {found}"
    for page in sorted((ROOT / "book").glob("how-to-run*.md")):
        text = page.read_text(encoding="utf-8")
        assert "npm" not in text and "Node.js" not in text, page.name


# --- the tool ----------------------------------------------------------------------
def es5_copy(where: Path) -> Path:
    """A MathJax-like package folder (``LICENSE``, ``es5/...``) from the copy."""
    package = where / "package"
    for rel in sums():
        target = package / "es5" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MATHJAX / rel, target)
    shutil.copy(MATHJAX / "LICENSE", package / "LICENSE")
    return package


def test_the_tool_rewrites_the_same_copy(tmp_path: Path) -> None:
    target = tmp_path / "mathjax"
    (target / "stale").mkdir(parents=True)  # an old full copy is cleared
    (target / "stale" / "x.js").write_text("old")
    (target / "README.txt").write_text("kept")
    copied = vendor_mathjax.vendor(es5_copy(tmp_path), [], target)
    assert copied[0] == "tex-chtml.js"
    assert sums(target) == sums()
    assert files(target) == files()
    assert (target / "README.txt").read_text() == "kept"


def test_the_tool_refuses_what_it_cannot_vouch_for(tmp_path: Path) -> None:
    package = es5_copy(tmp_path)
    with pytest.raises(SystemExit, match="not in MathJax"):
        vendor_mathjax.vendor(package, ["input/tex/extensions/nope.js"], tmp_path / "o")
    fake = tmp_path / "mathjax-3.2.2.tgz"  # right name, wrong bytes
    with tarfile.open(fake, "w:gz") as tar:
        data = b"not mathjax"
        info = tarfile.TarInfo("package/es5/tex-chtml.js")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(SystemExit, match="is not mathjax-3.2.2.tgz"):
        vendor_mathjax.vendor(fake, [], tmp_path / "o")
