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
def graph_structure(t):
    """(class names, edges) of the graph behind t, from the course's own walker."""
    nodes, edges = G.backward_graph(t)
    return [type(n).__name__ for n in nodes], [list(e) for e in edges]


def _check_names(got, label):
    C.check_type(got, list, name=f"graph_nodes({label})", hint="return a list of class-name strings")
    for s in got:
        C.check_true(type(s) is str, f"graph_nodes({label}) holds an item of type {type(s).__name__}",
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
    structures = [graph_structure(expr) for _, expr in cases]
    got = {"visible": graph_nodes(visible_expr)}
    got["cases"] = [(label, graph_nodes(expr)) for label, expr in cases]
    got["structures"] = structures
    return got


@probe_graph_once.verdict
def _(got, ref):
    with visible():
        _check_names(got["visible"], "x * w + b")
        C.check_equal(sorted(got["visible"]), sorted(["AddBackward0", "MulBackward0"] + ["AccumulateGrad"] * 3),
                      name="sorted(graph_nodes(x * w + b))",
                      hint="one AccumulateGrad per leaf (x, w and b), plus the Add and the Mul")
    for (label, names), (labels, _) in zip(got["cases"], ref["structures"]):
        _check_names(names, label)
        C.check_equal(_counts(names), _counts(labels), name=f"node counts of graph_nodes({label})",
                      hint="each node exactly once (recognise it by id(node), not by its name), keep the leaves' "
                           "AccumulateGrad nodes, and skip the (None, 0) entries of inputs without grad")


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
    vleaf = torch.randn(3, requires_grad=True)
    return {"visible": [graph_nodes(vleaf), graph_nodes(vleaf.detach() * 2)],
            "cases": [("a leaf of shape %s" % (shape,), graph_nodes(leaf)),
                      ("a tensor that never required grad", graph_nodes(constant)),
                      ("leaf.detach() * 2", graph_nodes(detached)),
                      ("a tensor made under torch.no_grad()", graph_nodes(made))]}


@probe_graph_leaves.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"][0], [], name="graph_nodes(leaf)", hint="a leaf has grad_fn None: return []")
        C.check_equal(got["visible"][1], [], name="graph_nodes(leaf.detach() * 2)")
    for label, names in got["cases"]:
        C.check_equal(names, [], name=f"graph_nodes({label})",
                      hint="no grad_fn means no backward nodes: return [] before walking")


# =====================================================================================================
# Exercise 2.2 · SoftClip / soft_clip
# clause -> test
#   forward: limit * tanh(x / limit), any shape, float32 and float64 ......... test_soft_clip_forward
#   limit a positive float or int ............................................ test_soft_clip_forward, _backward
#   x not modified in place .................................................. test_soft_clip_forward
#   backward: grad_output * local derivative (agrees with autograd) ......... test_soft_clip_backward
#   one gradient per input, None for limit (else backward raises) ........... test_soft_clip_backward, _gradcheck
#   gradcheck in float64 (here: backward vs central differences, judged) ..... test_soft_clip_gradcheck
#   soft_clip goes through SoftClip.apply ..................................... test_soft_clip_uses_function
#   tensors saved with ctx.save_for_backward ................................. test_soft_clip_uses_function
# =====================================================================================================

@judge.probe("test_soft_clip_forward")
def probe_soft_forward(seed):
    g = torch.Generator().manual_seed(seed)
    specs = [(torch.float32, (7,), 0.5 + 3.5 * float(torch.rand((), generator=g))),
             (torch.float64, (3, 4, 5), 0.5 + 3.5 * float(torch.rand((), generator=g))),
             (torch.float32, (2, 1, 6), 3), (torch.float64, (1,), 1.0)]
    inputs = [(torch.randn(shape, generator=g, dtype=dtype) * 3, limit) for dtype, shape, limit in specs]
    vis = torch.tensor([-10.0, -1.0, 0.0, 0.5, 10.0])
    out = {"visible": soft_clip(vis.clone(), 2.0), "cases": []}
    for x, limit in inputs:
        y = soft_clip(x, limit)
        out["cases"].append({"limit": limit, "y": y, "dtype": y.dtype, "x_after": x})
    return out


@probe_soft_forward.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"], ref["visible"], name="soft_clip(x, 2.0)")
    for g, r in zip(got["cases"], ref["cases"]):
        label = f"soft_clip(x of shape {tuple(r['y'].shape)}, {r['limit']!r})"
        C.check_tensor(g["y"], label, shape=tuple(r["y"].shape))
        C.check_equal(g["dtype"], r["dtype"], name=f"dtype of {label}", hint="keep the dtype of x")
        C.check_close(g["y"], r["y"], name=label, hint="limit * tanh(x / limit)")
        C.check_close(g["x_after"], r["x_after"], name=f"x after {label}",
                      hint="do not modify x in place (no div_, mul_, tanh_ on x)")


@judge.probe("test_soft_clip_backward")
def probe_soft_backward(seed):
    g = torch.Generator().manual_seed(seed)
    specs = [((4, 3), 0.7), ((2, 3, 5), 2.5), ((9,), 4), ((1,), 1.0)]
    data = [((torch.randn(shape, generator=g, dtype=torch.float64) * 2), torch.randn(shape, generator=g, dtype=torch.float64), limit)
            for shape, limit in specs]
    vx = torch.randn(6, generator=g, dtype=torch.float64)
    vup = torch.randn(6, generator=g, dtype=torch.float64)
    nonleaf_base = torch.randn(3, 2, generator=g, dtype=torch.float64)
    nonleaf_up = torch.randn(3, 2, generator=g, dtype=torch.float64)
    out = {}
    xa = vx.clone().requires_grad_(True)
    soft_clip(xa, 1.5).backward(vup)
    out["visible"] = xa.grad
    out["cases"] = []
    for x, up, limit in data:
        xl = x.clone().requires_grad_(True)
        y = soft_clip(xl, limit)
        rg = y.requires_grad
        y.backward(up)
        out["cases"].append({"shape": tuple(x.shape), "limit": limit, "requires_grad": rg, "grad": xl.grad})
    base = nonleaf_base.clone().requires_grad_(True)
    soft_clip(base * 2.0, 0.8).backward(nonleaf_up)      # x is an intermediate result
    out["nonleaf"] = base.grad
    return out


@probe_soft_backward.verdict
def _(got, ref):
    with visible():
        C.check_close(_grad_or_fail(got["visible"], "x"), ref["visible"], name="x.grad",
                      hint="backward must return grad_output * (1 - tanh(x / limit)**2), and None for limit")
    for g, r in zip(got["cases"], ref["cases"]):
        label = f"x (shape {r['shape']}, limit {r['limit']})"
        C.check_true(g["requires_grad"] is True, "soft_clip(x, limit) does not require grad although x does",
                     hint="return the output of SoftClip.apply(x, limit)")
        C.check_close(_grad_or_fail(g["grad"], label), r["grad"], name=f"{label}.grad",
                      hint="multiply the local derivative by grad_output; the derivative is 1 - tanh(x / limit)**2")
    C.check_close(_grad_or_fail(got["nonleaf"], "base"), ref["nonleaf"], name="gradient through soft_clip(base * 2, 0.8)")


@judge.probe("test_soft_clip_gradcheck")
def probe_soft_gradcheck(seed):
    g = torch.Generator().manual_seed(seed)
    cases = []
    for shape, limit in (((5,), 1.5), ((3, 4), 0.3 + 2.7 * float(torch.rand((), generator=g))), ((2, 2, 3), 2)):
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 2
        v = torch.randn(shape, generator=g, dtype=torch.float64)
        cases.append((x, v, limit))
    out = []
    for x, v, limit in cases:
        xg = x.clone().requires_grad_(True)
        (soft_clip(xg, limit) * v).sum().backward()
        step = 1e-6
        plus, minus = [], []
        with torch.no_grad():
            for i in range(x.numel()):
                e = torch.zeros(x.numel(), dtype=torch.float64)
                e[i] = step
                e = e.view_as(x)
                plus.append((soft_clip(x + e, limit) * v).sum())
                minus.append((soft_clip(x - e, limit) * v).sum())
        try:
            xc = x.clone().requires_grad_(True)
            gc = torch.autograd.gradcheck(lambda t: soft_clip(t, limit), (xc,), raise_exception=False)
        except Exception as err:  # noqa: BLE001 - reported, not trusted
            gc = f"{type(err).__name__}: {err}"
        out.append({"shape": tuple(x.shape), "limit": limit, "vjp": xg.grad, "plus": plus, "minus": minus,
                    "step": step, "gradcheck": gc})
    return out


@probe_soft_gradcheck.verdict
def _(got, ref):
    # The notebook's visible test runs torch's gradcheck in the kernel; here the judge makes its own comparison
    # (your backward's VJP against central differences of your forward), so a patched gradcheck changes nothing.
    for g, r in zip(got, ref):
        label = f"soft_clip (shape {r['shape']}, limit {r['limit']})"
        vjp = _grad_or_fail(g["vjp"], f"x of {label}")
        C.check_equal(len(g["plus"]), len(r["plus"]), name=f"finite differences of {label}")
        numeric = torch.stack([(p - m) / (2 * r["step"]) for p, m in zip(g["plus"], g["minus"])]).view(r["shape"])
        C.check_close(vjp, numeric, name=f"{label}: your backward vs central differences of your forward",
                      rtol=1e-4, atol=1e-6,
                      hint=f"gradcheck reported {g['gradcheck']!r}: the analytical Jacobian (your backward) "
                           "differs from the numerical one; compare with d/dx limit*tanh(x/limit)")
        # torch's gradcheck, run in your kernel, can only make you lose here (a patched one gains nothing):
        # it also fails when forward modifies its input in place, which the comparison above cannot see.
        C.check_true(g["gradcheck"] is True, f"torch.autograd.gradcheck({label}) reported {g['gradcheck']!r}",
                     hint="gradcheck perturbs x and calls your function again: a forward that modifies x in place "
                          "(div_, tanh_) corrupts every later evaluation")


@judge.probe("test_soft_clip_uses_function")
def probe_soft_function(seed):
    g = torch.Generator().manual_seed(seed)
    x1 = torch.randn(4, generator=g).requires_grad_(True)
    x2 = torch.randn(3, 2, generator=g, dtype=torch.float64).requires_grad_(True)
    out = []
    for x, limit in ((x1, 2.0), (x2, 0.9)):
        node = soft_clip(x, limit).grad_fn
        out.append({"limit": limit, "node": None if node is None else type(node).__name__,
                    "saved": None if node is None else len(getattr(node, "saved_tensors", ()))})
    return out


@probe_soft_function.verdict
def _(got, ref):
    for i, g in enumerate(got):
        with visible() if i == 0 else nullcontext():
            C.check_true(g["node"] is not None, f"soft_clip(x, {g['limit']}).grad_fn is None",
                         hint="return SoftClip.apply(x, limit)")
            C.check_equal(g["node"], ref[i]["node"], name=f"type(soft_clip(x, {g['limit']}).grad_fn).__name__",
                          hint="call SoftClip.apply(x, limit) instead of writing the formula with torch ops")
        C.check_true(type(g["saved"]) is int and g["saved"] >= 1,
                     f"SoftClip saved {g['saved']} tensors with ctx.save_for_backward",
                     hint="store the tensors backward needs with ctx.save_for_backward(...), not as ctx attributes: "
                          "saved tensors get version checks, saved-tensor hooks and are freed after backward")


# =====================================================================================================
# Exercise 2.3 · find_gradient_cuts
# clause -> test
#   returns a list of names in the order of `terms` ............................ every test
#   cut off entirely: .item(), NumPy, no_grad, set_grad_enabled(False), a custom
#     backward returning zeros; several cuts in one dict; any shape of x ...... test_find_cuts_full
#   cut on one of several paths: x * x.detach(), detached denominator, .data
#     branch, a custom backward off by a factor; size-1 x .................... test_find_cuts_partial
#   no false alarms: constants, weight decay on other tensors that require grad,
#     a .detach() that changes nothing, steep clean terms, {} -> [] .......... test_find_cuts_no_false_alarms
#   the cut in SEG_TERMS ....................................................... test_find_cuts_segmentation
#   x not modified, no .grad, same requires_grad, nothing flows into x's graph;
#     same answer twice; a term's exception propagates ....................... test_find_cuts_side_effects
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
                "sigmoid_mse": lambda t: ((t.sigmoid() - 0.3) ** 2).sum()}),
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
                "weight_decay": lambda t: (w ** 2).sum(),
                "target_only": lambda t: (target ** 2).mean(),
                "steep": lambda t: (t.exp() ** 2).sum(),
                "centered_detached_mean": lambda t: ((t - t.detach().mean()) ** 2).sum(),
                "many_paths": lambda t: (t.sin() * t.cos() + t * t.tanh()).sum(),
                "zero_times": lambda t: 0.0 * t.sum()}),
            ((torch.randn(1, 1, generator=g, dtype=F64_)), {
                "size_one": lambda t: (t ** 4).sum() + t.sum()}),
            ((torch.randn(3, generator=g, dtype=F64_)), {}),
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
    logits, masks = AT.blob_masks(2, 6, generator=g, dtype=torch.float64)
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
    x_leaf = torch.randn(2, 3, generator=g, dtype=torch.float64).requires_grad_(True)
    x_plain = torch.randn(4, generator=g, dtype=torch.float64)
    base = torch.randn(3, generator=g, dtype=torch.float64).requires_grad_(True)
    x_nonleaf = base * 2.0
    before = [x_leaf.detach().clone(), x_plain.clone(), x_nonleaf.detach().clone()]
    vis_x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    terms = {"square": lambda t: (t ** 2).sum(), "cut": lambda t: (t.detach() ** 2).sum() + t.sum(),
             "tanh": lambda t: t.tanh().sum()}

    def broken(t):
        raise ValueError("a broken loss term")

    out = {}
    find_gradient_cuts({"square": lambda t: (t ** 2).sum(), "cut": lambda t: (t.detach() ** 2).sum() + t.sum()}, vis_x)
    out["visible"] = {"grad": vis_x.grad, "requires_grad": vis_x.requires_grad, "x": vis_x.detach()}
    first = find_gradient_cuts(terms, x_leaf)
    second = find_gradient_cuts(terms, x_leaf)
    out["twice"] = [first, second]
    out["leaf"] = {"grad": x_leaf.grad, "requires_grad": x_leaf.requires_grad, "is_leaf": x_leaf.is_leaf, "x": x_leaf.detach()}
    find_gradient_cuts(terms, x_plain)
    out["plain"] = {"grad": x_plain.grad, "requires_grad": x_plain.requires_grad, "x": x_plain}
    find_gradient_cuts(terms, x_nonleaf)
    out["nonleaf"] = {"base_grad": base.grad, "x": x_nonleaf.detach()}
    try:
        find_gradient_cuts({"square": lambda t: (t ** 2).sum(), "broken": broken, "tanh": lambda t: t.tanh().sum()},
                           x_plain)
        out["raised"] = None
    except ValueError as err:
        out["raised"] = str(err)
    except Exception as err:  # noqa: BLE001 - a different exception is a wrong answer, not a crash
        out["raised"] = f"{type(err).__name__}: {err}"
    out["after_raise"] = {"grad": x_plain.grad, "requires_grad": x_plain.requires_grad, "x": x_plain}
    out["before"] = before
    return out


