"""Create a new chapter from the template, wired into the book, executed.

Usage (or ``make chapter NAME=slug TITLE="..."``)::

    python tools/new_chapter.py --name slug --title "Title" \
        [--part "Part III"] [--term "key term"] [--zh "中文术语"] [--no-execute]

It writes

- ``notebooks/<slug>.ipynb`` from ``templates/chapter.ipynb``: objectives,
  prerequisites, the install cell (copied from an existing chapter, so it
  follows the repository URL that ``tools/repository.py`` maintains), the
  seed helper, a labelled equation, a by-hand computation checked against
  ``selfattn``, a glued number, a checked claim, a captioned figure, three
  exercises (★ to ★★★) with worked solutions, a summary and references;
- ``book/glossary/_<slug>.md``, the chapter's glossary fragment, with its key
  term, and the line that includes it in ``book/glossary.md``;
- the chapter's line at the end of the chosen part of ``_toc.yml`` (the last
  numbered part by default; a whole caption not yet there, such as
  ``"Part IV: A title"``, starts a new part after the last numbered one).

The exercise list (``book/exercises.md``) is generated when the book is built,
so nothing needs wiring there. Finally the notebook is executed in place
(``tools/execute_notebooks.py``), so that it is committed executed and
``make test`` passes as created. CONTRIBUTING.md, "A new chapter", walks
through the rest.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
INSTALL_CELL = "# Install the course library"  # how it opens (tools/repository.py)


def _fail(message: str) -> None:
    sys.exit(f"make chapter: {message}")


def _install_cell(root: Path) -> dict:
    """The install cell of an existing chapter (it carries the repository URL)."""
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and source.startswith(INSTALL_CELL):
                return cell
    _fail("no chapter with an install cell to copy (notebooks/*.ipynb)")
    raise AssertionError  # unreachable


def _notebook(root: Path, slug: str, title: str, term: str, zh: str) -> str:
    text = (root / "templates" / "chapter.ipynb").read_text(encoding="utf-8")
    for key, value in (
        ("__SLUG_UNDERSCORE__", slug.replace("-", "_")),
        ("__SLUG__", slug),
        ("__TITLE__", title),
        ("__TERM__", term),
        ("__ZH__", zh),
    ):
        text = text.replace(key, json.dumps(value)[1:-1])
    nb = json.loads(text)
    install = _install_cell(root)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and not "".join(cell["source"]).strip():
            nb["cells"][i] = {
                "id": cell.get("id", "install"),
                "cell_type": "code",
                "execution_count": None,
                "metadata": install["metadata"],
                "outputs": [],
                "source": install["source"],
            }
            break
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def _glossary_fragment(slug: str, term: str, zh: str) -> str:
    return (
        f"% Glossary terms first defined in notebooks/{slug}.ipynb.\n\n"
        "```{glossary}\n"
        f"{term}\n"
        f"  {zh} · symbol: — · defined in {{doc}}`/notebooks/{slug}`.\n"
        "  (Replace.) One or two sentences that define the term as the chapter\n"
        "  uses it.\n"
        "```\n"
    )


def _add_to_toc(toc: str, slug: str, part: str | None) -> str:
    """Insert ``- file: notebooks/<slug>`` at the end of the chosen part; a part
    named by a whole caption that is not there yet ("Part IV: A title") is
    added after the last numbered part."""
    lines = toc.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("  - caption:")]
    parts = [(i, (starts + [len(lines)])[n + 1]) for n, i in enumerate(starts)]
    chosen, last_numbered = None, None
    for i, end in parts:
        caption = lines[i].split(":", 1)[1].strip().strip('"')
        name = caption.split(":")[0].strip()  # "Part II" of "Part II: Text, ..."
        numbered = not any("numbered: false" in x for x in lines[i:end])
        last_numbered = end if numbered else last_numbered
        if (part is not None and part in (name, caption)) or (
            part is None and numbered
        ):
            chosen = (i, end)
    entry = f"      - file: notebooks/{slug}\n"
    if chosen is None and part is not None and ":" in part and last_numbered:
        new_part = [f'  - caption: "{part}"\n', "    chapters:\n", entry]
        lines[last_numbered:last_numbered] = new_part
        return "".join(lines)
    if chosen is None:
        _fail(
            f"no part of _toc.yml matches {part!r}; to start a new part, give "
            'its whole caption, e.g. PART="Part IV: A title"'
        )
    i, end = chosen
    last = max(j for j in range(i, end) if lines[j].startswith("      - file:"))
    lines.insert(last + 1, entry)
    return "".join(lines)


def _add_to_glossary(glossary: str, slug: str) -> str:
    include = f"```{{include}} glossary/_{slug}.md\n```\n"
    return glossary.rstrip("\n") + "\n\n" + include


def create(
    root: Path,
    slug: str,
    title: str,
    *,
    part: str | None = None,
    term: str | None = None,
    zh: str = "待定",
    execute: bool = True,
) -> Path:
    if not SLUG.match(slug):
        _fail(
            f"NAME={slug!r}: use lower-case words joined by '-', e.g. 'cross-attention'"
        )
    if not title.strip():
        _fail("TITLE is empty")
    notebook = root / "notebooks" / f"{slug}.ipynb"
    fragment = root / "book" / "glossary" / f"_{slug}.md"
    for path in (notebook, fragment):
        if path.exists():
            _fail(f"{path.relative_to(root)} exists already")
    term = term or title.lower()
    toc = root / "_toc.yml"
    glossary = root / "book" / "glossary.md"
    new_toc = _add_to_toc(toc.read_text(encoding="utf-8"), slug, part)
    notebook.write_text(_notebook(root, slug, title, term, zh), encoding="utf-8")
    fragment.write_text(_glossary_fragment(slug, term, zh), encoding="utf-8")
    toc.write_text(new_toc, encoding="utf-8")
    glossary.write_text(
        _add_to_glossary(glossary.read_text(encoding="utf-8"), slug), encoding="utf-8"
    )
    for path in (notebook, fragment, toc, glossary):
        print(f"wrote {path.relative_to(root)}")
    if execute:
        subprocess.run(
            [
                sys.executable,
                str(root / "tools" / "execute_notebooks.py"),
                str(notebook),
            ],
            check=True,
        )
    return notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--name", required=True, help="topic slug, e.g. cross-attention"
    )
    parser.add_argument("--title", required=True, help="the chapter's title")
    parser.add_argument("--part", help='a part of _toc.yml, e.g. "Part II"')
    parser.add_argument("--term", help="the chapter's key term (default: the title)")
    parser.add_argument("--zh", default="待定", help="the key term in Chinese")
    parser.add_argument("--no-execute", action="store_true")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    create(
        args.root,
        args.name,
        args.title,
        part=args.part,
        term=args.term,
        zh=args.zh,
        execute=not args.no_execute,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
