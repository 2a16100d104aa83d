"""The notation page is the contract: every chapter uses its symbols in its sense.

`book/notation.md` fixes one meaning per symbol. These checks catch the
drifts the reviewers of the first edition found, where a pattern can see them:
a raw score alpha that "sums to 1", "h heads", a head numbered 0 in prose or
printed output, phi outside kernelised attention, H for an image's height, m
for the Performer's feature count, the positional table indexed by j, and an
unscaled dot product presented as the score. Each check reads the chapters'
markdown (and printed text for the head numbering), so a regression in any
chapter fails here with the cell that has it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NOTATION = (ROOT / "book" / "notation.md").read_text()

# Chapters where phi is the feature map of kernelised attention.
PHI_CHAPTERS = {"efficient-attention", "attention-vs-rnn", "complexity"}


def _markdown(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text())["cells"]
    return [
        (i, "".join(c["source"]))
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown"
    ]


def _printed(path: Path) -> list[tuple[int, str]]:
    """Stream and text/plain outputs of the code cells."""
    found = []
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            found.append((i, "".join(text)))
    return found


def _hits(pattern: str, cells: list[tuple[int, str]], flags: int = 0) -> list[str]:
    return [
        f"cell {i}: ...{m.group(0)}..."
        for i, text in cells
        for m in re.finditer(pattern, text, flags)
    ]


# An unprimed alpha with its indices (alpha' is excluded: the quote follows alpha).
ALPHA = r"\\alpha_\{?[a-z][a-z,\s]*\}?"
# The limits of a sum: _j, _{j=1}, _{j=1}^{T_k}.
LIMITS = r"(_\{[^}]*\}|_[a-z])(\^\{[^}]*\}|\^[a-zA-Z])?"

RULES = {
    # alpha (unprimed) is the score; only alpha' is normalised.
    "a raw score alpha summed to 1 (the weight is alpha')": (
        rf"\\sum{LIMITS}\s*{ALPHA}\s*=\s*1\b"
    ),
    "a raw score alpha defined by a softmax (the weight is alpha')": (
        rf"{ALPHA}\s*=\s*\\frac\{{[^}}]*(\\exp|e\^)"
    ),
    "a raw score alpha weighting values (the weight is alpha')": (
        rf"\\sum{LIMITS}\s*{ALPHA}\s*(\\[,;]\s*)?\\?(v|h|b|x)[_^]"
    ),
    "'h heads' (H is the number of heads, h the head index)": r"\$h\$[\s-]+heads",
    "'head 0' (heads are numbered from 1)": r"\b[Hh]ead 0\b",
    "H for an image's height (H is the number of heads)": r"\$H\s*\\times\s*W\$",
    "m for the Performer's feature count (r; m_i is the running max)": (
        r"\$m\$\s+(random\s+)?features"
    ),
    "the positional table indexed by j (the frequency index is f)": (
        r"P_\{[a-z],\s?2j(\+1)?\}"
    ),
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.parametrize("rule", sorted(RULES))
def test_chapter_follows_the_notation_page(path, rule):
    cells = _markdown(path)
    if "head 0" in rule:
        cells = cells + _printed(path)
    hits = _hits(RULES[rule], cells)
    assert not hits, f"{path.name}: {rule}: " + "; ".join(hits)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_phi_only_for_the_feature_map(path):
    if path.stem in PHI_CHAPTERS:
        return
    hits = _hits(r"\\(var)?phi\b|[φϕ]", _markdown(path))
    assert not hits, (
        f"{path.name}: phi is reserved for the feature map of kernelised "
        "attention (write tanh as tanh): " + "; ".join(hits)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_scores_are_scaled_unless_said_otherwise(path):
    """`alpha_{i,j} = q^i . k^j` with no 1/sqrt(d_k) only where the cell says
    it is the unscaled dot product."""
    vec = r"[a-z]\^\{?[ij]\}?"
    dot = rf"\\alpha_\{{i,\s?j\}}\s*=\s*{vec}\s*\\cdot\s*{vec}(?!\s*/)"
    cells = [(i, t) for i, t in _markdown(path) if "unscaled" not in t.lower()]
    hits = _hits(dot, cells)
    assert not hits, f"{path.name}: an unscaled score not called so: " + "; ".join(hits)


def test_the_notation_page_defines_every_reserved_symbol():
    for symbol in (
        r"$\alpha_{i,j}$",
        r"$\alpha'_{i,j}$",
        "$H$",
        "$h$",
        r"$\varphi$",
        "$r$",
        r"$m_i$",
        r"$H_{\text{img}} \times W_{\text{img}}$",
        r"$k_{\text{proj}}$",
    ):
        assert symbol in NOTATION, f"book/notation.md does not define {symbol}"


def test_the_rules_catch_what_they_are_for():
    """Each rule fires on the drift it names (so a typo in a pattern cannot
    silently disable it)."""
    examples = {
        "a raw score alpha summed to 1 (the weight is alpha')": (
            r"$\sum_j \alpha_{ij} = 1$"
        ),
        "a raw score alpha defined by a softmax (the weight is alpha')": (
            r"\alpha_j = \frac{\exp s_j}{\sum_l \exp s_l}"
        ),
        "a raw score alpha weighting values (the weight is alpha')": (
            r"C_i = \sum_{j=1}^{m} \alpha_{ij}\, h_j"
        ),
        "'h heads' (H is the number of heads, h the head index)": "with $h$ heads",
        "'head 0' (heads are numbered from 1)": "head 0 attends",
        "H for an image's height (H is the number of heads)": r"an $H \times W$ image",
        "m for the Performer's feature count (r; m_i is the running max)": (
            "with $m$ random features"
        ),
        "the positional table indexed by j (the frequency index is f)": r"$P_{i,2j+1}$",
    }
    assert set(examples) == set(RULES)
    for rule, text in examples.items():
        assert _hits(RULES[rule], [(0, text)]), rule
    alpha = RULES["a raw score alpha summed to 1 (the weight is alpha')"]
    assert not _hits(alpha, [(0, r"\sum_j \alpha'_{i,j} = 1")])
    weighting = RULES["a raw score alpha weighting values (the weight is alpha')"]
    assert not _hits(weighting, [(0, r"b^i = \sum_j \alpha'_{i,j}\, v^j")])