@probe_cuts_side_effects.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible"]["grad"] is None, f"x.grad is {C.describe(got['visible']['grad'])} after the "
                     "call; expected None", hint="compute gradients on a fresh leaf copy of x, or with "
                                                  "torch.autograd.grad, which does not touch .grad")
        C.check_true(got["visible"]["requires_grad"] is True, "x.requires_grad changed")
        C.check_close(got["visible"]["x"], ref["visible"]["x"], name="x after the call")
    C.check_equal(got["twice"][1], got["twice"][0], name="the second call's answer (it must equal the first's)",
                  hint="state left over from the first call (an accumulated .grad?) changes the second")
    C.check_type(got["twice"][0], list, name="find_gradient_cuts(...) on a leaf x that requires grad")
    for key, label, rg in (("leaf", "a leaf x that requires grad", True), ("plain", "an x without grad", False),
                           ("after_raise", "an x without grad, after a term raised", False)):
        C.check_true(got[key]["grad"] is None, f"{label}: x.grad is {C.describe(got[key]['grad'])}; expected None",
                     hint="work on x.detach().clone().requires_grad_(True), never on the caller's x")
        C.check_true(got[key]["requires_grad"] is rg, f"{label}: x.requires_grad is {got[key]['requires_grad']}, "
                     f"expected {rg}", hint="do not call x.requires_grad_() on the caller's tensor")
        C.check_close(got[key]["x"], ref[key]["x"], name=f"{label}: x after the call", hint="do not modify x")
    C.check_true(got["nonleaf"]["base_grad"] is None,
                 "x came from base * 2, and after the call base.grad is set: gradients flowed back into the caller's "
                 "graph", hint="detach: differentiate with respect to a fresh leaf copy of x")
    C.check_close(got["nonleaf"]["x"], ref["nonleaf"]["x"], name="a non-leaf x after the call")
    C.check_true(got["raised"] == ref["raised"],
                 f"a term that raises ValueError should make the call raise it; got {got['raised']!r}",
                 hint="do not wrap the terms in try/except: a broken term is a bug to see, not a cut")


