"""The course's licences, and every place that must state them.

Text, figures and notebooks: CC BY-SA 4.0; code: MIT (LICENSE says which
files are which). The full legal texts are in the repository, unmodified; the
README, the HTML book's footer, the PDF's title page and every notebook's
metadata name both licences. ``tools/notebook_licence.py`` writes the
notebooks' metadata; it is tested here on copies.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[2]
CC_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
MIT_URL = "https://opensource.org/license/mit"
# sha256 of the official legal code, creativecommons.org/licenses/by-sa/4.0/
# legalcode.txt (creativecommons/creativecommons.org, docroot/legalcode/
# by-sa_4.0.txt), byte for byte.
CC_BY_SA_SHA256 = "28a9529c7d0bb4dc51f4bf5c116a3d16ef247a052f7591466768ddf563fd1cf5"
MIT_TEXT = """\
MIT License

Copyright (c) 2026 the Self-attention, executable contributors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

spec = importlib.util.spec_from_file_location(
    "notebook_licence", ROOT / "tools" / "notebook_licence.py"
)
notebook_licence = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notebook_licence)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def says_both(text: str) -> bool:
    """True when ``text`` names CC BY-SA 4.0 and MIT (spacing aside)."""
    text = squeeze(text)
    return "CC BY-SA 4.0" in text and "MIT" in text


def config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


# --- the legal texts ---------------------------------------------------------
def test_the_cc_by_sa_legal_code_is_the_official_text() -> None:
    data = (ROOT / "LICENSE-CC-BY-SA-4.0.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == CC_BY_SA_SHA256, (
        "LICENSE-CC-BY-SA-4.0.txt must be the official legal code, unmodified"
    )


def test_the_mit_licence_is_the_standard_text() -> None:
    assert (ROOT / "LICENSE-MIT.txt").read_text(encoding="utf-8") == MIT_TEXT


def test_license_says_which_licence_covers_what() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert says_both(text)
    for name in ("LICENSE-CC-BY-SA-4.0.txt", "LICENSE-MIT.txt"):
        assert name in text
    # every third-party file it names is there, with its licence beside it
    assert (ROOT / "book/_static/mathjax/LICENSE").is_file()
    assert "Apache License" in (ROOT / "book/_static/mathjax/LICENSE").read_text()
    assert "LaTeX Project Public License" in (
        ROOT / "book/_latex/texmf/ctexhook.sty"
    ).read_text(encoding="utf-8")
    # and what the build copies into the book: the theme, its scripts and fonts,
    # the PDF's fonts (checked against the built book by tests/editions/
    # test_bundle.py and test_licence_pdf.py)
    text = squeeze(text)
    for name, licence in [
        ("pydata-sphinx-theme", "BSD 3-Clause"),
        ("Bootstrap", "MIT"),
        ("Font Awesome Free", "SIL Open Font License 1.1"),
        ("clipboard.js", "MIT"),
        ("GNU FreeFont", "font exception"),
        ("Latin Modern Math", "GUST Font License"),
        ("Noto Serif CJK and Noto Sans CJK", "SIL Open Font License 1.1"),
    ]:
        assert name in text and licence in text.split(name, 1)[1][:400], name


# --- the places that say it ----------------------------------------------------
def test_the_readme_has_a_licence_section() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Licence\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert section, "README.md needs a '## Licence' section"
    assert says_both(section.group(1))
    assert "LICENSE" in section.group(1)


def test_the_book_footer_names_both_licences() -> None:
    footer = config()["html"]["extra_footer"]
    assert says_both(footer)
    assert CC_URL in footer and MIT_URL in footer


def extension(name: str) -> ModuleType:
    """The book's extension ``book/_ext/<name>.py``, imported as Jupyter Book
    does (``book/_ext`` on ``sys.path``)."""
    if str(ROOT / "book" / "_ext") not in sys.path:
        sys.path.insert(0, str(ROOT / "book" / "_ext"))
    return importlib.import_module(name)


def test_the_book_footer_links_to_license_at_the_release_s_tag() -> None:
    """Issue 31, F16: "See LICENSE" with the address (book/_ext/licence_link.py;
    the built footer: tests/editions/test_bundle.py)."""
    assert config()["sphinx"]["local_extensions"]["licence_link"] == "book/_ext"
    licence_link = extension("licence_link")
    repository = licence_link._repository(ROOT)
    url = f"{repository.url()}/blob/v{repository.version()}/LICENSE"
    assert licence_link.licence_url(ROOT) == url
    footer = licence_link.linked(config()["html"]["extra_footer"], ROOT)
    assert f'See <a href="{url}">LICENSE</a> in ' in footer
    assert f'<a href="{repository.url()}">the course\'s repository</a>.' in footer
    assert says_both(footer) and CC_URL in footer and MIT_URL in footer
    with pytest.raises(ExtensionError, match="lacks"):
        licence_link.linked("<p>no licence line</p>", ROOT)


