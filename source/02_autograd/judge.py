"""Hidden tests of Chapter 2, judged outside the student's kernel (instructor side: never released).

Each grade cell of 02_autograd.ipynb has one probe here (it runs with the
notebook's names, in the student's sandbox and in the reference worker) and
one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; every
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from explicit generators (or before the first call
into student code), so both runs see the same inputs whatever the student's
code does to the global RNG, and they return raw data: all comparisons happen
in the verdicts, never in the (untrusted) student kernel.
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()
F64 = torch.float64


def _fail(message, hint=None):
    C.check_true(False, message, hint=hint)


def _grad_or_fail(g, name, hint=None):
    """A gradient sent back by a probe: fail if it is missing (None) or an error string."""
    if g is None:
        _fail(f"{name}.grad is None: no gradient reached it",
              hint or "the returned tensor is cut from the graph (.detach(), .data, torch.no_grad())")
    if isinstance(g, str):
        _fail(f"{name}: {g}", hint)
    return g


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


# =====================================================================================================
# Exercise 2.2 · SoftClip / soft_clip
# clause -> test
#   x: any shape (0-dim included), float32 and float64; limit: a float, an int, a 0-dim tensor, a
#     per-feature tensor ............................................................................ test_soft_clip_forward
#   forward returns limit * tanh(x / limit), x's shape and dtype ................................... test_soft_clip_forward
#   neither x nor limit modified ..................................................................... test_soft_clip_forward
#   gradient for x: grad_output * dy/dx (number and tensor limits, leaf and intermediate x) ......... test_soft_clip_backward
#   None for a number limit (a tensor there makes backward raise) ................................... test_soft_clip_backward
#   each call keeps its own limit: two calls, one graph, one backward ............................... test_soft_clip_backward,
#                                                                                                     test_soft_clip_limit_grad
#   gradient for a tensor limit: grad_output * dy/dlimit, summed to limit's shape (0-dim, per
#     feature, ranks 0 to 3 (a 0-dim x too), float32, x without grad, saturated logits) ............. test_soft_clip_limit_grad
#   backward agrees with central differences of forward, for x and for limit, float64 (and torch's
#     gradcheck run in the kernel agrees); the values are the reference's ........................... test_soft_clip_gradcheck
#   soft_clip goes through SoftClip.apply; tensors saved with ctx.save_for_backward, none kept as a
#     ctx attribute (numbers only there); its values ................................................ test_soft_clip_uses_function
# =====================================================================================================

@judge.shared
def soft_inputs(seed, specs):
    """(x, limit) pairs from an explicit generator; specs are (shape, dtype, kind), kind one of
    "float", "int", "scalar" (a 0-dim tensor) and "feature" (one value per feature of the last dimension)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape, dtype, kind in specs:
        x = torch.randn(shape, generator=g, dtype=dtype) * 3
        if kind == "float":
            limit = 0.5 + 3.5 * float(torch.rand((), generator=g))
        elif kind == "int":
            limit = int(torch.randint(1, 5, (), generator=g))
        elif kind == "scalar":
            limit = torch.rand((), generator=g, dtype=dtype) * 3.5 + 0.5
        else:
            limit = torch.rand(shape[-1], generator=g, dtype=dtype) * 3.5 + 0.5
        out.append((x, limit))
    return out


def _limit_label(limit):
    if isinstance(limit, (int, float)):
        return repr(limit)
    return f"a tensor limit of shape {tuple(limit.shape)}"


@judge.probe("test_soft_clip_forward")
def probe_soft_forward(seed):
    f32, f64 = torch.float32, torch.float64
    cases = soft_inputs(seed, [((7,), f32, "float"), ((3, 4, 5), f64, "float"), ((2, 1, 6), f32, "int"),
                               ((1,), f64, "float"), ((4, 3), f64, "feature"), ((2, 3, 5), f32, "feature"),
                               ((5,), f64, "scalar"), ((3, 2), f32, "scalar"), ((), f32, "float"),
                               ((), f64, "int"), ((), f64, "scalar")])
    vis = torch.tensor([-10.0, -1.0, 0.0, 0.5, 10.0])
    vx = torch.tensor([[3.0, -0.5, 8.0], [-4.0, 0.25, 1.0]], dtype=f64)
    vl = torch.tensor([1.0, 2.0, 4.0], dtype=f64)
    out = {"visible": [soft_clip(vis.clone(), 2.0), soft_clip(vx.clone(), vl.clone())], "cases": []}
    for x, limit in cases:
        y = soft_clip(x, limit)
        out["cases"].append({"limit": limit, "y": y, "dtype": getattr(y, "dtype", None), "x_after": x,
                             "shape": tuple(x.shape), "x_dtype": x.dtype})
    return out


@probe_soft_forward.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"][0], ref["visible"][0], name="soft_clip(x, 2.0)")
        C.check_close(got["visible"][1], ref["visible"][1], name="soft_clip(x of shape (2, 3), one limit per feature)")
    for g, r in zip(got["cases"], ref["cases"]):
        label = f"soft_clip(x of shape {r['shape']}, {r['x_dtype']}, {_limit_label(r['limit'])})"
        C.check_tensor(g["y"], label, shape=r["shape"])
        C.check_equal(g["dtype"], r["dtype"], name=f"dtype of {label}", hint="keep the dtype of x")
        C.check_close(g["y"], r["y"], name=label, hint="limit * tanh(x / limit), for a number or a tensor limit")
        C.check_close(g["x_after"], r["x_after"], name=f"x after {label}",
                      hint="do not modify x in place (no div_, mul_, tanh_ on x)")
        if isinstance(r["limit"], torch.Tensor):
            C.check_close(g["limit"], r["limit"], name=f"limit after {label}", hint="do not modify limit")


@judge.probe("test_soft_clip_backward")
def probe_soft_backward(seed):
    f64 = torch.float64
    g = torch.Generator().manual_seed(seed)
    numbers = [((4, 3), 0.7), ((2, 3, 5), 2.5), ((9,), 4), ((1,), 1.0)]
    data = [(torch.randn(shape, generator=g, dtype=f64) * 2, torch.randn(shape, generator=g, dtype=f64), limit)
            for shape, limit in numbers]
    tensors = [(x, torch.randn(x.shape, generator=g, dtype=x.dtype), limit, wants)
               for (x, limit), wants in zip(soft_inputs(seed + 1, [((5, 3), f64, "feature"), ((2, 4), f64, "scalar"),
                                                                    ((3, 2, 4), torch.float32, "feature")]),
                                            (False, True, True))]
    vx, vup = torch.randn(6, generator=g, dtype=f64), torch.randn(6, generator=g, dtype=f64)
    vx2, vup2 = torch.randn(4, 3, generator=g, dtype=f64), torch.randn(4, 3, generator=g, dtype=f64)
    nonleaf_base, nonleaf_up = torch.randn(3, 2, generator=g, dtype=f64), torch.randn(3, 2, generator=g, dtype=f64)
    pair = [torch.randn(3, 4, generator=g, dtype=f64) for _ in range(4)]
    pair_t = [(torch.randn(2, 3, generator=g, dtype=f64), torch.rand(3, generator=g, dtype=f64) + 0.3,
               torch.randn(2, 3, generator=g, dtype=f64)) for _ in range(2)]
    out = {}
    xa = vx.clone().requires_grad_(True)
    soft_clip(xa, 1.5).backward(vup)
    xc = vx2.clone().requires_grad_(True)
    soft_clip(xc, torch.tensor([0.5, 1.0, 3.0], dtype=f64)).backward(vup2)
    out["visible"] = [xa.grad, xc.grad]
    out["cases"] = []
    for x, up, limit in data:
        xl = x.clone().requires_grad_(True)
        y = soft_clip(xl, limit)
        rg = y.requires_grad
        y.backward(up)
        out["cases"].append({"shape": tuple(x.shape), "limit": limit, "requires_grad": rg, "grad": xl.grad})
    for x, up, limit, wants in tensors:
        xl = x.clone().requires_grad_(True)
        lim = limit.clone().requires_grad_(wants)
        soft_clip(xl, lim).backward(up)
        out["cases"].append({"shape": tuple(x.shape), "limit": limit, "requires_grad": True, "grad": xl.grad})
    base = nonleaf_base.clone().requires_grad_(True)
    soft_clip(base * 2.0, 0.8).backward(nonleaf_up)      # x is an intermediate result
    out["nonleaf"] = base.grad
    a, b = pair[0].clone().requires_grad_(True), pair[1].clone().requires_grad_(True)
    ya, yb = soft_clip(a, 0.6), soft_clip(b, 2.2)        # two calls before one backward
    ((ya * pair[2]).sum() + (yb * pair[3]).sum()).backward()
    out["two_numbers"] = [a.grad, b.grad]
    (xa1, la1, ua1), (xa2, la2, ua2) = pair_t
    c1, c2 = xa1.clone().requires_grad_(True), xa2.clone().requires_grad_(True)
    yc1, yc2 = soft_clip(c1, la1.clone().requires_grad_(True)), soft_clip(c2, (la2 * 3).requires_grad_(True))
    ((yc1 * ua1).sum() + (yc2 * ua2).sum()).backward()
    out["two_tensors"] = [c1.grad, c2.grad]
    return out


@probe_soft_backward.verdict
def _(got, ref):
    with visible():
        C.check_close(_grad_or_fail(got["visible"][0], "x"), ref["visible"][0], name="x.grad (limit 1.5)",
                      hint="backward must return grad_output * (1 - tanh(x / limit)**2) for x, and None for a number")
        C.check_close(_grad_or_fail(got["visible"][1], "x"), ref["visible"][1],
                      name="x.grad (shape (4, 3), one limit per feature)")
    for g, r in zip(got["cases"], ref["cases"]):
        label = f"x (shape {r['shape']}, {_limit_label(r['limit'])})"
        C.check_true(g["requires_grad"] is True, "soft_clip(x, limit) does not require grad although x does",
                     hint="return the output of SoftClip.apply(x, limit)")
        C.check_close(_grad_or_fail(g["grad"], label), r["grad"], name=f"{label}.grad",
                      hint="multiply the local derivative by grad_output; with u = x / limit it is 1 - tanh(u)**2")
    C.check_close(_grad_or_fail(got["nonleaf"], "base"), ref["nonleaf"], name="gradient through soft_clip(base * 2, 0.8)")
    hint = ("each call must use its own limit: keep it on ctx (an attribute for a number, save_for_backward for a "
            "tensor), never on the class, which the second call overwrites")
    for k, (g, r) in enumerate(zip(got["two_numbers"], ref["two_numbers"])):
        C.check_close(_grad_or_fail(g, "x"), r, name=f"x.grad of call {k + 1} of soft_clip(a, 0.6), soft_clip(b, 2.2) "
                      "in one graph", hint=hint)
    for k, (g, r) in enumerate(zip(got["two_tensors"], ref["two_tensors"])):
        C.check_close(_grad_or_fail(g, "x"), r, name=f"x.grad of call {k + 1} of two calls with different tensor "
                      "limits in one graph", hint=hint)


@judge.probe("test_soft_clip_limit_grad")
def probe_soft_limit(seed):
    f64 = torch.float64
    g = torch.Generator().manual_seed(seed)
    # the last two: a 0-dim x with a 0-dim tensor limit ("any shape, 0-dim included"), with and without x's grad
    specs = [((5, 3), f64, "feature"), ((4,), f64, "scalar"), ((2, 3, 4), torch.float32, "feature"),
             ((6, 2), f64, "scalar"), ((3,), f64, "feature"), ((), f64, "scalar"), ((), torch.float32, "scalar")]
    cases = [(x, limit, torch.randn(x.shape, generator=g, dtype=x.dtype)) for x, limit in soft_inputs(seed + 2, specs)]
    vx = torch.randn(5, 3, generator=g, dtype=f64)
    vup = torch.randn(5, 3, generator=g, dtype=f64)
    shared_x = torch.randn(4, 3, generator=g, dtype=f64)
    ups = [torch.randn(4, 3, generator=g, dtype=f64) for _ in range(2)]
    limits = [torch.rand(3, generator=g, dtype=f64) + 0.3, torch.rand(3, generator=g, dtype=f64) * 3 + 1.0]
    out = {}
    vl = torch.tensor([0.8, 1.5, 3.0], dtype=f64, requires_grad=True)
    soft_clip(vx.clone(), vl).backward(vup)
    out["visible"] = vl.grad
    out["cases"] = []
    for k, (x, limit, up) in enumerate(cases):
        lim = limit.clone().requires_grad_(True)
        xin = x.clone().requires_grad_(k % 2 == 0)           # x with and without grad
        soft_clip(xin, lim).backward(up)
        out["cases"].append({"shape": tuple(x.shape), "limit_shape": tuple(limit.shape),
                             "x_requires_grad": k % 2 == 0, "grad": lim.grad})
    saturated = torch.tensor([[30.0, -25.0, 0.5], [2.0, 40.0, -0.1]], dtype=f64)   # tanh(x / limit) rounds to +-1
    ls = torch.tensor([0.5, 1.0, 2.0], dtype=f64, requires_grad=True)
    soft_clip(saturated, ls).backward(torch.ones(2, 3, dtype=f64))
    out["saturated"] = ls.grad
    l1, l2 = limits[0].clone().requires_grad_(True), limits[1].clone().requires_grad_(True)
    y1, y2 = soft_clip(shared_x, l1), soft_clip(shared_x, l2)   # two calls, one graph
    ((y1 * ups[0]).sum() + (y2 * ups[1]).sum()).backward()
    out["two_calls"] = [l1.grad, l2.grad]
    return out