# =====================================================================================================
# Exercise 2.4 · grad_reverse
# clause -> test
#   returns a new tensor equal to x (identity forward), any shape and dtype .... test_grad_reverse_forward
#   x without grad: equal tensor, no error; x not modified ...................... test_grad_reverse_forward
#   backward multiplies by -lambd, several lambd, leaf or intermediate x ....... test_grad_reverse_backward
#   lambd belongs to the call (two calls, two lambd, one graph) ................. test_grad_reverse_backward
#   only gradients through the returned tensor; x used on two paths;
#     repeated calls do not stack or change earlier results; nested calls ...... test_grad_reverse_only_its_path
#   a tiny domain-adversarial model: head gets the normal gradient, features
#     -lambd times it ........................................................... test_grad_reverse_domain_adversarial
# =====================================================================================================

@judge.probe("test_grad_reverse_forward")
def probe_rev_forward(seed):
    g = torch.Generator().manual_seed(seed)
    specs = [(torch.float32, (3, 4), 1.0), (torch.float64, (2, 3, 2), 2.5), (torch.float32, (6,), 0.1),
             (torch.float64, (1,), 0.7)]
    xs = [(torch.randn(shape, generator=g, dtype=dtype).requires_grad_(True), lambd) for dtype, shape, lambd in specs]
    plain = torch.randn(2, 5, generator=g)
    vis = torch.randn(5, generator=g).requires_grad_(True)
    out = {"visible": grad_reverse(vis, 0.5), "visible_x": vis.detach(), "cases": []}
    for x, lambd in xs:
        y = grad_reverse(x, lambd)
        out["cases"].append({"y": y, "x": x.detach(), "requires_grad": y.requires_grad, "new": y is not x,
                             "dtype": y.dtype})
    try:
        yp = grad_reverse(plain, 1.0)
        out["plain"] = {"y": yp, "error": None}
    except Exception as err:  # noqa: BLE001
        out["plain"] = {"y": None, "error": f"{type(err).__name__}: {err}"}
    out["plain_x"] = plain
    return out


