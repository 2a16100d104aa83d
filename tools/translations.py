"""The Chinese edition's translations: catalogues keyed by each block's source hash.

Usage::

    python tools/translations.py update SOURCE...   # new blocks into the catalogue
    python tools/translations.py check [--complete] # exit 1: missing, stale, broken
    python tools/translations.py check --behind-ok  # exit 1: broken only (make test)
    python tools/translations.py build OUT          # the book's sources in Chinese
    python tools/translations.py status             # how much of each is translated

The English notebooks and pages are the source. A source is cut into
*blocks*: the paragraphs, headings, lists and directives of a notebook's
Markdown cells and of a page, split at blank lines outside fences (a
``{glossary}`` is cut into its entries), and every figure caption and alt text
of a notebook. A block with no words outside maths, code and roles (a display
formula, a label, the end of a solution) is not translated. Each translated
block is an entry of the source's catalogue,
``translations/zh_CN/<source path>.yml``::

    - id: 3f2a9c1b7e04   # the first 12 hex digits of the English block's SHA-256
      en: |-
        The English block, as it stands in the source.
      zh: |-
        中文译文。

The build replaces every block whose hash has an entry by its ``zh``; code
cells, their outputs and every glued number are the English notebook's own,
never copied. A translation is *stale* when its English block changed: the
block's hash has no entry any more. ``update`` then adds the new block with
an empty ``zh`` and keeps the old pair beside it (``old_en``, ``old_zh``), so
a translator sees what changed; ``check`` fails until the ``zh`` is written
and the old pair removed.

``check`` fails, for every source that has a catalogue:

- on a block with no translation, and on an entry whose English block is
  gone (stale);
- on a translation whose markup differs from its block's: the same maths
  (``$...$``, ``$$...$$``), code spans, labels, directive names and options,
  link targets and roles (``{glue:text}``, ``{numref}``, ``{eq}``,
  ``{footcite}``... with the same targets; a role's display text may be
  translated; a glued value's Chinese twin ``{glue:text}`name_zh``` counts
  as ``{glue:text}`name```, with or without a format spec);
- on a glossary term rendered two ways: every ``{term}`` of a translation
  shows the term's Chinese name from the glossary (``{term}`查询 <query>```).

A glued value that is words, not a number (a phrase computed from a
measurement, such as "faster than nn.RNN at every length up to T = 1024"),
would print English inside a Chinese sentence. Its notebook glues a Chinese
twin beside it, computed by the same branches, under the same name plus
``_zh``; a translation may use ``{glue:text}`name_zh``` where its block has
``{glue:text}`name```, and ``check`` accepts the twin.

A source without a catalogue stays English in the Chinese edition and is
listed; with ``--complete`` it fails too.

With ``--behind-ok`` (``make translations-check``, part of ``make test``) a
catalogue that lags its English (a block not translated yet, a stale entry)
is listed but does not fail: the Chinese edition shows those blocks in
English, and a contributor who writes English only is not stopped. A
translation that is wrong (markup, terms, style) still fails. ``make
editions`` runs the full check (``make translations-complete``), so CI
publishes no edition behind its English.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = "zh_CN"
CATALOGUES = ROOT / "translations" / LANGUAGE

FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}|:{3,})(.*)$")
FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})(?:\{[\w:-]+\})?", re.M)
MATHS_FENCE = re.compile(r"^[ \t]*\$\$")
ROLE = re.compile(r"(?<!`)\{([a-z][\w:+-]*)\}`([^`]*)`")  # not `{role}` in code
DISPLAY_MATHS = re.compile(r"\$\$.*?\$\$", re.S)
INLINE_MATHS = re.compile(r"(?<![\\$])\$(?!\$)(?:[^$\\]|\\.)+?\$")
CODE_SPAN = re.compile(r"(?<![`}])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
LABEL = re.compile(r"^\(([^)\s]+)\)=\s*$", re.M)
OPTION = re.compile(r"^[ \t]*:([\w-]+):[ \t]*(.*)$", re.M)
DIRECTIVE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{([\w:-]+)\}", re.M)
COMMENT = re.compile(r"^%.*$|<!--.*?-->", re.M | re.S)
# Roles whose display text a translation may change: their target is compared.
DISPLAY_ROLES = {"term", "doc", "ref", "numref", "download"}
# A glued phrase's Chinese twin, `name_zh` (with or without a format spec).
GLUE_TWIN = re.compile(r"^([^:\s]+?)_zh(?=:|$)")
# Options whose value is prose, translated with the block.
PROSE_OPTIONS = {"alt", "caption", "title"}
HASH_DIGITS = 12
TOC_CAPTION = re.compile(r"^(\s*-?\s*caption:\s*)(.+?)\s*$")


def digest(text: str) -> str:
    """The id of a block: the first 12 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_DIGITS]


