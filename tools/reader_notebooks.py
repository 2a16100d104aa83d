"""Write the reader and the student notebooks: the chapters as plain Jupyter.

Usage::

    python tools/reader_notebooks.py build HTML_DIR OUT_DIR [--edition E]
        [--sources DIR] [--language zh_CN]
    python tools/reader_notebooks.py install NOTEBOOK_DIR HTML_DIR
    python tools/reader_notebooks.py tree NOTEBOOK_DIR OUT_DIR

The chapters (``notebooks/*.ipynb``) are MyST notebooks: glue references,
roles, directives and labelled equations that only Jupyter Book renders. Opened
in JupyterLab, Colab, VS Code or on GitHub they show raw MyST and every worked
solution in plain view. ``build`` writes, from the executed sources and the
book built from them (``HTML_DIR``, e.g. ``_build/html``), two editions of
every chapter into ``OUT_DIR/reader/`` and ``OUT_DIR/student/`` (``--edition``
``reader``, ``student`` or ``both``, the default):

* every ``{glue:text}`` is its value, formatted by myst-nb's own function, as
  the book prints it;
* ``{term}`` is bold text linking to the glossary of the published book;
  ``{doc}`` a link to the book's page (and, for a chapter, to its sibling
  notebook); ``{numref}``, ``{eq}`` and ``{ref}`` the numbers and titles of the
  built book ("Fig. 4.1", "(4.6)", "Exercise 13.3"); ``{footcite:p}`` /
  ``{footcite:t}`` "(Vaswani et al., 2017)" / "Vaswani et al. (2017)", and
  ``{footbibliography}`` the chapter's reference list, as the book prints it;
  API roles code linking to the API page;
* a labelled equation carries its number as ``\\tag{4.1}``; targets and
  comments are dropped;
* an admonition is a quoted block under its bold title; an exercise a heading
  with its number and difficulty mark ("Exercise 4.1 (★ Counting the cost)");
* a figure's caption is a Markdown cell under the figure ("**Fig. 4.1** ...");
* reader: each solution is folded in ``<details><summary>Solution</summary>``.
  A gated solution's code cells move into the fold as code blocks with their
  recorded text output (a code cell cannot sit inside a fold, and a learner
  should unfold before running a solution). Student: every solution is left
  out, code cells included; every exercise stays.

Every other code cell is the source's, byte for byte, with its outputs (the
install cell too): a chapter's solution cells all come after its other code
cells (checked here), so a reader notebook runs the source's code minus its
tail of solutions, which nbval of the sources covers.

``install`` copies the notebooks of one edition over the copies the HTML build
put in ``HTML_DIR/_sources/notebooks/`` (what the page's download button
gives). ``tree`` writes the repository's tracked files with ``notebooks/``
replaced by one edition's notebooks: what the publishing workflow pushes to
the branch the launch buttons open (``notebooks_branch`` in ``_config.yml``:
``notebooks`` for the reader edition, ``student-notebooks`` for the student
one), so Colab and Binder find the notebook at the path they ask for, and
Binder builds the same environment. ``tests/editions/test_notebooks.py``
checks both editions.

The numbers come from the built HTML and its ``objects.inv`` only: this tool
imports neither Sphinx's build nor the course library.
"""

from __future__ import annotations

import argparse
import copy
import functools
import html
import json
import posixpath
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import yaml
from myst_nb.core.variables import format_plain_text
from pybtex.database import parse_file
from pybtex.plugin import find_plugin
from sphinx.util.inventory import InventoryFile

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = ("reader", "student")
GLUE_PREFIX = "application/papermill.record/"

# --- MyST syntax -------------------------------------------------------------
ROLE = re.compile(r"\{(?P<name>[a-z][\w:-]*)\}`(?P<content>[^`]+)`")
DIRECTIVE = re.compile(
    r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$"
)
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})")
MATH_LABEL = re.compile(r"^(?P<body>.*)\$\$\s*\((?P<label>[^)\s]+)\)\s*$")
TARGET = re.compile(r"^\(\S+\)=\s*$")
HEADING = re.compile(r"^(#{1,6})\s")
TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
# Markdown characters a glued value must not bring in unescaped.
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>$|])")