@probe_soft_limit.verdict
def _(got, ref):
    hint = ("with u = x / limit and t = tanh(u), dy/dlimit = t - u * (1 - t**2) (product rule and chain rule); "
            "multiply by grad_output and sum over the broadcast dimensions")
    with visible():
        C.check_close(_grad_or_fail(got["visible"], "limit", hint="return the limit's gradient when it is a tensor "
                                    "that requires grad (not None)"), ref["visible"], name="limit.grad (one per feature)",
                      hint=hint)
    for g, r in zip(got["cases"], ref["cases"]):
        label = (f"limit of shape {r['limit_shape']} on x of shape {r['shape']}"
                 + ("" if r["x_requires_grad"] else ", x without grad"))
        grad = _grad_or_fail(g["grad"], label, hint="return a gradient for a tensor limit that requires grad, "
                             "whether or not x requires grad (ctx.needs_input_grad[1])")
        C.check_tensor(grad, name=f"{label}: limit.grad", shape=r["limit_shape"])
        C.check_close(grad, r["grad"], name=f"{label}: limit.grad", hint=hint)
    C.check_close(_grad_or_fail(got["saturated"], "limit"), ref["saturated"],
                  name="limit.grad where tanh(x / limit) saturates (x up to 80 times the limit)",
                  hint="where tanh rounds to 1, recovering u = x / limit from tanh (atanh) gives inf: keep x (or u)")
    for k, (g, r) in enumerate(zip(got["two_calls"], ref["two_calls"])):
        C.check_close(_grad_or_fail(g, f"limit of call {k + 1}"), r,
                      name=f"limit.grad of call {k + 1} of two calls with different limits in one graph",
                      hint="each call keeps its own limit (save_for_backward), never one stored on the class")


@judge.probe("test_soft_clip_gradcheck")
def probe_soft_gradcheck(seed):
    f64 = torch.float64
    g = torch.Generator().manual_seed(seed)
    cases = []
    for shape, kind in (((5,), "number"), ((2, 3), "feature"), ((2, 1, 3), "scalar")):
        x = torch.randn(shape, generator=g, dtype=f64) * 2
        v = torch.randn(shape, generator=g, dtype=f64)
        if kind == "number":
            limit = 0.3 + 2.7 * float(torch.rand((), generator=g))
        elif kind == "feature":
            limit = torch.rand(shape[-1], generator=g, dtype=f64) * 2 + 0.4
        else:
            limit = torch.rand((), generator=g, dtype=f64) * 2 + 0.4
        cases.append((x, v, limit))
    out = []
    step = 1e-6
    for x, v, limit in cases:
        is_tensor = isinstance(limit, torch.Tensor)
        xg = x.clone().requires_grad_(True)
        lg = limit.clone().requires_grad_(True) if is_tensor else limit
        y = soft_clip(xg, lg)
        (y * v).sum().backward()
        numeric = {}
        with torch.no_grad():
            for name, base in (("x", x),) + ((("limit", limit),) if is_tensor else ()):
                diffs = []
                for i in range(base.numel()):
                    e = torch.zeros(base.numel(), dtype=f64)
                    e[i] = step
                    e = e.view_as(base)
                    if name == "x":
                        plus, minus = soft_clip(x + e, limit), soft_clip(x - e, limit)
                    else:
                        plus, minus = soft_clip(x, limit + e), soft_clip(x, limit - e)
                    diffs.append(((plus * v).sum() - (minus * v).sum()) / (2 * step))
                numeric[name] = torch.stack(diffs).view(base.shape)
        try:
            inputs = (x.clone().requires_grad_(True),) + ((limit.clone().requires_grad_(True),) if is_tensor else ())
            fn = soft_clip if is_tensor else (lambda t, lim=limit: soft_clip(t, lim))
            gc = torch.autograd.gradcheck(fn, inputs, raise_exception=False)
        except Exception as err:  # noqa: BLE001 - reported, not trusted
            gc = f"{type(err).__name__}: {err}"
        out.append({"shape": tuple(x.shape), "limit": limit, "y": y.detach(), "vjp_x": xg.grad,
                    "vjp_limit": lg.grad if is_tensor else None, "numeric": numeric, "gradcheck": gc})
    return out


@probe_soft_gradcheck.verdict
def _(got, ref):
    # The notebook's visible test runs torch's gradcheck in the kernel; here the judge makes its own comparison
    # (your backward's VJP against central differences of your forward), so a patched gradcheck changes nothing.
    for g, r in zip(got, ref):
        label = f"soft_clip (x of shape {r['shape']}, {_limit_label(r['limit'])})"
        C.check_close(g["y"], r["y"], name=f"{label}: the values",
                      hint="the gradients are checked against your own forward: it must compute limit * tanh(x / limit)")
        vjp = _grad_or_fail(g["vjp_x"], f"x of {label}")
        C.check_close(vjp, g["numeric"]["x"], name=f"{label}: your gradient for x vs central differences of your forward",
                      rtol=1e-4, atol=1e-6,
                      hint=f"gradcheck reported {str(g['gradcheck'])[:200]!r}: your backward is not the derivative of "
                           "your forward in x")
        if "limit" in r["numeric"]:
            vjp_l = _grad_or_fail(g["vjp_limit"], f"the limit of {label}")
            C.check_close(vjp_l, g["numeric"]["limit"],
                          name=f"{label}: your gradient for limit vs central differences of your forward",
                          rtol=1e-4, atol=1e-6, hint="d/dlimit [limit * tanh(x / limit)] = t - u * (1 - t**2)")
        # torch's gradcheck, run in your kernel, can only make you lose here (a patched one gains nothing):
        # it also fails when forward modifies its input in place, which the comparison above cannot see.
        C.check_true(g["gradcheck"] is True, f"torch.autograd.gradcheck({label}) reported {str(g['gradcheck'])[:300]!r}",
                     hint="gradcheck perturbs x and calls your function again: a forward that modifies x in place "
                          "(div_, tanh_) corrupts every later evaluation")


@judge.probe("test_soft_clip_uses_function")
def probe_soft_function(seed):
    g = torch.Generator().manual_seed(seed)
    x1 = torch.randn(4, generator=g).requires_grad_(True)
    x2 = torch.randn(3, 2, generator=g, dtype=torch.float64).requires_grad_(True)
    l2 = (torch.rand(2, generator=g, dtype=torch.float64) + 0.5).requires_grad_(True)
    x3 = torch.randn(5, generator=g, dtype=torch.float64).requires_grad_(True)
    out = []
    for x, limit in ((x1, 2.0), (x2, l2), (x3, 0.9)):
        y = soft_clip(x, limit)
        node = y.grad_fn
        attrs = {} if node is None else dict(getattr(node, "__dict__", {}))
        on_ctx = sorted(k for k, v in attrs.items()
                        if isinstance(v, torch.Tensor) or (isinstance(v, (list, tuple, dict)) and any(
                            isinstance(e, torch.Tensor) for e in (v.values() if isinstance(v, dict) else v))))
        out.append({"limit": limit, "y": y, "node": None if node is None else type(node).__name__,
                    "saved": None if node is None else len(getattr(node, "saved_tensors", ())),
                    "tensors_on_ctx": on_ctx})
    return out


@probe_soft_function.verdict
def _(got, ref):
    for i, g in enumerate(got):
        label = f"soft_clip(x, {_limit_label(ref[i]['limit'])})"
        with visible() if i == 0 else nullcontext():
            C.check_true(g["node"] is not None, f"{label}.grad_fn is None", hint="return SoftClip.apply(x, limit)")
            C.check_equal(g["node"], ref[i]["node"], name=f"type({label}.grad_fn).__name__",
                          hint="call SoftClip.apply(x, limit) instead of writing the formula with torch ops")
        C.check_true(type(g["saved"]) is int and g["saved"] >= 1,
                     f"SoftClip saved {g['saved']} tensors with ctx.save_for_backward",
                     hint="store the tensors backward needs with ctx.save_for_backward(...), not as ctx attributes: "
                          "saved tensors get version checks, saved-tensor hooks and are freed after backward")
        C.check_equal(g["tensors_on_ctx"], ref[i]["tensors_on_ctx"],
                      name=f"{label}: ctx attributes that hold tensors",
                      hint="every tensor backward needs goes through ctx.save_for_backward (x, a tensor limit, "
                           "tanh's result); only numbers and flags are kept as ctx attributes")
        with visible() if i == 0 else nullcontext():
            C.check_close(g["y"], ref[i]["y"], name=label, hint="limit * tanh(x / limit)")


# =====================================================================================================
# Exercise 2.3 · find_gradient_cuts
# clause -> test
#   returns a list of names in the order of `terms` ............................ every test
#   cut off entirely: .item(), NumPy, no_grad, set_grad_enabled(False), a custom
#     backward returning zeros; several cuts in one dict; any shape of x ...... test_find_cuts_full
#   cut on one of several paths: x * x.detach(), detached denominator, .data
#     branch, a custom backward off by a factor or of the wrong sign (same
#     norm: a comparison of norms misses it), an error that sums to zero over the
#     elements (one directional derivative misses it); size-1 x ............. test_find_cuts_partial
#   no false alarms: constants, weight decay on other tensors that require grad,
#     a .detach() that changes nothing, steep clean terms, a derivative of
#     exactly 0 (a relative tolerance alone flags it), {} -> [] (one real
#     cut among the clean terms, so that [] is not the answer) ............... test_find_cuts_no_false_alarms
#   the cut in SEG_TERMS ....................................................... test_find_cuts_segmentation
#   no side effects: x's values, requires_grad and .grad (None, or an existing
#     one) unchanged; no .grad on a term's parameters (an nn.Module, a weight-
#     decay tensor) and an existing .grad there unchanged; nothing flows into
#     the graph x came from; x's values bit for bit (a nudge-and-restore of x in
#     place drifts by rounding); same answer twice (and the reference's); a term's
#     exception propagates; the answers themselves are the reference's ....... test_find_cuts_side_effects
# =====================================================================================================

@judge.shared
def cut_term_sets(seed, which):
    """Named term sets (term functions plus the point x) for the find_gradient_cuts probes."""
    import numpy as np

    F64_ = torch.float64
    g = torch.Generator().manual_seed(seed)
    nnf = torch.nn.functional

    class ZeroGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.exp()

        @staticmethod
        def backward(ctx, grad_output):
            return torch.zeros_like(grad_output)

    class HalfGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.sin()

        @staticmethod
        def backward(ctx, grad_output):
            (t,) = ctx.saved_tensors
            return 0.5 * grad_output * t.cos()

    class FlippedGrad(torch.autograd.Function):          # the right size, the wrong sign
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.tanh()

        @staticmethod
        def backward(ctx, grad_output):
            (t,) = ctx.saved_tensors
            return -grad_output * (1 - t.tanh() ** 2)

    def under_no_grad(t):
        with torch.no_grad():
            return t.exp().mean()

    def grad_disabled(t):
        with torch.set_grad_enabled(False):
            return (t ** 2).sum() * 0.3

    if which == "full":
        return [
            (torch.randn(3, 4, generator=g, dtype=F64_), {
                "mse": lambda t: ((t - 0.5) ** 2).mean(),
                "through_item": lambda t: torch.tensor(t.pow(2).sum().item(), dtype=F64_),
                "through_numpy": lambda t: torch.from_numpy(np.tanh(t.detach().numpy())).sum(),
                "softplus": lambda t: nnf.softplus(t).sum(),
                "helper_under_no_grad": under_no_grad}),
            (torch.randn(2, 3, 2, generator=g, dtype=F64_), {
                "grad_disabled": grad_disabled,
                "logsumexp": lambda t: t.flatten().logsumexp(0),
                "custom_zero_backward": lambda t: ZeroGrad.apply(t).mean()}),
            (torch.randn(6, generator=g, dtype=F64_), {
                "clean_cubic": lambda t: (t ** 3).mean(),
                "rebuilt_from_list": lambda t: torch.tensor([v.item() for v in t], dtype=F64_).pow(2).sum()}),
        ]
    if which == "partial":
        return [
            (torch.randn(2, 3, 2, generator=g, dtype=F64_), {
                "two_paths": lambda t: (t * t.detach()).sum(),
                "clean": lambda t: t.sin().pow(2).sum(),
                "detached_denominator": lambda t: (t ** 2).sum() / (1 + t.detach().abs().sum()),
                "custom_half_backward": lambda t: HalfGrad.apply(t).sum()}),
            (torch.randn(5, generator=g, dtype=F64_), {
                "data_branch": lambda t: t.data.cos().sum() + t.sum(),
                "custom_flipped_backward": lambda t: (FlippedGrad.apply(t) * torch.linspace(0.5, 1.5, t.numel(),
                                                                                           dtype=F64_)).sum(),
                "sigmoid_mse": lambda t: ((t.sigmoid() - 0.3) ** 2).sum(),
                # the gradient misses half of 2 (t - mean), an error that sums to zero: one directional
                # derivative along the all-ones vector sees no difference
                "times_detached_centered": lambda t: (t * (t - t.mean()).detach()).sum()}),
            (torch.randn(1, generator=g, dtype=F64_), {
                "exp_clean": lambda t: t.exp().sum(),
                "exp_times_detached_exp": lambda t: (t.exp() * t.exp().detach()).sum()}),
        ]
    if which == "clean":
        w = torch.randn(3, generator=g, dtype=F64_).requires_grad_(True)
        target = torch.randn(4, generator=g, dtype=F64_)
        return [
            ((torch.randn(4, generator=g, dtype=F64_)), {
                "constant": lambda t: torch.tensor(2.0),
                "through_item": lambda t: torch.tensor((t ** 3).sum().item(), dtype=F64_),   # one real cut among them
                "weight_decay": lambda t: (w ** 2).sum(),
                "target_only": lambda t: (target ** 2).mean(),
                "steep": lambda t: (t.exp() ** 2).sum(),
                "centered_detached_mean": lambda t: ((t - t.detach().mean()) ** 2).sum(),
                "many_paths": lambda t: (t.sin() * t.cos() + t * t.tanh()).sum(),
                "zero_times": lambda t: 0.0 * t.sum()}),
            ((torch.randn(1, 1, generator=g, dtype=F64_)), {
                "size_one": lambda t: (t ** 4).sum() + t.sum()}),
            ((torch.randn(3, generator=g, dtype=F64_)), {}),
            (torch.zeros(2, dtype=F64_), {                                # a point where the derivative is 0:
                "cubic_at_zero": lambda t: (t ** 3).sum(),               # central differences give about 1e-12
                "quartic_at_zero": lambda t: (t ** 4).sum() * 0.1}),
        ]
    raise ValueError(which)


