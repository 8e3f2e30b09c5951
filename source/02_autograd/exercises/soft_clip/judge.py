"""Exercise 'soft_clip' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['soft_clip'] = "With u = x / limit and t = tanh(u), dy/dx = 1 - t^2 and dy/dlimit = t - u(1 - t^2); sum_to_size folds the broadcast limit gradient back to limit's shape. Per-call data lives on ctx (tensors via save_for_backward, a number limit as an attribute), so each call keeps its own limit."
