"""The HTML footer's licence line links to LICENSE (issue 31, F16).

The footer (``html.extra_footer`` in ``_config.yml``) ends its licence line
with "See LICENSE in the course's repository." This extension makes LICENSE a
link to the file at this release's tag (``<repository.url>/blob/v<version>/
LICENSE``: the licence of the release the book shows) and "the course's
repository" a link to the repository, both from ``tools/repository.py``, so
that ``make repository URL=...`` and a new version change them with every
other copy and nobody edits an address by hand. A footer without that
sentence stops the build, rather than leaving the line without its link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from book_repository import load as _repository
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

SENTENCE = "See LICENSE in the course's repository."
# The Chinese edition's footer (tools/prebuilt_config.py --language zh_CN).
SENTENCE_ZH = "许可证全文见课程仓库中的 LICENSE。"


def licence_url(root: Path) -> str:
    """LICENSE at this release's tag, in the repository of ``_config.yml``."""
    repository = _repository(root)
    return f"{repository.url()}/blob/{repository.tag()}/LICENSE"


def linked(footer: str, root: Path) -> str:
    """``footer`` with its sentence on LICENSE made of two links."""
    repository = _repository(root).url()
    if SENTENCE_ZH in footer:
        return footer.replace(
            SENTENCE_ZH,
            f'许可证全文见<a href="{repository}">课程仓库</a>中的 '
            f'<a href="{licence_url(root)}">LICENSE</a>。',
        )
    if SENTENCE not in footer:
        raise ExtensionError(f"licence_link: the footer lacks {SENTENCE!r}")
    sentence = (
        f'See <a href="{licence_url(root)}">LICENSE</a> in '
        f'<a href="{repository}">the course\'s repository</a>.'
    )
    return footer.replace(SENTENCE, sentence)


def link_licence(app: Sphinx, config: Config) -> None:
    options = config.html_theme_options
    if "extra_footer" in options:  # the HTML builders; LaTeX has its own page
        options["extra_footer"] = linked(options["extra_footer"], Path(app.srcdir))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", link_licence)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
