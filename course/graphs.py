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

    ``nodes``: every distinct node once, in breadth-first discovery order (the
    output's node first, then the nodes one edge away, and so on; not a
    topological order). ``edges``: ``(i, j)`` index pairs meaning node ``i``
    sends a gradient to node ``j`` (one pair per ``next_functions`` entry, so
    ``x * x`` gives two edges to the same ``AccumulateGrad``). A leaf or a
    tensor without history gives ``([], [])``.
    """
    root = root_of(t)
    if root is None:
        return [], []
    # Keyed on the node objects themselves, not id(node): the dict keeps each node's Python wrapper alive, so a node
    # reached twice is the same object both times (a freed wrapper's id can be reused, and torch may build a new
    # wrapper for a node whose old one was freed).
    index: dict[Node, int] = {root: 0}
    nodes: list[Node] = [root]
    edges: list[tuple[int, int]] = []
    # `nodes` grows while the loop reads it, so each node is read once, breadth first, and no recursion is needed.
    for i, source in enumerate(nodes):
        for target in (fn for fn, _slot in source.next_functions if fn is not None):
            if target not in index:
                index[target] = len(nodes)
                nodes.append(target)
            edges.append((i, index[target]))
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


def _bezier(p0, p2, rad: float):
    """The quadratic Bezier from ``p0`` to ``p2`` (display units) bent sideways by ``rad`` times its length, as a
    function of ``t`` (an array of parameters in [0, 1]) returning ``(len(t), 2)`` points."""
    import numpy as np

    p0, p2 = np.asarray(p0, float), np.asarray(p2, float)
    d = p2 - p0
    ctrl = (p0 + p2) / 2 + rad * np.array([-d[1], d[0]])

    def at(t):
        t = np.asarray(t, float)[:, None]
        return (1 - t) ** 2 * p0 + 2 * (1 - t) * t * ctrl + t ** 2 * p2

    return at


def _inside(points, box, margin: float = 0.0):
    """Boolean mask: which ``points`` lie inside ``box`` = (x0, y0, x1, y1) grown by ``margin``."""
    x0, y0, x1, y1 = box
    return ((points[:, 0] >= x0 - margin) & (points[:, 0] <= x1 + margin)
            & (points[:, 1] >= y0 - margin) & (points[:, 1] <= y1 + margin))


def _clip_curve(at, start_box, end_box, margin: float, n: int = 40):
    """``n`` points of the curve ``at`` from where it leaves ``start_box`` to where it enters ``end_box``
    (both grown by ``margin``), the two crossings found by bisection."""
    import numpy as np

    def crossing(box, leaving: bool) -> float:
        lo, hi = (0.0, 1.0) if leaving else (1.0, 0.0)    # lo: inside the box, hi: outside
        for _ in range(40):
            mid = (lo + hi) / 2
            if _inside(at([mid]), box, margin)[0]:
                lo = mid
            else:
                hi = mid
        return hi

    t0, t1 = crossing(start_box, True), crossing(end_box, False)
    if t1 <= t0:                                       # the boxes overlap: nothing sensible to draw
        t0, t1 = 0.0, 1.0
    return at(np.linspace(t0, t1, n))


def _bend_choices(multiplicity: int) -> list[list[float]]:
    """Candidate bends for ``multiplicity`` parallel edges: each candidate gives every copy a different bend."""
    if multiplicity == 1:
        return [[0.0], [0.3], [-0.3], [0.45], [-0.45], [0.6], [-0.6]]
    spread = [0.3 * ((k // 2) + 1) * (1 if k % 2 == 0 else -1) for k in range(multiplicity)]
    if multiplicity % 2:
        spread = [0.0] + spread[:-1]
    return [spread]


def draw_graph(t: torch.Tensor | Node, names: dict[int, str] | None = None, ax: Any = None,
               title: str | None = None) -> Any:
    """Draw the backward graph of ``t`` left to right and return the matplotlib Figure.

    Arrows follow the forward direction (from the leaves on the left to the
    output on the right); gradients flow against them. Every ``next_functions``
    edge gets its own arrow: an edge that would pass behind another node (the
    long edge of a diamond such as ``a + a.sin()``) and repeated edges between
    the same two nodes (``x * x``) are drawn as distinct curves, and every
    arrow starts and ends at the border of its boxes, so no arrowhead hides
    under a box. ``AccumulateGrad`` nodes (the leaves' gradient sinks) are
    drawn in green, the output's node in orange. A tensor without history
    draws a note saying so. :func:`drawn_geometry` reads back what was drawn.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as MplPath

    nodes, edges = backward_graph(t)
    if ax is None:
        n_cols = (max(depths(len(nodes), edges)) + 1) if nodes else 1
        n_rows = max(layout_rows(len(nodes), edges), 1)
        fig, ax = plt.subplots(figsize=(max(4.0, 2.4 * n_cols), max(2.8, 1.0 * n_rows + 1.6)))
    else:
        fig = ax.figure
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    if not nodes:
        ax.text(0.5, 0.5, "no grad_fn: a leaf or a tensor without history", ha="center", va="center")
        return fig
    pos = layout(len(nodes), edges)
    texts = []
    for i, node in enumerate(nodes):
        is_leaf = type(node).__name__ == "AccumulateGrad"
        colour = "#b7e4c7" if is_leaf else ("#ffd6a5" if i == 0 else "#dbe7ff")
        texts.append(ax.text(*pos[i], node_label(node, names), ha="center", va="center", fontsize=8, zorder=3,
                             gid=f"node:{i}", bbox=dict(boxstyle="round,pad=0.4", fc=colour, ec="0.3")))
    xs = [p[0] for p in pos]
    ys = [p[1] for p in pos]
    xlim = [min(xs) - 0.6, max(xs) + 0.6]
    ylim = [min(ys) - 0.8, max(ys) + 0.8]
    multiplicity: dict[tuple[int, int], int] = {}
    for i, j in edges:
        multiplicity[(i, j)] = multiplicity.get((i, j), 0) + 1
    # Geometry is worked out in display units (where a bend looks the same in x and y), then stored in data
    # units, which stay valid when the figure is saved at another dpi. Curves that leave the axes widen them
    # and everything is measured again.
    for _attempt in range(3):
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        fig.draw_without_rendering()        # places every box
        boxes = [tuple(tx.get_bbox_patch().get_window_extent().extents) for tx in texts]
        centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in boxes]
        margin = 3.0 * fig.dpi / 72.0       # arrow ends sit 3 points outside the border
        drawn = []
        for (i, j), m in multiplicity.items():
            others = [b for k, b in enumerate(boxes) if k not in (i, j)]
            chosen = None
            for bends in _bend_choices(m):
                curves = [_clip_curve(_bezier(centres[j], centres[i], r), boxes[j], boxes[i], margin) for r in bends]
                clear = all(not _inside(c, b, margin).any() for c in curves for b in others)
                if chosen is None or clear:
                    chosen = curves
                if clear:
                    break
            drawn += [(j, i, k, c) for k, c in enumerate(chosen)]
        to_data = ax.transData.inverted()
        data_points = [to_data.transform(c) for *_, c in drawn]
        lo = min(p[:, 1].min() for p in data_points)
        hi = max(p[:, 1].max() for p in data_points)
        if lo >= ylim[0] + 0.1 and hi <= ylim[1] - 0.1:
            break
        ylim = [min(ylim[0], lo - 0.3), max(ylim[1], hi + 0.3)]
    for (j, i, k, _), pts in zip(drawn, data_points):
        arrow = FancyArrowPatch(path=MplPath(pts), arrowstyle="-|>", mutation_scale=10, color="0.35",
                                lw=1.0, shrinkA=0, shrinkB=0, zorder=2, gid=f"edge:{j}->{i}#{k}")
        arrow.curve_data = pts              # tail to tip, data units (read back by drawn_geometry)
        ax.add_patch(arrow)
    return fig


def drawn_geometry(fig: Any) -> dict:
    """Read back what :func:`draw_graph` drew, in display units of the figure as it is now.

    Returns ``{"boxes": {i: (x0, y0, x1, y1)}, "edges": [(j, i, k, points)]}``: the box of node ``i``, and
    each arrow from node ``j`` (an input) to node ``i`` (its consumer), ``k`` counting repeated edges,
    ``points`` an ``(n, 2)`` array from the arrow's tail to its tip.
    """
    ax = fig.axes[0]
    fig.draw_without_rendering()
    boxes = {}
    for tx in ax.texts:
        gid = tx.get_gid() or ""
        if gid.startswith("node:"):
            boxes[int(gid[5:])] = tuple(tx.get_bbox_patch().get_window_extent().extents)
    edges = []
    for patch in ax.patches:
        gid = patch.get_gid() or ""
        if gid.startswith("edge:"):
            a, rest = gid[5:].split("->")
            b, k = rest.split("#")
            points = ax.transData.transform(patch.curve_data)
            edges.append((int(a), int(b), int(k), points))
    return {"boxes": boxes, "edges": edges}


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