class ConversionError(ValueError):
    """A MyST construct this tool does not know how to write as Markdown."""


# --- the built book ----------------------------------------------------------
class _InlineMarkdown(HTMLParser):
    """A fragment of the book's HTML (a footnote, a caption) as Markdown."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.links: list[str | None] = []
        self.math = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("em", "i"):
            self.out.append("*")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag == "code":
            self.out.append("`")
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(href)
            if href:
                self.out.append("[")
        elif tag == "span" and "math" in classes:
            self.math += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("em", "i"):
            self.out.append("*")
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag == "code":
            self.out.append("`")
        elif tag == "a":
            href = self.links.pop() if self.links else None
            if href:
                self.out.append(f"]({href})")

    def handle_data(self, data: str) -> None:
        # inline mathematics is \( ... \) in the HTML, $ ... $ in Markdown
        data = re.sub(r"\\\((.*?)\\\)", r"$\1$", data, flags=re.S)
        self.out.append(data)

    def markdown(self) -> str:
        return " ".join("".join(self.out).split())


def html_to_markdown(fragment: str) -> str:
    parser = _InlineMarkdown()
    parser.feed(fragment)
    parser.close()
    return parser.markdown()


@dataclass
class Book:
    """What the built book numbers and names, read from its HTML."""

    html: Path
    url: str  # where the book is published, ending in "/"
    titles: dict[str, str] = field(default_factory=dict)  # docname -> title
    terms: dict[str, str] = field(default_factory=dict)  # term (lower) -> uri
    objects: dict[str, str] = field(default_factory=dict)  # py name -> uri
    labels: dict[str, str] = field(default_factory=dict)  # label -> uri
    numbers: dict[str, str] = field(default_factory=dict)  # label -> "Fig. 4.1"
    equations: dict[str, str] = field(default_factory=dict)  # label -> "(4.1)"
    rendered: dict[str, str] = field(default_factory=dict)  # label -> {ref} text
    footnotes: dict[str, str] = field(default_factory=dict)  # bib key -> Markdown

    @classmethod
    def read(cls, html_dir: Path, url: str) -> Book:
        book = cls(html=html_dir, url=url)
        with (html_dir / "objects.inv").open("rb") as f:
            inventory = InventoryFile.load(f, "", posixpath.join)
        for name, item in inventory.get("std:doc", {}).items():
            book.titles[name] = item[3]
        for name, item in inventory.get("std:term", {}).items():
            book.terms[" ".join(name.split()).lower()] = item[2]
        for kind, entries in inventory.items():
            if kind.startswith("py:"):
                for name, item in entries.items():
                    book.objects[name] = item[2]
        for name, item in inventory.get("std:label", {}).items():
            book.labels[name] = item[2]
        for page in sorted(html_dir.glob("notebooks/*.html")):
            book._read_page(page.read_text(encoding="utf-8"))
        return book

    def _read_page(self, raw: str) -> None:
        for m in re.finditer(
            r'<figure[^>]*\bid="(?P<id>[^"]+)".*?<span class="caption-number">'
            r"(?P<num>[^<]*)</span>",
            raw,
            re.S,
        ):
            self.numbers[m["id"]] = m["num"].strip()
        for m in re.finditer(
            r'<div class="exercise[^"]*" id="(?P<id>[^"]+)">\s*'
            r'<p class="admonition-title"><span class="caption-number">'
            r"(?P<num>[^<]*)</span>",
            raw,
        ):
            self.numbers[m["id"]] = m["num"].strip()
        for m in re.finditer(
            r'id="equation-(?P<id>[^"]+)">\s*<span class="eqno">(?P<num>\([^)]*\))',
            raw,
        ):
            self.equations[m["id"]] = m["num"]
        for m in re.finditer(
            r'<a class="reference internal" href="[^"#]*#(?P<id>[^"]+)">'
            r'<span class="std std-(?:ref|numref)">(?P<text>[^<]*)</span>',
            raw,
        ):
            self.rendered.setdefault(m["id"], html.unescape(m["text"]).strip())
        for m in re.finditer(
            r'<aside class="footnote[^"]*" id="footcite-(?P<key>[^"]+)"[^>]*>'
            r".*?<p>(?P<text>.*?)</p>\s*</aside>",
            raw,
            re.S,
        ):
            self.footnotes.setdefault(m["key"], html_to_markdown(m["text"]))

    def link(self, uri: str) -> str:
        return self.url + uri


def published_url(config_path: Path = ROOT / "_config.yml") -> str:
    """The published book: ``html.baseurl`` if set, else the repository's
    GitHub Pages site (``https://owner.github.io/name/``)."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    base = (config.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/") + "/"
    repo = config["repository"]["url"].rstrip("/")
    m = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+)", repo)
    if not m:
        raise SystemExit(f"cannot tell the published book from {repo!r}")
    return f"https://{m[1].lower()}.github.io/{m[2]}/"


