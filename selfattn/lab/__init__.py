"""The course's bench: what the chapters need besides attention itself.

Figures (:mod:`~selfattn.lab.plotting`, :mod:`~selfattn.lab.diagrams`),
training (:mod:`~selfattn.lab.training`), data sets
(:mod:`~selfattn.lab.data`), seeds (:mod:`~selfattn.lab.seeding`), the
notebooks' glue (:mod:`~selfattn.lab.notebook`), claims about trained or
sampled quantities (:mod:`~selfattn.lab.claims`) and measuring
(:mod:`~selfattn.lab.measure`). The bench imports the library
(``selfattn``); the library never imports the bench (a test enforces it), so
``selfattn`` alone depends on torch and numpy only. The bench's own
dependencies (matplotlib, networkx, scikit-learn, tqdm) come with the extra:
``pip install "selfattn[lab]"``.

Import the modules you need: ``from selfattn.lab import plotting, seeding``.
"""

import importlib.util as _util


def _missing(names: tuple[str, ...]) -> list[str]:
    """The modules of ``names`` that this Python cannot import."""
    out = []
    for name in names:
        try:
            found = _util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: sys.modules[name] is None
            found = False
        if not found:
            out.append(name)
    return out


_LAB = ("matplotlib", "networkx", "sklearn", "tqdm")  # the extra "lab"
if _missing(_LAB):
    raise ImportError(
        "selfattn.lab needs the extra 'lab' (missing: "
        + ", ".join(_missing(_LAB))
        + '): pip install "selfattn[lab]"'
    )
