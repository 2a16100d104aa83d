"""Copy the part of MathJax the book uses into book/_static/mathjax (checked in).

Usage::

    python tools/vendor_mathjax.py SOURCE [EXTRA ...]

SOURCE is MathJax's npm tarball, ``mathjax-3.2.2.tgz`` (download it from
https://registry.npmjs.org/mathjax/-/mathjax-3.2.2.tgz with a browser, curl
or Python; no Node needed), whose integrity is checked against ``INTEGRITY``,
or a folder that holds MathJax's ``es5/`` tree (for example an unpacked copy).

The book loads ``tex-chtml.js`` (the TeX input, the CommonHTML output and the
TeX fonts' metrics in one file, with the ams, newcommand and other base
packages built in) and the web fonts that file names; nothing else, as a walk
over every page of the built book shows. A TeX macro from a package that
``tex-chtml.js`` does not contain makes MathJax fetch that package
(``input/tex/extensions/<name>.js``): the browser tests then fail with a 404
for it; add it as an EXTRA, e.g.
``python tools/vendor_mathjax.py mathjax-3.2.2.tgz input/tex/extensions/cancel.js``
(the extras already vendored are kept).

The folder is rewritten: the files, MathJax's LICENSE (Apache-2.0), and
SHA256SUMS, which ``tests/course/test_mathjax.py`` checks the copy against.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import shutil
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "book" / "_static" / "mathjax"
VERSION = "3.2.2"
# The npm registry's integrity of mathjax-3.2.2.tgz (sha512, base64).
INTEGRITY = (
    "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/"
    "O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
)
ENTRY = "tex-chtml.js"
FONTS = "output/chtml/fonts/woff-v2"


def fonts_named_by(entry: bytes) -> list[str]:
    """The web fonts that ``tex-chtml.js`` may ask for, as es5-relative paths."""
    names = set(re.findall(rb"MathJax_[A-Za-z0-9-]+\.woff", entry))
    return sorted(f"{FONTS}/{n.decode()}" for n in names)


def read_source(source: Path) -> dict[str, bytes]:
    """``{path: bytes}`` for the package's LICENSE and every file of ``es5/``."""
    files: dict[str, bytes] = {}
    if source.is_file():
        data = source.read_bytes()
        digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        if digest != INTEGRITY:
            raise SystemExit(f"{source} is not mathjax-{VERSION}.tgz ({digest})")
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    name = member.name.removeprefix("package/")
                    files[name] = tar.extractfile(member).read()
    else:
        es5 = source / "es5" if (source / "es5").is_dir() else source
        for path in es5.rglob("*"):
            if path.is_file():
                files["es5/" + path.relative_to(es5).as_posix()] = path.read_bytes()
        for licence in (es5.parent / "LICENSE", es5 / "LICENSE"):
            if licence.is_file():
                files["LICENSE"] = licence.read_bytes()
    if f"es5/{ENTRY}" not in files or "LICENSE" not in files:
        raise SystemExit(f"no MathJax {ENTRY} and LICENSE in {source}")
    if f'VERSION="{VERSION}"'.encode() not in files[f"es5/{ENTRY}"]:
        raise SystemExit(f"{source} is not MathJax {VERSION}")
    return files


def vendored_extras() -> list[str]:
    """Files already vendored beyond the entry point and its fonts."""
    if not (TARGET / "SHA256SUMS").is_file():
        return []
    listed = [ln.split("  ", 1)[1] for ln in sums_lines(TARGET / "SHA256SUMS")]
    return [p for p in listed if p != ENTRY and not p.startswith(FONTS + "/")]


def sums_lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln]


def vendor(source: Path, extras: list[str], target: Path = TARGET) -> list[str]:
    """Rewrite ``target`` from ``source``; returns the es5 paths copied."""
    files = read_source(source)
    wanted = [ENTRY, *fonts_named_by(files[f"es5/{ENTRY}"])]
    wanted += sorted(set(extras) - set(wanted))
    missing = [p for p in wanted if f"es5/{p}" not in files]
    if missing:
        raise SystemExit(f"not in MathJax {VERSION}: {missing}")
    if target.exists():
        for child in target.iterdir():
            if child.name != "README.txt":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    target.mkdir(parents=True, exist_ok=True)
    sums = []
    for rel in wanted:
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(files[f"es5/{rel}"])
        sums.append(f"{hashlib.sha256(files[f'es5/{rel}']).hexdigest()}  {rel}")
    (target / "LICENSE").write_bytes(files["LICENSE"])
    (target / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")
    return wanted


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    extras = [*vendored_extras(), *argv[1:]]
    for rel in vendor(Path(argv[0]), extras):
        print(f"book/_static/mathjax/{rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