# --- cutting a source into blocks ---------------------------------------------


def block_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the blocks of a Markdown text.

    Blocks are separated by blank lines outside fences. A fence (``` or ~~~
    or :::, with its directive) and a ``$$`` display run to their closing
    line; fences nest. A ``{glossary}`` fence is cut into its entries (a term
    line and its indented definition), a ``{list-table}`` into its rows
    (``* - ...``); their opening (with its options) and closing lines are
    blocks of their own.
    """
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []  # open fences: (marker character, length)
    maths = False  # inside a $$ display
    glossary = None  # the depth of an open {glossary} or {list-table}: cut into items
    table = False  # that container is a list-table (its rows start with "* ")
    start = None
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped, end = line.strip(), offset + len(line.rstrip("\n"))
        in_glossary = glossary is not None and len(stack) == glossary and not maths
        fence = None if maths else FENCE.match(line)
        closing = bool(
            fence
            and stack
            and fence.group(1)[0] == stack[-1][0]
            and len(fence.group(1)) >= stack[-1][1]
            and not fence.group(2).strip()
        )
        if not stripped and ((not stack and not maths) or in_glossary):
            if start is not None:
                spans.append((start, offset))
                start = None
        elif in_glossary and table and line.startswith("* "):  # a row of a list-table
            if start is not None:
                spans.append((start, offset))
            start = offset
        elif closing and in_glossary:  # the container's last item, then its end
            if start is not None:
                spans.append((start, offset))
            spans.append((offset, end))
            start, glossary = None, None
            stack.pop()
        else:
            start = offset if start is None else start
            if maths:
                maths = "$$" not in stripped
            elif closing:
                stack.pop()
            elif fence:
                stack.append((fence.group(1)[0], len(fence.group(1))))
                kind = fence.group(2).strip()
                if kind.startswith(("{glossary}", "{list-table}")):
                    glossary, table = len(stack), kind.startswith("{list-table}")
                    if not table:  # the opening line: a block of its own
                        spans.append((start, end))
                        start = None
            elif stripped.startswith("$$") and stripped.count("$$") == 1:
                maths = True
        offset += len(line)
    if start is not None:
        spans.append((start, offset))
    return [(a, b) for a, b in (_trim(text, a, b) for a, b in spans) if b > a]


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while b > a and text[b - 1] in " \t\n":
        b -= 1
    return a, b


# Directives whose argument and body are not prose: a path, reStructuredText
# for autodoc, a generated list.
NOT_PROSE = re.compile(
    r"^[ \t]*(`{3,}|~{3,}|:{3,})\{(include|eval-rst|literalinclude|glossary-index|"
    r"footbibliography|bibliography|raw|solution-start|solution-end)\}"
    r".*?^[ \t]*\1[ \t]*$",
    re.M | re.S,
)


def words_outside_markup(block: str) -> bool:
    """Whether a block has words to translate outside maths, code, roles and labels."""
    rest = NOT_PROSE.sub(" ", block)
    rest = FENCE_LINE.sub(" ", rest)  # a fence, with its directive's name
    rest = DISPLAY_MATHS.sub(" ", rest)
    rest = re.sub(r"^[ \t]*\([\w:.-]+\)[ \t]*$", " ", rest, flags=re.M)  # (eq-label)
    rest = COMMENT.sub(" ", rest)
    rest = INLINE_MATHS.sub(" ", rest)
    rest = ROLE.sub(" ", rest)
    rest = CODE_SPAN.sub(" ", rest)
    rest = LABEL.sub(" ", rest)
    rest = "\n".join(
        line
        for line in rest.splitlines()
        if not re.match(r"^[ \t]*:[\w-]+:", line) or _prose_option(line)
    )
    return bool(re.search(r"[A-Za-z]{2,}", rest))


def _prose_option(line: str) -> bool:
    m = OPTION.match(line)
    return bool(m and m.group(1) in PROSE_OPTIONS)


# --- the sources ------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """One translatable piece of a source: a Markdown block, a caption, an alt text."""

    where: str  # "cell 12", "cell 30 caption", "page"
    text: str


def toc_sources(root: Path = ROOT) -> list[Path]:
    """The pages and chapters (_toc.yml's order), glossary fragments, _toc.yml."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            for sub in entry.get("subtrees", []) or []:
                walk(sub.get("sections") or sub.get("chapters"))
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    out = []
    for name in files:
        for suffix in (".ipynb", ".md"):
            if (root / f"{name}{suffix}").exists():
                out.append(root / f"{name}{suffix}")
                break
    # a page written in Chinese (book/how-to-run-zh.md) is its own translation
    out = [p for p in out if not p.stem.endswith("-zh")]
    out += sorted((root / "book" / "glossary").glob("_*.md"))
    return out + [root / "_toc.yml"]


def units(path: Path) -> list[Unit]:
    """The translatable units of a source, in document order."""
    if path.name == "_toc.yml":
        found = [
            Unit("caption", yaml.safe_load(m.group(2)))
            for m in map(
                TOC_CAPTION.match, path.read_text(encoding="utf-8").splitlines()
            )
            if m
        ]
        return found
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        found = []
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"])
                found += [Unit(f"cell {i}", text[a:b]) for a, b in block_spans(text)]
            meta = cell.get("metadata", {}).get("mystnb", {})
            for key, field in (("figure", "caption"), ("image", "alt")):
                value = meta.get(key, {}).get(field)
                if value:
                    found.append(Unit(f"cell {i} {field}", value))
        return [u for u in found if words_outside_markup(u.text)]
    text = path.read_text(encoding="utf-8")
    return [
        u
        for u in (Unit("page", text[a:b]) for a, b in block_spans(text))
        if words_outside_markup(u.text)
    ]


def catalogue_path(source: Path, root: Path = ROOT) -> Path:
    rel = source.relative_to(root)
    return root / "translations" / LANGUAGE / rel.with_suffix(rel.suffix + ".yml")


# --- catalogues -------------------------------------------------------------


def load(path: Path) -> list[dict]:
    """The entries of a catalogue, in order (none if it does not exist)."""
    return load_text(path.read_text(encoding="utf-8")) if path.exists() else []


def load_text(text: str) -> list[dict]:
    entries = yaml.safe_load(text) or []
    for entry in entries:
        for key in ("en", "zh", "old_en", "old_zh"):
            if key in entry and entry[key] is None:
                entry[key] = ""
    return entries


def _scalar(key: str, text: str) -> str:
    if text == "":
        return f"  {key}: ''\n"
    body = "".join(f"    {line}\n" if line else "\n" for line in text.split("\n"))
    return f"  {key}: |2-\n{body}"  # content at column 4: 2 + 2


def dump(entries: list[dict], source: str) -> str:
    out = [
        f"# The {LANGUAGE} translation of {source}: one entry per block, in the\n"
        "# order of the source (tools/translations.py; CONTRIBUTING, Translations).\n"
    ]
    for entry in entries:
        out.append(f"- id: '{entry['id']}'\n")
        for key in ("en", "zh", "old_en", "old_zh"):
            if key in entry:
                out.append(_scalar(key, entry[key]))
    return "".join(out)


def update(source: Path, root: Path = ROOT) -> tuple[int, int]:
    """Bring a source's catalogue up to date; returns (new blocks, stale entries).

    Entries keep the source's order. A new block gets ``zh: ''``; the stale
    entry that stood at its place (the one after the previous kept entry) is
    kept beside it as ``old_en``/``old_zh``. Other stale entries are dropped.
    """
    path = catalogue_path(source, root)
    old = load(path)
    by_id = {e["id"]: e for e in old}
    current = units(source)
    ids = {digest(u.text) for u in current}
    stale = [e for e in old if e["id"] not in ids]
    entries, new = [], 0
    position = {e["id"]: i for i, e in enumerate(old)}
    last_kept = -1
    for unit in current:
        key = digest(unit.text)
        if key in by_id and not by_id[key].get("old_en"):
            entries.append(by_id[key])
            last_kept = position[key]
            continue
        if key in by_id:  # a new block already waiting for its translation
            entries.append(by_id[key])
            continue
        new += 1
        entry = {"id": key, "en": unit.text, "zh": ""}
        here = [e for e in stale if position[e["id"]] > last_kept]
        if here and here[0].get("zh"):
            entry["old_en"], entry["old_zh"] = here[0]["en"], here[0]["zh"]
            stale.remove(here[0])
        entries.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(entries, str(source.relative_to(root))), encoding="utf-8")
    return new, len([e for e in old if e["id"] not in ids])


# The repository's addresses and the release tag: tools/repository.py rewrites
# them in the English sources (make repository URL=..., a new version).
ADDRESS = re.compile(
    r"https://github\.com/[\w.-]+/[\w.-]+|https://[\w-]+\.github\.io/[\w.-]+"
    r"|\bv\d+\.\d+\.\d+\b"
)


def follow_addresses(source: Path, root: Path = ROOT) -> int:
    """Carry over each translation whose English block changed only in the
    repository's addresses or the release tag, making the same change in its
    Chinese; returns how many (``tools/repository.py sync`` calls it, so a new
    URL leaves no translation behind)."""
    path = catalogue_path(source, root)
    entries = load(path)
    blocks = {digest(u.text): u.text for u in units(source)}
    kept = {e["id"] for e in entries}
    waiting = {ADDRESS.sub("\0", b): b for k, b in blocks.items() if k not in kept}
    moved = 0
    for entry in entries:
        new = waiting.get(ADDRESS.sub("\0", entry["en"]))
        if new is None or entry["id"] in blocks:
            continue
        pairs = zip(ADDRESS.findall(entry["en"]), ADDRESS.findall(new), strict=True)
        for was, now in dict(pairs).items():
            entry["zh"] = entry["zh"].replace(was, now)
        entry["en"], entry["id"] = new, digest(new)
        moved += 1
    if moved:
        text = dump(entries, str(source.relative_to(root)))
        path.write_text(text, encoding="utf-8")
    return moved


# --- checks -----------------------------------------------------------------


def markup(text: str) -> Counter:
    """What a translation keeps of its block: maths, code, roles, labels, links."""
    found: Counter = Counter()
    rest = COMMENT.sub(" ", text)
    for m in DIRECTIVE.finditer(rest):
        found["directive " + m.group(1)] += 1
    for m in OPTION.finditer(rest):
        if m.group(1) not in PROSE_OPTIONS:
            found[f":{m.group(1)}: {m.group(2).strip()}"] += 1
    rest = OPTION.sub(" ", rest)
    rest = FENCE_LINE.sub(" ", rest)
    for m in DISPLAY_MATHS.finditer(rest):
        found["$$" + _squash(m.group(0)[2:-2])] += 1
    rest = DISPLAY_MATHS.sub(" ", rest)
    for m in ROLE.finditer(rest):
        role, body = m.group(1), m.group(2)
        if role in DISPLAY_ROLES:
            target = re.search(r"<([^<>]+)>\s*$", body)
            body = " ".join((target.group(1) if target else body).split())
            if role == "term":
                body = body.casefold()
        elif role.startswith("glue"):  # a glued phrase's Chinese twin counts as it
            body = GLUE_TWIN.sub(r"\1", body)
        found[f"{{{role}}}{body}"] += 1
    rest = ROLE.sub(" ", rest)
    for m in INLINE_MATHS.finditer(rest):
        found["$" + _squash(m.group(0)[1:-1])] += 1
    rest = INLINE_MATHS.sub(" ", rest)
    for m in CODE_SPAN.finditer(rest):
        found["`" + " ".join(m.group(2).split())] += 1
    for m in LINK.finditer(rest):
        found["link " + m.group(1)] += 1
    for m in LABEL.finditer(rest):
        found["label " + m.group(1)] += 1
    return found


def _squash(maths: str) -> str:
    return re.sub(r"\s+", "", maths)


def glossary_terms(root: Path = ROOT) -> dict[str, str]:
    """Every glossary term (casefolded) and its Chinese name, from the fragments."""
    terms: dict[str, str] = {}
    for path in sorted((root / "book" / "glossary").glob("_*.md")):
        pending: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith(("%", "```")):
                pending = []
            elif not line.startswith(" "):
                pending.append(line.strip())
            elif pending:
                chinese = line.strip().split(" · ")[0].strip()
                for term in pending:
                    terms[term.casefold()] = chinese
                pending = []
    return terms


def term_problems(zh: str, terms: dict[str, str]) -> list[str]:
    """Every {term} of a translation that does not show the term's Chinese name."""
    problems = []
    for m in ROLE.finditer(zh):
        if m.group(1) != "term":
            continue
        body = m.group(2)
        target = re.search(r"^(.*?)\s*<([^<>]+)>\s*$", body, re.S)
        shown, key = (target.group(1), target.group(2)) if target else (body, body)
        chinese = terms.get(key.strip().casefold())
        short = re.sub(
            r"（[^（）]*）$", "", chinese or ""
        )  # 图神经网络（GNN） -> 图神经网络
        if chinese is None:
            problems.append(f"{{term}}`{body}`: no glossary term {key!r}")
        elif shown.strip() not in (chinese, short):
            problems.append(
                f"{{term}}`{body}` shows {shown.strip()!r}; the glossary's "
                f"Chinese for {key.strip()!r} is {chinese!r}"
            )
    return problems


CJK = "\u3400-\u9fff\uff01-\uff5e\u3000-\u303f\u201c\u201d\u2018\u2019\u2014\u2026"
# A line break between two Chinese characters becomes a space in HTML.
CJK_BREAK = re.compile(f"[{CJK}]\n[ \t]*[{CJK}]")


def printed_asterisks(zh: str) -> list[str]:
    """Every ``**`` that the book's parser would print instead of reading it as bold.

    CommonMark decides from the characters around a ``**`` whether it opens
    or closes, and a Chinese character counts as a letter, not as space or
    punctuation (the bilingual review's rule C3): ``称为**{term}`…`**`` prints
    its asterisks. The block is rendered with markdown-it (the parser MyST is
    built on), maths and code left out, and any ``**`` left in the text is
    reported with what surrounds it.
    """
    from markdown_it import MarkdownIt

    text = DISPLAY_MATHS.sub(" X ", zh)
    text = INLINE_MATHS.sub("X", text)
    text = FENCE_LINE.sub(" ", text)
    html = MarkdownIt("commonmark").render(text)
    html = re.sub(r"<code>.*?</code>", "C", html, flags=re.S)
    plain = re.sub(r"<[^>]+>", "", html)
    return [
        plain[max(0, m.start() - 8) : m.end() + 8].replace("\n", " ")
        for m in re.finditer(r"\*\*", plain)
    ]


def style_problems(zh: str, glossary: bool = False) -> list[str]:
    """What breaks a Chinese block: a break between Chinese characters, stray **.

    In a glossary entry the line after the "· 定义见 {doc}`…`。" line is set
    apart as its own paragraph (book/_ext/glossary_index.py), so that one
    break is allowed.
    """
    found = []
    text = re.sub(r"`(”一章)?。\n", "`。", zh) if glossary else zh
    if CJK_BREAK.search(text):
        at = CJK_BREAK.search(text).group(0).replace("\n", "⏎")
        found.append(
            f"a line break between two Chinese characters ({at!r}): HTML shows "
            "it as a space; join the lines or break next to a Latin word"
        )
    for around in printed_asterisks(zh):
        found.append(
            f"** that CommonMark prints instead of reading as bold ({around!r}): "
            "put full-width punctuation outside the bold, and a space before an "
            "opening ** after a Chinese character (after a closing one before it) "
            "where it opens (closes) on a role or punctuation"
        )
    return found


def glossary_problems(en: str, zh: str, terms: dict[str, str]) -> list[str]:
    """A glossary entry in Chinese: its Chinese name, then its English term lines."""
    en_terms = [line for line in en.splitlines() if line and not line.startswith(" ")]
    zh_terms = [line for line in zh.splitlines() if line and not line.startswith(" ")]
    chinese = terms.get(en_terms[0].casefold()) if en_terms else None
    if not en_terms or chinese is None:
        return []
    if chinese.casefold() in {t.casefold() for t in en_terms}:  # a name kept as it is
        want = en_terms
    else:
        want = [chinese, *en_terms]
    if zh_terms != want:
        return [
            f"the entry's term lines are {zh_terms}; they must be {want} (the "
            "Chinese name from the English entry, then its English terms)"
        ]
    return []


def problems(
    source: Path, root: Path = ROOT, terms: dict[str, str] | None = None
) -> list[str]:
    """What is wrong with a source's catalogue (empty when it is complete and true)."""
    behind, wrong = findings(source, root, terms)
    return behind + wrong


def findings(
    source: Path, root: Path = ROOT, terms: dict[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """``(behind, wrong)``: where the catalogue lags the English (a block not
    translated yet, or translated before its English changed: the Chinese
    edition shows the English there), and where a translation is wrong (its
    markup, terms or style)."""
    path = catalogue_path(source, root)
    terms = glossary_terms(root) if terms is None else terms
    entries = load(path)
    by_id = {e["id"]: e for e in entries}
    name = str(source.relative_to(root))
    behind, found = [], []
    current = units(source)
    ids = {digest(u.text) for u in current}
    for unit in current:
        entry = by_id.get(digest(unit.text))
        first = unit.text.strip().splitlines()[0][:60]
        if entry is None:
            behind.append(
                f"{name}, {unit.where}: no translation of {first!r} "
                "(run tools/translations.py update)"
            )
            continue
        if not entry.get("zh", "").strip():
            behind.append(
                f"{name}, {unit.where}: the translation of {first!r} is empty"
            )
            continue
        if "old_en" in entry or "old_zh" in entry:
            behind.append(
                f"{name}, {unit.where}: {first!r} changed; its old translation "
                "is still beside it (old_en, old_zh): translate and remove them"
            )
        lost, added = (
            markup(unit.text) - markup(entry["zh"]),
            markup(entry["zh"]) - markup(unit.text),
        )
        if lost or added:
            found.append(
                f"{name}, {unit.where}: the translation of {first!r} changes the "
                f"markup: missing {sorted(lost)}, extra {sorted(added)}"
            )
        found += [
            f"{name}, {unit.where}: {p}" for p in term_problems(entry["zh"], terms)
        ]
        glossary = source.parent.name == "glossary"
        found += [
            f"{name}, {unit.where}: {p}" for p in style_problems(entry["zh"], glossary)
        ]
        if glossary and not unit.text.startswith(("```", "%")):
            found += [
                f"{name}, {unit.where}: {p}"
                for p in glossary_problems(unit.text, entry["zh"], terms)
            ]
    for entry in entries:
        if entry["id"] not in ids:
            behind.append(
                f"{name}: stale translation {entry['id']} of "
                f"{entry['en'].strip().splitlines()[0][:60]!r}: its English changed or "
                "went (run tools/translations.py update)"
            )
    return behind, found


# --- the Chinese sources ----------------------------------------------------


def translate_text(text: str, table: dict[str, str]) -> tuple[str, int]:
    """A Markdown text with its translated blocks replaced; (text, untranslated)."""
    out, last, missing = [], 0, 0
    for a, b in block_spans(text):
        block = text[a:b]
        out.append(text[last:a])
        zh = table.get(digest(block), "")
        if not zh.strip() and words_outside_markup(block):
            missing += 1
        out.append(zh if zh.strip() else block)
        last = b
    out.append(text[last:])
    return "".join(out), missing


def translated(source: Path, root: Path = ROOT) -> tuple[str, int]:
    """A source's text, Chinese where translated; (text, untranslated blocks)."""
    table = {
        e["id"]: e.get("zh", "")
        for e in load(catalogue_path(source, root))
        if "old_en" not in e
    }
    if source.suffix != ".ipynb":
        return translate_text(source.read_text(encoding="utf-8"), table)
    nb = json.loads(source.read_text(encoding="utf-8"))
    missing = 0
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text, n = translate_text("".join(cell["source"]), table)
            cell["source"] = text.splitlines(keepends=True)
            missing += n
        meta = cell.get("metadata", {}).get("mystnb", {})
        for key, field in (("figure", "caption"), ("image", "alt")):
            value = meta.get(key, {}).get(field)
            if value and words_outside_markup(value):
                zh = table.get(digest(value), "")
                meta[key][field] = zh if zh.strip() else value
                missing += not zh.strip()
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n", missing


def translated_toc(root: Path = ROOT) -> str:
    """_toc.yml with its part captions from the catalogue of _toc.yml."""
    table = {
        e["id"]: e.get("zh", "") for e in load(catalogue_path(root / "_toc.yml", root))
    }
    lines = []
    for line in (
        (root / "_toc.yml").read_text(encoding="utf-8").splitlines(keepends=True)
    ):
        m = TOC_CAPTION.match(line)
        if m:
            zh = table.get(digest(yaml.safe_load(m.group(2))), "")
            if zh.strip():
                line = f"{m.group(1)}{json.dumps(zh, ensure_ascii=False)}\n"
        lines.append(line)
    return "".join(lines)


# The book's own files that the Chinese tree does not take from the repository.
OWN = {"_config.yml", "_toc.yml", "book", "notebooks"}
SKIP = {
    ".git",
    ".venv",
    "_build",
    "node_modules",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
}


def build(out: Path, root: Path = ROOT) -> dict[str, int]:
    """Write the book in Chinese into ``out``; return the English blocks left by source.

    Every translated source (chapter, page, glossary fragment, the part
    captions of ``_toc.yml``) is written as a file, with each block that has
    a translation in Chinese; every other file and folder is a symbolic link
    to the repository's own, so code, outputs, figures, extensions and static
    files are shared, never copied. ``_config.yml`` is written by
    ``tools/prebuilt_config.py --language zh_CN`` (``make book-zh``).
    """
    out.mkdir(parents=True, exist_ok=True)
    sources = {s.relative_to(root): s for s in toc_sources(root)}
    report = {}

    def mirror(folder: Path) -> None:
        rel = folder.relative_to(root)
        (out / rel).mkdir(parents=True, exist_ok=True)
        for entry in sorted(folder.iterdir()):
            name = entry.relative_to(root)
            if entry.is_dir() and any(s.is_relative_to(name) for s in sources):
                mirror(entry)
            elif name in sources:
                text, missing = translated(entry, root)
                (out / name).write_text(text, encoding="utf-8")
                report[str(name)] = missing
            else:
                (out / name).symlink_to(entry.resolve())

    for entry in sorted(root.iterdir()):
        if entry.name in SKIP or entry.name in OWN:
            continue
        (out / entry.name).symlink_to(entry.resolve())
    for folder in ("book", "notebooks"):
        if (root / folder).is_dir():
            mirror(root / folder)
    (out / "_toc.yml").write_text(translated_toc(root), encoding="utf-8")
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_update = sub.add_parser("update")
    p_update.add_argument("sources", nargs="+", type=Path)
    p_check = sub.add_parser("check")
    p_check.add_argument("--complete", action="store_true")
    p_check.add_argument("--behind-ok", action="store_true")
    p_build = sub.add_parser("build")
    p_build.add_argument("out", type=Path)
    sub.add_parser("status")
    args = parser.parse_args(argv)

    if args.command == "update":
        for source in args.sources:
            new, stale = update(source.resolve())
            print(f"{source}: {new} new block(s) to translate, {stale} stale entries")
        return 0
    sources = toc_sources(ROOT)
    if args.command == "build":
        if args.out.exists():
            shutil.rmtree(args.out)
        report = build(args.out)
        left = {k: v for k, v in report.items() if v}
        print(
            f"{len(report)} sources written to {args.out}; English blocks left: "
            f"{sum(left.values())} in {len(left)} source(s)"
        )
        return 0
    terms = glossary_terms(ROOT)
    found, behind, english = [], [], []
    for source in sources:
        if not catalogue_path(source, ROOT).exists():
            english.append(str(source.relative_to(ROOT)))
            continue
        late, wrong = findings(source, ROOT, terms)
        found += wrong
        behind += late
    if args.command == "status":
        for source in sources:
            n = len(units(source))
            done = sum(
                1
                for e in load(catalogue_path(source))
                if e.get("zh", "").strip() and "old_en" not in e
            )
            print(f"{done:4d}/{n:<4d} {source.relative_to(ROOT)}")
        return 0
    if args.behind_ok:
        for line in behind:
            print(f"behind (shown in English; make editions fails on it): {line}")
    else:
        found = behind + found
    for line in found:
        print(line)
    print(
        f"translations ({LANGUAGE}): {len(sources) - len(english)} of {len(sources)} "
        "sources "
        f"have a catalogue; {len(found)} problem(s)"
        + (f", {len(behind)} block(s) behind the English" if args.behind_ok else "")
    )
    if english:
        print("still English in the Chinese edition: " + ", ".join(english))
    return 1 if found or (args.complete and english) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
