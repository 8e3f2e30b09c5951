"""Walk and draw the backward graph behind a tensor (matplotlib only, no graphviz).

A tensor produced by a differentiable op carries ``grad_fn``, a backward
node; each node lists the nodes it sends gradients to in
``node.next_functions`` (``(node, input_nr)`` pairs, ``(None, 0)`` for an
input that needs no gradient). Leaves that require grad end in an
``AccumulateGrad`` node whose ``.variable`` is the leaf itself.

:func:`backward_graph` collects the nodes and edges, :func:`depths` gives
each node its column (longest path from the output), :func:`layout` turns
that into coordinates (leaves on the left, output on the right) and
:func:`draw_graph` draws it.
"""
from __future__ import annotations

from typing import Any

import torch

Node = Any  # torch's backward nodes are C++ objects without a public Python base class


def root_of(t: torch.Tensor | Node | None) -> Node | None:
    """Return the backward node to start from: ``t.grad_fn`` for a tensor, ``t`` itself for a node, else ``None``."""
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.grad_fn
    return t


def backward_graph(t: torch.Tensor | Node | None) -> tuple[list[Node], list[tuple[int, int]]]:
    """Return ``(nodes, edges)`` of the backward graph reachable from ``t``.

    ``nodes``: every distinct node once, in depth-first discovery order (not a
    topological order). ``edges``: ``(i, j)`` index pairs meaning node ``i``
    sends a gradient to node ``j`` (one pair per ``next_functions`` entry, so
    ``x * x`` gives two edges to the same ``AccumulateGrad``). A leaf or a
    tensor without history gives ``([], [])``.
    """
    root = root_of(t)
    if root is None:
        return [], []
    index: dict[int, int] = {}
    nodes: list[Node] = []
    edges: list[tuple[int, int]] = []
    stack = [root]
    index[id(root)] = 0
    nodes.append(root)
    while stack:
        node = stack.pop()
        i = index[id(node)]
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if id(nxt) not in index:
                index[id(nxt)] = len(nodes)
                nodes.append(nxt)
                stack.append(nxt)
            edges.append((i, index[id(nxt)]))
    return nodes, edges


def depths(n_nodes: int, edges: list[tuple[int, int]]) -> list[int]:
    """Return, for each node index, the length (in edges) of the longest path from node 0 (the output's node) to it.

    Sorting nodes by this depth gives a topological order: a node always has a
    larger depth than every node that sends it a gradient.
    """
    children: dict[int, list[int]] = {i: [] for i in range(n_nodes)}
    indeg = [0] * n_nodes
    for i, j in edges:
        children[i].append(j)
        indeg[j] += 1
    depth = [0] * n_nodes
    ready = [i for i in range(n_nodes) if indeg[i] == 0]
    while ready:
        i = ready.pop()
        for j in children[i]:
            depth[j] = max(depth[j], depth[i] + 1)
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return depth


def node_label(node: Node, names: dict[int, str] | None = None) -> str:
    """Return a short label: the node's class name, plus the leaf's name or shape for ``AccumulateGrad``.

    ``names`` maps ``id(leaf_tensor)`` to a display name (e.g. ``{id(w): "w"}``).
    """
    label = type(node).__name__
    var = getattr(node, "variable", None)
    if isinstance(var, torch.Tensor):
        name = (names or {}).get(id(var))
        label += f"\n{name}" if name else f"\n{tuple(var.shape)}"
    return label