# --- citations ---------------------------------------------------------------
class Bibliography:
    """Author-year citations from book/references.bib, as the book words them."""

    def __init__(self, path: Path) -> None:
        self.entries = parse_file(str(path)).entries
        self.last = find_plugin("pybtex.style.names", "last")()
        self.text = find_plugin("pybtex.backends", "text")()

    @functools.cache  # noqa: B019 (one Bibliography per run)
    def authors(self, key: str) -> str:
        """Names as sphinxcontrib-bibtex's author-year style gives them:
        "Vaswani et al.", "Bahdanau and Cho" (last names; "et al." after the
        first of three or more)."""
        entry = self.entries[key]
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [
            self.last.format(p, abbr=True).format().render(self.text) for p in persons
        ]
        if not names:
            return entry.fields.get("title", key)
        if len(names) == 1:
            return names[0]
        if len(names) == 2:
            return f"{names[0]} and {names[1]}"
        return f"{names[0]} et al."

    def year(self, key: str) -> str:
        return self.entries[key].fields.get("year", "n.d.")

    def parenthetical(self, keys: list[str]) -> str:
        return "(" + "; ".join(f"{self.authors(k)}, {self.year(k)}" for k in keys) + ")"

    def textual(self, keys: list[str]) -> str:
        return ", ".join(f"{self.authors(k)} ({self.year(k)})" for k in keys)


# --- one chapter -------------------------------------------------------------
@dataclass
class Marker:
    """The start or the end of a gated solution (``{solution-start}``)."""

    kind: str  # "start" | "end" | "bibliography"
    at: int = 0  # how many citations came before it


