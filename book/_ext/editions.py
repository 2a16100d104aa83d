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


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("student_edition", False, "env")
    app.connect("config-inited", add_tag)
    app.add_transform(RemoveSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
