"""A link on every page to the same page in the book's other language.

The English book is built into ``_build/html`` and the Chinese edition into
``_build/html/zh`` (``make book-zh``; tools/translations.py), with the same
page names. Every page of each gets, above its text, a link to its twin:
``zh/<page>.html`` from the English book, ``../<page>.html`` from the Chinese
one, relative, so it works from a file as well as from the site. The
configuration value ``language_switch`` names the other edition's folder
relative to this one's root and its label; it is empty (no link) for the
editions without a twin, the student edition and the PDF.
"""

from __future__ import annotations

import html
from typing import Any

from sphinx.application import Sphinx

LANGUAGES = {"zh/": ("中文", "zh-CN"), "../": ("English", "en")}


def switch(pagename: str, other: str) -> str:
    """The link from ``pagename`` to its twin in the edition at ``other`` (HTML)."""
    label, lang = LANGUAGES[other]
    href = "../" * pagename.count("/") + other + pagename + ".html"
    return (
        f'<p class="language-switch"><a href="{html.escape(href)}" hreflang="{lang}" '
        f'lang="{lang}">{label}</a></p>\n'
    )


def add_switch(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree
) -> None:
    other = app.config.language_switch
    if other and doctree is not None and "body" in context:
        context["body"] = switch(pagename, other) + context["body"]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("language_switch", "", "html")
    app.connect("html-page-context", add_switch)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