@dataclass
class Chapter:
    """The state of one notebook's conversion."""

    name: str  # the slug: notebooks/<name>.ipynb
    edition: str
    book: Book
    bib: Bibliography
    glue: dict[str, str]
    cited: list[str] = field(default_factory=list)
    heading: int = 1  # level of the last heading seen

    # -- inline roles --
    def role(self, name: str, content: str, before: str) -> str:
        titled = TITLED.match(content)
        title, target = (
            (titled["title"], titled["target"]) if titled else (None, content)
        )
        target = " ".join(target.split())
        if name == "glue:text":
            return self.glued(content)
        if name == "term":
            uri = self.book.terms.get(target.lower())
            if uri is None:
                raise ConversionError(f"{self.name}: no glossary term {target!r}")
            text = " ".join((title or target).split())
            if before.endswith("**"):  # already inside bold text
                return f"[{text}]({self.book.link(uri)})"
            return f"[**{text}**]({self.book.link(uri)})"
        if name == "doc":
            doc = target.lstrip("/")
            if not target.startswith("/"):
                doc = posixpath.normpath(posixpath.join("notebooks", target))
            if doc not in self.book.titles:
                raise ConversionError(f"{self.name}: no page {target!r}")
            text = title or self.book.titles[doc]
            link = f"[{text}]({self.book.link(doc + '.html')})"
            if doc.startswith("notebooks/"):
                link += f" ([notebook]({posixpath.basename(doc)}.ipynb))"
            return link
        if name == "numref":
            number = self.book.numbers.get(target)
            if number is None:
                raise ConversionError(f"{self.name}: no number for {target!r}")
            if title:
                return title.replace("%s", number.split()[-1])
            return number
        if name == "eq":
            number = self.book.equations.get(target.lower())
            if number is None:
                raise ConversionError(f"{self.name}: no equation {target!r}")
            return number
        if name == "ref":
            # the text the book rendered for this reference; a reference that
            # only a removed solution makes (the student edition) has none, and
            # an exercise is then named by its number
            rendered = self.book.rendered.get(target)
            text = title or rendered or self.book.numbers.get(target)
            uri = self.book.labels.get(target)
            if text is None or uri is None:
                raise ConversionError(f"{self.name}: no reference {target!r}")
            if uri.startswith(f"notebooks/{self.name}.html"):
                return text  # in this notebook: no need to leave it
            return f"[{text}]({self.book.link(uri)})"
        if name in ("footcite:p", "footcite:t", "cite:p", "cite:t"):
            keys = [k.strip() for k in content.split(",")]
            for key in keys:
                if key not in self.bib.entries:
                    raise ConversionError(f"{self.name}: no reference {key!r}")
                self.cited.append(key)  # every citation, in order
            if name.endswith(":p"):
                return self.bib.parenthetical(keys)
            return self.bib.textual(keys)
        if name.startswith("py:"):
            return self.api(name[3:], title, target)
        raise ConversionError(f"{self.name}: unknown role {{{name}}}")

    def glued(self, content: str) -> str:
        key_format = content.rsplit(":", 1)  # as myst-nb's PasteTextRole
        key, spec = key_format if len(key_format) == 2 else (key_format[0], "s")
        if "::" in key or key not in self.glue:
            raise ConversionError(f"{self.name}: no glued value {key!r}")
        return MARKDOWN_SPECIAL.sub(r"\\\1", format_plain_text(self.glue[key], spec))

    def api(self, kind: str, title: str | None, target: str) -> str:
        short = target.startswith("~")
        target = target.lstrip("~")
        uri = self.book.objects.get(target)
        if uri is None:  # as Sphinx does: a name found at the end of one object
            found = [n for n in self.book.objects if n.endswith("." + target)]
            if len(found) != 1:
                raise ConversionError(f"{self.name}: no API object {target!r}")
            uri = self.book.objects[found[0]]
        if title is None:
            title = target.rsplit(".", 1)[-1] if short else target
            if kind in ("func", "meth"):
                title += "()"
        return f"[`{title}`]({self.book.link(uri)})"

    def inline(self, text: str) -> str:
        out, last = [], 0
        for m in ROLE.finditer(text):
            out.append(text[last : m.start()])
            out.append(self.role(m["name"], m["content"], text[: m.start()]))
            last = m.end()
        out.append(text[last:])
        return "".join(out)

    # -- blocks --
    def block(self, text: str) -> list[str | Marker]:
        """One markdown cell (or a directive's body) as Markdown pieces and
        the markers of gated solutions."""
        lines = text.split("\n")
        pieces: list[str | Marker] = []
        para: list[str] = []

        def flush() -> None:
            if para:
                pieces.append(self.inline("\n".join(para)))
                para.clear()

        i = 0
        while i < len(lines):
            line = lines[i]
            if m := DIRECTIVE.match(line):
                flush()
                end = closing(lines, i, m["fence"])
                options, body = split_options(lines[i + 1 : end])
                pieces.extend(
                    self.directive(m["name"], m["arg"].strip(), options, body)
                )
                i = end + 1
                continue
            if m := FENCE.match(line):  # a code block: verbatim
                flush()
                end = closing(lines, i, m["fence"])
                pieces.append("\n".join(lines[i : end + 1]))
                i = end + 1
                continue
            if line.strip().startswith("$$"):  # display mathematics
                flush()
                end = i
                if "$$" not in line.strip()[2:]:
                    end = next(j for j in range(i + 1, len(lines)) if "$$" in lines[j])
                pieces.append(self.math(lines[i : end + 1]))
                i = end + 1
                continue
            if TARGET.match(line) or line.startswith("%") or line.strip() == "+++":
                flush()
                i += 1
                continue
            if m := HEADING.match(line):
                self.heading = len(m[1])
            para.append(line)
            i += 1
        flush()
        return pieces

    def math(self, lines: list[str]) -> str:
        """A display equation; a label (``$$ (label)``) becomes its number."""
        m = MATH_LABEL.match(lines[-1])
        if not m:
            return "\n".join(lines)
        number = self.book.equations.get(m["label"].lower())
        if number is None:
            raise ConversionError(f"{self.name}: no equation {m['label']!r}")
        tag = rf"\tag{{{number[1:-1]}}}"
        if len(lines) == 1:  # $$ x $$ (label)
            return f"{m['body'].rstrip()} {tag} $$"
        last = [m["body"].rstrip(), tag] if m["body"].strip() else [tag]
        return "\n".join([*lines[:-1], *last, "$$"])

    def markdown(self, text: str) -> str:
        """Markdown of a body with no gated solution in it."""
        pieces = self.block(text)
        if any(isinstance(p, Marker) for p in pieces):
            raise ConversionError(f"{self.name}: a gated solution inside a directive")
        return join(pieces)

    def directive(
        self, name: str, arg: str, options: dict[str, str], body: str
    ) -> list[str | Marker]:
        if name == "solution-start":
            return [Marker("start", len(self.cited))]
        if name == "solution-end":
            return [Marker("end", len(self.cited))]
        if name == "solution":
            return [] if self.edition == "student" else [fold(self.markdown(body))]
        if name == "exercise":
            label = options.get("label")
            number = self.book.numbers.get(label or "")
            if number is None:
                raise ConversionError(f"{self.name}: no number for exercise {label!r}")
            level = "#" * min(self.heading + 1, 6)
            title = f"{number} ({self.inline(arg)})" if arg else number
            return [f"{level} {title}", self.markdown(body)]
        if name == "admonition" or name in ADMONITIONS:
            title = self.inline(arg) if name == "admonition" else ADMONITIONS[name]
            return [quote(f"**{title}**\n\n" + self.markdown(body))]
        if name == "footbibliography":
            return [Marker("bibliography")]
        raise ConversionError(f"{self.name}: unknown directive {{{name}}}")

    def references(self, keys: list[str]) -> str:
        items = []
        for key in keys:
            text = self.book.footnotes.get(key)
            if text is None:
                raise ConversionError(f"{self.name}: the book prints no entry {key!r}")
            items.append(f"- {text}")
        return "\n".join(items)