@probe_rev_forward.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"], ref["visible_x"], name="grad_reverse(x, 0.5)",
                      hint="the forward pass must not change the values (reverse the gradient, not x)")
    for g, r in zip(got["cases"], ref["cases"]):
        label = f"grad_reverse(x of shape {tuple(r['x'].shape)}, {r['x'].dtype}, lambd)"
        C.check_tensor(g["y"], label, shape=tuple(r["x"].shape))
        C.check_equal(g["dtype"], r["dtype"], name=f"dtype of {label}")
        C.check_close(g["y"], r["x"], name=label, hint="identity in the forward pass")
        C.check_close(g["x"], r["x"], name=f"x after {label}", hint="do not modify x")
        C.check_true(g["requires_grad"] is True, f"{label} does not require grad although x does")
        C.check_true(g["new"] is True, f"{label} returned x itself",
                     hint="return a new tensor (a view or a copy): a hook put on x itself reverses every gradient "
                          "that reaches x, on every path and in every later call")
    if got["plain"]["error"] is not None:
        _fail(f"grad_reverse(x) raised for an x that does not require grad: {got['plain']['error'][:200]}",
              hint="register a hook only on a tensor that requires grad (or use an autograd.Function)")
    C.check_close(got["plain"]["y"], ref["plain_x"], name="grad_reverse(x without grad)")


