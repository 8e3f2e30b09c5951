"""Exercise 'weighted_mean' of 03_torchscript: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 3.3 · WeightedMean (an Optional attribute) ----------------------------------------------
# clause -> test
#   weighted mean over the LAST dimension: sum(x*w*m) / sum(w*m) ............. test_weighted_mean_eager
#   no weights -> all ones; no mask -> all True ............................... test_weighted_mean_eager
#   any rank (1-D, 2-D, 3-D), float64 and bfloat16 keep their dtype, also with
#   weights of another dtype (float64 on float32, float32 on bfloat16) ...... test_weighted_mean_eager,
#                                                                                test_weighted_mean_scripted
#   result shape x.shape[:-1], size-1 leading dims kept ((1, 5) -> (1,)) ..... test_weighted_mean_eager
#   the caller's weights tensor is not modified (no in-place rescaling) ...... test_weighted_mean_eager
#   script_weighted_mean returns a scripted (not traced) module ............... test_weighted_mean_scripted
#   it accepts calls with and without a mask (schema `Tensor? mask=None`) ..... test_weighted_mean_scripted
#   weights set / replaced / cleared on the scripted module, created with or
#   without weights, each change taking effect on the next call .............. test_weighted_mean_set_weights
#   survives save/load with the same outputs; weights settable after loading .. test_weighted_mean_roundtrip
# Every expected value is the reference's own output for the same inputs (ref), never the student's.

@judge.shared
def judge_weighted_cases(seed, shapes, dtypes):
    """Inputs (x, weights, mask) for WeightedMean: positive weights; each row has a True and (if possible) a False."""
    g = torch.Generator().manual_seed(seed)
    cases = []
    for shape, dtype in zip(shapes, dtypes):
        x = torch.randn(shape, generator=g).to(dtype)
        w = (torch.rand(shape[-1], generator=g) * 2.0 + 0.25).to(dtype)
        m = torch.rand(shape, generator=g) > 0.5
        m[..., 0] = True
        if shape[-1] > 1:
            m[..., -1] = False
        cases.append((x, w, m))
    return cases


@judge.shared
def judge_weighted_visible():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0], [4.0, 0.0, 0.0, 8.0]])
    w = torch.tensor([1.0, 1.0, 2.0, 4.0])
    m = torch.tensor([[True, False, True, False], [True, True, False, True]])
    return x, w, m


@judge.probe("test_weighted_mean_eager")
def probe_weighted_eager(seed):
    vx, vw, vm = judge_weighted_visible()
    cases = judge_weighted_cases(seed, [(5, 7), (2, 3, 9), (4, 1), (6,), (3, 5), (4, 6), (1, 5), (3, 1, 4)],
                                 [torch.float32, torch.float32, torch.float32, torch.float32, torch.float64,
                                  torch.bfloat16, torch.float32, torch.float64])
    vis = [judge_attempt(lambda: WeightedMean()(vx)), judge_attempt(lambda: WeightedMean(vw)(vx)),
           judge_attempt(lambda: WeightedMean(vw)(vx, vm)),
           judge_attempt(lambda: WeightedMean(torch.tensor([1.0, 3.0]))(torch.tensor([2.0, 6.0], dtype=torch.float64)))]
    rows = []
    for x, w, m in cases:
        rows.append([judge_attempt(lambda x=x: WeightedMean()(x)),
                     judge_attempt(lambda x=x, m=m: WeightedMean()(x, m)),
                     judge_attempt(lambda x=x, w=w: WeightedMean(w)(x)),
                     judge_attempt(lambda x=x, w=w, m=m: WeightedMean(w)(x, m))])
    # weights in another dtype than x (the statement: the result keeps x's dtype): float64 weights on a float32 x,
    # float32 weights on a bfloat16 x; a factor left in the weights' dtype promotes the result
    mixed = []
    for (x, w, m), w_dtype in zip(judge_weighted_cases(seed + 1, [(3, 6), (2, 5)], [torch.float32, torch.bfloat16]),
                                  [torch.float64, torch.float32]):
        w = w.to(w_dtype)
        mixed.append([judge_attempt(lambda x=x, w=w: WeightedMean(w)(x)),
                      judge_attempt(lambda x=x, w=w, m=m: WeightedMean(w)(x, m))])
    # the caller's weights after those calls: the same values as drawn (ref's are never touched)
    return {"visible": vis, "rows": rows, "shapes": [tuple(x.shape) for x, _, _ in cases],
            "weights_after": [w for _, w, _ in cases], "mixed": mixed,
            "mixed_dtypes": [("float32", "float64"), ("bfloat16", "float32")]}


@probe_weighted_eager.verdict
def _(got, ref):
    labels = ["WeightedMean()(x)", "WeightedMean(w)(x)", "WeightedMean(w)(x, mask)",
              "WeightedMean([1, 3])(float64 [2, 6])"]
    with visible():
        for label, g, r in zip(labels, got["visible"], ref["visible"]):
            C.check_close(_out(g, label), _out(r, "reference"), name=label, rtol=1e-6, atol=1e-6,
                          hint="sum(x * w * m) / sum(w * m) over dim=-1, in x's dtype")
    names = ["()(x)", "()(x, mask)", "(w)(x)", "(w)(x, mask)"]
    for shape, g_row, r_row in zip(ref["shapes"], got["rows"], ref["rows"]):
        for label, g, r in zip(names, g_row, r_row):
            want = _out(r, "reference")
            tol = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
            C.check_close(_out(g, f"WeightedMean{label} for shape {shape}"), want,
                          name=f"WeightedMean{label} for x of shape {shape}, dtype {want.dtype}", rtol=tol, atol=tol,
                          hint="reduce over the last dimension whatever the rank; masked-out positions count in "
                               "neither the numerator nor the denominator; keep x's dtype and the shape "
                               "x.shape[:-1] (a size-1 batch dimension stays)")
    for (x_dtype, w_dtype), g_row, r_row in zip(ref["mixed_dtypes"], got["mixed"], ref["mixed"]):
        for label, g, r in zip(["(w)(x)", "(w)(x, mask)"], g_row, r_row):
            want = _out(r, "reference")
            tol = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
            name = f"WeightedMean{label} for a {x_dtype} x and {w_dtype} weights"
            C.check_close(_out(g, name), want, name=name, rtol=tol, atol=tol,
                          hint="the result keeps x's dtype whatever the weights' dtype: turn the weights into x's "
                               "dtype as well as the mask")
    for shape, g_w, r_w in zip(ref["shapes"], got["weights_after"], ref["weights_after"]):
        C.check_close(g_w, r_w, name=f"the caller's weights tensor after WeightedMean(w) (x of shape {shape})",
                      rtol=0, atol=0,
                      hint="keep the caller's weights as they are: an in-place operation on them (weights /= ...) "
                           "changes the caller's tensor; compute on a new tensor instead")


@judge.probe("test_weighted_mean_scripted")
def probe_weighted_scripted(seed):
    vx, vw, vm = judge_weighted_visible()
    cases = judge_weighted_cases(seed + 1, [(3, 11), (2, 2, 5), (7,), (4, 3)],
                                 [torch.float32, torch.float32, torch.float32, torch.float64])
    made = judge_attempt(lambda: script_weighted_mean(vw))
    if not made["ok"]:
        return {"made": made}
    s = made["out"]
    info = {"made": {"ok": True, "out": None}, "type": type(s).__name__}
    schema = judge_attempt(lambda: str(s.forward.schema))
    info["schema"] = schema["out"] if schema["ok"] else ""
    info["visible"] = [judge_attempt(lambda: s(vx)), judge_attempt(lambda: s(vx, vm))]
    rows = []
    for x, w, m in cases:
        made_w = judge_attempt(lambda w=w: script_weighted_mean(w))
        made_0 = judge_attempt(lambda: script_weighted_mean())
        rows.append([judge_attempt(lambda x=x, f=made_0: f["out"](x)) if made_0["ok"] else made_0,
                     judge_attempt(lambda x=x, m=m, f=made_0: f["out"](x, m)) if made_0["ok"] else made_0,
                     judge_attempt(lambda x=x, m=m, f=made_w: f["out"](x, m)) if made_w["ok"] else made_w])
    info["rows"] = rows
    info["shapes"] = [tuple(x.shape) for x, _, _ in cases]
    return info


@probe_weighted_scripted.verdict
def _(got, ref):
    with visible():
        _out(got["made"], "script_weighted_mean(w)")
        C.check_true(got["type"] == "RecursiveScriptModule",
                     f"script_weighted_mean() returned a {got['type']}, not a module compiled by torch.jit.script",
                     hint="torch.jit.trace records one path; use torch.jit.script")
        C.check_true("Tensor? mask=None" in got["schema"],
                     f"the scripted schema is {got['schema']!r}; expected `Tensor? mask=None`",
                     hint="annotate mask as Optional[Tensor] = None (section 3)")
        for label, g, r in zip(("scripted(x)", "scripted(x, mask)"), got["visible"], ref["visible"]):
            C.check_close(_out(g, label), _out(r, "reference"), name=label, rtol=1e-6, atol=1e-6)
    names = ["script_weighted_mean()(x)", "script_weighted_mean()(x, mask)", "script_weighted_mean(w)(x, mask)"]
    for shape, g_row, r_row in zip(ref["shapes"], got["rows"], ref["rows"]):
        for label, g, r in zip(names, g_row, r_row):
            C.check_close(_out(g, f"{label} for shape {shape}"), _out(r, "reference"),
                          name=f"{label} for x of shape {shape}", rtol=1e-5, atol=1e-6,
                          hint="the scripted module must give the eager values, with and without a mask")


@judge.probe("test_weighted_mean_set_weights")
def probe_weighted_set(seed):
    cases = judge_weighted_cases(seed + 2, [(3, 6), (2, 4, 5), (8,)], [torch.float32, torch.float64, torch.float32])
    g = torch.Generator().manual_seed(seed)
    out = []
    for x, w, m in cases:
        w2 = (torch.rand(x.shape[-1], generator=g) + 0.5).to(x.dtype)
        steps = []
        made_0 = judge_attempt(lambda: script_weighted_mean())
        if made_0["ok"]:
            s = made_0["out"]
            steps.append(judge_attempt(lambda s=s, w=w: setattr(s, "weights", w)))
            steps.append(judge_attempt(lambda s=s, x=x, m=m: s(x, m)))
            steps.append(judge_attempt(lambda s=s, w2=w2: setattr(s, "weights", w2)))
            steps.append(judge_attempt(lambda s=s, x=x: s(x)))
            steps.append(judge_attempt(lambda s=s: setattr(s, "weights", None)))
            steps.append(judge_attempt(lambda s=s, x=x, m=m: s(x, m)))
        else:
            steps = [made_0] * 6
        made_w = judge_attempt(lambda w=w: script_weighted_mean(w))
        if made_w["ok"]:
            s = made_w["out"]
            steps.append(judge_attempt(lambda s=s: setattr(s, "weights", None)))
            steps.append(judge_attempt(lambda s=s, x=x: s(x)))
            steps.append(judge_attempt(lambda s=s, w2=w2: setattr(s, "weights", w2)))
            steps.append(judge_attempt(lambda s=s, x=x, m=m: s(x, m)))
        else:
            steps += [made_w] * 4
        out.append(steps)
    return {"cases": out, "shapes": [tuple(x.shape) for x, _, _ in cases]}


@probe_weighted_set.verdict
def _(got, ref):
    what = ["created without weights: set weights", "... then called with a mask", "... weights replaced",
            "... then called without a mask", "... weights cleared to None", "... then called with a mask",
            "created with weights: cleared to None", "... then called", "... weights set again",
            "... then called with a mask"]
    for shape, g_steps, r_steps in zip(ref["shapes"], got["cases"], ref["cases"]):
        for label, g, r in zip(what, g_steps, r_steps):
            value = _out(g, f"scripted module, x of shape {shape}, {label}")
            want = _out(r, "reference")
            if want is None:
                continue                       # an assignment: it only had to succeed
            C.check_close(value, want, name=f"x of shape {shape}, {label}", rtol=1e-5, atol=1e-6,
                          hint="script typed `weights` from its value at compile time, or read it once: declare "
                               "`weights: Optional[Tensor]` in the class body and read self.weights in forward")


@judge.probe("test_weighted_mean_roundtrip")
def probe_weighted_roundtrip(seed):
    import io
    vx, vw, vm = judge_weighted_visible()
    cases = [(vx, vw, vm)] + judge_weighted_cases(seed + 3, [(4, 6), (2, 3, 4)], [torch.float32, torch.float64])
    rows = []
    for x, w, m in cases:
        made = judge_attempt(lambda w=w: script_weighted_mean(w))
        if not made["ok"]:
            rows.append([made] * 5)
            continue
        s = made["out"]
        buf = io.BytesIO()
        saved = judge_attempt(lambda s=s, buf=buf: torch.jit.save(s, buf))
        if not saved["ok"]:
            rows.append([saved] * 5)
            continue
        buf.seek(0)
        loaded = torch.jit.load(buf)
        rows.append([judge_attempt(lambda x=x, m=m: s(x, m)),
                     judge_attempt(lambda x=x, m=m: loaded(x, m)),
                     judge_attempt(lambda: setattr(loaded, "weights", None)),
                     judge_attempt(lambda x=x, m=m: loaded(x, m)),
                     judge_attempt(lambda x=x: loaded(x))])
    return {"rows": rows}


@probe_weighted_roundtrip.verdict
def _(got, ref):
    labels = ["before saving (x, mask)", "loaded (x, mask)", "loaded: weights cleared", "loaded, cleared (x, mask)",
              "loaded, cleared (x)"]
    for i, (g_row, r_row) in enumerate(zip(got["rows"], ref["rows"])):
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            before = _out(g_row[0], f"case {i}: the scripted module before saving")
            after = _out(g_row[1], f"case {i}: the loaded module")
            C.check_close(after, before, name=f"case {i}: loaded vs before saving",
                          hint="save with torch.jit.save and load with torch.jit.load")
            for label, g, r in zip(labels, g_row, r_row):
                want = _out(r, "reference")
                value = _out(g, f"case {i}: {label}")
                if want is not None:
                    C.check_close(value, want, name=f"case {i}: {label}", rtol=1e-5, atol=1e-6,
                                  hint="after loading, clearing weights must give the plain (masked) mean")


WHY['weighted_mean'] = "The class annotation weights: Optional[Tensor] types the scripted attribute as tensor-or-None whatever it held at compile time, so it can be set and cleared. Reading it into the local w lets script refine the Optional after the is-not-None test; the caller's tensor is only cast, never changed."