def layout(n_nodes: int, edges: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """Return ``(x, y)`` for each node, in axis units.

    x is the column: the output's node is rightmost, nodes that feed nothing
    further (the leaves' ``AccumulateGrad``) all sit in the leftmost column
    (x = 0), the others at their longest distance from the output. Within a
    column nodes are one unit apart, centred on y = 0, ordered by the mean y
    of the nodes they receive gradients from (fewer crossing arrows).
    """
    if n_nodes == 0:
        return []
    depth = depths(n_nodes, edges)
    max_d = max(depth)
    has_child = {i for i, _ in edges}
    for i in range(n_nodes):
        if i not in has_child and i != 0:
            depth[i] = max_d
    parents: dict[int, list[int]] = {i: [] for i in range(n_nodes)}
    for i, j in edges:
        parents[j].append(i)
    columns: dict[int, list[int]] = {}
    for i, d in enumerate(depth):
        columns.setdefault(d, []).append(i)
    pos: list[tuple[float, float]] = [(0.0, 0.0)] * n_nodes
    for d in sorted(columns):
        members = columns[d]
        if d > 0:
            members.sort(key=lambda i: -sum(pos[p][1] for p in parents[i]) / max(1, len(parents[i])))
        k = len(members)
        for r, i in enumerate(members):
            pos[i] = (float(max_d - d), (k - 1) / 2.0 - r)
    return pos


def layout_rows(n_nodes: int, edges: list[tuple[int, int]]) -> int:
    """Return the number of nodes in the fullest column of :func:`layout` (0 for an empty graph)."""
    counts: dict[float, int] = {}
    for x, _ in layout(n_nodes, edges):
        counts[x] = counts.get(x, 0) + 1
    return max(counts.values(), default=0)


def draw_graph(t: torch.Tensor | Node, names: dict[int, str] | None = None, ax: Any = None,
               title: str | None = None) -> Any:
    """Draw the backward graph of ``t`` left to right and return the matplotlib Figure.

    Arrows follow the forward direction (from the leaves on the left to the
    output on the right); gradients flow against them. ``AccumulateGrad``
    nodes (the leaves' gradient sinks) are drawn in green, the output's node
    in orange. A tensor without history draws a note saying so.
    """
    import matplotlib.pyplot as plt

    nodes, edges = backward_graph(t)
    if ax is None:
        n_cols = (max(depths(len(nodes), edges)) + 1) if nodes else 1
        n_rows = max(layout_rows(len(nodes), edges), 1)
        fig, ax = plt.subplots(figsize=(max(4.0, 2.4 * n_cols), max(2.6, 1.0 * n_rows + 1.2)))
    else:
        fig = ax.figure
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    if not nodes:
        ax.text(0.5, 0.5, "no grad_fn: a leaf or a tensor without history", ha="center", va="center")
        return fig
    pos = layout(len(nodes), edges)
    for i, j in sorted(set(edges)):
        (x0, y0), (x1, y1) = pos[j], pos[i]  # forward direction: from input j to consumer i
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops=dict(arrowstyle="->", color="0.4", shrinkA=28, shrinkB=28))
    for i, node in enumerate(nodes):
        is_leaf = type(node).__name__ == "AccumulateGrad"
        colour = "#b7e4c7" if is_leaf else ("#ffd6a5" if i == 0 else "#dbe7ff")
        ax.text(*pos[i], node_label(node, names), ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round,pad=0.4", fc=colour, ec="0.3"))
    xs = [p[0] for p in pos]
    ys = [p[1] for p in pos]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.8, max(ys) + 0.8)
    return fig


def _sequence_nr(node: Node) -> int:
    try:
        return int(node._sequence_nr())
    except (AttributeError, RuntimeError):  # a node without a sequence number: treat as oldest
        return 0


def dependency_counts(n_nodes: int, edges: list[tuple[int, int]]) -> list[int]:
    """Return, for each node index, how many ``next_functions`` edges enter it (the engine's first pass).

    A node may run only when this many gradients have arrived, one per edge,
    so a node reached along two paths waits for both.
    """
    deps = [0] * n_nodes
    for _, j in edges:
        deps[j] += 1
    return deps


def ready_queue_schedule(t: torch.Tensor | Node | None) -> tuple[list[Node], list[tuple[int, list[int]]]]:
    """Simulate the autograd engine's single-threaded schedule for the graph behind ``t``.

    Returns ``(nodes, steps)``: ``nodes`` as in :func:`backward_graph`, and one
    ``(ran, ready)`` pair per executed node: the index of the node that ran,
    and the indices waiting in the ready queue right after it ran (its
    completed inputs added). The rules are the engine's: a node becomes ready
    when its dependency count (:func:`dependency_counts`) drops to zero, and
    among ready nodes the one created last in the forward pass (the largest
    ``_sequence_nr()``; ``AccumulateGrad`` nodes have the largest possible)
    runs first. Nothing is executed and no gradient is computed.
    """
    import heapq

    nodes, edges = backward_graph(t)
    if not nodes:
        return [], []
    deps = dependency_counts(len(nodes), edges)
    children: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for i, j in edges:
        children[i].append(j)
    ready: list[tuple[int, int]] = [(-_sequence_nr(nodes[0]), 0)]
    steps: list[tuple[int, list[int]]] = []
    while ready:
        _, i = heapq.heappop(ready)
        for j in children[i]:
            deps[j] -= 1
            if deps[j] == 0:
                heapq.heappush(ready, (-_sequence_nr(nodes[j]), j))
        steps.append((i, [k for _, k in sorted(ready)]))
    return nodes, steps


def engine_order(t: torch.Tensor, grad_output: torch.Tensor | None = None) -> list[Node]:
    """Run ``t.backward(grad_output)`` with a pre-hook on every node and return the nodes in the order the engine ran them.

    ``grad_output`` defaults to ``ones_like(t)``. The graph is retained (you can
    backpropagate through it again) and every leaf's ``.grad`` is put back to
    the value it had before the call (``None`` stays ``None``; accumulation
    happens in place, so a copy is kept), so the only effect is the recorded order. Each node
    appears once per execution (once, for an ordinary graph).
    """
    nodes, _ = backward_graph(t)
    order: list[Node] = []
    leaves = [n.variable for n in nodes if isinstance(getattr(n, "variable", None), torch.Tensor)]
    saved = [None if leaf.grad is None else leaf.grad.detach().clone() for leaf in leaves]
    handles = [n.register_prehook(lambda grads, n=n: order.append(n)) for n in nodes]
    try:
        t.backward(torch.ones_like(t) if grad_output is None else grad_output, retain_graph=True)
    finally:
        for h in handles:
            h.remove()
        for leaf, g in zip(leaves, saved):
            leaf.grad = g
    return order
