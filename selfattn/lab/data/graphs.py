"""Zachary's karate club (from networkx) for node classification."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from selfattn._checks import check_int
from selfattn.lab.data._common import _rng


@dataclass
class KarateClub:
    """Zachary's karate club as tensors for node classification.

    Attributes:
        graph: the networkx graph (34 nodes, 78 edges); node ``i`` is row ``i``.
        adjacency: ``(N, N)`` float32, 1 where two members interacted, else 0.
        features: ``(N, F)`` float32 node features.
        labels: ``(N,)`` 0 = Mr. Hi's club, 1 = the Officer's club.
        train_mask: ``(N,)`` bool, the labelled nodes; test_mask: the others.
        class_names: ``("Mr. Hi", "Officer")``.
    """

    graph: Any
    adjacency: Tensor
    features: Tensor
    labels: Tensor
    train_mask: Tensor
    test_mask: Tensor
    class_names: tuple[str, ...] = ("Mr. Hi", "Officer")


def karate_club(
    *,
    features: str = "identity",
    labelled_per_class: int = 1,
    generator: np.random.Generator | int | None = None,
) -> KarateClub:
    """Zachary's (1977) karate club, split for semi-supervised learning.

    The club split in two after a dispute between the instructor (node 0,
    "Mr. Hi") and the administrator (node 33, "Officer"); the label of a
    member is the club they joined. As in the semi-supervised setting of Kipf
    and Welling (2017), only a few nodes are labelled: always the two leaders,
    plus ``labelled_per_class - 1`` more per club drawn with ``generator``. The
    graph's interaction counts are ignored: an edge is an edge.

    Args:
        features: ``"identity"``: one-hot node ids, ``(N, N)``, so features
            say nothing about the club and only the edges can help;
            ``"degree"``: ``(N, 2)``, the degree divided by the largest
            degree, and a constant 1.
        labelled_per_class: labelled nodes per club (at least 1).
        generator: required when ``labelled_per_class > 1``.

    Returns:
        A :class:`KarateClub`.
    """
    import networkx as nx  # here: 0.5 s to import, and only one chapter needs it

    check_int("labelled_per_class", labelled_per_class)
    G = nx.karate_club_graph()
    N = G.number_of_nodes()
    A = torch.tensor(nx.to_numpy_array(G, nodelist=range(N)) != 0, dtype=torch.float32)
    labels = torch.tensor([int(G.nodes[i]["club"] != "Mr. Hi") for i in range(N)])
    if features == "identity":
        X = torch.eye(N)
    elif features == "degree":
        deg = A.sum(1)
        X = torch.stack([deg / deg.max(), torch.ones(N)], dim=1)  # (N, 2)
    else:
        raise ValueError(f"features must be 'identity' or 'degree', got {features!r}")
    train = torch.zeros(N, dtype=torch.bool)
    train[[0, 33]] = True
    if labelled_per_class > 1:
        if generator is None:
            raise ValueError(
                "labelled_per_class > 1 draws nodes at random: pass generator"
            )
        rng = _rng(generator)
        for c in (0, 1):
            pool = [i for i in range(N) if labels[i] == c and not train[i]]
            train[rng.choice(pool, labelled_per_class - 1, replace=False)] = True
    return KarateClub(G, A, X, labels, train, ~train)
