"""A graph drawn with its attention weights on the edges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from selfattn.lab.fonts import cjk_fallback
from selfattn.lab.plotting._style import (
    PALETTE,
    _as_array,
    _new_ax,
)

__all__ = ["graph_attention_plot"]


def graph_attention_plot(
    graph: Any,
    weights: Any,
    *,
    pos: Mapping[Any, Any] | None = None,
    node_colors: Any = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw a graph with its attention: arrow ``j -> i`` is the weight ``w[i, j]``.

    The graph's edges are thin grey lines; each attention weight is an arrow
    from key node ``j`` to query node ``i`` (the value flowing into ``i``)
    whose width and opacity are proportional to the weight. Weights below 1 %
    of the largest and self-weights ``w[i, i]`` are not drawn.

    Args:
        graph: a networkx graph with ``N`` nodes; row/column ``i`` of
            ``weights`` is the ``i``-th node of ``list(graph.nodes)``.
        weights: ``(N, N)`` attention weights, query rows and key columns.
        pos: ``{node: (x, y)}``; ``nx.spring_layout(graph, seed=0)`` if None.
        node_colors: ``N`` integer classes (coloured from ``PALETTE``), ``N``
            matplotlib colours, one colour, or None.
        ax: axes to draw on; a new figure when None.

    Returns:
        The axes.
    """
    import networkx as nx  # imported here: only the graph chapter needs it

    nodes = list(graph.nodes)
    w = _as_array("weights", weights, 2)
    if w.shape != (len(nodes), len(nodes)):
        raise ValueError(
            f"weights has shape {w.shape} but the graph has {len(nodes)} nodes; "
            f"expected ({len(nodes)}, {len(nodes)})"
        )
    pos = nx.spring_layout(graph, seed=0) if pos is None else pos
    if node_colors is None:
        node_colors = "#DDDDDD"
    elif np.issubdtype(np.asarray(node_colors).dtype, np.integer):
        node_colors = [PALETTE[int(c) % len(PALETTE)] for c in node_colors]
    ax = _new_ax(ax, (6.0, 5.0))
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#BBBBBB", width=0.8)
    top = w.max() if w.max() > 0 else 1.0
    pairs = [(i, j) for i, j in np.argwhere(w >= 0.01 * top) if i != j]
    if pairs:
        strength = np.array([w[i, j] / top for i, j in pairs])
        edges = [(nodes[j], nodes[i]) for i, j in pairs]  # key j -> query i
        rgba = [(0.0, 0.0, 0.0, float(s)) for s in strength]  # alpha = strength
        width = list(0.5 + 3.5 * strength)
        arrows = {"arrowsize": 10, "connectionstyle": "arc3,rad=0.15", "ax": ax}
        G = nx.DiGraph(edges)
        nx.draw_networkx_edges(
            G, pos, edgelist=edges, width=width, edge_color=rgba, **arrows
        )
    nx.draw_networkx_nodes(
        graph, pos, ax=ax, node_color=node_colors, edgecolors="black", linewidths=0.5
    )
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=8)
    ax.set_axis_off()
    cjk_fallback(ax.figure)
    return ax
