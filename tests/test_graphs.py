"""Unit tests for course.graphs (walking and drawing backward graphs)."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib
import pytest
import torch

from course import graphs

matplotlib.use("Agg")


def _names(nodes):
    return [type(n).__name__ for n in nodes]


def test_root_of():
    x = torch.randn(2, requires_grad=True)
    y = x.exp()
    assert graphs.root_of(None) is None
    assert graphs.root_of(x) is None
    assert graphs.root_of(y) is y.grad_fn
    assert graphs.root_of(y.grad_fn) is y.grad_fn


def test_backward_graph_leaf_and_no_history():
    x = torch.randn(3, requires_grad=True)
    assert graphs.backward_graph(x) == ([], [])
    assert graphs.backward_graph(torch.randn(3) * 2) == ([], [])
    assert graphs.backward_graph(None) == ([], [])


def test_backward_graph_linear():
    x, w, b = (torch.randn(3, requires_grad=True) for _ in range(3))
    y = x * w + b
    nodes, edges = graphs.backward_graph(y)
    assert nodes[0] is y.grad_fn
    assert sorted(_names(nodes)) == ["AccumulateGrad"] * 3 + ["AddBackward0", "MulBackward0"]
    assert len(edges) == 4
    leaves = {id(n.variable) for n in nodes if type(n).__name__ == "AccumulateGrad"}
    assert leaves == {id(x), id(w), id(b)}


def test_backward_graph_diamond_dedup_and_none_inputs():
    x = torch.randn(4, requires_grad=True)
    a = x.exp()
    z = a.sin() + a * torch.ones(4)  # a used twice; the constant gives a None entry
    nodes, edges = graphs.backward_graph(z)
    names = _names(nodes)
    assert sorted(names) == sorted(["AddBackward0", "SinBackward0", "MulBackward0", "ExpBackward0", "AccumulateGrad"])
    assert len(set(map(id, nodes))) == len(nodes)
    # Exp receives from Sin and Mul: two edges into it
    exp_i = names.index("ExpBackward0")
    assert sorted(i for i, j in edges if j == exp_i) == sorted([names.index("SinBackward0"), names.index("MulBackward0")])
    # x * x: two edges to the same AccumulateGrad
    n2, e2 = graphs.backward_graph(x * x)
    assert _names(n2) == ["MulBackward0", "AccumulateGrad"]
    assert e2 == [(0, 1), (0, 1)]


def test_depths_give_topological_order():
    x = torch.randn(4, requires_grad=True)
    a = x.exp()
    z = a + a.sin()
    nodes, edges = graphs.backward_graph(z)
    d = graphs.depths(len(nodes), edges)
    assert d[0] == 0
    for i, j in edges:
        assert d[j] > d[i]
    names = _names(nodes)
    assert d[names.index("ExpBackward0")] == 2  # longest path: Add -> Sin -> Exp
    assert graphs.depths(0, []) == []


def test_layout_left_to_right():
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    y = (x * w).sum()
    nodes, edges = graphs.backward_graph(y)
    pos = graphs.layout(len(nodes), edges)
    assert len(pos) == len(nodes)
    assert pos[0][0] == max(p[0] for p in pos)  # output rightmost
    assert min(p[0] for p in pos) == 0.0
    for i, j in edges:
        assert pos[j][0] < pos[i][0]
    same_col = [p for p in pos if p[0] == 0.0]
    assert len({p[1] for p in same_col}) == len(same_col)  # no overlap within a column
    assert graphs.layout(0, []) == []


def test_node_label():
    w = torch.randn(2, 3, requires_grad=True)
    y = w.sum()
    acc = y.grad_fn.next_functions[0][0]
    assert graphs.node_label(y.grad_fn) == "SumBackward0"
    assert graphs.node_label(acc) == "AccumulateGrad\n(2, 3)"
    assert graphs.node_label(acc, {id(w): "w"}) == "AccumulateGrad\nw"


def test_draw_graph_returns_figure():
    import matplotlib.pyplot as plt

    x = torch.randn(3, requires_grad=True)
    fig = graphs.draw_graph((x.exp() * x).sum(), names={id(x): "x"}, title="t")
    assert isinstance(fig, matplotlib.figure.Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "SumBackward0" in texts and "AccumulateGrad\nx" in texts
    plt.close(fig)
    fig2 = graphs.draw_graph(x)
    assert "no grad_fn" in fig2.axes[0].texts[0].get_text()
    plt.close(fig2)
    fig3, ax = plt.subplots()
    assert graphs.draw_graph(x * 2, ax=ax) is fig3
    plt.close(fig3)


def test_layout_puts_all_leaves_in_the_left_column():
    x, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    y = (x.exp().sin() + b).sum()  # b is one step from the output, x four steps
    nodes, edges = graphs.backward_graph(y)
    pos = graphs.layout(len(nodes), edges)
    leaf_x = [pos[i][0] for i, n in enumerate(nodes) if type(n).__name__ == "AccumulateGrad"]
    assert leaf_x == [0.0, 0.0]
    assert graphs.layout_rows(len(nodes), edges) == 2
    assert graphs.layout_rows(0, []) == 0


def test_layout_orders_columns_by_parent_position():
    x = torch.randn(3, requires_grad=True)
    p, q = x.exp(), x.cos()
    y = p.sin() + q.tanh()  # two parallel branches: they must not cross
    nodes, edges = graphs.backward_graph(y)
    pos = graphs.layout(len(nodes), edges)
    names = [type(n).__name__ for n in nodes]
    y_of = {nm: pos[names.index(nm)][1] for nm in ("SinBackward0", "TanhBackward0", "ExpBackward0", "CosBackward0")}
    assert (y_of["SinBackward0"] > y_of["TanhBackward0"]) == (y_of["ExpBackward0"] > y_of["CosBackward0"])


def _ladder():
    p, q = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    h = p
    for _ in range(3):
        h = h.sin() + h * q
    return p, q, h.sum()


def test_dependency_counts():
    x = torch.randn(3, requires_grad=True)
    a = x.exp()
    nodes, edges = graphs.backward_graph(a + a.sin())
    deps = graphs.dependency_counts(len(nodes), edges)
    by_name = dict(zip(_names(nodes), deps))
    assert by_name["AddBackward0"] == 0 and by_name["SinBackward0"] == 1
    assert by_name["ExpBackward0"] == 2 and by_name["AccumulateGrad"] == 1
    assert graphs.dependency_counts(0, []) == []


def test_ready_queue_schedule_matches_the_engine():
    p, q, y = _ladder()
    a = p.exp()
    first, second = torch.stack([p, q]).unbind()
    for t in (y, a + a.sin(), (a * a.sin() + a).sum(), torch.cat([p, q * 2, p.tanh()]).sum() * q.sum(),
              second * first + first):
        nodes, steps = graphs.ready_queue_schedule(t)
        ran = [i for i, _ in steps]
        assert sorted(ran) == list(range(len(nodes)))        # every node once
        assert steps[0][0] == 0 and steps[-1][1] == []      # starts at the output, ends with an empty queue
        assert [nodes.index(n) for n in graphs.engine_order(t)] == ran


def test_ready_queue_schedule_is_topological_and_computes_nothing():
    p, q, y = _ladder()
    nodes, steps = graphs.ready_queue_schedule(y)
    _, edges = graphs.backward_graph(y)
    position = {i: k for k, (i, _) in enumerate(steps)}
    assert all(position[i] < position[j] for i, j in edges)
    assert p.grad is None and q.grad is None
    assert graphs.ready_queue_schedule(torch.randn(2, requires_grad=True)) == ([], [])


def test_engine_order_restores_grads_and_keeps_the_graph():
    p, q, y = _ladder()
    p.grad = torch.full((3,), 7.0)
    order = graphs.engine_order(y)
    assert torch.equal(p.grad, torch.full((3,), 7.0)) and q.grad is None
    assert len(order) == len(graphs.backward_graph(y)[0])
    y.backward()                                            # the graph was retained
    assert q.grad is not None
    v = torch.randn(2, requires_grad=True)
    out = v * 3
    assert [type(n).__name__ for n in graphs.engine_order(out, torch.ones(2))] == ["MulBackward0", "AccumulateGrad"]


# --- what draw_graph draws: every edge visible, arrowheads outside the boxes ---------------------------------

def _inside_box(point, box, margin=0.0):
    x0, y0, x1, y1 = box
    return x0 - margin <= point[0] <= x1 + margin and y0 - margin <= point[1] <= y1 + margin


def _drawn(t, **kw):
    import matplotlib.pyplot as plt

    fig = graphs.draw_graph(t, **kw)
    geo = graphs.drawn_geometry(fig)
    plt.close(fig)
    return geo


def _assert_edges_clear(t):
    """One distinct arrow per next_functions edge; tails and tips outside every box; no arrow through a box."""
    import numpy as np

    nodes, edges = graphs.backward_graph(t)
    geo = _drawn(t)
    assert sorted((i, j) for j, i, _, _ in geo["edges"]) == sorted(edges)
    paths = [np.round(p, 1).tobytes() for *_, p in geo["edges"]]
    assert len(set(paths)) == len(paths), "two edges drawn on the same path: one hides the other"
    for j, i, _, pts in geo["edges"]:
        for end in (pts[0], pts[-1]):
            for k, box in geo["boxes"].items():
                assert not _inside_box(end, box), f"an end of edge {j}->{i} lies inside node {k}'s box"
        for k, box in geo["boxes"].items():
            if k not in (i, j):
                assert not any(_inside_box(p, box) for p in pts), f"edge {j}->{i} passes behind node {k}"
        # the tip is at the consumer's border (within a few pixels), not short of it or under it
        x0, y0, x1, y1 = geo["boxes"][i]
        gap = max(x0 - pts[-1][0], pts[-1][0] - x1, y0 - pts[-1][1], pts[-1][1] - y1)
        assert 0 < gap < 8, f"the tip of {j}->{i} is {gap:.1f} px from its box"
    return geo


def test_draw_graph_shows_both_edges_of_a_diamond():
    x = torch.randn(3, requires_grad=True)
    a = x.exp()
    y = a + a.sin()        # Add, Sin and Exp sit on one row: the edge Add -> Exp must bend around Sin
    geo = _assert_edges_clear(y)
    assert len(geo["edges"]) == 4
    names = _names(graphs.backward_graph(y)[0])
    into_add = [pts for j, i, _, pts in geo["edges"] if i == names.index("AddBackward0")]
    assert len(into_add) == 2
    straight = [abs(p[:, 1] - p[0, 1]).max() < 1 for p in into_add]
    assert straight.count(False) >= 1, "the diamond's long edge is drawn straight (hidden behind SinBackward0)"


def test_draw_graph_repeated_edges_are_distinct_curves():
    x = torch.randn(3, requires_grad=True)
    y = x * x + x
    geo = _assert_edges_clear(y)                          # distinct paths are checked there
    names = _names(graphs.backward_graph(y)[0])
    mul, acc = names.index("MulBackward0"), names.index("AccumulateGrad")
    assert sorted(k for j, i, k, _ in geo["edges"] if (j, i) == (acc, mul)) == [0, 1]   # x * x: two arrows
    assert len(geo["edges"]) == 4


def test_draw_graph_arrow_tips_outside_boxes_on_wider_graphs():
    p, q, y = _ladder()
    _assert_edges_clear(y)
    w = torch.randn(3, requires_grad=True)
    _assert_edges_clear(torch.nn.functional.mse_loss(torch.nn.Linear(3, 2)(w.unsqueeze(0)), torch.zeros(1, 2)))
    x = torch.randn(4, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    _assert_edges_clear((x * b + b).relu().sum())        # horizontal edges between wide AccumulateGrad boxes


def test_draw_graph_geometry_survives_another_dpi(tmp_path):
    import matplotlib.pyplot as plt

    x = torch.randn(3, requires_grad=True)
    a = x.exp()
    fig = graphs.draw_graph(a + a.sin())
    fig.set_dpi(72)
    geo = graphs.drawn_geometry(fig)
    for j, i, _, pts in geo["edges"]:
        assert not _inside_box(pts[-1], geo["boxes"][i]) and not _inside_box(pts[0], geo["boxes"][j])
    fig.savefig(tmp_path / "g.png", dpi=120, bbox_inches="tight")
    assert (tmp_path / "g.png").stat().st_size > 1000
    plt.close(fig)


def test_drawn_geometry_reads_nodes_and_edges():
    import matplotlib.pyplot as plt

    x = torch.randn(3, requires_grad=True)
    fig = graphs.draw_graph(x.exp())
    geo = graphs.drawn_geometry(fig)
    assert set(geo["boxes"]) == {0, 1}
    assert [(j, i, k) for j, i, k, _ in geo["edges"]] == [(1, 0, 0)]
    assert geo["edges"][0][3].shape[1] == 2
    plt.close(fig)
