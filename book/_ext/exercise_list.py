"""A page listing every exercise of the book, generated at build time.

Usage in a MyST page::

    ```{exercise-list}
    ```

The directive leaves a placeholder. When the page is written (in a
post-transform that runs before cross-references are resolved, so ``{eq}``,
``{term}`` and ``{ref}`` in the excerpts resolve as links from this page), the
placeholder becomes one section per chapter, in table-of-contents order,
listing that chapter's exercises from sphinx-exercise's registry: the number
("Exercise 3.2"), the optional title and the opening words, each linked to the
exercise. Nothing is copied by hand, so the list cannot drift from the
chapters: the page is rewritten on every build.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import docname_join
from sphinx.util.docutils import SphinxDirective

EXCERPT_CHARS = 140
COPY = (nodes.Text, nodes.math, nodes.literal, addnodes.pending_xref)
DROP = (nodes.footnote_reference, nodes.citation_reference, nodes.target)


class exercise_list(nodes.General, nodes.Element):  # noqa: N801 (docutils style)
    """Placeholder replaced by the list of exercises when the page is written."""


class ExerciseListDirective(SphinxDirective):
    """``{exercise-list}``: list every exercise of the book, grouped by chapter."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        docs = _list_docs(self.env)
        docs.add(self.env.docname)
        return [exercise_list()]


def _list_docs(env: BuildEnvironment) -> set[str]:
    """Documents that contain an ``exercise-list`` (kept in the environment)."""
    if not hasattr(env, "exercise_list_docs"):
        env.exercise_list_docs = set()
    return env.exercise_list_docs


def purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _list_docs(env).discard(docname)


def merge_info(
    app: Sphinx, env: BuildEnvironment, docnames: Iterable[str], other: BuildEnvironment
) -> None:
    _list_docs(env).update(_list_docs(other))


