"""Author–year citations with round brackets, as in machine-learning papers.

Registers the sphinxcontrib-bibtex reference style ``author_year_round``:
``{cite:p}`key``` renders "(Vaswani et al., 2017)" and ``{cite:t}`key```
renders "Vaswani et al. (2017)". Select it with
``bibtex_reference_style: author_year_round``. (The chapters cite with
``{footcite}``, whose footnote style is unaffected.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sphinx.application import Sphinx
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import (
    AuthorYearReferenceStyle,
)


def round_brackets() -> BracketStyle:
    """``(`` and ``)`` around a citation."""
    return BracketStyle(left="(", right=")")


@dataclass
class RoundAuthorYearReferenceStyle(AuthorYearReferenceStyle):
    """Author–year references in round brackets."""

    bracket_parenthetical: BracketStyle = field(default_factory=round_brackets)
    bracket_textual: BracketStyle = field(default_factory=round_brackets)
    bracket_author: BracketStyle = field(default_factory=round_brackets)
    bracket_label: BracketStyle = field(default_factory=round_brackets)
    bracket_year: BracketStyle = field(default_factory=round_brackets)


def setup(app: Sphinx) -> dict[str, Any]:
    register_plugin(
        "sphinxcontrib.bibtex.style.referencing",
        "author_year_round",
        RoundAuthorYearReferenceStyle,
        force=True,
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