@judge.probe("test_grad_reverse_backward")
def probe_rev_backward(seed):
    g = torch.Generator().manual_seed(seed)
    lambdas = [0.3, 1.0, 1.7, 0.05 + 4.95 * float(torch.rand((), generator=g))]
    data = [(torch.randn(3, 5, generator=g, dtype=torch.float64), torch.randn(3, 5, generator=g, dtype=torch.float64))
            for _ in lambdas]
    vis_x = torch.randn(4, generator=g, dtype=torch.float64)
    vis_up = torch.randn(4, generator=g, dtype=torch.float64)
    x32 = torch.randn(2, 3, generator=g)
    base = torch.randn(4, generator=g, dtype=torch.float64)
    a_in = torch.randn(3, generator=g, dtype=torch.float64)
    b_in = torch.randn(3, generator=g, dtype=torch.float64)
    out = {}
    vx = vis_x.clone().requires_grad_(True)
    grad_reverse(vx, 2.0).backward(vis_up)
    out["visible"] = vx.grad
    out["cases"] = []
    for lambd, (x, up) in zip(lambdas, data):
        xl = x.clone().requires_grad_(True)
        grad_reverse(xl, lambd).backward(up)
        out["cases"].append({"lambd": lambd, "grad": xl.grad})
    xf = x32.clone().requires_grad_(True)
    (grad_reverse(xf, 0.5) * 3).sum().backward()
    out["float32"] = xf.grad
    bl = base.clone().requires_grad_(True)
    (grad_reverse(bl.exp(), 1.5) * 2).sum().backward()     # an intermediate x
    out["intermediate"] = bl.grad
    a, b = a_in.clone().requires_grad_(True), b_in.clone().requires_grad_(True)
    ya = grad_reverse(a, 0.5)
    yb = grad_reverse(b, 2.0)                              # a second call before backward
    (ya.sum() + 3 * yb.sum()).backward()
    out["two_calls"] = [a.grad, b.grad]
    return out


