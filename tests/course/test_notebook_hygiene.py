"""Every chapter notebook is committed executed, clean and listed in the book.

nbval compares a fresh run with the stored outputs; these checks make sure
there is something to compare (no unexecuted cells) and that the committed
file is what a reader should see.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TOC = (ROOT / "_toc.yml").read_text()


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"])]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found in notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_listed_in_the_table_of_contents(path):
    assert f"file: notebooks/{path.stem}\n" in TOC, f"{path.name} is not in _toc.yml"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_top_to_bottom_in_one_run(path):
    counts = [c.get("execution_count") for c in _code_cells(_load(path))]
    assert None not in counts, f"{path.name} has unexecuted code cells"
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..n (run it top to bottom "
        "with `make execute NB=...`)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_errors_paths_or_addresses_in_outputs(path):
    nb = _load(path)
    for cell in _code_cells(nb):
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", f"{path.name} stores an error output"
            text = json.dumps(out)
            assert not re.search(r"at 0x[0-9a-f]{6,}", text), (
                f"{path.name} prints an object address: end the line with ';'"
            )
            assert not re.search(r"/(work|tmp|root|home|Users)/[\w.-]+", text), (
                f"{path.name} shows an absolute machine path in an output"
            )
            assert "Warning" not in "".join(out.get("text", "")), (
                f"{path.name} shows a warning in its output"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_kernel_and_first_cells(path):
    nb = _load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert nb["cells"][0]["cell_type"] == "markdown"
    assert "".join(nb["cells"][0]["source"]).startswith("# "), "first cell: the title"
    first_code = _code_cells(nb)[0]
    install = "".join(first_code["source"])
    assert install.startswith("# Install the course library") and (
        "util.find_spec" in install and '"selfattn' in install
    ), f"{path.name}: the first code cell must be the install cell (see CONTRIBUTING)"
    assert "remove-cell" in first_code["metadata"].get("tags", [])


# A seed typed as a literal: every seed must come from selfattn.lab.seeding, so the
# seed passes of `make test` (SELFATTN_SEED=1, 2) really change every draw.
LITERAL_SEED = re.compile(
    r"(?<!seeding\.)manual_seed\(\s*\d"  # torch.manual_seed(0), g.manual_seed(1)
    r"|default_rng\(\s*\d"  # np.random.default_rng(0)
    r"|\b(?:seed|generator|random_state)\s*=\s*\d"  # generator=9, random_state=0
    r"|np\.random\.seed\(|random\.seed\("
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_seed_comes_from_the_seed_helper(path):
    nb = _load(path)
    source = "\n".join("".join(c["source"]) for c in _code_cells(nb))
    assert re.search(
        r"from selfattn\.lab import (\([^)]*)?[^\n]*\bseeding\b", source
    ), f"{path.name}: import the seed helper (from selfattn.lab import seeding)"
    literal = [m.group(0) for m in LITERAL_SEED.finditer(source)]
    assert not literal, (
        f"{path.name}: seeds typed as literals {literal}; derive them with "
        "seeding.seed(k) / seeding.generator(k) / seeding.rng(k) / seeding.seeds(n)"
    )


def _parse(source: str) -> ast.Module:
    """A cell's code as Python (IPython's ``%`` and ``!`` lines as ``pass``)."""
    code = "\n".join(
        "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in source.splitlines()
    )
    return ast.parse(code)


def _asserts(source: str) -> bool:
    """True if the cell checks something: an ``assert`` statement, a ``claim``
    or an ``assert_*`` call (not just the word)."""
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
            if name == "claim" or name.startswith("assert_"):
                return True
    return False


# A claim about a trained or sampled quantity is one draw of a random process:
# it goes through selfattn.lab.claims.claim, which `make sweep` records over
# many draws (tests/SEEDS.md), never through a bare assert. A chapter's
# training and sampling results live in the cells nbval does not compare
# (tagged nbval-ignore-output); a bare assert that orders (<, <=, >, >=) a name
# bound at the top of such a cell is a bare claim on a trained quantity.
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a cell binds at its top level (not loop or comprehension names)."""
    out: set[str] = set()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return out


def bare_trained_asserts(cells: list[dict]) -> list[tuple[int, str]]:
    """(code cell index, line) of each bare assert ordering a trained quantity."""
    trained: set[str] = set()
    found = []
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        tree = _parse(source)
        if "nbval-ignore-output" in cell["metadata"].get("tags", []):
            trained |= _top_level_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assert):
                continue
            orders = any(
                isinstance(op, _ORDER)
                for c in ast.walk(node.test)
                if isinstance(c, ast.Compare)
                for op in c.ops
            )
            names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
            if orders and names & trained:
                found.append((i, source.splitlines()[node.lineno - 1].strip()))
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_trained_quantities_are_claimed_not_asserted(path):
    """Every threshold on a trained or sampled number goes through ``claim``."""
    found = bare_trained_asserts(_code_cells(_load(path)))
    assert not found, (
        f"{path.name}: a bare assert on a trained or sampled quantity (code cell, "
        f"line): {found}. State it with selfattn.lab.claims.claim(name, value, op, "
        "threshold) so `make sweep` measures it over many draws (CONTRIBUTING, "
        "'Claims over many draws')"
    )


