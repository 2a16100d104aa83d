"""The course's bench: what the chapters need besides attention itself.

Figures (:mod:`~selfattn.lab.plotting`, :mod:`~selfattn.lab.diagrams`),
training (:mod:`~selfattn.lab.training`), data sets
(:mod:`~selfattn.lab.data`), seeds (:mod:`~selfattn.lab.seeding`), the
notebooks' glue (:mod:`~selfattn.lab.notebook`) and measuring
(:mod:`~selfattn.lab.measure`). The bench imports the library
(``selfattn``); the library never imports the bench (a test enforces it), so
``selfattn`` alone depends on torch and numpy only. The bench's own
dependencies (matplotlib, networkx, scikit-learn, tqdm) come with the extra:
``pip install "selfattn[lab]"``.

Import the modules you need: ``from selfattn.lab import plotting, seeding``.
"""
