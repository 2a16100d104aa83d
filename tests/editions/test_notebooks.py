"""The reader and the student notebooks: plain Jupyter, the book's text.

Run by ``make reader-notebooks-check`` (part of ``make test``, after the book
is built and ``tools/reader_notebooks.py`` has written ``_build/notebooks/``).
The oracles are independent of that tool:

* MyST's own parser (myst-parser's markdown-it, with the book's extensions)
  finds no role, directive, target, comment or labelled equation in any
  markdown cell of either edition, while it finds hundreds in the sources;
* every glued value a source's prose refers to is in the notebook's prose,
  formatted by myst-nb's function, and in the book's page;
* the notebooks' code cells are the source's, byte for byte with their
  outputs, up to the first cell of a solution; the rest are solution cells,
  carried verbatim inside a fold of the reader and absent from the student's.
  So nbval of the sources covers both editions;
* figure numbers, links into the published book (checked against the built
  HTML) and the reference list are the book's.
"""

from __future__ import annotations

import copy
import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from .test_student import blocks, directives, phrases, solution_phrases

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "notebooks"
SOURCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
EDITIONS = ("reader", "student")
IDS = [p.stem for p in SOURCES]
GLUE = re.compile(r"\{glue:text\}`([^`]+)`")
FOLD = re.compile(r"<details><summary>Solution</summary>(.*?)</details>", re.S)
ESCAPED = re.compile(r"\\([\\`*_\[\]<>$|])")
ROLE_TEXT = re.compile(r"\{[a-z][\w:-]*\}`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def text_of(cell: dict) -> str:
    return "".join(cell["source"])


def notebook(edition: str, name: str) -> dict:
    path = OUT / edition / name
    assert path.is_file(), f"no {path}: run `make reader-notebooks` first"
    return load(path)


def markdown(nb: dict) -> str:
    return "\n\n".join(text_of(c) for c in nb["cells"] if c["cell_type"] == "markdown")


def flat(text: str) -> str:
    return " ".join(ESCAPED.sub(r"\1", text).split())


# --- MyST's own parser as the oracle -------------------------------------------
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    extensions = set(config["parse"]["myst_enable_extensions"])
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


MYST = _parser()
MYST_TOKENS = {
    "myst_role",
    "myst_target",
    "myst_line_comment",
    "myst_block_break",
    "math_block_label",
    "substitution_block",
    "substitution_inline",
}


def myst_left(text: str) -> list[str]:
    """Every piece of MyST syntax in a markdown cell, as MyST parses it, and
    any ``{role}`` text that survived outside it."""
    found: list[str] = []

    def walk(tokens) -> None:
        for t in tokens:
            if t.type in MYST_TOKENS:
                found.append(
                    f"{t.type} {t.meta.get('name', t.info)} {t.content[:50]!r}"
                )
            elif t.type in ("fence", "colon_fence") and t.info.lstrip().startswith("{"):
                found.append(f"directive {t.info!r}")
            elif t.type == "text" and ROLE_TEXT.search(t.content):
                found.append(f"role as text {t.content[:60]!r}")
            if t.children:
                walk(t.children)

    walk(MYST.parse(text))
    return found


def test_every_chapter_is_written_in_both_editions() -> None:
    for edition in EDITIONS:
        written = sorted(p.name for p in (OUT / edition).glob("*.ipynb"))
        assert written == [p.name for p in SOURCES], (
            f"run `make reader-notebooks` ({edition})"
        )


def test_the_glue_check_is_not_void() -> None:
    refs = sum(len(GLUE.findall(markdown(load(nb)))) for nb in SOURCES)
    assert refs > 300, refs


def test_the_parser_check_finds_the_myst_of_the_sources() -> None:
    """The check below is not void: on the sources it finds every kind."""
    left = [x for nb in SOURCES for x in myst_left(markdown(load(nb)))]
    kinds = Counter(x.split()[0] for x in left)
    assert kinds["myst_role"] > 800, kinds
    assert kinds["directive"] > 100 and kinds["math_block_label"] > 50, kinds


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_no_myst_is_left_in_any_markdown_cell(edition: str, nb: Path) -> None:
    cells = notebook(edition, nb.name)["cells"]
    left = {
        i: myst_left(text_of(c))
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown"
    }
    left = {i: x for i, x in left.items() if x}
    assert not left, f"{edition}/{nb.name}: MyST left in cells {left}"


# --- glued values -------------------------------------------------------------------
def glued(nb: dict) -> dict[str, str]:
    """Every glued value (its text/plain), by name, as myst-nb reads it."""
    import nbformat
    from myst_nb.ext.glue import extract_glue_data_cell

    values = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            for name, output in extract_glue_data_cell(nbformat.from_dict(cell)):
                values[name] = "".join(output["data"]["text/plain"])
    return values


def expected_values(nb: dict, prose: str) -> Counter[str]:
    """The values the glue references of ``prose`` print in the book."""
    from myst_nb.core.variables import format_plain_text

    values, want = glued(nb), Counter()
    for ref in GLUE.findall(prose):
        key, _, spec = ref.rpartition(":") if ":" in ref else (ref, "", "s")
        want[format_plain_text(values[key], spec)] += 1
    return want


def page_text(page: Path) -> str:
    raw = page.read_text(encoding="utf-8")
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", raw)).split())


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_every_glued_value_is_in_the_prose(edition: str, nb: Path) -> None:
    source = load(nb)
    prose = markdown(source) + "\n".join(
        c["metadata"].get("mystnb", {}).get("figure", {}).get("caption", "")
        for c in source["cells"]
    )
    if edition == "student":  # the solutions' numbers go with them
        prose = blocks(nb, "solution")[1]
    want = expected_values(source, prose)
    text = flat(markdown(notebook(edition, nb.name)))
    missing = {v: n for v, n in want.items() if text.count(v) < n}
    assert not missing, f"glued values missing from {edition}/{nb.name}: {missing}"
    book = page_text(BOOK / "notebooks" / f"{nb.stem}.html")
    assert all(v in book for v in want), "a value the book does not print"


# --- code cells -----------------------------------------------------------------------
def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_code_cells_are_the_sources_byte_for_byte(edition: str, nb: Path) -> None:
    """The code cells are a prefix of the source's (source, outputs, metadata);
    every source cell after them belongs to a worked solution."""
    ours, theirs = code_cells(notebook(edition, nb.name)), code_cells(load(nb))
    assert ours == theirs[: len(ours)], f"{edition}/{nb.name}: code cells differ"
    first = text_of(ours[0])
    assert first.startswith("# Install the course library"), "the install cell"
    solutions = blocks(nb, "solution")[0]
    rest = [text_of(c) for c in theirs[len(ours) :]]
    assert all(any(code in body for body in solutions) for code in rest), (
        f"{nb.name}: a dropped code cell that is not a solution's"
    )
    prose = markdown(notebook(edition, nb.name))
    for code in rest:  # carried in a fold (reader), gone (student)
        if edition == "reader":
            assert any(code.rstrip("\n") in fold for fold in FOLD.findall(prose))
        else:
            assert code.rstrip("\n") not in prose


# --- solutions, exercises, figures, references --------------------------------------
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_the_reader_folds_every_solution_and_shows_every_exercise(nb: Path) -> None:
    reader = markdown(notebook("reader", nb.name))
    folds = FOLD.findall(reader)
    solutions, outside = blocks(nb, "solution")
    assert len(folds) == len(solutions) >= 3
    own = solution_phrases(nb)
    inside, outside_folds = flat(" ".join(folds)), flat(FOLD.sub("", reader))
    assert own and all(p in inside for p in own), [p for p in own if p not in inside]
    assert not [p for p in own if p in outside_folds], "solution text outside a fold"
    exercises = directives(nb, "exercise")
    heads = re.findall(r"^#{2,6} Exercise \d+\.\d+ \((★+) ", reader, re.M)
    assert len(heads) == len(exercises), "every exercise a heading with its mark"


@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_the_student_notebook_has_no_fold_and_every_exercise(nb: Path) -> None:
    student = markdown(notebook("student", nb.name))
    assert "<details" not in student and "Solution" not in student
    heads = re.findall(r"^#{2,6} Exercise \d+\.\d+ \(★", student, re.M)
    assert len(heads) == len(directives(nb, "exercise"))


def book_figures(stem: str) -> dict[str, str]:
    raw = (BOOK / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
    return dict(
        re.findall(
            r'<figure[^>]*id="([^"]+)">.*?'
            r'<span class="caption-number">([^<]*?)\s*</span>',
            raw,
            re.S,
        )
    )


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_every_figure_has_its_numbered_caption_under_it(edition: str, nb: Path) -> None:
    cells = notebook(edition, nb.name)["cells"]
    numbers = book_figures(nb.stem)
    figures = 0
    for i, cell in enumerate(cells):
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        if cell["cell_type"] != "code" or not figure:
            continue
        figures += 1
        under = cells[i + 1]
        assert under["cell_type"] == "markdown", f"no caption under {figure['name']}"
        assert text_of(under).startswith(f"**{numbers[figure['name']]}** ")
        words = phrases(figure["caption"])
        assert all(p in flat(text_of(under)) for p in words), figure["name"]
    assert figures == len(numbers), "every figure of the book page"


def published() -> str:
    """The published book, as ``_config.yml`` names it (``html.baseurl``, else
    the repository's GitHub Pages site)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    base = (config.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/") + "/"
    owner, name = config["repository"]["url"].rstrip("/").split("/")[-2:]
    return f"https://{owner.lower()}.github.io/{name}/"


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_links_into_the_book_and_to_notebooks_resolve(edition: str, nb: Path) -> None:
    base, bad = published(), []
    for url in LINK.findall(markdown(notebook(edition, nb.name))):
        if url.startswith(base):
            page, _, anchor = url[len(base) :].partition("#")
            target = BOOK / page
            if not target.is_file():
                bad.append(url)
            elif anchor and f'id="{anchor}"' not in target.read_text(encoding="utf-8"):
                bad.append(url)
        elif not url.startswith(("http://", "https://")):
            if not (OUT / edition / url).is_file():
                bad.append(url)
    assert not bad, f"{edition}/{nb.name}: links that lead nowhere: {bad[:5]}"


@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_the_reference_list_is_the_books(nb: Path) -> None:
    raw = (BOOK / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
    entries = re.findall(r'<aside class="footnote brackets" id="footcite-([^"]+)"', raw)
    text = markdown(notebook("reader", nb.name))
    tail = text[text.rfind("## References") :]
    items = re.findall(r"^- (.+)$", tail, re.M)
    assert len(items) == len(entries) >= 1, nb.name


def test_the_books_download_button_gives_the_reader_notebooks() -> None:
    for nb in SOURCES:
        shipped = BOOK / "_sources" / "notebooks" / nb.name
        assert shipped.read_bytes() == (OUT / "reader" / nb.name).read_bytes(), (
            f"{shipped} is not the reader notebook: run `make reader-notebooks`"
        )


def test_colab_and_binder_launch_the_reader_notebooks() -> None:
    """The launch buttons open the branch where the publishing workflow puts
    the reader notebooks (``make notebooks-branches``), not the MyST source."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    branch = config["sphinx"]["config"]["notebooks_branch"]
    repo = "/".join(config["repository"]["url"].rstrip("/").split("/")[-2:])
    for nb in SOURCES:
        raw = (BOOK / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        links = [html.unescape(u) for u in re.findall(r'href="([^"]*)"', raw)]
        colab = (
            f"https://colab.research.google.com/github/{repo}/blob/{branch}/"
            f"notebooks/{nb.name}"
        )
        binder = (
            f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/"
            f"notebooks/{nb.name}"
        )
        assert colab in links and binder in links, f"{nb.stem}: launch links"


# --- the Chinese edition's notebooks (make book-zh, then make reader-notebooks) ------
ZH_EDITIONS = ("zh/reader", "zh/student")
ZH_FOLD = re.compile(r"<details><summary>解答</summary>(.*?)</details>", re.S)


def untranslated(cell: dict) -> dict:
    """A code cell without what the Chinese edition translates (caption, alt text)."""
    cell = copy.deepcopy(cell)
    mystnb = cell.get("metadata", {}).get("mystnb", {})
    mystnb.get("figure", {}).pop("caption", None)
    mystnb.get("image", {}).pop("alt", None)
    return cell


@pytest.mark.parametrize("edition", ZH_EDITIONS)
@pytest.mark.parametrize("nb", SOURCES, ids=IDS)
def test_the_chinese_notebooks_have_no_myst_and_the_sources_code(
    edition: str, nb: Path
) -> None:
    ours = notebook(edition, nb.name)
    left = {
        i: myst_left(text_of(c))
        for i, c in enumerate(ours["cells"])
        if c["cell_type"] == "markdown"
    }
    assert not {i: x for i, x in left.items() if x}, f"{edition}/{nb.name}: MyST left"
    mine, theirs = code_cells(ours), code_cells(load(nb))
    # the same code and outputs; only a figure's caption and alt text are Chinese
    assert [untranslated(c) for c in mine] == [
        untranslated(c) for c in theirs[: len(mine)]
    ], f"{edition}/{nb.name}: code cells differ"
    folds = ZH_FOLD.findall(markdown(ours))
    solutions = blocks(nb, "solution")[0]
    assert len(folds) == (len(solutions) if edition == "zh/reader" else 0)