@probe_rev_backward.verdict
def _(got, ref):
    with visible():
        C.check_close(_grad_or_fail(got["visible"], "x"), ref["visible"], name="x.grad after grad_reverse(x, 2.0)",
                      hint="backward must return -lambd * grad_output")
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_close(_grad_or_fail(g["grad"], "x"), r["grad"], name=f"x.grad (lambd={r['lambd']:.3f})",
                      hint="multiply by -lambd, not just -1")
    C.check_close(_grad_or_fail(got["float32"], "x"), ref["float32"], name="x.grad (float32, lambd 0.5)")
    C.check_close(_grad_or_fail(got["intermediate"], "base"), ref["intermediate"],
                  name="gradient through grad_reverse(base.exp(), 1.5)")
    C.check_close(_grad_or_fail(got["two_calls"][0], "a"), ref["two_calls"][0],
                  name="a.grad with grad_reverse(a, 0.5) and grad_reverse(b, 2.0) in one graph",
                  hint="each call keeps its own lambd: store it on ctx, not on the class (shared by every call)")
    C.check_close(_grad_or_fail(got["two_calls"][1], "b"), ref["two_calls"][1], name="b.grad in the same graph")


@judge.probe("test_grad_reverse_only_its_path")
def probe_rev_path(seed):
    g = torch.Generator().manual_seed(seed)
    vis = torch.randn(4, generator=g, dtype=torch.float64)
    x1 = torch.randn(3, 2, generator=g, dtype=torch.float64)
    x2 = torch.randn(5, generator=g, dtype=torch.float64)
    x3 = torch.randn(4, generator=g, dtype=torch.float64)
    out = {}
    v = vis.clone().requires_grad_(True)
    (grad_reverse(v, 1.0) + v).sum().backward()
    out["visible"] = v.grad
    a = x1.clone().requires_grad_(True)
    (grad_reverse(a, 0.7) * 2 + a.sin()).sum().backward()
    out["two_paths"] = a.grad
    b = x2.clone().requires_grad_(True)
    for _ in range(3):
        grad_reverse(b, 2.0)                                # earlier steps' calls, results dropped
    (b ** 2).sum().backward()                               # this step does not use grad_reverse at all
    out["after_calls"] = b.grad
    b.grad = None
    kept = [grad_reverse(b, 2.0) for _ in range(2)]
    kept[0].sum().backward()                                # one of two live results
    out["one_of_two"] = b.grad
    c = x3.clone().requires_grad_(True)
    grad_reverse(grad_reverse(c, 0.5), 3.0).sum().backward()
    out["nested"] = c.grad
    return out


