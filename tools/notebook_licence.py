"""Write the course's licence into each notebook's metadata, or check it is there.

Usage::

    python tools/notebook_licence.py write notebooks/*.ipynb templates/chapter.ipynb
    python tools/notebook_licence.py check notebooks/*.ipynb templates/chapter.ipynb

A notebook travels alone (a download from the book, Colab, the offline
bundle), away from the repository's LICENSE files, so it carries its licence
in its own metadata, under ``metadata.license``:

* ``spdx``: the SPDX expression for the whole notebook;
* ``text``: the licence of its prose, figures and outputs (CC BY-SA 4.0);
* ``code``: the licence of its code cells (MIT);
* ``notice``: the same in one sentence, with the copyright line and the URLs,
  the repository's among them (``repository.url`` in ``_config.yml``:
  ``make repository URL=...`` rewrites it with the other copies of the URL).

Nothing else in the file changes: the notebook is written back as it is
stored (one-space indent, UTF-8, keys sorted as nbformat writes them unless
the file keeps them in another order), so the diff is the metadata lines
alone. ``check`` exits 1 and names every notebook whose licence is missing or
different.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

KEY = "license"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from repository import url  # noqa: E402  (the URL's one home)


def licence(repo_url: str | None = None) -> dict[str, str]:
    """The metadata, naming the repository at ``repo_url`` (default: the config's)."""
    return {
        "spdx": "CC-BY-SA-4.0 AND MIT",
        "text": "CC-BY-SA-4.0",
        "code": "MIT",
        "notice": (
            "Copyright (c) 2026 the Self-attention, executable contributors. "
            "The text, figures and outputs of this notebook are licensed under "
            "CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/); "
            "its code cells under the MIT licence "
            "(https://opensource.org/license/mit). "
            f"See LICENSE in the course's repository, {repo_url or url()}."
        ),
    }


def dumps(nb: dict[str, Any], sort_keys: bool = True) -> str:
    """The notebook as nbformat writes it (``sort_keys=False``: in its own order)."""
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=sort_keys) + "\n"


def with_licence(text: str, repo_url: str | None = None) -> str:
    """The notebook ``text`` with the licence in its metadata, stored as it was."""
    nb = json.loads(text)
    # sorted keys, as nbformat writes them, unless the file keeps its own order
    sort_keys = dumps(nb) == text or dumps(nb, sort_keys=False) != text
    nb.setdefault("metadata", {})[KEY] = licence(repo_url)
    return dumps(nb, sort_keys)


def has_licence(text: str, repo_url: str | None = None) -> bool:
    return json.loads(text).get("metadata", {}).get(KEY) == licence(repo_url)


def write(paths: list[Path]) -> list[Path]:
    """Add (or refresh) the licence; returns the files that changed."""
    changed = []
    for path in paths:
        old = path.read_text(encoding="utf-8")
        new = with_licence(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def missing(paths: list[Path]) -> list[Path]:
    return [p for p in paths if not has_licence(p.read_text(encoding="utf-8"))]


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("write", "check"):
        print(__doc__)
        return 2
    paths = [Path(a) for a in argv[1:]]
    if argv[0] == "write":
        for path in write(paths):
            print(f"licence written: {path}")
        return 0
    bad = missing(paths)
    for path in bad:
        print(f"no licence in its metadata (tools/notebook_licence.py write): {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
