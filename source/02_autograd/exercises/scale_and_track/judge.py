"""Exercise 'scale_and_track' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['scale_and_track'] = "x * scale.clone() saves a private copy for backward, so the later in-place update of scale neither trips the version counter nor changes the gradient. m comes from x.detach() reshaped to (-1, features), right for every rank (1-D too), and mul_/add_ write into the caller's tensor object."