def always_rewrite(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Rewrite the list pages on every build: any chapter may have changed."""
    return sorted(_list_docs(env))


# --- building the list ---------------------------------------------------------
def toc_order(env: BuildEnvironment) -> list[str]:
    """Every document reachable from the root, depth first (reading order)."""
    order: list[str] = []

    def walk(doc: str) -> None:
        if doc in order:
            return
        order.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return order


def _plain(node: nodes.Node, here: str) -> Iterator[nodes.Node]:
    """``node`` reduced to text, math, code, emphasis and cross-references.

    Cross-references are re-homed to the page ``here``: Sphinx computes a link's
    relative URL from the ``refdoc`` of the reference, which is the chapter.
    """
    if isinstance(node, DROP):
        return
    if isinstance(node, COPY):
        copy = node.deepcopy()
        if isinstance(copy, addnodes.pending_xref):
            origin = copy.get("refdoc", here)
            target = copy.get("reftarget", "")
            if copy.get("reftype") == "doc" and not target.startswith("/"):
                copy["reftarget"] = "/" + docname_join(origin, target)
            copy["refdoc"] = here
        yield copy
        return
    children = [c for child in node.children for c in _plain(child, here)]
    if isinstance(node, nodes.emphasis | nodes.strong):
        yield type(node)("", "", *children)
    else:
        yield from children


def excerpt(
    exercise: nodes.Element, here: str, limit: int = EXCERPT_CHARS
) -> list[nodes.Node]:
    """The opening words of an exercise's first paragraph (about ``limit`` chars)."""
    paragraph = next(iter(exercise.findall(nodes.paragraph)), None)
    if paragraph is None:
        return []
    out: list[nodes.Node] = []
    used = 0
    for node in (c for child in paragraph.children for c in _plain(child, here)):
        text = node.astext()
        if used + len(text) <= limit:
            out.append(node)
            used += len(text)
            continue
        if isinstance(node, nodes.Text):  # cut at a word boundary
            cut = text[: limit - used].rsplit(" ", 1)[0].rstrip(" ,;:")
            if cut:
                out.append(nodes.Text(cut))
        out.append(nodes.Text(" …"))
        break
    return out


def _subtitle(exercise: nodes.Element) -> str:
    """The exercise's own title (``{exercise} Title``), or an empty string."""
    for node in exercise.findall(nodes.subtitle):
        return node.astext()
    return ""


def _number(env: BuildEnvironment, docname: str, kind: str, label: str) -> str:
    """``"3.2"`` from Sphinx's figure numbers (empty when unnumbered)."""
    number = env.toc_fignumbers.get(docname, {}).get(kind, {}).get(label, ())
    return ".".join(map(str, number))


def chapter_title(env: BuildEnvironment, docname: str) -> str:
    """``"3. Self-attention …"``: the section number (if any) and the title."""
    number = ".".join(map(str, env.toc_secnumbers.get(docname, {}).get("", ())))
    title = env.titles[docname].astext() if docname in env.titles else docname
    return f"{number}. {title}" if number else title


def build_list(app: Sphinx, docname: str) -> list[nodes.Node]:
    """Sections of linked exercises, one per chapter, in reading order."""
    env = app.env
    registry: dict[str, dict[str, Any]] = getattr(env, "sphinx_exercise_registry", {})
    by_doc: dict[str, list[tuple[str, nodes.Element]]] = {}
    for label, entry in registry.items():
        if entry.get("type") in ("exercise", "exercise-start"):
            if not entry["node"].get("hidden"):
                by_doc.setdefault(entry["docname"], []).append((label, entry["node"]))
    order = {doc: i for i, doc in enumerate(toc_order(env))}
    chapters = sorted(by_doc, key=lambda d: (order.get(d, len(order)), d))
    total = sum(len(v) for v in by_doc.values())
    summary = nodes.paragraph(
        "",
        f"{total} exercises in {len(chapters)} chapters."
        if total
        else "No chapter has exercises yet.",
        classes=["exercise-list-summary"],
    )
    out: list[nodes.Node] = [summary]
    for doc in chapters:
        items = sorted(by_doc[doc], key=lambda item: item[1].get("serial_number", 0))
        section = nodes.section(ids=[f"exercises-{doc.rsplit('/', 1)[-1]}"])
        chapter_uri = app.builder.get_relative_uri(docname, doc)
        title = nodes.title()
        title += nodes.reference(
            "", chapter_title(env, doc), internal=True, refuri=chapter_uri
        )
        section += title
        bullets = nodes.bullet_list(classes=["exercise-list"])
        for label, node in items:
            number = _number(env, doc, "exercise", label)
            name = f"Exercise {number}" if number else "Exercise"
            if app.builder.format == "latex":
                # The PDF labels an exercise "exercise:<label>"; sphinx-exercise
                # links a reference whose refid is an exercise label to it.
                link = nodes.reference("", "", internal=True, refid=label)
            else:
                link = nodes.reference(
                    "", "", internal=True, refuri=f"{chapter_uri}#{label}"
                )
            link += nodes.strong("", name)
            subtitle = _subtitle(node)
            if subtitle:
                link += nodes.Text(f" ({subtitle})")
            paragraph = nodes.paragraph()
            paragraph += link
            words = excerpt(node, docname)
            if words:
                paragraph += nodes.Text(": ")
                paragraph.extend(words)
            bullets += nodes.list_item("", paragraph)
        section += bullets
        out.append(section)
    return out


class FillExerciseLists(SphinxPostTransform):
    """Replace each ``exercise-list`` placeholder with the generated list."""

    # Before the ReferencesResolver (10), and before Sphinx's LaTeX
    # MathReferenceTransform (5), which turns the excerpts' {eq} into \eqref.
    default_priority = 4

    def run(self, **kwargs: Any) -> None:
        placeholders = list(self.document.findall(exercise_list))
        if not placeholders:
            return
        docname = self.env.docname
        content = build_list(self.app, docname)
        if any(True for node in content for _ in node.findall(nodes.math)):
            # MathJax is included only on pages the math domain says have math.
            math = self.env.get_domain("math")
            math.data.setdefault("has_equations", {})[docname] = True
        for placeholder in placeholders:
            placeholder.replace_self([node.deepcopy() for node in content])


def _skip(self: Any, node: nodes.Node) -> None:
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(
        exercise_list,
        html=(_skip, None),
        latex=(_skip, None),
        text=(_skip, None),
    )
    app.add_directive("exercise-list", ExerciseListDirective)
    app.connect("env-purge-doc", purge_doc)
    app.connect("env-merge-info", merge_info)
    app.connect("env-get-updated", always_rewrite)
    app.add_post_transform(FillExerciseLists)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
