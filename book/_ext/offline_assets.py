"""Keep every page self-contained: no script or stylesheet from another host.

The book must work offline and behind firewalls, so a page may load only files
served from the built site. This extension

* drops duplicate ``<script>`` entries. Sphinx 7.4 re-adds the inline scripts
  that extensions registered after the builder started with file name ``''``
  instead of ``None``, so they escape its own de-duplication and appear twice;
  sphinx-thebe's second copy then throws ``Identifier 'THEBE_JS_URL' has
  already been declared``;
* warns (an error under ``-W``) when a page would load a script or stylesheet
  from another host, naming the page and the URL.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _remote(filename: object) -> bool:
    """True when an asset's file name is a URL on another host."""
    name = str(filename or "")
    return "://" in name or name.startswith("//")


def _key(asset: Any) -> tuple[Any, ...]:
    """Identity of an asset: file name (``None`` and ``""`` alike), attributes."""
    filename = getattr(asset, "filename", asset) or ""
    attributes = getattr(asset, "attributes", {}) or {}
    priority = getattr(asset, "priority", 500)
    return (str(filename), priority, tuple(sorted(attributes.items())))


def check_page_assets(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """De-duplicate the page's scripts and reject remote scripts or stylesheets."""
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if not isinstance(assets, list):
            continue
        seen: set[tuple[Any, ...]] = set()
        unique = []
        for asset in assets:  # keep the first of each
            if _key(asset) not in seen:
                seen.add(_key(asset))
                unique.append(asset)
        assets[:] = unique
        for asset in unique:
            filename = getattr(asset, "filename", asset)
            if _remote(filename):
                logger.warning(
                    "page %s would load %s from another host; the book must work "
                    "offline (serve it from _static instead)",
                    pagename,
                    filename,
                    type="offline",
                    subtype="remote_asset",
                )


def setup(app: Sphinx) -> dict[str, Any]:
    # Run after the extensions that add page assets (default priority 500).
    app.connect("html-page-context", check_page_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