# Words the tool writes itself, by language (--language zh_CN: the Chinese
# edition's notebooks, as Sphinx's and sphinx-exercise's zh_CN catalogues
# word them in the book).
WORDS = {"solution": "Solution"}
WORDS_ZH = {"solution": "解答"}
ADMONITIONS_ZH = {
    "note": "备注",
    "tip": "小技巧",
    "important": "重要",
    "warning": "警告",
    "caution": "小心",
    "attention": "注意",
    "danger": "危险",
    "error": "错误",
    "hint": "提示",
    "seealso": "参见",
}
ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "hint": "Hint",
    "seealso": "See also",
}


def closing(lines: list[str], start: int, fence: str) -> int:
    """The line that closes the fence opened at ``start`` (CommonMark: the same
    character, at least as long, nothing after it)."""
    close = re.compile(
        "^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$"
    )
    for j in range(start + 1, len(lines)):
        if close.match(lines[j]):
            return j
    raise ConversionError(f"unclosed fence {lines[start]!r}")


def split_options(lines: list[str]) -> tuple[dict[str, str], str]:
    options, i = {}, 0
    while i < len(lines) and (m := re.match(r"^:([\w-]+):\s*(.*)$", lines[i])):
        options[m[1]] = m[2].strip()
        i += 1
    return options, "\n".join(lines[i:]).strip("\n")


def quote(text: str) -> str:
    return "\n".join(("> " + ln).rstrip() for ln in text.split("\n"))


def fold(text: str) -> str:
    summary = WORDS["solution"]
    return f"<details><summary>{summary}</summary>\n\n{text}\n\n</details>"


def join(pieces: list[str | Marker]) -> str:
    texts = [p.strip("\n") for p in pieces if isinstance(p, str)]
    return "\n\n".join(t for t in texts if t.strip())


