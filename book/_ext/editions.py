"""The student edition: every exercise, no worked solution.

``make student`` builds the book with ``student_edition = True`` (set by
``tools/prebuilt_config.py --student``). This extension then

* removes every solution from the pages, after sphinx-exercise has merged its
  gated ``{solution-start}`` ... ``{solution-end}`` blocks into one solution
  node (so the code cells of a gated solution go too; sphinx-exercise's own
  ``hide_solutions`` leaves them, and fails on the ``solution-end`` marker);
* adds the Sphinx tag ``student``, so a page can adapt the few sentences that
  speak of solutions::

      ```{only} student
      This edition leaves the solutions out.
      ```

* points the Colab, Binder and JupyterHub launch buttons at the branch named
  by ``notebooks_branch`` (when set) instead of the repository's branch: the
  branch where the publishing workflow puts the generated notebooks of the
  edition (``tools/reader_notebooks.py tree``), at the same paths, so a
  learner launches the reader (or student) notebook, not the MyST source.
  The download button's ``_sources/notebooks/*.ipynb`` are replaced after the
  build (``tools/reader_notebooks.py install``, run by the Makefile).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.transforms import SphinxTransform
from sphinx_exercise.nodes import solution_node


class RemoveSolutions(SphinxTransform):
    """Drop every solution node (gated ones are merged at priority 10)."""

    default_priority = 50

    def apply(self, **kwargs: Any) -> None:
        if not self.config.student_edition:
            return
        for node in list(self.document.findall(solution_node)):
            node.parent.remove(node)


def add_tag(app: Sphinx, config: Config) -> None:
    if config.student_edition:
        app.tags.add("student")


def launch_from_branch(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: Any,
) -> None:
    """Rewrite the launch links of a page to ``notebooks_branch``.

    Runs after sphinx-book-theme has made them (its handler has priority 501).
    """
    new = app.config.notebooks_branch
    if not new:
        return
    theme = app.config.html_theme_options or {}
    old = theme.get("repository_branch") or "master"  # the theme's default

    for group in context.get("header_buttons") or []:
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons") or []:
            url = button.get("url")
            if isinstance(url, str):
                url = url.replace(f"/blob/{old}/", f"/blob/{new}/", 1)  # Colab
                url = url.replace(f"/{old}?urlpath=", f"/{new}?urlpath=", 1)  # Binder
                button["url"] = url.replace(f"branch={old}", f"branch={new}", 1)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("student_edition", False, "env")
    app.add_config_value("notebooks_branch", "", "html")
    app.connect("config-inited", add_tag)
    app.connect("html-page-context", launch_from_branch, priority=600)
    app.add_transform(RemoveSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