def _check_cuts(got, ref, label, hint):
    C.check_type(got, list, name=f"find_gradient_cuts({label})", hint="return a list of term names")
    missing = [n for n in ref if n not in got]
    extra = [n for n in got if n not in ref]
    if missing or extra:
        _fail(f"find_gradient_cuts({label}): expected {ref}, got {got!r:.300}"
              + (f"; missed {missing}" if missing else "") + (f"; not cut, but reported: {extra}" if extra else ""),
              hint)
    C.check_equal(got, ref, name=f"find_gradient_cuts({label})", hint="keep the order of the terms dict")


@judge.probe("test_find_cuts_full")
def probe_cuts_full(seed):
    sets = cut_term_sets(seed, "full")
    xv = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    toy = {"square": lambda t: (t ** 2).sum(),
           "through_item": lambda t: torch.tensor(t.pow(3).sum().item(), dtype=torch.float64),
           "constant": lambda t: torch.tensor(2.0, dtype=torch.float64)}
    out = {"visible": find_gradient_cuts(toy, xv)}
    out["cases"] = [(list(terms), find_gradient_cuts(terms, x)) for x, terms in sets]
    return out


@probe_cuts_full.verdict
def _(got, ref):
    with visible():
        _check_cuts(got["visible"], ref["visible"], "toy terms", ".item() makes the value a Python number: it "
                    "changes with x, but autograd sees no dependence; a constant does not depend on x at all")
    for (names, g), (_, r) in zip(got["cases"], ref["cases"]):
        _check_cuts(g, r, f"terms {names}",
                    "a term that does not require grad, or whose gradient is zero, although its value changes with "
                    "x, is cut: compare autograd's gradient with finite differences of the values (and report "
                    "every cut term, not only the first)")


@judge.probe("test_find_cuts_partial")
def probe_cuts_partial(seed):
    sets = cut_term_sets(seed + 1, "partial")
    xv = torch.tensor([[0.3, -0.8], [1.5, 0.1]], dtype=torch.float64)
    toy = {"clean": lambda t: t.sin().pow(2).sum(), "half_detached": lambda t: (t * t.detach()).sum()}
    out = {"visible": find_gradient_cuts(toy, xv)}
    out["cases"] = [(list(terms), find_gradient_cuts(terms, x)) for x, terms in sets]
    return out


@probe_cuts_partial.verdict
def _(got, ref):
    with visible():
        _check_cuts(got["visible"], ref["visible"], "toy terms",
                    "a nonzero gradient can still be wrong: compare it with finite differences, not with zero")
    for (names, g), (_, r) in zip(got["cases"], ref["cases"]):
        _check_cuts(g, r, f"terms {names}",
                    "a term cut on one of two paths still has a nonzero gradient: only a comparison with the "
                    "derivative of its values (finite differences, gradcheck) finds it")


@judge.probe("test_find_cuts_no_false_alarms")
def probe_cuts_clean(seed):
    sets = cut_term_sets(seed + 2, "clean")
    xv = torch.tensor([0.2, -1.4, 0.9, 2.2], dtype=torch.float64)
    wd = torch.tensor([0.5, -0.5], dtype=torch.float64, requires_grad=True)
    toy = {"weight_decay": lambda t: (wd ** 2).sum(),
           "centered": lambda t: ((t - t.detach().mean()) ** 2).sum(),
           "curvy": lambda t: (t.exp() ** 2).sum()}
    out = {"visible": [find_gradient_cuts(toy, xv), find_gradient_cuts({}, xv)]}
    out["cases"] = [(list(terms), find_gradient_cuts(terms, x)) for x, terms in sets]
    return out


@probe_cuts_clean.verdict
def _(got, ref):
    hint = ("a term that does not use x has gradient zero (allow_unused=True) and derivative zero; a float64 "
            "central difference with a small step matches a clean gradient to about 1e-8")
    with visible():
        _check_cuts(got["visible"][0], ref["visible"][0], "clean toy terms", hint)
        _check_cuts(got["visible"][1], ref["visible"][1], "{}", None)
    for (names, g), (_, r) in zip(got["cases"], ref["cases"]):
        _check_cuts(g, r, f"clean terms {names}", hint)


@judge.probe("test_find_cuts_segmentation")
def probe_cuts_segmentation(seed):
    g = torch.Generator().manual_seed(seed)
    logits, masks = AT.blob_masks(1, 6, generator=g, dtype=torch.float64)
    fresh_terms = AT.segmentation_loss_terms(masks)
    return {"visible": find_gradient_cuts(SEG_TERMS, SEG_LOGITS),
            "fresh": find_gradient_cuts(fresh_terms, logits * 1.5)}


@probe_cuts_segmentation.verdict
def _(got, ref):
    with visible():
        C.check_type(got["visible"], list, name="find_gradient_cuts(SEG_TERMS, SEG_LOGITS)")
        C.check_true(len(got["visible"]) == 1, f"expected exactly one term name, got {got['visible']!r:.200}",
                     hint="one term of the segmentation loss is cut on one path")
    _check_cuts(got["visible"], ref["visible"], "SEG_TERMS, SEG_LOGITS",
                "the gradient of exactly one term differs from the derivative of its values")
    _check_cuts(got["fresh"], ref["fresh"], "the same four terms on another batch of masks", None)


@judge.probe("test_find_cuts_side_effects")
def probe_cuts_side_effects(seed):
    g = torch.Generator().manual_seed(seed)
    f64 = torch.float64
    x_leaf = torch.randn(2, 3, generator=g, dtype=f64).requires_grad_(True)
    x_plain = torch.randn(4, generator=g, dtype=f64)
    base = torch.randn(3, generator=g, dtype=f64).requires_grad_(True)
    x_nonleaf = base * 2.0
    x_graded = torch.randn(3, generator=g, dtype=f64).requires_grad_(True)
    x_graded.grad = torch.randn(3, generator=g, dtype=f64)            # an x that already holds a gradient
    x_graded_grad = x_graded.grad.clone()
    torch.manual_seed(seed % 100000)
    lin = torch.nn.Linear(3, 2).double()
    w_decay = torch.randn(2, generator=g, dtype=f64).requires_grad_(True)
    w_held = torch.randn(3, generator=g, dtype=f64).requires_grad_(True)
    w_held.grad = torch.randn(3, generator=g, dtype=f64)              # a weight that already holds a gradient
    w_held_grad = w_held.grad.clone()
    x_param = torch.randn(2, 3, generator=g, dtype=f64)
    vis_x = torch.tensor([0.5, -1.0, 2.0], dtype=f64, requires_grad=True)
    vis_wd = torch.tensor([0.3, -0.2], dtype=f64, requires_grad=True)
    terms = {"square": lambda t: (t ** 2).sum(), "cut": lambda t: (t.detach() ** 2).sum() + t.sum(),
             "tanh": lambda t: t.tanh().sum()}
    param_terms = {"fit": lambda t: (lin(t.reshape(-1, 3)) ** 2).sum(),
                   "decay": lambda t: (t ** 2).sum() + (w_decay ** 2).sum(),
                   "held": lambda t: (t.reshape(-1, 3) * w_held).sum() + (w_held ** 2).sum(),
                   "cut_fit": lambda t: (lin(t.reshape(-1, 3).detach()) ** 2).sum() + t.sum()}

    def broken(t):
        raise ValueError("a broken loss term")

    out = {}
    vis_terms = {"square": lambda t: (t ** 2).sum(), "cut": lambda t: (t.detach() ** 2).sum() + t.sum(),
                 "decay": lambda t: (t ** 2).sum() + (vis_wd ** 2).sum()}
    out["visible"] = {"answer": find_gradient_cuts(vis_terms, vis_x), "grad": vis_x.grad,
                      "requires_grad": vis_x.requires_grad, "x": vis_x.detach(), "wd_grad": vis_wd.grad}
    first = find_gradient_cuts(terms, x_leaf)
    second = find_gradient_cuts(terms, x_leaf)
    out["twice"] = [first, second]
    out["leaf"] = {"grad": x_leaf.grad, "requires_grad": x_leaf.requires_grad, "x": x_leaf.detach()}
    find_gradient_cuts(terms, x_plain)
    out["plain"] = {"grad": x_plain.grad, "requires_grad": x_plain.requires_grad, "x": x_plain}
    find_gradient_cuts(terms, x_nonleaf)
    out["nonleaf"] = {"base_grad": base.grad, "x": x_nonleaf.detach()}
    find_gradient_cuts(terms, x_graded)
    out["graded"] = {"grad": x_graded.grad, "before": x_graded_grad}
    out["params"] = {"answer": find_gradient_cuts(param_terms, x_param),
                     "lin": [lin.weight.grad, lin.bias.grad], "decay": w_decay.grad,
                     "held": w_held.grad, "held_before": w_held_grad, "x": x_param}
    try:
        find_gradient_cuts({"square": lambda t: (t ** 2).sum(), "broken": broken, "tanh": lambda t: t.tanh().sum()},
                           x_plain)
        out["raised"] = None
    except ValueError as err:
        out["raised"] = str(err)
    except Exception as err:  # noqa: BLE001 - a different exception is a wrong answer, not a crash
        out["raised"] = f"{type(err).__name__}: {err}"
    out["after_raise"] = {"grad": x_plain.grad, "requires_grad": x_plain.requires_grad, "x": x_plain}
    return out


@probe_cuts_side_effects.verdict
def _(got, ref):
    hint_leaf = "work on x.detach().clone().requires_grad_(True), never on the caller's x"
    hint_grad = ("backward() adds into .grad of every leaf the term uses; torch.autograd.grad(value, leaf) returns the "
                 "gradient and touches no .grad")
    with visible():
        _check_cuts(got["visible"]["answer"], ref["visible"]["answer"], "square, cut, decay", None)
        C.check_true(got["visible"]["grad"] is None, f"x.grad is {C.describe(got['visible']['grad'])} after the "
                     "call; expected None", hint="compute gradients on a fresh leaf copy of x, with "
                                                  "torch.autograd.grad, which does not touch .grad")
        C.check_true(got["visible"]["requires_grad"] is True, "x.requires_grad changed")
        C.check_close(got["visible"]["x"], ref["visible"]["x"], name="x after the call")
        C.check_true(got["visible"]["wd_grad"] is None, f"w.grad is {C.describe(got['visible']['wd_grad'])} after "
                     "the call: a term's weights got a gradient", hint=hint_grad)
    _check_cuts(got["twice"][0], ref["twice"][0], "three terms on a leaf x that requires grad", None)
    C.check_equal(got["twice"][1], got["twice"][0], name="the second call's answer (it must equal the first's)",
                  hint="state left over from the first call (an accumulated .grad?) changes the second")
    for key, label, rg in (("leaf", "a leaf x that requires grad", True), ("plain", "an x without grad", False),
                           ("after_raise", "an x without grad, after a term raised", False)):
        C.check_true(got[key]["grad"] is None, f"{label}: x.grad is {C.describe(got[key]['grad'])}; expected None",
                     hint=hint_leaf)
        C.check_true(got[key]["requires_grad"] is rg, f"{label}: x.requires_grad is {got[key]['requires_grad']}, "
                     f"expected {rg}", hint="do not call x.requires_grad_() on the caller's tensor")
        C.check_close(got[key]["x"], ref[key]["x"], name=f"{label}: x after the call (bit for bit)", rtol=0, atol=0,
                      hint="do not modify x, not even to nudge it and put it back (x + h - 2h + h is not x in "
                           "floating point): evaluate the terms at new tensors x + h * e and x - h * e")
    C.check_true(got["nonleaf"]["base_grad"] is None,
                 "x came from base * 2, and after the call base.grad is set: gradients flowed back into the caller's "
                 "graph", hint="detach: differentiate with respect to a fresh leaf copy of x")
    C.check_close(got["nonleaf"]["x"], ref["nonleaf"]["x"], name="a non-leaf x after the call (bit for bit)",
                  rtol=0, atol=0, hint="do not modify x, not even through .data")
    C.check_close(_grad_or_fail(got["graded"]["grad"], "x"), ref["graded"]["before"],
                  name="x.grad of an x that already held a gradient, after the call", hint=hint_leaf)
    params = got["params"]
    _check_cuts(params["answer"], ref["params"]["answer"], "terms that use an nn.Linear and weight tensors", None)
    for k, grad in enumerate(params["lin"]):
        C.check_true(grad is None, f"a term calls an nn.Linear, and after the call its parameter {k} has .grad "
                     f"{C.describe(grad)}; expected None", hint=hint_grad)
    C.check_true(params["decay"] is None, f"the weight-decay tensor's .grad is {C.describe(params['decay'])} after the "
                 "call; expected None", hint=hint_grad)
    C.check_close(_grad_or_fail(params["held"], "w"), ref["params"]["held_before"],
                  name="w.grad of a weight that already held a gradient, after the call", hint=hint_grad)
    C.check_true(got["raised"] == ref["raised"],
                 f"a term that raises ValueError should make the call raise it; got {got['raised']!r}",
                 hint="do not wrap the terms in try/except: a broken term is a bug to see, not a cut")