def test_the_pdf_title_page_carries_the_licence() -> None:
    # the built PDF's title page: tests/editions/test_licence_pdf.py
    latex = config()["sphinx"]["config"]
    assert "book/_latex/booklicence.sty" in latex["latex_additional_files"]
    assert r"\usepackage{booklicence}" in latex["latex_elements"]["preamble"]
    sty = (ROOT / "book" / "_latex" / "booklicence.sty").read_text(encoding="utf-8")
    assert r"\AtEndEnvironment{titlepage}" in sty
    assert says_both(sty) and CC_URL in sty and MIT_URL in sty


def test_the_pdf_title_page_gives_the_version_and_the_addresses() -> None:
    """Issue 31, F14: which release, and where the course is (the built PDF:
    tests/editions/test_licence_pdf.py)."""
    sphinx = config()["sphinx"]
    assert sphinx["local_extensions"]["pdf_titlepage"] == "book/_ext"
    sty = (ROOT / "book" / "_latex" / "booklicence.sty").read_text(encoding="utf-8")
    for macro in (r"\bookversion", r"\booksite", r"\bookrepository"):
        assert macro in sty, macro
    titlepage = extension("pdf_titlepage")
    preamble = titlepage.preamble(ROOT)
    repository = titlepage._repository(ROOT)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert rf"\newcommand{{\bookversion}}{{{version['version']}}}" in preamble
    assert f"{{{repository.url()}}}" in preamble
    assert f"{{{repository.site(repository.url())}}}" in preamble
    # A4, the paper of most readers, the Chinese included
    assert sphinx["config"]["latex_elements"]["papersize"] == "a4paper"


def committed_notebooks() -> list[Path]:
    return [
        *sorted((ROOT / "notebooks").glob("*.ipynb")),
        ROOT / "templates" / "chapter.ipynb",
    ]


def test_every_notebook_carries_its_licence() -> None:
    missing = notebook_licence.missing(committed_notebooks())
    assert missing == [], (
        "notebooks without the licence in their metadata (run "
        "`python tools/notebook_licence.py write notebooks/*.ipynb "
        "templates/chapter.ipynb`): " + ", ".join(p.name for p in missing)
    )


# --- the tool --------------------------------------------------------------------
def test_the_licence_metadata_says_both() -> None:
    lic = notebook_licence.licence()
    assert lic["spdx"] == "CC-BY-SA-4.0 AND MIT"
    assert (lic["text"], lic["code"]) == ("CC-BY-SA-4.0", "MIT")
    assert says_both(lic["notice"]) and CC_URL in lic["notice"]
    # the repository's address, from _config.yml (make repository rewrites it)
    url = notebook_licence.url()
    assert lic["notice"].endswith(f"See LICENSE in the course's repository, {url}.")
    other = notebook_licence.licence("https://github.com/someone/fork")
    assert other["notice"].endswith("repository, https://github.com/someone/fork.")


def test_the_tool_adds_the_licence_and_changes_nothing_else(tmp_path: Path) -> None:
    for source in committed_notebooks():
        copy = tmp_path / source.name
        shutil.copy(source, copy)
        before = json.loads(copy.read_text(encoding="utf-8"))
        before.get("metadata", {}).pop("license", None)
        copy.write_text(notebook_licence.dumps(before), encoding="utf-8")
        assert notebook_licence.missing([copy]) == [copy]

        assert notebook_licence.write([copy]) == [copy]
        after = json.loads(copy.read_text(encoding="utf-8"))
        assert after["metadata"].pop("license") == notebook_licence.licence()
        assert after == before, f"{source.name}: more than the metadata changed"
        # only metadata lines differ, and a second run changes nothing
        assert notebook_licence.write([copy]) == []
        assert notebook_licence.main(["check", str(copy)]) == 0


def test_the_tool_changes_only_metadata_lines() -> None:
    for source in committed_notebooks():
        text = source.read_text(encoding="utf-8")
        nb = json.loads(text)
        nb.get("metadata", {}).pop("license", None)
        for sort_keys in (True, False):  # as nbformat stores it, or in its own order
            before = notebook_licence.dumps(nb, sort_keys)
            after = notebook_licence.with_licence(before)
            diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
            removed = [ln[2:] for ln in diff if ln.startswith("- ")]
            added = [ln[2:] for ln in diff if ln.startswith("+ ")]
            # at most a comma after the line before the new key
            assert all(ln + "," in added for ln in removed), (source.name, removed)
            new = [ln for ln in added if ln.rstrip(",") not in removed]
            assert len(new) == len(notebook_licence.licence()) + 2, (source.name, new)
            lic = json.loads(after)["metadata"]["license"]
            assert lic == notebook_licence.licence()


def test_check_fails_on_a_notebook_without_a_licence(tmp_path: Path) -> None:
    bare = tmp_path / "bare.ipynb"
    bare.write_text(
        notebook_licence.dumps(
            {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        ),
        encoding="utf-8",
    )
    assert notebook_licence.main(["check", str(bare)]) == 1
    assert notebook_licence.main(["write", str(bare)]) == 0
    assert notebook_licence.main(["check", str(bare)]) == 0
    assert notebook_licence.main([]) == 2