def code_block(cell: dict) -> str:
    """A solution's code cell as Markdown: the code, then its text output."""
    parts = ["```python\n" + "".join(cell["source"]).rstrip("\n") + "\n```"]
    for out in cell.get("outputs", []):
        kind = out["output_type"]
        if kind == "stream":
            if out["name"] == "stdout":
                parts.append("```text\n" + "".join(out["text"]).rstrip("\n") + "\n```")
            continue
        data = out.get("data", {})
        if all(k.startswith(GLUE_PREFIX) for k in data):
            continue  # a glued value: it is in the prose
        if kind in ("execute_result", "display_data") and "text/plain" in data:
            if any(k.startswith("image/") for k in data):
                raise ConversionError("a solution's figure cannot be folded yet")
            parts.append(
                "```text\n" + "".join(data["text/plain"]).rstrip("\n") + "\n```"
            )
            continue
        raise ConversionError(f"a solution's output of type {kind} cannot be folded")
    return "\n\n".join(parts)


def glue_values(nb: dict) -> dict[str, str]:
    """Every glued value of a notebook: its ``text/plain``, by name."""
    values: dict[str, str] = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            prefix = out["metadata"]["scrapbook"].get("mime_prefix", "")
            text = out["data"].get(prefix + "text/plain")
            if text is not None:
                values[name] = "".join(text)
    return values


def figure_caption(cell: dict, chapter: Chapter) -> str | None:
    figure = cell.get("metadata", {}).get("mystnb", {}).get("figure")
    if not figure or "caption" not in figure:
        return None
    number = chapter.book.numbers.get(figure.get("name", ""))
    if number is None:
        raise ConversionError(f"{chapter.name}: no number for {figure.get('name')!r}")
    return f"**{number}** " + chapter.markdown(figure["caption"])


def convert(source: Path, edition: str, book: Book, bib: Bibliography) -> dict:
    """One chapter in one edition, as a notebook (a dict, nbformat 4)."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    chapter = Chapter(source.stem, edition, book, bib, glue_values(nb))
    # cells, a markdown cell's source still a list of pieces (the reference
    # list is written once every citation of the edition is known)
    staged: list[dict] = []
    folded: list[str | Marker] = []  # the gated solution being read
    inside, start_at, solution_code = False, 0, False
    dropped: set[int] = set()  # citations of the solutions a student never sees

    def markdown_cell(pieces: list[str | Marker], origin: dict, part: int) -> None:
        cell: dict = {"cell_type": "markdown", "metadata": {}, "source": pieces}
        if "id" in origin:
            cell["id"] = origin["id"] if part == 0 else f"{origin['id'][:56]}-{part}"
        if part == 0 and origin.get("attachments"):
            cell["attachments"] = origin["attachments"]
        staged.append(cell)

    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            if inside:
                solution_code = True
                folded.append(code_block(cell))
                continue
            if solution_code:
                raise ConversionError(
                    f"{source.name}: a code cell after a solution's code cell; the "
                    "notebooks would not run the source's code in its order"
                )
            staged.append(copy.deepcopy(cell))
            caption = figure_caption(cell, chapter)
            if caption:
                markdown_cell([caption], {"id": f"{cell.get('id', 'fig')}-caption"}, 0)
            continue
        part, current = 0, []
        for piece in chapter.block("".join(cell["source"])):
            if isinstance(piece, str) or piece.kind == "bibliography":
                (folded if inside else current).append(piece)
            elif piece.kind == "start":
                if inside:
                    raise ConversionError(
                        f"{source.name}: a solution inside a solution"
                    )
                markdown_cell(current, cell, part)
                part, current, inside, folded = part + 1, [], True, []
                start_at = piece.at
            else:
                if not inside:
                    raise ConversionError(f"{source.name}: solution-end with no start")
                if edition == "reader":
                    markdown_cell([fold(join(folded))], cell, part)
                    part += 1
                else:
                    dropped.update(range(start_at, piece.at))
                inside = False
        markdown_cell(current, cell, part)
    if inside:
        raise ConversionError(f"{source.name}: a solution that never ends")

    cited = [k for i, k in enumerate(chapter.cited) if i not in dropped]
    references = chapter.references(list(dict.fromkeys(cited)))
    cells = []
    for cell in staged:
        if cell["cell_type"] == "markdown" and isinstance(cell["source"], list):
            pieces = [
                references if isinstance(p, Marker) else p for p in cell["source"]
            ]
            cell["source"] = join(pieces)
            if not cell["source"].strip():
                continue
        cells.append(cell)
    if edition == "student":
        note = (
            "> **Student edition.** Every exercise of the chapter is here; the "
            "worked solutions are left out."
        )
        cells.insert(
            1,
            {
                "cell_type": "markdown",
                "id": "student-edition",
                "metadata": {},
                "source": note,
            },
        )
    for cell in cells:
        if isinstance(cell["source"], str):
            cell["source"] = cell["source"].splitlines(keepends=True)
    return {**nb, "cells": cells}


def build(
    html_dir: Path,
    out_dir: Path,
    editions: tuple[str, ...],
    sources: Path,
    language: str = "en",
) -> list[Path]:
    """Write every chapter of ``sources`` in each edition; raise a
    ConversionError naming every construct that could not be written.

    ``language="zh_CN"``: the Chinese edition's notebooks (sources from
    ``tools/translations.py build``, ``html_dir`` the Chinese book): links go
    to the published Chinese book (``zh/``) and the tool's own words are
    Chinese."""
    url = published_url()
    if language == "zh_CN":
        url += "zh/"
        WORDS.update(WORDS_ZH)
        ADMONITIONS.update(ADMONITIONS_ZH)
    book = Book.read(html_dir, url)
    bib = Bibliography(ROOT / "book" / "references.bib")
    written, errors = [], []
    for edition in editions:
        folder = out_dir / edition
        if folder.exists():
            shutil.rmtree(folder)  # no notebook of an older build survives
        folder.mkdir(parents=True)
        for source in sorted(sources.glob("*.ipynb")):
            try:
                result = nbformat.from_dict(convert(source, edition, book, bib))
            except ConversionError as exc:
                errors.append(f"{edition}: {exc}")
                continue
            nbformat.validate(result)
            path = folder / source.name
            text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    if errors:
        raise ConversionError("\n".join(errors))
    return written


def install(notebook_dir: Path, html_dir: Path) -> None:
    """Put the notebooks where the book's download button points."""
    sources = html_dir / "_sources" / "notebooks"
    sources.mkdir(parents=True, exist_ok=True)
    for nb in sorted(notebook_dir.glob("*.ipynb")):
        shutil.copyfile(nb, sources / nb.name)