# =====================================================================================================
# Exercise 2.4 · dann_loss
# clause -> test
#   h = encoder(x) once, feeding both heads; x (B, features), domain 0/1, y real for source only ... every test
#   a target sample's y is a placeholder (-1, or >= classes): never given to cross_entropy ........ test_dann_value
#   returns a 0-dim tensor task + adv: task = mean CE over source samples only (0 when none),
#     adv = mean CE of the domain head over all samples; any lambd; a deeper encoder ............ test_dann_value
#   no source sample: the task head takes no part, its .grad as before (None stays None, held
#     gradients keep their values), the encoder gets -lambd times adv's gradient only ............ test_dann_heads,
#                                                                                                  test_dann_encoder
#   task head: gradient of task; domain head: gradient of adv, normal sign ....................... test_dann_heads
#   encoder: gradient of task minus lambd times gradient of adv; lambd 0, 0.5, 1, a random one,
#     other sizes, a deeper encoder, a batch without source samples ............................. test_dann_encoder
#   lambd belongs to the call (two calls, one graph) ............................................. test_dann_per_call
#   no backward inside, no .grad (None stays None, gradients held from earlier micro-batches stay
#     as they were), parameters and inputs unchanged, nothing left behind (earlier calls change
#     nothing later); the encoder runs once per call ............................................. test_dann_per_call
# =====================================================================================================

@judge.shared
def dann_case(seed, n=8, in_features=4, hidden=6, classes=3, deep=False, domains=None, placeholder=None):
    """(encoder, task_head, domain_head, x, y, domain) for one hidden case; every input from explicit seeds.
    ``placeholder``: the y entry of every target sample (not a class index), else a random class."""
    if deep:
        torch.manual_seed(seed % 100000)
        nn_ = torch.nn
        encoder = nn_.Sequential(nn_.Linear(in_features, hidden), nn_.GELU(), nn_.Linear(hidden, hidden),
                                 nn_.Tanh()).double()
        task_head = nn_.Linear(hidden, classes).double()
        domain_head = nn_.Sequential(nn_.Linear(hidden, 3), nn_.Tanh(), nn_.Linear(3, 2)).double()
    else:
        encoder, task_head, domain_head = make_dann(in_features, hidden, classes, seed=seed % 1000)
    g = torch.Generator().manual_seed(seed + 7)
    x = torch.randn(n, in_features, generator=g, dtype=torch.float64)
    y = torch.randint(0, classes, (n,), generator=g)
    if domains is None:
        domain = torch.randint(0, 2, (n,), generator=g)
        domain[0], domain[-1] = 0, 1                       # both domains present
    else:
        domain = torch.tensor(domains)
    if placeholder is not None:
        y = torch.where(domain == 1, torch.full_like(y, placeholder), y)
    return encoder, task_head, domain_head, x, y, domain


@judge.shared
def dann_grads(modules):
    return [None if p.grad is None else p.grad.clone() for m in modules for p in m.parameters()]


def _check_grads(got, ref, label, hint):
    C.check_equal(len(got), len(ref), name=f"number of {label} gradients")
    for k, (g, r) in enumerate(zip(got, ref)):
        C.check_close(_grad_or_fail(g, f"{label} parameter {k}", hint="the loss must reach it: no detach, no no_grad"),
                      r, name=f"{label} parameter {k}.grad", hint=hint)


@judge.probe("test_dann_value")
def probe_dann_value(seed):
    enc, task, dom = make_dann()
    vx, vy, _ = dann_batch(6)
    vd = torch.tensor([0, 0, 1, 0, 1, 1])
    out = {"visible": dann_loss(enc, task, dom, vx, vy, vd, lambd=0.5), "cases": []}
    specs = [("8 mixed samples, lambd 1", dict(n=8), 1.0),
             ("5 target samples only (no label)", dict(n=5, domains=[1, 1, 1, 1, 1]), 1.0),
             ("4 source samples only", dict(n=4, domains=[0, 0, 0, 0], classes=5), 2.5),
             ("a deeper encoder, 7 samples", dict(n=7, deep=True, in_features=3, hidden=5), 0.0),
             ("one source sample among 6", dict(n=6, domains=[1, 1, 0, 1, 1, 1], classes=4), 0.7),
             ("8 mixed samples, target y = -1", dict(n=8, placeholder=-1), 1.0),
             ("6 mixed samples, target y = 7 (3 classes)", dict(n=6, placeholder=7), 0.4),
             ("4 target samples only, y = -1", dict(n=4, domains=[1, 1, 1, 1], placeholder=-1), 1.0)]
    cases = [(label, dann_case(seed + 11 * k, **kw), lambd) for k, (label, kw, lambd) in enumerate(specs)]
    for label, (e, t, d, x, y, dm), lambd in cases:
        try:
            loss = dann_loss(e, t, d, x, y, dm, lambd=lambd)
        except (IndexError, RuntimeError) as err:              # cross_entropy on a placeholder label
            loss = f"{type(err).__name__}: {str(err)[:200]}"
        out["cases"].append({"label": label, "loss": loss})
    return out


@probe_dann_value.verdict
def _(got, ref):
    hint = ("task: cross-entropy over the source samples only (domain == 0), 0 when there are none; adv: the domain "
            "head's cross-entropy over all samples; return task + adv (lambd changes gradients, not the value)")
    if any(isinstance(c["loss"], str) for c in got["cases"]):
        bad = next(c for c in got["cases"] if isinstance(c["loss"], str))
        _fail(f"dann_loss ({bad['label']}) raised {bad['loss']!r:.300}",
              "a target sample's y is a placeholder, not a class index (-1, or a value past the last class): select "
              "the source samples before cross_entropy sees y (y[source]), do not compute it on every sample and "
              "mask afterwards")
    with visible():
        C.check_tensor(got["visible"], name="dann_loss(...)", shape=(), hint="return task + adv, a 0-dim tensor")
        C.check_close(got["visible"], ref["visible"], name="dann_loss on 3 source and 3 target samples", hint=hint)
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_tensor(g["loss"], name=f"dann_loss ({r['label']})", shape=())
        C.check_close(g["loss"], r["loss"], name=f"dann_loss ({r['label']})", hint=hint)


@judge.probe("test_dann_heads")
def probe_dann_heads(seed):
    out = []
    enc, task, dom = make_dann()
    vx, vy, vd = dann_batch(8, seed=1)
    dann_loss(enc, task, dom, vx, vy, vd, lambd=0.5).backward()
    out.append({"label": "the notebook's example", "task": dann_grads([task]), "domain": dann_grads([dom])})
    for k, (kw, lambd) in enumerate(((dict(n=9, deep=True), 1.7), (dict(n=6, classes=5, hidden=4), 0.3),
                                     (dict(n=7, in_features=2), 3.0))):
        e, t, d, x, y, dm = dann_case(seed + 5 * k + 1, **kw)
        dann_loss(e, t, d, x, y, dm, lambd=lambd).backward()
        out.append({"label": f"case {k + 1}, lambd {lambd}", "task": dann_grads([t]), "domain": dann_grads([d])})
    # no source sample: the task head takes no part in the loss (its .grad as before: None, or held gradients)
    for k, (kw, held) in enumerate(((dict(n=5, domains=[1, 1, 1, 1, 1], placeholder=-1), False),
                                    (dict(n=4, domains=[1, 1, 1, 1], deep=True), True))):
        e, t, d, x, y, dm = dann_case(seed + 31 + k, **kw)
        if held:
            gh = torch.Generator().manual_seed(seed + 41)
            for p in t.parameters():
                p.grad = torch.randn(p.shape, generator=gh, dtype=p.dtype)
        dann_loss(e, t, d, x, y, dm, lambd=1.3).backward()
        out.append({"label": f"{len(dm)} target samples and no source sample" + (", task head holding gradients"
                                                                                  if held else ""),
                    "task": dann_grads([t]), "domain": dann_grads([d])})
    return out


@probe_dann_heads.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        if "no source" in r["label"]:
            C.check_equal(len(g["task"]), len(r["task"]), name=f"number of task head gradients ({r['label']})")
            for k, (gg, rr) in enumerate(zip(g["task"], r["task"])):
                name = f"task head parameter {k}.grad after backward ({r['label']})"
                hint = ("with no source sample the task head takes no part in the loss: task is a 0-dim zero with no "
                        "graph, not task_head(...) times 0 or a sum divided by a count, which put zeros into .grad")
                if rr is None:
                    C.check_true(gg is None, f"{name} is {C.describe(gg)}; expected None (as before the call)", hint=hint)
                else:
                    C.check_close(_grad_or_fail(gg, name, hint=hint), rr, name=f"{name} (held before the call)",
                                  hint=hint)
            _check_grads(g["domain"], r["domain"], f"domain head ({r['label']})",
                         "the domain head learns to tell the domains apart, with or without source samples")
            continue
        with visible() if i == 0 else nullcontext():
            _check_grads(g["task"], r["task"], f"task head ({r['label']})",
                         "the task head learns the task loss only, on the source samples")
            _check_grads(g["domain"], r["domain"], f"domain head ({r['label']})",
                         "the domain head learns to tell the domains apart: its gradient keeps its sign, the "
                         "reversal sits between the encoder and the domain head")


@judge.probe("test_dann_encoder")
def probe_dann_encoder(seed):
    out = []
    enc, task, dom = make_dann()
    vx, vy, vd = dann_batch(8, seed=2)
    dann_loss(enc, task, dom, vx, vy, vd, lambd=0.5).backward()
    out.append({"label": "the notebook's example, lambd 0.5", "encoder": dann_grads([enc])})
    lambd_rand = 0.05 + 3.0 * float(torch.rand((), generator=torch.Generator().manual_seed(seed)))
    specs = [(dict(n=8), 0.0), (dict(n=8), 1.0), (dict(n=10, deep=True, hidden=5), 2.5),
             (dict(n=6, classes=4, in_features=3), lambd_rand), (dict(n=5, domains=[1, 1, 1, 1, 1]), 1.5)]
    for k, (kw, lambd) in enumerate(specs):
        e, t, d, x, y, dm = dann_case(seed + 3 * k + 2, **kw)
        dann_loss(e, t, d, x, y, dm, lambd=lambd).backward()
        out.append({"label": f"case {k + 1}, lambd {lambd:.3g}", "encoder": dann_grads([e])})
    return out


@probe_dann_encoder.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            _check_grads(g["encoder"], r["encoder"], f"encoder ({r['label']})",
                         "the encoder gets the task gradient minus lambd times the domain gradient: reverse the "
                         "domain branch only (not h itself, which the task head uses too)")


