"""Exercise 'graph_nodes' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# =====================================================================================================
# Exercise 2.1 · graph_nodes
# clause -> test
#   class names of every reachable node, each node once (identity, not name) ... test_graph_nodes_each_node_once
#   two different nodes of the same class appear twice ......................... test_graph_nodes_each_node_once
#   leaves' AccumulateGrad nodes included; (None, 0) entries skipped .......... test_graph_nodes_each_node_once
#   any depth: a chain deeper than Python's recursion limit ................... test_graph_nodes_each_node_once
#   the walk is the student's own (no course.graphs function called) ......... test_graph_nodes_each_node_once
#   every node before the nodes it feeds (topological, any valid order) ....... test_graph_nodes_topological_order
#   a leaf, and a tensor without history (constants, detach, no_grad) -> [] ... test_graph_nodes_leaves_and_no_history
#   returns a list of str ..................................................... all three
# =====================================================================================================

@judge.shared
def graph_cases(seed, which):
    """Expressions whose graphs the graph_nodes probes walk (same structure in both runs)."""
    g = torch.Generator().manual_seed(seed)
    n = 2 + seed % 4
    p = torch.randn(n, generator=g).requires_grad_(True)
    q = torch.randn(n, generator=g).requires_grad_(True)

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t ** 3

        @staticmethod
        def backward(ctx, grad_output):
            (t,) = ctx.saved_tensors
            return 3 * t * t * grad_output

    a = p.exp()
    h = p
    for _ in range(3):
        h = h.sin() + h * q
    first, second = torch.stack([p, q]).unbind()
    lin = torch.nn.Linear(n, 2)
    cases = {
        "a + a.sin() with a = p.exp() (diamond)": a + a.sin(),
        "(a * a.sin() + a).sum() (a used three times)": (a * a.sin() + a).sum(),
        "p * p + p (one leaf, three edges)": p * p + p,
        "(const @ W + bias).relu().mean()": (torch.randn(4, n, generator=g)
                                             @ torch.randn(n, 3, generator=g).requires_grad_(True)
                                             + torch.randn(3, generator=g).requires_grad_(True)).relu().mean(),
        "mse_loss(Linear(x), y) (an input without grad)": torch.nn.functional.mse_loss(
            lin(torch.randn(5, n, generator=g)), torch.randn(5, 2, generator=g)),
        "cat([p, q * 2, p.tanh()]).sum() * q.sum()": torch.cat([p, q * 2, p.tanh()]).sum() * q.sum(),
        "a ladder of three diamonds": h.sum(),
        "unbind: second * first + first": second * first + first,
        "custom Function: Cube(p) + Cube(p).sin()": (lambda c: c + c.sin())(Cube.apply(p)),
        "a.cos() + (a * 3).sin() + a": a.cos() + (a * 3).sin() + a,
        "(p.tanh() + q).sigmoid() * p.tanh()": (lambda t: (t + q).sigmoid() * t)(p.tanh()),
    }
    keep = {"once": ["a + a.sin() with a = p.exp() (diamond)", "(a * a.sin() + a).sum() (a used three times)",
                     "p * p + p (one leaf, three edges)", "(const @ W + bias).relu().mean()",
                     "mse_loss(Linear(x), y) (an input without grad)", "cat([p, q * 2, p.tanh()]).sum() * q.sum()",
                     "a ladder of three diamonds", "unbind: second * first + first",
                     "custom Function: Cube(p) + Cube(p).sin()"],
            "topo": ["(a * a.sin() + a).sum() (a used three times)", "a.cos() + (a * 3).sin() + a",
                     "p * p + p (one leaf, three edges)", "a ladder of three diamonds",
                     "(p.tanh() + q).sigmoid() * p.tanh()", "mse_loss(Linear(x), y) (an input without grad)",
                     "unbind: second * first + first", "custom Function: Cube(p) + Cube(p).sin()",
                     "cat([p, q * 2, p.tanh()]).sum() * q.sum()"]}[which]
    return [(label, cases[label]) for label in keep]


@judge.shared
def recording_course_graphs(fn):
    """Run fn() with every function of course.graphs (and each notebook name bound to one) wrapped to record its
    name; return (fn's result, or "ExcName: message" if it raised, the names called, in order)."""
    import types
    import course.graphs as cg

    called = []
    originals = {name: f for name, f in vars(cg).items()
                 if isinstance(f, types.FunctionType) and f.__module__ == cg.__name__}

    def recorder(name, f):
        def wrapped(*args, **kwargs):
            called.append(name)
            return f(*args, **kwargs)
        return wrapped

    space = globals()
    by_id = {id(f): name for name, f in originals.items()}
    aliases = {k: v for k, v in space.items() if isinstance(v, types.FunctionType) and id(v) in by_id}
    try:
        for name, f in originals.items():
            setattr(cg, name, recorder(name, f))
        for k, v in aliases.items():
            space[k] = recorder(by_id[id(v)], v)
        try:
            result = fn()
        except RecursionError as err:
            result = f"RecursionError: {str(err)[:200]}"
    finally:
        for name, f in originals.items():
            setattr(cg, name, f)
        space.update(aliases)
    return result, called


@judge.shared
def graph_structure(t):
    """(class names, edges) of the graph behind t, from the course's own walker."""
    nodes, edges = G.backward_graph(t)
    return [type(n).__name__ for n in nodes], [list(e) for e in edges]


def _check_names(got, label):
    C.check_type(got, list, name=f"graph_nodes({label})", hint="return a list of class-name strings")
    bad = next((s for s in got if type(s) is not str), "")
    C.check_true(type(bad) is str, f"graph_nodes({label}) holds an item of type {type(bad).__name__}",
                 hint="use type(node).__name__")


def _counts(names):
    out = {}
    for s in names:
        out[s] = out.get(s, 0) + 1
    return out


def _is_topological(names, labels, edges):
    """Can ``names`` be read as a topological order of the graph whose nodes carry ``labels``?"""
    k = len(labels)
    if len(names) != k:
        return False
    preds = [[] for _ in range(k)]
    for i, j in edges:
        preds[j].append(i)
    failed = set()

    def search(done, pos):
        if pos == k:
            return True
        if done in failed:
            return False
        for v in range(k):
            if not (done >> v) & 1 and labels[v] == names[pos] and all((done >> u) & 1 for u in preds[v]):
                if search(done | (1 << v), pos + 1):
                    return True
        failed.add(done)
        return False

    return search(0, 0)


@judge.probe("test_graph_nodes_each_node_once")
def probe_graph_once(seed):
    vx, vw, vb = (torch.randn(3, requires_grad=True) for _ in range(3))
    visible_expr = vx * vw + vb
    cases = graph_cases(seed, "once")
    depth = 1200 + 20 * (seed % 5)                      # deeper than Python's default recursion limit (1000)
    h = torch.randn(2, generator=torch.Generator().manual_seed(seed)).requires_grad_(True)
    for i in range(depth):
        h = h.sin() if i % 2 else h * 1.5
    chain = (f"a chain of {depth} ops (an unrolled loop)", h.sum())
    structures = [graph_structure(expr) for _, expr in cases]
    got = {"visible": graph_nodes(visible_expr)}
    got["cases"], got["course_graphs_calls"] = recording_course_graphs(
        lambda: [(label, graph_nodes(expr)) for label, expr in cases + [chain]])
    got["structures"] = structures
    return got


@probe_graph_once.verdict
def _(got, ref):
    with visible():
        _check_names(got["visible"], "x * w + b")
        C.check_equal(sorted(got["visible"]), sorted(["AddBackward0", "MulBackward0"] + ["AccumulateGrad"] * 3),
                      name="sorted(graph_nodes(x * w + b))",
                      hint="one AccumulateGrad per leaf (x, w and b), plus the Add and the Mul")
    if isinstance(got["cases"], str):
        _fail(f"graph_nodes raised {got['cases']!r:.300} (on graphs up to a chain of thousands of ops)",
              "a recursive walk stops at Python's recursion limit (about 1000 frames); an unrolled loop is deeper: "
              "use an explicit stack, or Kahn's algorithm")
    C.check_equal(got["course_graphs_calls"][:5], ref["course_graphs_calls"][:5],
                  name="functions of course.graphs that graph_nodes called",
                  hint="write the walk yourself with node.next_functions; course.graphs is for the pictures")
    for (label, names), (labels, _) in zip(got["cases"], ref["structures"]):
        _check_names(names, label)
        C.check_equal(_counts(names), _counts(labels), name=f"node counts of graph_nodes({label})",
                      hint="each node exactly once (recognise it by identity, the node object, not by its name), keep the leaves' "
                           "AccumulateGrad nodes, and skip the (None, 0) entries of inputs without grad")
    (label, names), (_, ref_names) = got["cases"][-1], ref["cases"][-1]      # the deep chain
    _check_names(names, label)
    C.check_equal(_counts(names), _counts(ref_names), name=f"node counts of graph_nodes({label})")


@judge.probe("test_graph_nodes_topological_order")
def probe_graph_topo(seed):
    vp = torch.randn(4, requires_grad=True)
    va = vp.exp()
    visible_expr = va + va.sin()
    cases = graph_cases(seed + 1, "topo")
    structures = [graph_structure(expr) for _, expr in cases]
    got = {"visible": graph_nodes(visible_expr)}
    got["cases"] = [(label, graph_nodes(expr)) for label, expr in cases]
    got["structures"] = structures
    return got


@probe_graph_topo.verdict
def _(got, ref):
    with visible():
        _check_names(got["visible"], "a + a.sin()")
        C.check_equal(got["visible"], ["AddBackward0", "SinBackward0", "ExpBackward0", "AccumulateGrad"],
                      name="graph_nodes(a + a.sin()) with a = p.exp()",
                      hint="ExpBackward0 receives gradients from both AddBackward0 and SinBackward0, "
                           "so it must come after both")
    for (label, names), (labels, edges) in zip(got["cases"], ref["structures"]):
        _check_names(names, label)
        C.check_true(_is_topological(names, labels, [tuple(e) for e in edges]),
                     f"graph_nodes({label}) = {names!r:.300} is not a topological order of its {len(labels)} nodes.",
                     hint="every node must come after all the nodes that send it a gradient (and each node once); "
                          "a breadth-first or pre-order walk gets diamonds wrong")


@judge.probe("test_graph_nodes_leaves_and_no_history")
def probe_graph_leaves(seed):
    g = torch.Generator().manual_seed(seed)
    shape = tuple(int(s) for s in torch.randint(1, 5, (3,), generator=g))
    leaf = torch.randn(shape, generator=g).requires_grad_(True)
    constant = torch.randn(shape, generator=g) * 3
    detached = leaf.detach() * 2
    with torch.no_grad():
        made = leaf * 2 + 1
    other = torch.randn(shape, generator=g).requires_grad_(True)
    partial = [("leaf.detach() * 2 + leaf", detached + leaf),
               ("(no_grad result * leaf).sum()", (made * leaf).sum()),
               ("cat([constant, leaf.exp()]).sin() * cat([other, other])",
                torch.cat([constant, leaf.exp()]).sin() * torch.cat([other, other]))]
    structures = [graph_structure(expr) for _, expr in partial]
    vleaf = torch.randn(3, requires_grad=True)
    return {"visible": [graph_nodes(vleaf), graph_nodes(vleaf.detach() * 2), graph_nodes(vleaf.detach() * 2 + vleaf)],
            "cases": [("a leaf of shape %s" % (shape,), graph_nodes(leaf)),
                      ("a tensor that never required grad", graph_nodes(constant)),
                      ("leaf.detach() * 2", graph_nodes(detached)),
                      ("a tensor made under torch.no_grad()", graph_nodes(made))],
            "partial": [(label, graph_nodes(expr)) for label, expr in partial],
            "structures": structures}


@probe_graph_leaves.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"][0], [], name="graph_nodes(leaf)", hint="a leaf has grad_fn None: return []")
        C.check_equal(got["visible"][1], [], name="graph_nodes(leaf.detach() * 2)")
        _check_names(got["visible"][2], "leaf.detach() * 2 + leaf")
        C.check_equal(sorted(got["visible"][2]), sorted(ref["visible"][2]), name="sorted(graph_nodes(leaf.detach() * 2 + leaf))",
                      hint="the detached product has no node (a (None, 0) entry); the leaf keeps its AccumulateGrad")
    for label, names in got["cases"]:
        C.check_equal(names, [], name=f"graph_nodes({label})",
                      hint="no grad_fn means no backward nodes: return [] before walking")
    for (label, names), (labels, _) in zip(got["partial"], ref["structures"]):
        _check_names(names, label)
        C.check_equal(_counts(names), _counts(labels), name=f"node counts of graph_nodes({label})",
                      hint="skip the (None, 0) entries of the parts without history, and keep every node that leads "
                           "to a leaf")


WHY['graph_nodes'] = "Nodes are tracked by the node objects themselves (set and dict keys), so a node reached twice counts once and same-named nodes stay distinct. An explicit stack avoids the recursion limit, and Kahn's algorithm emits a node only after every node feeding it; (None, 0) entries are skipped."
