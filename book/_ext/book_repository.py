"""``tools/repository.py``, loaded for the book's extensions.

``tools/repository.py`` keeps every copy of the repository's address and the
release tag (``make repository URL=...``). It is a script, not a package, so
the extensions that print those addresses (``licence_link`` in the HTML
footer, ``pdf_titlepage`` on the PDF's title page) load it from the root of the
book's repository through this one function. Not an extension itself: Jupyter
Book puts ``book/_ext`` on ``sys.path`` for the local extensions.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load(root: Path) -> ModuleType:
    """``tools/repository.py`` of the repository whose root is ``root``."""
    spec = importlib.util.spec_from_file_location(
        "_book_repository", root / "tools" / "repository.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