@probe_rev_path.verdict
def _(got, ref):
    hint = ("reverse only the gradient of the returned tensor: a hook on x itself reverses every gradient that "
            "reaches x, on every path, and stays for every later call")
    with visible():
        C.check_close(_grad_or_fail(got["visible"], "x"), ref["visible"], name="x.grad in (grad_reverse(x) + x).sum()",
                      hint=hint)
    C.check_close(_grad_or_fail(got["two_paths"], "x"), ref["two_paths"],
                  name="x.grad in (grad_reverse(x, 0.7) * 2 + x.sin()).sum()", hint=hint)
    C.check_close(_grad_or_fail(got["after_calls"], "x"), ref["after_calls"],
                  name="x.grad of (x ** 2).sum() after three earlier grad_reverse(x) calls", hint=hint)
    C.check_close(_grad_or_fail(got["one_of_two"], "x"), ref["one_of_two"],
                  name="x.grad through one of two grad_reverse(x, 2.0) results", hint=hint)
    C.check_close(_grad_or_fail(got["nested"], "x"), ref["nested"],
                  name="x.grad through grad_reverse(grad_reverse(x, 0.5), 3.0)")


@judge.probe("test_grad_reverse_domain_adversarial")
def probe_rev_dann(seed):
    import copy as copy_module

    out = []
    for lambd, s in ((1.0, None), (0.4, seed + 53), (3.0, seed + 54)):
        if s is None:                                        # the notebook's visible example, exactly
            torch.manual_seed(0)
            feat = torch.nn.Linear(4, 3).double()
            head = torch.nn.Linear(3, 2).double()
            xs = torch.randn(8, 4, dtype=torch.float64)
            domain = torch.randint(0, 2, (8,))
        else:
            g = torch.Generator().manual_seed(s)
            feat = torch.nn.Linear(4, 3).double()
            head = torch.nn.Linear(3, 2).double()
            with torch.no_grad():
                for p in list(feat.parameters()) + list(head.parameters()):
                    p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.5)
            xs = torch.randn(8, 4, generator=g, dtype=torch.float64)
            domain = torch.randint(0, 2, (8,), generator=g)
        torch.nn.functional.cross_entropy(head(grad_reverse(torch.tanh(feat(xs)), lambd)), domain).backward()
        out.append({"lambd": lambd, "head": [head.weight.grad, head.bias.grad], "feat": [feat.weight.grad, feat.bias.grad]})
    return out


@probe_rev_dann.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            for gg, rr, name in zip(g["head"], r["head"], ("domain head weight", "domain head bias")):
                C.check_close(_grad_or_fail(gg, name), rr, name=f"{name}.grad (lambd {r['lambd']})",
                              hint="the domain head must get the normal gradient: forward must be the identity")
            for gg, rr, name in zip(g["feat"], r["feat"], ("feature weight", "feature bias")):
                C.check_close(_grad_or_fail(gg, name), rr, name=f"{name}.grad (lambd {r['lambd']})",
                              hint="the features must get -lambd times the normal gradient")


