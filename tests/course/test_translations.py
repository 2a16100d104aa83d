"""The Chinese edition's catalogues: blocks, hashes, and a check that fails.

`make translations-check` runs tools/translations.py check on the
repository. These tests show, on a small book in a temporary folder, that the
check fails on each fault it is there for: a missing translation, a stale one
(its English paragraph changed after it was translated), a translation that
changes the markup, and a glossary term rendered two ways.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import translations as tr  # noqa: E402

PAGE = """# A page

The **{term}`query`（查询）** asks; the key answers, with
$\\alpha = q^\\top k$ and {glue:text}`n_keys` keys.

$$
y = \\operatorname{softmax}(x)
$$ (eq-x)

```{exercise} ★ One exercise
:label: book-ex-one
Compute {eq}`eq-x` by hand.
```
"""

GLOSSARY = """% Glossary terms.

```{glossary}
query
  查询 · symbol: $q$ · defined in {doc}`/notebooks/x`.
  What asks.

key
  键 · symbol: $k$ · defined in {doc}`/notebooks/x`.
  What answers.
```
"""

ZH = {
    "# A page": "# 一页",
    "The **{term}`query`": (
        "**{term}`查询 <query>`**（query）提出问题，键作答：\n$\\alpha = q^\\top k$，"
        "共 {glue:text}`n_keys` 个键。"
    ),
    "```{exercise}": (
        "```{exercise} ★ 一道习题\n:label: book-ex-one\n手算式 {eq}`eq-x`。\n```"
    ),
    "query\n": "查询\nquery\n  query · 符号：$q$ · 定义见 {doc}`/notebooks/x`。\n"
    "  提问者。",
    "key\n": "键\nkey\n  key · 符号：$k$ · 定义见 {doc}`/notebooks/x`。\n  作答者。",
}


def _book(tmp_path: Path) -> Path:
    (tmp_path / "book" / "glossary").mkdir(parents=True)
    (tmp_path / "book" / "page.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "book" / "glossary" / "_x.md").write_text(GLOSSARY, encoding="utf-8")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/page\n", encoding="utf-8"
    )
    return tmp_path


def _translate(root: Path, source: Path) -> None:
    """Update the catalogue of ``source`` and fill every entry from ZH."""
    tr.update(source, root)
    path = tr.catalogue_path(source, root)
    entries = tr.load(path)
    for entry in entries:
        entry["zh"] = next(zh for en, zh in ZH.items() if entry["en"].startswith(en))
        entry.pop("old_en", None)
        entry.pop("old_zh", None)
    path.write_text(tr.dump(entries, "x"), encoding="utf-8")


@pytest.fixture
def book(tmp_path: Path) -> Path:
    root = _book(tmp_path)
    for source in tr.toc_sources(root):
        _translate(root, source)
    return root


def _problems(root: Path) -> list[str]:
    return [p for s in tr.toc_sources(root) for p in tr.problems(s, root)]


def test_blocks_cover_the_text_and_keep_fences_whole():
    spans = tr.block_spans(PAGE)
    blocks = [PAGE[a:b] for a, b in spans]
    assert blocks[0] == "# A page"
    assert blocks[2].startswith("$$") and blocks[2].endswith("(eq-x)")
    assert blocks[3].startswith("```{exercise}") and blocks[3].endswith("```")
    assert "".join(blocks).replace("\n", "") == PAGE.replace("\n", "")


def test_a_glossary_is_cut_into_its_entries():
    blocks = [GLOSSARY[a:b] for a, b in tr.block_spans(GLOSSARY)]
    assert blocks[1] == "```{glossary}" and blocks[-1] == "```"
    assert blocks[2].startswith("query\n") and blocks[3].startswith("key\n")


def test_maths_labels_and_closing_fences_are_not_translated():
    assert not tr.words_outside_markup("$$\ny = x\n$$ (eq-x)")
    assert not tr.words_outside_markup("(sec-label)=")
    assert not tr.words_outside_markup("````{solution-end}\n````")
    assert tr.words_outside_markup("```{exercise} ★ One exercise\n:label: a\n```")


def test_a_complete_catalogue_passes(book: Path):
    assert _problems(book) == []


def test_the_check_fails_when_an_english_paragraph_changes(book: Path):
    page = book / "book" / "page.md"
    page.write_text(page.read_text().replace("the key answers", "the key replies"))
    found = _problems(book)
    assert any("no translation of 'The **{term}`query`" in p for p in found)
    assert any("stale translation" in p for p in found)
    # update keeps the old pair beside the new block until it is translated again
    tr.update(page, book)
    entry = next(e for e in tr.load(tr.catalogue_path(page, book)) if "old_en" in e)
    assert "the key answers" in entry["old_en"] and entry["zh"] == ""
    assert any("is empty" in p for p in _problems(book))


def test_the_check_fails_on_a_missing_translation(book: Path):
    page = book / "book" / "page.md"
    page.write_text(page.read_text() + "\nA new paragraph.\n")
    assert any("no translation of 'A new paragraph.'" in p for p in _problems(book))


def test_the_check_fails_when_a_translation_changes_the_markup(book: Path):
    path = tr.catalogue_path(book / "book" / "page.md", book)
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("{glue:text}`n_keys`", "3").replace(
            "$\\alpha = q^\\top k$", "$\\alpha = k^\\top q$"
        ),
        encoding="utf-8",
    )
    found = _problems(book)
    assert any("changes the markup" in p and "{glue:text}n_keys" in p for p in found)
    assert any("changes the markup" in p and "alpha=k^" in p for p in found)


def test_english_ahead_of_its_translation_is_behind_not_wrong(book: Path):
    """make test (check --behind-ok) lists a block the Chinese edition shows in
    English but passes; a broken translation fails it; make editions (check)
    fails on both."""
    page = book / "book" / "page.md"
    page.write_text(page.read_text() + "\nA new paragraph.\n")
    behind, wrong = tr.findings(page, book)
    assert any("no translation of 'A new paragraph.'" in p for p in behind)
    assert wrong == []
    path = tr.catalogue_path(page, book)
    path.write_text(
        path.read_text(encoding="utf-8").replace("{glue:text}`n_keys`", "3"),
        encoding="utf-8",
    )
    behind, wrong = tr.findings(page, book)
    assert any("changes the markup" in p for p in wrong)
    assert any("no translation" in p for p in behind)


def test_the_command_fails_on_behind_only_without_behind_ok(
    book: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
):
    page = book / "book" / "page.md"
    page.write_text(page.read_text() + "\nA new paragraph.\n")
    monkeypatch.setattr(tr, "ROOT", book)
    assert tr.main(["check", "--behind-ok"]) == 0
    assert "behind (shown in English" in capsys.readouterr().out
    assert tr.main(["check"]) == 1


def test_a_new_repository_address_carries_its_translations_over(book: Path):
    """make repository URL=... (tools/repository.py sync) rewrites the
    addresses in the English; their Chinese follow, so nothing falls behind."""
    page = book / "book" / "page.md"
    old, new = "https://github.com/OWNER/repo", "https://github.com/me/fork"
    page.write_text(page.read_text() + f"\nThe [releases]({old}/releases).\n")
    tr.update(page, book)
    path = tr.catalogue_path(page, book)
    entries = tr.load(path)
    entries[-1]["zh"] = f"[发行版]({old}/releases)。"
    path.write_text(tr.dump(entries, "x"), encoding="utf-8")
    assert _problems(book) == []
    page.write_text(page.read_text().replace(old, new).replace("**{term}", "{term}"))
    assert tr.follow_addresses(page, book) == 1  # not the paragraph that changed
    behind, _ = tr.findings(page, book)
    assert len(behind) == 2 and not any("releases" in p for p in behind)
    assert tr.load(path)[-1]["zh"] == f"[发行版]({new}/releases)。"


def test_a_glued_phrase_may_be_replaced_by_its_chinese_twin(book: Path):
    """A glued value that is words has a Chinese twin, glued as ``name_zh``;
    a translation may use it in place of ``name``, and no other name."""
    path = tr.catalogue_path(book / "book" / "page.md", book)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("`n_keys` 个键", "`n_keys_zh` 个键"), "utf-8")
    assert not _problems(book)
    path.write_text(text.replace("`n_keys` 个键", "`n_keys_fr` 个键"), "utf-8")
    assert any("changes the markup" in p and "n_keys_fr" in p for p in _problems(book))
    assert tr.markup("{glue:text}`t_zh:.2f`") == tr.markup("{glue:text}`t:.2f`")
    assert tr.markup("{glue:text}`t_zh:.2f`") != tr.markup("{glue:text}`t_zhx:.2f`")


def test_the_check_fails_on_a_term_rendered_two_ways(book: Path):
    path = tr.catalogue_path(book / "book" / "page.md", book)
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "{term}`查询 <query>`", "{term}`询问 <query>`"
        ),
        encoding="utf-8",
    )
    assert any(
        "the glossary's Chinese for 'query' is '查询'" in p for p in _problems(book)
    )


def test_the_chinese_sources_replace_blocks_and_keep_the_rest(
    book: Path, tmp_path: Path
):
    out = tmp_path / "zh"
    report = tr.build(out, book)
    assert report == {"book/page.md": 0, "book/glossary/_x.md": 0}
    text = (out / "book" / "page.md").read_text(encoding="utf-8")
    assert text.startswith("# 一页\n\n**{term}`查询 <query>`**")
    assert "$$\ny = \\operatorname{softmax}(x)\n$$ (eq-x)" in text


def test_a_notebook_keeps_its_code_outputs_and_glue(tmp_path: Path):
    nb = {
        "cells": [
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": ["# Title\n", "\n", "Some text."],
            },
            {
                "cell_type": "code",
                "metadata": {"mystnb": {"figure": {"caption": "A figure."}}},
                "source": ["glue('n', 3)"],
                "outputs": [{"output_type": "stream", "text": "3"}],
                "execution_count": 1,
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "notebooks").mkdir()
    source = tmp_path / "notebooks" / "x.ipynb"
    source.write_text(json.dumps(nb), encoding="utf-8")
    tr.update(source, tmp_path)
    path = tr.catalogue_path(source, tmp_path)
    entries = tr.load(path)
    assert [e["en"] for e in entries] == ["# Title", "Some text.", "A figure."]
    for entry, zh in zip(entries, ["# 标题", "一些文字。", "一幅图。"], strict=True):
        entry["zh"] = zh
    path.write_text(tr.dump(entries, "x"), encoding="utf-8")
    text, missing = tr.translated(source, tmp_path)
    out = json.loads(text)
    assert missing == 0
    assert "".join(out["cells"][0]["source"]) == "# 标题\n\n一些文字。"
    assert out["cells"][1]["metadata"]["mystnb"]["figure"]["caption"] == "一幅图。"
    assert out["cells"][1]["outputs"] == nb["cells"][1]["outputs"]
    assert out["cells"][1]["source"] == nb["cells"][1]["source"]


def test_the_catalogue_format_round_trips():
    entries = [
        {"id": "0" * 12, "en": "  indented\n\nlast line ", "zh": "第一行\n\n  缩进"}
    ]
    assert tr.load_text(tr.dump(entries, "x")) == entries