@judge.probe("test_dann_per_call")
def probe_dann_per_call(seed):
    out = {}
    enc, task, dom = make_dann()
    b1, b2 = dann_batch(6, seed=3), dann_batch(6, seed=4)
    l1 = dann_loss(enc, task, dom, *b1, lambd=1.0)
    l2 = dann_loss(enc, task, dom, *b2, lambd=3.0)
    out["visible_no_grad"] = all(p.grad is None for p in enc.parameters())
    (l1 + l2).backward()
    out["visible"] = dann_grads([enc])
    # two calls on one batch, different lambd, a deeper encoder
    e, t, d, x, y, dm = dann_case(seed + 21, n=7, deep=True)
    la, lb = dann_loss(e, t, d, x, y, dm, lambd=0.2), dann_loss(e, t, d, x, y, dm, lambd=4.0)
    (la + 2 * lb).backward()
    out["two_calls"] = dann_grads([e, t, d])
    # earlier calls (results dropped) must change nothing later; the call itself changes nothing
    e, t, d, x, y, dm = dann_case(seed + 22, n=8)
    attributes_before = [set(vars(m)) for m in (e, t, d)]
    calls = []
    counter = e.register_forward_pre_hook(lambda module, args: calls.append(1))
    dann_loss(e, t, d, x, y, dm, lambd=1.0)
    counter.remove()
    out["encoder_calls"] = len(calls)
    gh = torch.Generator().manual_seed(seed + 23)
    for p in (p for m in (e, t, d) for p in m.parameters()):   # gradients held from earlier micro-batches
        p.grad = torch.randn(p.shape, generator=gh, dtype=p.dtype)
    params_before = [p.detach().clone() for m in (e, t, d) for p in m.parameters()]
    inputs_before = [x.clone(), y.clone(), dm.clone()]
    for _ in range(3):
        dann_loss(e, t, d, x, y, dm, lambd=2.0)
    loss = dann_loss(e, t, d, x, y, dm, lambd=0.5)
    out["grads_after_calls"] = dann_grads([e, t, d])
    out["params_changed"] = [not torch.equal(a, p.detach()) for a, p in zip(params_before, [p for m in (e, t, d)
                                                                                             for p in m.parameters()])]
    out["inputs_changed"] = [not torch.equal(a, b) for a, b in zip(inputs_before, (x, y, dm))]
    out["attributes_added"] = [len(set(vars(m)) - keys) for m, keys in zip((e, t, d), attributes_before)]
    loss.backward()
    out["after_calls"] = dann_grads([e, t, d])
    return out


@probe_dann_per_call.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_no_grad"] is True, "an encoder parameter has a .grad before any backward",
                     hint="dann_loss only builds the loss: no backward inside")
        _check_grads(got["visible"], ref["visible"], "encoder after two calls (lambd 1 and 3) and one backward",
                     "keep lambd with this call (ctx, or a hook on a tensor made in this call), not on a class")
    _check_grads(got["two_calls"], ref["two_calls"], "model after two calls on one batch (lambd 0.2 and 4)",
                 "each call reverses by its own lambd")
    for k, (g, r) in enumerate(zip(got["grads_after_calls"], ref["grads_after_calls"])):
        if g is None:
            _fail(f"parameter {k} held a gradient (accumulated over earlier micro-batches) and after four dann_loss "
                  "calls its .grad is None", "dann_loss must leave .grad alone: no zero_grad() inside")
        C.check_close(g, r, name=f"parameter {k}.grad, held before four dann_loss calls (no backward), after them",
                      hint="dann_loss must not call backward, zero_grad or write .grad: gradients accumulated over "
                           "earlier micro-batches stay as they were")
    C.check_true(not any(got["params_changed"]), "dann_loss changed a parameter", hint="build the loss only")
    C.check_true(not any(got["inputs_changed"]), "dann_loss changed x, y or domain in place")
    added = got["attributes_added"]
    C.check_true(type(added) is list and all(type(n) is int for n in added) and not any(added),
                 f"dann_loss left new attributes on the modules (encoder, task head, domain head: {added})",
                 hint="keep what one call computes in local names: an attribute on a module outlives the call and "
                      "holds its graph")
    C.check_equal(got["encoder_calls"], ref["encoder_calls"], name="how many times one dann_loss call ran the encoder",
                  hint="compute h = encoder(x) once and feed both heads from it")
    _check_grads(got["after_calls"], ref["after_calls"], "model after three earlier calls (lambd 2) and one call "
                 "(lambd 0.5)", "a hook registered on a module or a parameter stays after the call and acts on every "
                 "later backward: put the reversal on a tensor made in this call")


# =====================================================================================================
# Exercise 2.5 · gradient_penalty
# clause -> test
#   xhat = alpha * real + (1 - alpha) * fake, alpha (B, 1, ..., 1) broadcasts .. test_gradient_penalty_value
#   critic scores of shape (B,) or (B, 1) ....................................... test_gradient_penalty_value
#   mean over samples of (||g_i||_2 - 1)^2, norm over all other dims (images) ... test_gradient_penalty_value
#   returned as a 0-dim tensor ................................................... value, in_graph, double_backward
#   create_graph=True: the penalty is part of the graph (and has the value) .... test_gradient_penalty_in_graph
#   penalty.backward() gives the critic the gradient of the penalty and nothing
#     else (MLP, conv and linear critics) ...................................... test_gradient_penalty_double_backward
#   gradient_penalty changes no .grad: gradients the critic held before the call
#     stay, penalty.backward() adds to them ..................................... test_gradient_penalty_double_backward
#   fake = G(z) with its graph: after penalty.backward() G's .grad stay None,
#     and the critic still gets the penalty's gradient .......................... test_gradient_penalty_double_backward
# =====================================================================================================

