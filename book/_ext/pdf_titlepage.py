"""The PDF edition's title page names its version and where the course lives.

A PDF travels without the site: its reader needs to know which release it is
and where to find the course (CC BY-SA's attribution asks for a link to it
too). For the LaTeX builder this extension defines three macros, which
``book/_latex/booklicence.sty`` prints on the title page above the licence:
``\\bookversion`` (the version in pyproject.toml), ``\\booksite`` (the book
online) and ``\\bookrepository`` (its source, issues and releases). The two
addresses come from ``tools/repository.py``, which makes every copy of
``repository.url`` in ``_config.yml`` (and ``html.baseurl``, where set).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from book_repository import load as _repository
from sphinx.application import Sphinx
from sphinx.config import Config


def _url(address: str) -> str:
    """``\\url`` of ``address``, whatever characters it holds (``_``, ``~``)."""
    return rf"\expandafter\url\expandafter{{\detokenize{{{address}}}}}"


def preamble(root: Path) -> str:
    """The macros for the book whose repository root is ``root``."""
    repository = _repository(root)
    url = repository.url()
    return (
        "\n% book/_ext/pdf_titlepage.py: the version and the addresses\n"
        rf"\newcommand{{\bookversion}}{{{repository.version()}}}" + "\n"
        rf"\newcommand{{\booksite}}{{{_url(repository.site(url))}}}" + "\n"
        rf"\newcommand{{\bookrepository}}{{{_url(url)}}}" + "\n"
    )


# The Chinese edition's front matter (language zh_CN): booklicence.sty prints
# its notice in Chinese when \bookchinese is defined, and the contents and
# index take their Chinese names.
CHINESE = (
    "\n% book/_ext/pdf_titlepage.py: the Chinese edition's front matter\n"
    "\\newcommand{\\bookchinese}{}\n"
    "\\AtBeginDocument{\\renewcommand{\\contentsname}{目录}"
    "\\renewcommand{\\indexname}{索引}}\n"
)


def add_preamble(app: Sphinx, config: Config) -> None:
    elements = config.latex_elements
    extra = preamble(Path(app.srcdir))
    if (config.language or "").startswith("zh"):
        extra += CHINESE
    elements["preamble"] = elements.get("preamble", "") + extra


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", add_preamble)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