# =====================================================================================================
# Exercise 2.5 · gradient_penalty
# clause -> test
#   xhat = alpha * real + (1 - alpha) * fake, alpha (B, 1, ..., 1) broadcasts .. test_gradient_penalty_value
#   critic scores of shape (B,) or (B, 1) ....................................... test_gradient_penalty_value
#   mean over samples of (||g_i||_2 - 1)^2, norm over all other dims (images) ... test_gradient_penalty_value
#   returned as a 0-dim tensor ................................................... value, in_graph, double_backward
#   create_graph=True: the penalty is part of the graph ......................... test_gradient_penalty_in_graph
#   penalty.backward() gives the critic the gradient of the penalty and nothing
#     else (MLP, conv and linear critics) ...................................... test_gradient_penalty_double_backward
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
    for i, g in enumerate(got):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["pen"], name="gradient_penalty(...)", shape=())
            C.check_true(g["has_grad_fn"] is True and g["requires_grad"] is True,
                         "the penalty has no grad_fn: the optimiser would see it as a constant",
                         hint="pass create_graph=True to torch.autograd.grad so the gradient itself is recorded")


@judge.probe("test_gradient_penalty_double_backward")
def probe_gp_double(seed):
    (r0, f0, a0), (r1, f1, a1), (r3, f3, a3) = gp_inputs(seed + 6, [(4, 6), (6, 6), (5, 3)])
    (rc, fc, ac), = gp_inputs(seed + 7, [(3, 1, 5, 5)])
    w = torch.randn(3, generator=torch.Generator().manual_seed(seed + 8), dtype=torch.float64)
    critics = [("MLP critic", make_critic(), (r0, f0, a0)),
               ("a fresh MLP critic", make_critic(6, 7, seed=(seed + 67) % 1000), (r1, f1, a1)),
               ("a conv critic", gp_conv_critic(seed + 68, 1, 5), (rc, fc, ac)),
               ("a linear critic", LinearCritic(w), (r3, f3, a3))]
    out = []
    for label, critic, (r, f, a) in critics:
        critic.zero_grad(set_to_none=True)
        pen = gradient_penalty(critic, r, f, a)
        pen.backward()
        out.append({"label": label, "pen": pen, "grads": [p.grad for p in critic.parameters()],
                    "shapes": [tuple(p.shape) for p in critic.parameters()]})
    return out


@probe_gp_double.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["pen"], name=f"gradient_penalty({r['label']})", shape=())
            for k, (gg, rr, shape) in enumerate(zip(g["grads"], r["grads"], r["shapes"])):
                gg = torch.zeros(shape, dtype=F64) if gg is None else gg
                rr = torch.zeros(shape, dtype=F64) if rr is None else rr
                C.check_close(gg, rr, name=f"{r['label']}: parameter {k}.grad after penalty.backward() (None counts as zero)",
                              hint="only the penalty may put gradients into the critic: use torch.autograd.grad with "
                                   "create_graph=True, not scores.backward()")


# =====================================================================================================
# Exercise 2.6 · scale_and_track_
# clause -> test
#   y = x * scale, broadcast over the last dim .................................. test_track_values, _edge_cases
#   scale updated in place: same object, also a view into a larger buffer ...... test_track_values
#   scale <- (1 - m) scale + m * mean |x| over all dims but the last ........... test_track_values, _edge_cases
#   1-D x (m = |x|), size-1 batch, ranks 3 and 4, float64, momentum 0 and 0.9 .. test_track_edge_cases
#   y.backward() works after the update, uses the scale of the forward pass;
#     two calls before one backward each use their own scale ................... test_track_backward
#   scale stays a buffer (no requires_grad, no grad_fn, same dtype); x unchanged . test_track_state
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
                    "is_leaf": ss.is_leaf, "dtype": ss.dtype, "x": xx.detach(), "x_grad": xx.grad})
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