# Not in the branches the launch buttons open: the chapters' text twins hold
# every solution (the student branch would leak them), and jupytext.toml would
# pair a learner's notebooks with them.
NOT_IN_BRANCHES = ("notebooks/twins/", "jupytext.toml")


def tree(notebook_dir: Path, out_dir: Path) -> None:
    """The repository's tracked files, with the edition's notebooks."""
    tracked = (
        subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    if out_dir.exists():
        shutil.rmtree(out_dir)
    for name in filter(None, tracked):
        if name.startswith(NOT_IN_BRANCHES):
            continue
        source = ROOT / name
        if source.is_file():
            (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, out_dir / name)
    for nb in sorted(notebook_dir.glob("*.ipynb")):
        shutil.copyfile(nb, out_dir / "notebooks" / nb.name)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the reader and student notebooks")
    b.add_argument("html", type=Path, help="the built book (e.g. _build/html)")
    b.add_argument("out", type=Path, help="where to write reader/ and student/")
    b.add_argument("--edition", choices=(*EDITIONS, "both"), default="both")
    b.add_argument("--sources", type=Path, default=ROOT / "notebooks")
    b.add_argument("--language", choices=("en", "zh_CN"), default="en")
    i = sub.add_parser("install", help="copy notebooks into the book's _sources")
    i.add_argument("notebooks", type=Path)
    i.add_argument("html", type=Path)
    t = sub.add_parser("tree", help="the repository with these notebooks")
    t.add_argument("notebooks", type=Path)
    t.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "build":
        editions = EDITIONS if args.edition == "both" else (args.edition,)
        try:
            written = build(args.html, args.out, editions, args.sources, args.language)
        except ConversionError as exc:
            print(f"reader_notebooks: {exc}", file=sys.stderr)
            return 1
        print(
            f"wrote {len(written)} notebooks into {args.out}/{{{','.join(editions)}}}"
        )
    elif args.command == "install":
        install(args.notebooks, args.html)
    else:
        tree(args.notebooks, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
