"""Exercise 'run_backward' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['run_backward'] = "Dependency counts over every node reachable from the outputs, then a ready list: a node runs once, when every node that sends it a gradient has run, on the per-slot sums of what arrived, each gradient summed down to its slot's shape and dtype as the engine's validate_outputs does. Inputs are read at their (node, slot) from get_gradient_edge, AccumulateGrad is never called (no .grad changes), nodes run under no_grad, and calling a node frees nothing, so the graph stays usable."