@judge.shared
def gp_inputs(seed, shapes):
    """(real, fake, alpha) float64 batches of the given sample shapes, from an explicit generator."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape in shapes:
        real = torch.randn(shape, generator=g, dtype=torch.float64) * 2
        fake = torch.randn(shape, generator=g, dtype=torch.float64)
        alpha = torch.rand((shape[0],) + (1,) * (len(shape) - 1), generator=g, dtype=torch.float64)
        out.append((real, fake, alpha))
    return out


@judge.shared
def gp_conv_critic(seed, channels, size):
    torch.manual_seed(seed)
    k = size - 2
    return torch.nn.Sequential(torch.nn.Conv2d(channels, 3, 3), torch.nn.Softplus(), torch.nn.Flatten(),
                               torch.nn.Linear(3 * k * k, 1)).double()


def _check_penalty(g, r, label, hint=None):
    C.check_tensor(g, name=f"gradient_penalty({label})", shape=(), hint="return the mean over samples, a 0-dim tensor")
    C.check_close(g, r, name=f"gradient_penalty({label})", hint=hint)


@judge.probe("test_gradient_penalty_value")
def probe_gp_value(seed):
    (vr, vf, va), (r1, f1, a1), (r3, f3, a3) = gp_inputs(seed, [(4, 2), (5, 6), (7, 6)])
    (rc, fc, ac), = gp_inputs(seed + 1, [(3, 2, 6, 6)])
    w_rand = torch.randn(6, generator=torch.Generator().manual_seed(seed + 2), dtype=torch.float64)
    mlp = make_critic(6, 8, seed=(seed + 62) % 1000)
    conv = gp_conv_critic(seed + 63, 2, 6)

    class FlatScores(torch.nn.Module):                    # scores of shape (B,), not (B, 1)
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x).squeeze(1)

    return {"visible": gradient_penalty(LinearCritic(torch.tensor([3.0, 4.0], dtype=torch.float64)), vr, vf, va),
            "mlp": gradient_penalty(mlp, r1, f1, a1),
            "flat_scores": gradient_penalty(FlatScores(make_critic(6, 5, seed=(seed + 3) % 1000)), r1, f1, a1),
            "conv": gradient_penalty(conv, rc, fc, ac),
            "linear": gradient_penalty(LinearCritic(w_rand), r3, f3, a3),
            "linear_expected": (w_rand.norm() - 1) ** 2}


@probe_gp_value.verdict
def _(got, ref):
    with visible():
        _check_penalty(got["visible"], torch.tensor(16.0, dtype=torch.float64), "linear critic with ||w|| = 5",
                       "(||w|| - 1)^2 = 16: a norm per sample, minus 1, squared, then the mean")
    _check_penalty(got["mlp"], ref["mlp"], "MLP critic", "norm per sample (over dim 1 onwards), then (norm - 1)^2, then the mean")
    _check_penalty(got["flat_scores"], ref["flat_scores"], "critic with scores of shape (B,)")
    _check_penalty(got["conv"], ref["conv"], "conv critic on (B, C, H, W)",
                   "alpha has shape (B, 1, 1, 1); the norm of each sample is over C, H and W together")
    _check_penalty(got["linear"], ref["linear_expected"], "a random linear critic")


@judge.probe("test_gradient_penalty_in_graph")
def probe_gp_graph(seed):
    (r0, f0, a0), (r1, f1, a1) = gp_inputs(seed + 4, [(3, 6), (4, 6)])
    (rc, fc, ac), = gp_inputs(seed + 5, [(2, 1, 5, 5)])
    out = []
    for critic, (r, f, a) in ((make_critic(), (r0, f0, a0)), (make_critic(6, 5, seed=(seed + 65) % 1000), (r1, f1, a1)),
                              (gp_conv_critic(seed + 66, 1, 5), (rc, fc, ac))):
        pen = gradient_penalty(critic, r, f, a)
        out.append({"pen": pen, "has_grad_fn": getattr(pen, "grad_fn", None) is not None,
                    "requires_grad": bool(getattr(pen, "requires_grad", False))})
    return out


@probe_gp_graph.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["pen"], name="gradient_penalty(...)", shape=())
            C.check_true(g["has_grad_fn"] is True and g["requires_grad"] is True,
                         "the penalty has no grad_fn: the optimiser would see it as a constant",
                         hint="pass create_graph=True to torch.autograd.grad so the gradient itself is recorded")
        C.check_close(g["pen"], r["pen"], name=f"gradient_penalty (critic {i + 1})",
                      hint="mean over samples of (||d critic(xhat) / d xhat_i|| - 1)^2")


@judge.probe("test_gradient_penalty_double_backward")
def probe_gp_double(seed):
    (r0, f0, a0), (r1, f1, a1), (r3, f3, a3) = gp_inputs(seed + 6, [(4, 6), (6, 6), (5, 3)])
    (rc, fc, ac), = gp_inputs(seed + 7, [(3, 1, 5, 5)])
    (rg, _, ag), (rg2, _, ag2) = gp_inputs(seed + 9, [(5, 6), (3, 1, 5, 5)])
    w = torch.randn(3, generator=torch.Generator().manual_seed(seed + 8), dtype=torch.float64)
    critics = [("MLP critic", make_critic(), (r0, f0, a0)),
               ("a fresh MLP critic that holds earlier gradients", make_critic(6, 7, seed=(seed + 67) % 1000),
                (r1, f1, a1)),
               ("a conv critic that holds earlier gradients", gp_conv_critic(seed + 68, 1, 5), (rc, fc, ac)),
               ("a linear critic", LinearCritic(w), (r3, f3, a3))]
    out = {"critics": []}
    gh = torch.Generator().manual_seed(seed + 11)
    for k, (label, critic, (r, f, a)) in enumerate(critics):
        critic.zero_grad(set_to_none=True)
        if k in (1, 2):                                   # a critic that holds the Wasserstein loss's gradient
            for p in critic.parameters():
                p.grad = torch.randn(p.shape, generator=gh, dtype=p.dtype)
        pen = gradient_penalty(critic, r, f, a)
        pen.backward()
        out["critics"].append({"label": label, "pen": pen, "grads": [p.grad for p in critic.parameters()],
                               "shapes": [tuple(p.shape) for p in critic.parameters()]})
    torch.manual_seed(seed % 100000)
    gz = torch.randn(5, 3, generator=torch.Generator().manual_seed(seed + 10), dtype=torch.float64)
    gens = [("a linear generator, MLP critic", torch.nn.Linear(3, 6).double(), gz, make_critic(6, 5, seed=(seed + 69) % 1000),
             rg, ag),
            ("a generator of 5x5 images, conv critic",
             torch.nn.Sequential(torch.nn.Linear(3, 25), torch.nn.Unflatten(1, (1, 5, 5))).double(), gz[:3],
             gp_conv_critic(seed + 70, 1, 5), rg2, ag2)]
    out["generators"] = []
    for label, gen, z, critic, r, a in gens:
        fake = gen(z)                                     # still attached to the generator's graph
        pen = gradient_penalty(critic, r, fake, a)
        pen.backward()
        out["generators"].append({"label": label, "gen_grads": [p.grad for p in gen.parameters()],
                                  "critic_grads": [p.grad for p in critic.parameters()],
                                  "shapes": [tuple(p.shape) for p in critic.parameters()]})
    return out


@probe_gp_double.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got["critics"], ref["critics"])):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["pen"], name=f"gradient_penalty({r['label']})", shape=())
            for k, (gg, rr, shape) in enumerate(zip(g["grads"], r["grads"], r["shapes"])):
                gg = torch.zeros(shape, dtype=F64) if gg is None else gg
                rr = torch.zeros(shape, dtype=F64) if rr is None else rr
                C.check_close(gg, rr, name=f"{r['label']}: parameter {k}.grad after penalty.backward() (None counts as zero)",
                              hint="only the penalty may put gradients into the critic, and gradients it held before "
                                   "the call stay: use torch.autograd.grad with create_graph=True, not "
                                   "scores.backward() followed by zero_grad()")
    for g, r in zip(got["generators"], ref["generators"]):
        for k, gg in enumerate(g["gen_grads"]):
            C.check_true(gg is None, f"{r['label']}: after penalty.backward() the generator's parameter {k} has .grad "
                         f"{C.describe(gg)}; expected None (the penalty trains the critic only)",
                         hint="make xhat a fresh leaf: (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)")
        for k, (gg, rr, shape) in enumerate(zip(g["critic_grads"], r["critic_grads"], r["shapes"])):
            gg = torch.zeros(shape, dtype=F64) if gg is None else gg
            rr = torch.zeros(shape, dtype=F64) if rr is None else rr
            C.check_close(gg, rr, name=f"{r['label']}: critic parameter {k}.grad after penalty.backward() "
                          "(None counts as zero)")


# =====================================================================================================
# Exercise 2.6 · scale_and_track_
# clause -> test
#   y = x * scale, broadcast over the last dim .................................. test_track_values, _edge_cases
#   scale updated in place: same object, also a view into a larger buffer ...... test_track_values
#   scale <- (1 - m) scale + m * mean |x| over all dims but the last ........... test_track_values, _edge_cases
#   1-D x (m = |x|), size-1 batch, ranks 3 and 4, float64, momentum 0 and 0.9 .. test_track_edge_cases
#   y.backward() works after the update, uses the scale of the forward pass;
#     two calls before one backward each use their own scale ................... test_track_backward
#   scale stays a buffer (no requires_grad, no grad_fn, same dtype, the updated
#     values); x unchanged .......................................................... test_track_state
# =====================================================================================================

@judge.probe("test_track_values")
def probe_track_values(seed):
    g = torch.Generator().manual_seed(seed)
    x1 = torch.randn(5, 3, generator=g)
    s1 = torch.rand(3, generator=g) + 0.5
    x2 = torch.randn(4, 2, generator=g)
    table = torch.rand(3, 2, generator=g) + 0.5              # a stats table: row 1 is the scale
    vx = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]])
    vs = torch.tensor([4.0, 1.0, 0.5])
    out = {}
    vsame = vs
    out["visible"] = {"y": scale_and_track_(vx, vs, momentum=0.5), "scale": vs, "same": vs is vsame}
    s1_obj = s1
    y1 = scale_and_track_(x1, s1, momentum=0.2)
    out["case"] = {"y": y1, "scale": s1_obj, "same": s1 is s1_obj}
    y2 = scale_and_track_(x2, table[1], 0.3)
    out["view"] = {"y": y2, "table": table}
    return out


@probe_track_values.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"]["y"], ref["visible"]["y"], name="y = x * scale")
        C.check_true(got["visible"]["same"] is True, "scale is no longer the caller's tensor object")
        C.check_close(got["visible"]["scale"], ref["visible"]["scale"], name="scale after the update",
                      hint="(1 - momentum) * scale + momentum * mean |x| over every dimension except the last, "
                           "written into the caller's tensor (in place)")
    C.check_close(got["case"]["y"], ref["case"]["y"], name="y (momentum 0.2)",
                  hint="y uses the scale as it was when the function was called")
    C.check_close(got["case"]["scale"], ref["case"]["scale"], name="the caller's scale after the update (momentum 0.2)",
                  hint="update the caller's tensor in place (mul_, add_, copy_, lerp_): `scale = ...` only rebinds "
                       "a local name")
    C.check_close(got["view"]["y"], ref["view"]["y"], name="y with scale = table[1]")
    C.check_close(got["view"]["table"], ref["view"]["table"], name="the stats table after scale_and_track_(x, table[1])",
                  hint="an in-place update of a view writes into the table it views")


@judge.probe("test_track_backward")
def probe_track_backward(seed):
    g = torch.Generator().manual_seed(seed)
    x1 = torch.randn(4, 3, generator=g)
    x2 = torch.randn(6, 3, generator=g)
    s = torch.rand(3, generator=g) + 0.5
    up1 = torch.randn(4, 3, generator=g)
    up2 = torch.randn(6, 3, generator=g)
    xd = torch.randn(2, 5, 2, generator=g, dtype=torch.float64)
    sd = torch.rand(2, generator=g, dtype=torch.float64) + 0.5
    vx = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]])

    def run(fn):
        try:
            fn()
            return None
        except RuntimeError as err:
            return str(err)[:300]

    out = {}
    a = vx.clone().requires_grad_(True)
    y = scale_and_track_(a, torch.tensor([2.0, 1.0, 0.5]), momentum=0.5)
    out["visible_error"] = run(lambda: y.backward(torch.ones_like(y)))
    out["visible"] = a.grad
    a1, a2 = x1.clone().requires_grad_(True), x2.clone().requires_grad_(True)
    y1 = scale_and_track_(a1, s, momentum=0.3)
    y2 = scale_and_track_(a2, s, momentum=0.3)               # a second forward pass before backward
    out["two_error"] = run(lambda: ((y1 * up1).sum() + (y2 * up2).sum()).backward())
    out["two"] = [a1.grad, a2.grad]
    ad = xd.clone().requires_grad_(True)
    yd = scale_and_track_(ad, sd, momentum=0.9)
    out["f64_error"] = run(lambda: yd.sum().backward())
    out["f64"] = ad.grad
    return out


@probe_track_backward.verdict
def _(got, ref):
    hint_err = ("x * scale saved scale for backward and the in-place update changed it afterwards: give the "
                "product its own copy (no_grad does not help: the version counter still counts)")
    hint_val = "the gradient must use the scale of the forward pass (a change made through .data is invisible to autograd)"
    with visible():
        if got["visible_error"]:
            _fail(f"y.backward() raised: {got['visible_error']}", hint_err)
        C.check_close(_grad_or_fail(got["visible"], "x"), ref["visible"], name="x.grad", hint=hint_val)
    if got["two_error"]:
        _fail(f"backward through two calls raised: {got['two_error']}", hint_err)
    C.check_close(_grad_or_fail(got["two"][0], "x of the first call"), ref["two"][0], name="x.grad of the first call",
                  hint="each call's y must keep the scale it used, even after the second call updated it again")
    C.check_close(_grad_or_fail(got["two"][1], "x of the second call"), ref["two"][1], name="x.grad of the second call")
    if got["f64_error"]:
        _fail(f"backward (float64, 3-D x) raised: {got['f64_error']}", hint_err)
    C.check_close(_grad_or_fail(got["f64"], "x"), ref["f64"], name="x.grad (float64, 3-D x, momentum 0.9)", hint=hint_val)


@judge.probe("test_track_state")
def probe_track_state(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 4, generator=g).requires_grad_(True)
    s = torch.rand(4, generator=g) + 0.5
    x64 = torch.randn(2, 3, generator=g, dtype=torch.float64).requires_grad_(True)
    s64 = torch.rand(3, generator=g, dtype=torch.float64) + 0.5
    vx = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]], requires_grad=True)
    vs = torch.tensor([2.0, 1.0, 0.5])
    out = []
    for k, (xx, ss) in enumerate(((vx, vs), (x, s), (x64, s64))):
        scale_and_track_(xx, ss)
        if k:
            scale_and_track_(xx, ss, momentum=0.5)            # twice: the buffer must stay plain after each
        out.append({"requires_grad": ss.requires_grad, "grad_fn": None if ss.grad_fn is None else type(ss.grad_fn).__name__,
                    "is_leaf": ss.is_leaf, "dtype": ss.dtype, "x": xx.detach(), "x_grad": xx.grad,
                    "scale": ss.detach()})
    return out


@probe_track_state.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_true(g["requires_grad"] is False and g["grad_fn"] is None,
                         f"scale now has requires_grad={g['requires_grad']}, grad_fn={g['grad_fn']}",
                         hint="the update was computed from x with its graph: use x's values (x.detach()), or the "
                              "buffer becomes part of every later graph")
            C.check_close(g["x"], r["x"], name="x after the call", hint="do not modify x")
        C.check_equal(g["dtype"], r["dtype"], name="scale's dtype after the update")
        C.check_true(g["x_grad"] is None, "x.grad was set by scale_and_track_ itself", hint="do not call backward inside")
        with visible() if i == 0 else nullcontext():
            C.check_close(g["scale"], r["scale"], name="the buffer's values after the update",
                          hint="(1 - momentum) * scale + momentum * mean |x|, written into the caller's tensor")


@judge.probe("test_track_edge_cases")
def probe_track_edge(seed):
    g = torch.Generator().manual_seed(seed)
    specs = [((5,), torch.float32, 0.1),          # 1-D x: a single sample, m = |x|
             ((1, 4), torch.float32, 0.9),        # a batch of size 1
             ((2, 3, 4), torch.float64, 0.25),
             ((2, 2, 3, 2), torch.float64, 0.0),  # momentum 0: values unchanged
             ((6, 1), torch.float32, 1.0)]        # one feature; momentum 1: the statistic itself
    cases = [(torch.randn(shape, generator=g, dtype=dtype), torch.rand(shape[-1], generator=g, dtype=dtype) + 0.5, m)
             for shape, dtype, m in specs]
    vx = torch.tensor([[[1.0, -1.0]], [[3.0, 2.0]]], dtype=torch.float64)
    vs = torch.tensor([1.0, 1.0], dtype=torch.float64)
    out = {"visible": {"y": scale_and_track_(vx, vs, momentum=0.25), "scale": vs, "dtype": vs.dtype}, "cases": []}
    for x, s, m in cases:
        y = scale_and_track_(x, s, m) if m != 0.1 else scale_and_track_(x, s)
        out["cases"].append({"shape": tuple(x.shape), "momentum": m, "y": y, "scale": s, "dtype": s.dtype})
    return out


@probe_track_edge.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"]["y"], ref["visible"]["y"], name="y (scale of ones)")
        C.check_close(got["visible"]["scale"], ref["visible"]["scale"], name="scale after the update",
                      hint="average over every dimension except the last (here two of them)")
        C.check_equal(got["visible"]["dtype"], ref["visible"]["dtype"], name="scale's dtype")
    for g, r in zip(got["cases"], ref["cases"]):
        label = f"x of shape {r['shape']}, momentum {r['momentum']}"
        C.check_close(g["y"], r["y"], name=f"y ({label})")
        C.check_equal(g["dtype"], r["dtype"], name=f"scale's dtype ({label})")
        C.check_close(g["scale"], r["scale"], name=f"scale after the update ({label})",
                      hint="for a 1-D x there is no dimension to average over (m = |x|), and mean(dim=()) averages "
                           "over everything; reshape(-1, features).mean(0) covers every rank")


# =====================================================================================================
# Exercise 2.7 · run_backward
# clause -> test
#   returns what torch.autograd.grad(outputs, inputs, grad_outputs, allow_unused=True) returns, by
#     calling the nodes: a tuple, one entry per input, with the input's shape and dtype (float64
#     graphs, and a float32 leaf among them: the cast to the slot's dtype) ....................... every test
#   outputs: a tensor, a list or a tuple, each with a grad_fn .................................... test_run_backward_grad_outputs
#   inputs: a tensor, a list or a tuple, leaves or intermediate results .......................... test_run_backward_inputs
#   sum per (node, slot), each node once all its senders ran: diamonds, x * x, a ladder of diamonds,
#     constant operands ((None, 0) entries), broadcasting (a bias, a 0-dim scale: summed to the
#     slot's shape), integer branches (sort, topk + gather, max with indices, a boolean mask, an
#     integer cast), Linear + cross_entropy, LayerNorm + softmax, Conv2d, views and expand,
#     cat/split/stack, in-place ops on intermediate tensors (CopySlices) ......................... test_run_backward_scalar
#   thousands of nodes deep (a chain of 1500 to 1900 ops): no recursion ............................ test_run_backward_scalar
#   sums made out of place: AddBackward0 sends one tensor to both its inputs (in-place += corrupts the
#     other) ..................................................................................... test_run_backward_scalar
#   the tensors given are left alone: grad_outputs unchanged ....................................... test_run_backward_grad_outputs
#   the same output twice: its seeds add up ......................................................... test_run_backward_grad_outputs
#   calling run_backward again gives the same result: 30 graphs one after another (ids reused) ...... test_run_backward_grad_outputs
#   (not caught: a schedule cached across calls by id() of the outputs' nodes; whether a dead node's id comes back
#   depends on the allocator, and 30 graphs in a row did not provoke it in the judge's process)
#   grad_outputs: None, a tensor for one output, a list or a tuple with tensors or None entries; a
#     non-scalar output; several outputs, one computed from another (its node waits); two outputs of
#     one node (unbind: slots output_nr); a scalar output with its own grad_output (not ones);
#     outputs of shape (1,) and (1, 1) without one ............................................... test_run_backward_grad_outputs
#   no grad_outputs entry for an output of several elements -> RuntimeError (also beside a scalar
#     output) .................................................................................... test_run_backward_grad_outputs
#   None where no gradient reaches the input (an unused leaf, an unused intermediate tensor, a leaf
#     used only through an integer cast, an unbind piece nobody used), not zeros ................. test_run_backward_inputs
#   intermediate inputs: slot output_nr of grad_fn (an unbind piece: slot 2), one input computed
#     from another, an intermediate used twice, a leaf with a tensor computed from it; the same
#     input twice ................................................................................ test_run_backward_inputs
#   each node at most once: a ladder of diamonds computes one cos per SinBackward0 (counted by a
#     TorchDispatchMode, which sees the ops of a node called directly) ........................... test_run_backward_own_engine
#   no .grad changed: None stays None, held gradients keep their values, inputs or not ........... test_run_backward_own_engine
#   no backward / autograd.grad / autograd.backward: a pre-hook on every node, which the engine runs
#     and a direct call does not ................................................................. test_run_backward_own_engine
#   the results do not require grad ................................................................ test_run_backward_own_engine
#   twice on one graph gives the same result, and torch.autograd.grad still works afterwards ...... test_run_backward_own_engine
#   built-in ops only, no hooks on the graph: what the tests' graphs are (nothing to check)
# =====================================================================================================

@judge.shared
def rb_call(outputs, inputs, grad_outputs=None, omit=False):
    """torch's answer first (retaining the graph), then the student's, as plain data. ``omit``: call run_backward
    without the grad_outputs argument."""
    try:
        expected = list(torch.autograd.grad(outputs, inputs, grad_outputs, allow_unused=True, retain_graph=True))
    except RuntimeError as err:
        expected = f"RuntimeError: {str(err)[:200]}"
    out = {"expected": expected, "error": None, "runtime_error": False, "type": None, "got": None, "requires_grad": [],
           "grad_outputs_changed": False}
    given = [grad_outputs] if isinstance(grad_outputs, torch.Tensor) else list(grad_outputs or [])
    before = [None if v is None else v.clone() for v in given]
    try:
        got = run_backward(outputs, inputs) if omit else run_backward(outputs, inputs, grad_outputs)
    except Exception as err:  # noqa: BLE001 - reported to the verdict, not trusted
        out["error"] = f"{type(err).__name__}: {str(err)[:300]}"
        out["runtime_error"] = isinstance(err, RuntimeError) and not isinstance(err, (NotImplementedError, RecursionError))
        return out
    out["grad_outputs_changed"] = any(v is not None and not torch.equal(v, b) for v, b in zip(given, before))
    out["type"] = type(got).__name__
    if isinstance(got, (tuple, list)):
        out["got"] = list(got)
        out["requires_grad"] = [bool(getattr(t, "requires_grad", False)) for t in got]
    else:
        out["got"] = got
    return out


@judge.shared
def rb_leaf(g, *shape, dtype=torch.float64):
    """A leaf that requires grad, from generator g."""
    return torch.randn(tuple(shape), generator=g, dtype=dtype).requires_grad_(True)


@judge.shared
def rb_count_ops(fn, names):
    """Run fn() under a dispatch mode that counts the aten ops named (str(op), e.g. 'aten.cos.default'); return
    (fn's result, or "ExcName: message" if it raised, {name: count})."""
    from torch.utils._python_dispatch import TorchDispatchMode

    counts = {name: 0 for name in names}

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            if name in counts:
                counts[name] += 1
            return func(*args, **(kwargs or {}))

    try:
        with Counter():
            result = fn()
    except Exception as err:  # noqa: BLE001 - reported to the verdict
        result = f"{type(err).__name__}: {str(err)[:300]}"
    return result, counts


def _rb_error_hint(error):
    if "recursion" in error.lower():
        return ("a recursive walk stops at Python's recursion limit (about 1000 frames), and these graphs are deeper: "
                "walk with an explicit stack or list")
    if "argument" in error and "expected" in error:
        return "a node takes one gradient per input slot, len(node._input_metadata), None where nothing arrived"
    if "single memory location" in error:
        return ("a node may send one tensor to several slots (AddBackward0 does), or an expanded one: sum gradients "
                "out of place (a + b), never with += or add_")
    if "not callable" in error:
        return "call the node itself (node(*grads)); only custom autograd.Function nodes are not callable"
    if "size" in error or "shape" in error:
        return ("a node returns a broadcast input's gradient in the broadcast shape: sum it down to the receiving "
                "slot's shape (next_node._input_metadata[slot].shape) before adding it there")
    return None


def _check_rb(g, r, label, hint=None):
    """One call: no exception, a tuple of the right length, each entry None where torch's is, else close to it."""
    if g["error"]:
        _fail(f"run_backward raised {g['error']} (on {label})", _rb_error_hint(g["error"]) or hint)
    C.check_true(g["grad_outputs_changed"] is False, f"run_backward changed the grad_outputs it was given (on {label})",
                 hint="sum gradients out of place (a + b, not a += b or add_): the first gradient at a slot may be a "
                      "tensor you were given, or one a node also sent elsewhere")
    C.check_equal(g["type"], "tuple", name=f"the type of run_backward's result ({label})",
                  hint="return a tuple, one entry per input, as torch.autograd.grad does")
    expected = r["expected"]
    C.check_equal(len(g["got"]), len(expected), name=f"the number of gradients run_backward returned ({label})",
                  hint="one entry per input, in the order of inputs")
    for k, (got, exp) in enumerate(zip(g["got"], expected)):
        name = f"{label}: the gradient for input {k}"
        if exp is None:
            C.check_true(got is None, f"{name} is {C.describe(got)}; expected None (no gradient reaches that input)",
                         hint="as with allow_unused=True: None where nothing arrives at the input's slot, not zeros")
            continue
        if got is None:
            _fail(f"{name} is None; expected a tensor of shape {tuple(exp.shape)}",
                  hint or "an input's gradient is what arrives at its own (node, slot): get_gradient_edge(t)")
        C.check_close(got, exp, name=name, hint=hint)


@judge.shared
def rb_scalar_cases(seed):
    """(label, output, inputs) for test_run_backward_scalar: scalar outputs, leaf inputs; every tensor from seeds."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed % 100000)
    F_ = torch.nn.functional
    n = 2 + seed % 4
    x, w, b = rb_leaf(g, n), rb_leaf(g, n), rb_leaf(g, n)
    cases = [("x * w + b", (x * w + b).sum(), [x, w, b])]
    a = x.exp()
    cases.append(("a + a.sin() with a = x.exp() (a diamond)", (a + a.sin()).sum(), [x]))
    cases.append(("(x * x * w).sum() (x twice into one node)", (x * x * w).sum(), [x, w]))
    cases.append(("((x + w) * 2).sin().sum() + (x * 3).sum(): one gradient sent to x and w, and x used again",
                  ((x + w) * 2).sin().sum() + (x * 3).sum(), [x, w]))
    const = torch.randn(n, generator=g, dtype=torch.float64)
    cases.append(("(x * c + c).pow(2).sum() with a constant c", (x * const + const).pow(2).sum(), [x]))
    A, bias, s = rb_leaf(g, 4, n), rb_leaf(g, n), rb_leaf(g)
    cases.append(("((A + bias) * s).tanh().sum(): a bias and a 0-dim scale broadcast", ((A + bias) * s).tanh().sum(),
                  [A, bias, s]))
    p, q = rb_leaf(g, n), rb_leaf(g, n)
    h = p
    for _ in range(6):
        h = h.sin() + h * q
    cases.append(("a ladder of 6 diamonds", h.sum(), [p, q]))
    vals, _ = x.sort()
    cases.append(("sort (its integer indices need no gradient)", (vals * torch.arange(n, dtype=torch.float64)).sum(), [x]))
    M = rb_leaf(g, 5, 4)
    top, idx = M.topk(2, dim=1)
    cases.append(("topk, then gather with its indices", (top * M.gather(1, idx)).sum(), [M]))
    mv, mi = M.max(dim=0)
    cases.append(("max over a dim, then indexing with its indices", mv.sum() + M[mi, torch.arange(4)].pow(2).sum(), [M]))
    cases.append(("a boolean mask and where", M[M > 0].pow(3).sum() + torch.where(M > 0, M, M * M).sum(), [M]))
    lin = torch.nn.Linear(4, 3).double()
    xb = torch.randn(6, 4, generator=g, dtype=torch.float64)
    tgt = torch.randint(0, 3, (6,), generator=g)
    cases.append(("cross_entropy(Linear(x), y)", F_.cross_entropy(lin(xb), tgt), list(lin.parameters())))
    ln = torch.nn.LayerNorm(4).double()
    mix = torch.randn(5, 4, generator=g, dtype=torch.float64)
    cases.append(("(LayerNorm(M).softmax(-1) * c).sum()", (ln(M).softmax(-1) * mix).sum(), [M] + list(ln.parameters())))
    img = rb_leaf(g, 2, 3, 5, 5)
    conv = torch.nn.Conv2d(3, 2, 3).double()
    cases.append(("Conv2d(img).relu().mean()", conv(img).relu().mean(), [img, conv.weight, conv.bias]))
    cases.append(("views: M.t().reshape(-1)[::2] and M.expand(2, 5, 4)",
                  (M.t().reshape(-1)[::2] * 2).sum() + M.expand(2, 5, 4).pow(2).sum(), [M]))
    cases.append(("cat, split and stack", torch.cat([x, w]).split(2)[-1].sum() * torch.stack([x, b]).prod(), [x, w, b]))
    z = x * 1.0
    z.add_(w)
    z2 = x * 1.0
    z2[0] = b[-1] * 3
    cases.append(("in-place ops on intermediate tensors", (z * z).sum() + (z2 ** 2).sum(), [x, w, b]))
    xi = (x * 10).long()
    cases.append(("an integer branch", (x * xi.double()).sum() + x[xi.clamp(0, n - 1)].sum(), [x]))
    x32 = torch.randn(n, generator=g).requires_grad_(True)
    cases.append(("a float32 leaf times a float64 leaf", (x32 * w).sin().sum(), [x32, w]))
    depth = 1500 + 100 * (seed % 5)
    start = rb_leaf(g, 2)
    d = start
    for i in range(depth):
        d = d.sin() if i % 2 else d * 1.001
    cases.append((f"a chain of {depth} ops (an unrolled loop)", d.sum(), [start]))
    return cases


@judge.probe("test_run_backward_scalar")
def probe_rb_scalar(seed):
    vx = torch.randn(3, dtype=torch.float64, requires_grad=True)
    vW = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    vb = torch.randn(3, dtype=torch.float64, requires_grad=True)
    vc = torch.randn(4, 3, dtype=torch.float64)
    va = vx.exp()
    vloss = (((va + va.sin()) * vW + vb) * vc).sum()
    cases = rb_scalar_cases(seed)
    out = {"visible": rb_call(vloss, [vx, vW, vb]), "cases": []}
    for label, loss, inputs in cases:
        out["cases"].append({"label": label, **rb_call(loss, inputs)})
    return out


@probe_rb_scalar.verdict
def _(got, ref):
    hint = ("sum what arrives at each (node, slot); run a node once every node that sends it a gradient has run; sum a "
            "broadcast gradient down to its slot's shape and cast it to the slot's dtype")
    with visible():
        _check_rb(got["visible"], ref["visible"], "the notebook's loss, [x, W, b]", hint)
    for g, r in zip(got["cases"], ref["cases"]):
        _check_rb(g, r, r["label"], hint)


@judge.probe("test_run_backward_grad_outputs")
def probe_rb_grad_outputs(seed):
    g = torch.Generator().manual_seed(seed)
    n = 3 + seed % 3
    vx = torch.randn(5, dtype=torch.float64, requires_grad=True)
    vy = vx.sin() * vx
    vv = torch.randn(5, dtype=torch.float64)
    vtotal = (vy ** 2).sum()
    out = {"visible": [rb_call(vy, vx, vv), rb_call([vy, vtotal], [vx], [vv, None]), rb_call(vy, [vx], omit=True)]}
    x, w = rb_leaf(g, n), rb_leaf(g, n)
    A, bias = rb_leaf(g, 4, n), rb_leaf(g, n)
    y = (A + bias).tanh() * w                                  # (4, n)
    total = (y ** 2).sum()
    pieces = torch.stack([x * w, x.exp(), w.sin()])
    first, second, third = pieces.unbind()                     # three outputs of one node: slots 0, 1, 2
    s = (x * w).sum()
    col = (x * w).sum(0, keepdim=True)                         # shape (1,)
    cell = (x * w).sum().reshape(1, 1)                         # shape (1, 1)
    v = lambda *shape: torch.randn(tuple(shape), generator=g, dtype=torch.float64)
    cases = [
        ("a (4, n) output, grad_outputs a tensor", y, [A, bias, w], v(4, n), False),
        ("a (4, n) output, grad_outputs a one-element list", y, [A, bias, w], [v(4, n)], False),
        ("[y, total]: total is computed from y", [y, total], [A, bias, w], [v(4, n), None], False),
        ("(total, y) as a tuple, with a grad_output for total", (total, y), (A, w), (v(), v(4, n)), False),
        ("[third, first]: two outputs of one unbind node", [third, first], [x, w], [v(n), v(n)], False),
        ("[second, first.sum(), third] with None for the scalar", [second, first.sum(), third], [x, w], [v(n), None, v(n)],
         False),
        ("a scalar output with its own grad_output", s, [x, w], v(), False),
        ("[y, y]: the same output twice, each with its grad_output (they add up)", [y, y], [A, w], [v(4, n), v(4, n)],
         False),
        ("three scalar outputs, grad_outputs None", [s, total, x.exp().sum()], [x, A, w], None, True),
        ("an output of shape (1,), no grad_outputs", col, [x, w], None, True),
        ("an output of shape (1, 1), no grad_outputs", cell, [x], None, True),
    ]
    errors = [
        ("an output of shape (4, n) and no grad_outputs", y, [A], None, True),
        ("[a scalar, a (4, n) output] with grad_outputs [v, None]", [s, y], [x], [v(), None], False),
        ("[a scalar, a (4, n) output] and no grad_outputs", [s, y], [x], None, True),
    ]
    out["cases"] = [{"label": label, **rb_call(o, i, go, omit)} for label, o, i, go, omit in cases]
    out["errors"] = [{"label": label, **rb_call(o, i, go, omit)} for label, o, i, go, omit in errors]
    sequence = []
    for k in range(30):          # graphs built one after another: once a graph is gone, its nodes' ids are reused
        xk = rb_leaf(g, 3)
        hk = xk
        for _ in range(k % 4 + 1):                               # chains of 1 to 4 ops, two kinds
            hk = hk * 2 if k % 2 else hk.sin()
        yk = (hk * xk).sum() if k % 3 else hk.sum()
        sequence.append(rb_call(yk, xk))
        del xk, hk, yk
    out["sequence"] = sequence
    return out


@probe_rb_grad_outputs.verdict
def _(got, ref):
    hint = ("each output's node receives its grad_outputs entry at slot output.output_nr (ones for a one-element "
            "output without one); an output's node that another output feeds waits for it like any other node")
    raise_hint = ("without a grad_outputs entry only a one-element output can stand for ones: for a larger one raise "
                  "RuntimeError, as torch.autograd.grad does")
    names = ["run_backward(y, x, v)", "run_backward([y, total], [x], [v, None])"]
    with visible():
        for g, r, label in zip(got["visible"][:2], ref["visible"][:2], names):
            _check_rb(g, r, label, hint)
        g = got["visible"][2]
        C.check_true(g["error"] is not None and g["runtime_error"] is True,
                     f"run_backward(y, [x]) with y of shape (5,) and no grad_outputs: expected RuntimeError, got "
                     f"{g['error'] or 'a result'}", hint=raise_hint)
    for g, r in zip(got["cases"], ref["cases"]):
        _check_rb(g, r, r["label"], hint)
    for k, (g, r) in enumerate(zip(got["sequence"], ref["sequence"]), 1):
        _check_rb(g, r, f"graph {k} of 30 built one after another", "every call starts afresh: counts, buffers or a "
                  "schedule kept from an earlier call (keyed by id(), which Python reuses) belong to another graph")
    for g, r in zip(got["errors"], ref["errors"]):
        C.check_true(g["error"] is not None and g["runtime_error"] is True,
                     f"run_backward on {r['label']}: expected RuntimeError, got {g['error'] or 'a result'}",
                     hint=raise_hint)


@judge.probe("test_run_backward_inputs")
def probe_rb_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    n = 2 + seed % 4
    vp = torch.randn(3, dtype=torch.float64, requires_grad=True)
    vunused = torch.randn(2, dtype=torch.float64, requires_grad=True)
    vh = vp * 2.0
    vout = (vh.tanh() * vh).sum()
    out = {"visible": rb_call(vout, [vh, vunused, vp])}
    p, q, u = rb_leaf(g, n), rb_leaf(g, n), rb_leaf(g, n)
    h1 = p * q
    h2 = h1.sin() * h1                                         # h1 used twice; h2 computed from h1
    loss = (h2 * q).sum()
    other = u * 3.0                                            # an intermediate tensor loss does not use
    T = rb_leaf(g, 3, n)
    t0, t1, t2 = T.unbind()                                    # pieces: slots 0, 1, 2 of one node
    piece_loss = (t2 * 2 + t0.exp()).sum()
    xi = (p * 10).long()                                       # p reaches this loss through an integer only
    int_loss = (q * xi.double()).sum()
    cases = [
        ("inputs [h2, h1, p, q] of (h2 * q).sum(), h2 = h1.sin() * h1, h1 = p * q", loss, [h2, h1, p, q]),
        ("an unused leaf and an unused intermediate tensor", loss, [u, h1, other]),
        ("unbind pieces t2 (slot 2) and t1 (unused), and T", piece_loss, [t2, t1, T, t0]),
        ("the same input twice", loss, [q, h1, q]),
        ("a single tensor as inputs", loss, h1),
        ("inputs as a tuple", loss, (p, h2)),
        ("a leaf used only through an integer cast", int_loss, [p, q]),
    ]
    out["cases"] = [{"label": label, **rb_call(o, i)} for label, o, i in cases]
    return out


@probe_rb_inputs.verdict
def _(got, ref):
    hint = ("an input's gradient is what arrives at its own slot: a leaf's at its AccumulateGrad node, an intermediate "
            "tensor t's at slot t.output_nr of t.grad_fn (get_gradient_edge(t) gives both); None where nothing arrives")
    with visible():
        _check_rb(got["visible"], ref["visible"], "run_backward(out, [h, unused, p])", hint)
    for g, r in zip(got["cases"], ref["cases"]):
        _check_rb(g, r, r["label"], hint)


@judge.probe("test_run_backward_own_engine")
def probe_rb_own_engine(seed):
    g = torch.Generator().manual_seed(seed)
    n = 3 + seed % 3
    rungs = 10 + seed % 4
    out = {}
    # the notebook's example
    vx = torch.randn(4, dtype=torch.float64, requires_grad=True)
    vw = torch.randn(4, dtype=torch.float64, requires_grad=True)
    vw.grad = torch.ones(4, dtype=torch.float64)
    vout = ((vx * vw).sin() * vw).sum()
    # a ladder of diamonds: one SinBackward0 per rung, every one reached along two paths
    p, q, w, r = rb_leaf(g, n), rb_leaf(g, n), rb_leaf(g, n), rb_leaf(g, n)
    h = p
    for _ in range(rungs):
        h = h.sin() + h * q
    loss = (h * w).sum() + (r * 0.5).sum()
    held = {"q": torch.randn(n, generator=g, dtype=torch.float64), "w": torch.randn(n, generator=g, dtype=torch.float64)}
    q.grad, w.grad = held["q"].clone(), held["w"].clone()           # p and r: None
    leaves = {"p": p, "q": q, "w": w, "r": r}
    out["sin_nodes"] = rungs
    out["held"] = held
    vexpected = list(torch.autograd.grad(vout, [vx, vw], retain_graph=True))
    expected = list(torch.autograd.grad(loss, [p, q], retain_graph=True))
    out["expected"] = {"visible": vexpected, "ladder": expected}
    ran = []
    nodes = G.backward_graph(vout)[0] + G.backward_graph(loss)[0]
    handles = [node.register_prehook(lambda grads, name=type(node).__name__: ran.append(name)) for node in nodes]
    try:
        vfirst, _ = rb_count_ops(lambda: run_backward(vout, [vx, vw]), [])
        vsecond, _ = rb_count_ops(lambda: run_backward(vout, [vx, vw]), [])
        first, counts = rb_count_ops(lambda: run_backward(loss, [p, q]), ["aten.cos.default"])
        second, _ = rb_count_ops(lambda: run_backward(loss, [p, q]), [])
    finally:
        for handle in handles:
            handle.remove()
    out["engine_ran"] = ran[:20]
    out["cos_calls"] = counts["aten.cos.default"]

    def plain(result):
        if isinstance(result, (tuple, list)):
            return {"got": list(result), "requires_grad": [bool(getattr(t, "requires_grad", False)) for t in result],
                    "type": type(result).__name__}
        return {"got": result, "requires_grad": [], "type": type(result).__name__}

    out["calls"] = {"visible": [plain(vfirst), plain(vsecond)], "ladder": [plain(first), plain(second)]}
    out["grads"] = {"visible": {"x": vx.grad, "w": vw.grad}, "ladder": {k: t.grad for k, t in leaves.items()}}
    try:
        torch.autograd.grad(vout, [vx, vw])
        torch.autograd.grad(loss, [p, q])
        out["graph_after"] = None
    except RuntimeError as err:
        out["graph_after"] = str(err)[:200]
    return out


@probe_rb_own_engine.verdict
def _(got, ref):
    for key, label in (("visible", "the notebook's ((x * w).sin() * w).sum()"),
                       ("ladder", f"a ladder of {ref['sin_nodes']} diamonds")):
        with visible() if key == "visible" else nullcontext():
            for k, call in enumerate(got["calls"][key]):
                if isinstance(call["got"], str):
                    _fail(f"run_backward on {label} (call {k + 1}) raised {call['got']}", _rb_error_hint(call["got"]))
            if got["engine_ran"]:
                _fail(f"the autograd engine ran during run_backward: it ran the pre-hooks of "
                      f"{', '.join(dict.fromkeys(got['engine_ran']))}",
                      "call the nodes yourself (node(*grads)): no backward(), torch.autograd.grad or "
                      "torch.autograd.backward, which run the engine")
            grads = got["grads"][key]
            if key == "visible":
                C.check_true(grads["x"] is None, f"x.grad is {C.describe(grads['x'])} after run_backward; expected None",
                             hint="an AccumulateGrad node adds into .grad when called: read a leaf's gradient where "
                                  "it arrives, and never call that node")
                C.check_close(grads["w"], torch.ones(4, dtype=F64), name="w.grad (held before the calls)")
            else:
                for name in ("p", "r"):
                    C.check_true(grads[name] is None, f"{name}.grad is {C.describe(grads[name])} after run_backward; "
                                 "expected None", hint="never call an AccumulateGrad node: it adds into .grad")
                for name in ("q", "w"):
                    C.check_close(grads[name], ref["held"][name], name=f"{name}.grad (held before the calls; "
                                  + ("an input" if name == "q" else "a leaf in the graph, not an input") + ")",
                                  hint="never call an AccumulateGrad node: it adds into .grad")
            for k, call in enumerate(got["calls"][key]):
                C.check_equal(call["type"], "tuple", name=f"the type of run_backward's result ({label})")
                C.check_true(not any(call["requires_grad"]),
                             f"run_backward on {label} returned gradients that require grad (a recorded backward pass)",
                             hint="call the nodes under torch.no_grad(), as the engine does")
                C.check_equal(len(call["got"]), len(ref["expected"][key]),
                              name=f"the number of gradients run_backward returned ({label})")
                for i, (g, e) in enumerate(zip(call["got"], ref["expected"][key])):
                    name = f"{label}: the gradient for input {i}, call {k + 1} of 2"
                    if g is None:
                        _fail(f"{name} is None; every input here receives a gradient")
                    C.check_close(g, e, name=name, hint="a second call on the same graph must give the same result: "
                                                         "keep nothing from one call to the next")
    C.check_equal(got["cos_calls"], ref["cos_calls"],
                  name=f"cos computed by run_backward on a ladder of {ref['sin_nodes']} diamonds, one per SinBackward0 "
                       "node run",
                  hint="run each node once, when every node that sends it a gradient has run, on the sum of what "
                       "arrived: running a node once per arriving gradient repeats work that doubles with every rung")
    if got["graph_after"] is not None:
        _fail(f"torch.autograd.grad on the same graph after run_backward raised: {got['graph_after']}",
              "run_backward must leave the graph usable: call the nodes, which frees nothing")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.
WHY = {
    "graph_nodes": "Nodes are tracked by the node objects themselves (set and dict keys), so a node reached twice counts once and same-named nodes stay distinct. An explicit stack avoids the recursion limit, and Kahn's algorithm emits a node only after every node feeding it; (None, 0) entries are skipped.",
    "soft_clip": "With u = x / limit and t = tanh(u), dy/dx = 1 - t^2 and dy/dlimit = t - u(1 - t^2); sum_to_size folds the broadcast limit gradient back to limit's shape. Per-call data lives on ctx (tensors via save_for_backward, a number limit as an attribute), so each call keeps its own limit.",
    "find_gradient_cuts": "autograd.grad on a private detached copy of x returns the gradient without writing any .grad (an unused or gradless result counts as zero); central differences under no_grad measure the true derivative. allclose flags a term only where they really disagree; nothing is caught, so errors propagate.",
    "dann_loss": "The reversal hook sits on h.clone(), a tensor made in this call that feeds only the domain head, so only that branch's gradient reaches the encoder times -lambd, using this call's lambd, with no hook on a module. An empty source mask gives a 0-dim zero with no graph (h.new_zeros(())), not the NaN of an empty mean, and the task head stays out of the loss.",
    "gradient_penalty": "detach().requires_grad_(True) makes xhat a fresh leaf, so penalty.backward() cannot reach the generator through fake. autograd.grad with create_graph=True returns a recorded gradient without touching .grad, and summing the scores is enough because each score depends only on its own sample.",
    "run_backward": "Dependency counts over every node reachable from the outputs, then a ready list: a node runs once, when every node that sends it a gradient has run, on the per-slot sums of what arrived, each gradient summed down to its slot's shape and dtype as the engine's validate_outputs does. Inputs are read at their (node, slot) from get_gradient_edge, AccumulateGrad is never called (no .grad changes), nodes run under no_grad, and calling a node frees nothing, so the graph stays usable.",
    "scale_and_track": "x * scale.clone() saves a private copy for backward, so the later in-place update of scale neither trips the version counter nor changes the gradient. m comes from x.detach() reshaped to (-1, features), right for every rank (1-D too), and mul_/add_ write into the caller's tensor object.",
}
