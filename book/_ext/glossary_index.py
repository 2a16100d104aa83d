"""One alphabetical glossary assembled from per-chapter fragments.

Each chapter defines its terms in its own file, ``book/glossary/_<slug>.md``
(a ``{glossary}`` block), and ``book/glossary.md`` includes every fragment, so
authors never edit the same file. A page that also contains::

    ```{glossary-index}
    ```

gets, when it is read, all its glossary entries merged and sorted
(case-insensitively) into one section per initial letter ("A", "B", ...; terms
starting with a symbol go first under "Symbols"); the directive itself becomes
a row of links to the letters. Term anchors (``#term-...``) are unchanged, so
``{term}`` links from the chapters keep working.

Entry bodies follow the house format ``中文 · symbol: … · defined in
{doc}`/notebooks/<slug>`.`` followed by a one-line definition; that first line
is split into its own paragraph (class ``glossary-meta``) so it can be set
apart typographically (in the Chinese edition the line ends in "。").
Entries that do not follow the format are left as they
are.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

SYMBOLS = "Symbols"
CLOSE_QUOTE = "”一章"  # after the {doc} of a Chinese entry


class glossary_index(nodes.General, nodes.Element):  # noqa: N801 (docutils style)
    """Marker: merge this page's glossaries; becomes the letter links."""


class GlossaryIndexDirective(SphinxDirective):
    """``{glossary-index}``: sort this page's glossary entries into letters."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [glossary_index()]


def sort_key(text: str) -> tuple[int, str]:
    """Symbols first, then letters; accents and case ignored."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    plain = plain.strip().casefold()
    if not plain or not plain[0].isalpha() or not text.strip()[0].isascii():
        return (0, text.casefold())
    return (1, plain)


def letter(text: str) -> str:
    """The group an entry is filed under: its initial letter, or ``Symbols``."""
    group, key = sort_key(text)
    return key[0].upper() if group else SYMBOLS


def split_meta(item: nodes.definition_list_item) -> None:
    """Set the "中文 · symbol · defined in" line apart from the definition."""
    definition = next(iter(item.findall(nodes.definition)), None)
    if definition is None or not definition.children:
        return
    first = definition.children[0]
    if not isinstance(first, nodes.paragraph):
        return
    children = list(first.children)
    refs = [
        i
        for i, child in enumerate(children)
        if isinstance(child, addnodes.pending_xref) and child.get("reftype") == "doc"
    ]
    if not refs:
        return
    i = refs[0]
    after = children[i + 1] if i + 1 < len(children) else None
    if not isinstance(after, nodes.Text):
        return
    text = after.astext()
    # The Chinese edition quotes the chapter title: 定义见“{doc}`…`”一章。
    close = CLOSE_QUOTE if text.startswith(CLOSE_QUOTE) else ""
    if not text[len(close) :].startswith((".", "。")):
        return
    rest_text = text[len(close) + 1 :].lstrip()  # keep the space before inline maths
    head = [*children[: i + 1], *([nodes.Text(close)] if close else [])]
    meta = nodes.paragraph("", "", *head, classes=["glossary-meta"])
    rest: list[nodes.Node] = [nodes.Text(rest_text)] if rest_text else []
    rest.extend(children[i + 2 :])
    new: list[nodes.Node] = [meta]
    if rest:
        new.append(nodes.paragraph("", "", *rest, classes=["glossary-definition"]))
    first.replace_self(new)


def merge_glossaries(app: Sphinx, doctree: nodes.document) -> None:
    """On pages with ``{glossary-index}``: one sorted glossary, by letter."""
    markers = list(doctree.findall(glossary_index))
    if not markers:
        return
    glossaries = list(doctree.findall(addnodes.glossary))
    items = [
        item
        for glossary in glossaries
        for item in glossary.findall(nodes.definition_list_item)
    ]
    host = markers[0].parent
    while host is not None and not isinstance(host, nodes.section):
        host = host.parent
    for glossary in glossaries:
        glossary.parent.remove(glossary)
    groups: dict[str, list[nodes.definition_list_item]] = {}
    for item in sorted(items, key=lambda it: sort_key(_term_text(it))):
        split_meta(item)
        groups.setdefault(letter(_term_text(item)), []).append(item)

    jump = nodes.paragraph(classes=["glossary-letters"])
    for name in groups:
        if len(jump.children):
            jump += nodes.Text(" · ")
        jump += nodes.reference("", name, refid=_group_id(name), internal=True)
    for marker in markers:
        marker.replace_self(jump.deepcopy() if groups else [])

    target = host if host is not None else doctree
    for name, group in groups.items():
        section = nodes.section(ids=[_group_id(name)])
        section += nodes.title("", name)
        glossary = addnodes.glossary()
        glossary += nodes.definition_list("", *group, classes=["glossary"])
        section += glossary
        target += section


def _term_text(item: nodes.definition_list_item) -> str:
    """The term an entry is sorted by: its first term in Latin letters.

    The Chinese edition's entries name the term in Chinese first and then in
    English (tools/translations.py); they are filed under the English term,
    so both editions list the same entries in the same order.
    """
    texts = [term.astext() for term in item.findall(nodes.term)]
    latin = [t for t in texts if t.strip() and t.strip()[0].isascii()]
    return (latin or texts or [""])[0]


def _group_id(name: str) -> str:
    return f"glossary-{name.lower()}"


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(glossary_index)
    app.add_directive("glossary-index", GlossaryIndexDirective)
    # Before the table-of-contents collector (priority 500) reads the sections.
    app.connect("doctree-read", merge_glossaries, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