def test_the_trained_assert_check_fires():
    """The rule above sees a bare assert and accepts the claim that replaces it."""

    def cell(source, tagged=False):
        tags = ["nbval-ignore-output"] if tagged else []
        return {"source": [source], "metadata": {"tags": tags}}

    trained = cell("acc = np.array([train(s) for s in seeds])", tagged=True)
    bare = cell("assert acc.min() > 0.85, acc")
    claimed = cell('claim("every run learns", acc.min(), ">", 0.85)')
    exact = cell("assert acc.shape == (3,)")
    assert bare_trained_asserts([trained, bare]) == [
        (1, "assert acc.min() > 0.85, acc")
    ]
    assert bare_trained_asserts([trained, claimed, exact]) == []
    assert bare_trained_asserts([cell("acc = 1.0"), bare]) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_ignored_output_is_asserted(path):
    """A cell nbval does not compare must have its claim asserted, there or next."""
    cells = _code_cells(_load(path))
    for i, cell in enumerate(cells):
        if "nbval-ignore-output" not in cell["metadata"].get("tags", []):
            continue
        here = "".join(cell["source"])
        after = "".join(cells[i + 1]["source"]) if i + 1 < len(cells) else ""
        assert _asserts(here) or _asserts(after), (
            f"{path.name}: code cell {i} is tagged nbval-ignore-output but neither it "
            "nor the next code cell asserts anything: its output is checked nowhere"
        )


# Maths in a figure caption is written as maths ($W_q$, $T \times T$) and
# code as code (`window_mask`), as in the prose: a bare W_q shows its
# underscore to the reader, and a bare ℓ in a caption makes the PDF's labels
# never settle (xelatex with unicode-math: "Label(s) may have changed").
BARE_MATHS = re.compile(r"[A-Za-z]+_[A-Za-z0-9{]|\^[A-Za-z0-9{]|[×≥≤ℓ√∑∂‖αβγδσφω]")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_figure_captions_write_maths_as_maths(path):
    bare = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
        caption = figure.get("caption", "")
        outside = re.sub(r"\$[^$]*\$|`[^`]*`", " ", caption)
        bare += [(i, m) for m in BARE_MATHS.findall(outside)]
    assert not bare, f"maths or code outside $...$ / `...` in captions: {bare}"


def test_the_caption_check_fires():
    assert BARE_MATHS.findall("tiles of B_q × B_k and m_i, ℓ_i, W^O")
    assert not BARE_MATHS.findall(re.sub(r"\$[^$]*\$", " ", "tiles $B_q$, $W^O$"))


# {ref} to an exercise renders "Exercise 3.2" itself, so "exercise {ref}`...`"
# reads "exercise Exercise 3.2" in the book.
EXERCISE_TWICE = re.compile(r"\b[Ee]xercises?\s+\{ref\}`[^`]*-ex-[^`]*`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_exercise_named_twice(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    texts = ["".join(c["source"]) + json.dumps(c.get("metadata", {})) for c in cells]
    twice = [(i, m) for i, t in enumerate(texts) for m in EXERCISE_TWICE.findall(t)]
    assert not twice, f"'exercise {{ref}}' renders 'exercise Exercise n.m': {twice}"


def test_the_exercise_check_fires():
    assert EXERCISE_TWICE.findall("see exercise\n{ref}`ch-ex-a`")
    assert not EXERCISE_TWICE.findall("see {ref}`ch-ex-a`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_cell_ends_on_a_bare_glue_call(path):
    """glue returns its value, so a cell ending on ``glue(...)`` prints a stray
    number in the book; assign it (``n = glue(...)``) instead."""
    bare = []
    for i, cell in enumerate(_code_cells(_load(path))):
        lines = [ln for ln in "".join(cell["source"]).splitlines()]
        code = "\n".join(ln for ln in lines if not ln.lstrip().startswith(("%", "!")))
        try:
            body = ast.parse(code).body
        except SyntaxError:
            continue
        last = body[-1] if body else None
        if (
            isinstance(last, ast.Expr)
            and isinstance(last.value, ast.Call)
            and getattr(last.value.func, "id", "") == "glue"
            and not code.rstrip().endswith(";")
        ):
            bare.append(i)
    assert not bare, f"code cells {bare} end on a bare glue(...) call"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_alt_text_sits_where_the_book_reads_it(path):
    """MyST-NB reads a figure's alt text from ``metadata.mystnb.image.alt``
    only; under a top-level ``image`` key the built page fell back to the
    file name (four chapters did, until a review looked at the HTML)."""
    misplaced = [
        i for i, c in enumerate(_load(path)["cells"]) if "image" in c["metadata"]
    ]
    assert not misplaced, (
        f"{path.name}: cells {misplaced} keep their alt text under metadata.image; "
        "move it to metadata.mystnb.image"
    )
