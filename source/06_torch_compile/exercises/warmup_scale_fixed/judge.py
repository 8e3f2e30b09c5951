"""Exercise 'warmup_scale_fixed' of 06_torch_compile: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 6.3 · WarmupScaleFixed --------------------------------------------------------------------
# clause -> test
#   has .lin = nn.Linear(features, features); forward = lin(x) * min(1, step/warmup) . test_warmup_values
#   step = 1 at the first call, any warmup >= 1, scale stays 1 after warmup ........ test_warmup_values
#   step counts every call: training and eval mode, with and without grad ........... test_warmup_values
#   float32 and float64 modules and inputs; the scale in the output's dtype
#   (float64 outputs to 1e-12) ........................................................ test_warmup_values
#   gradients flow to lin as in WarmupScale ........................................... test_warmup_values
#   twelve calls compile one graph (any backend, grad on or off) ..................... test_warmup_one_graph
#   also with fullgraph=True; the counter advances under aot_eager (outputs) ......... test_warmup_one_graph
#   state_dict()["step"] is a tensor with the call count; load_state_dict resumes .... test_warmup_state
#   every instance counts its own calls ................................................ test_warmup_state

@judge.shared
def _warm_pair(features, warmup, seed, double=False):
    """A WarmupScale and a WarmupScaleFixed with the same weights (drawn from an explicit generator)."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(features, features, generator=g) / features ** 0.5
    b = torch.randn(features, generator=g)
    orig = WarmupScale(features, warmup)
    fixed = WarmupScaleFixed(features, warmup)
    with torch.no_grad():
        for m in (orig, fixed):
            m.lin.weight.copy_(w)
            m.lin.bias.copy_(b)
    if double:
        orig, fixed = orig.double(), fixed.double()
    return orig, fixed


@judge.probe("test_warmup_values")
def probe_warm_values(seed):
    g = torch.Generator().manual_seed(seed + 30)
    xs = [torch.randn(3, 4, generator=g) for _ in range(10)]
    x64 = torch.randn(2, 6, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    orig, fixed = WarmupScale(4, 3), WarmupScaleFixed(4, 3)
    fixed.lin.load_state_dict(orig.lin.state_dict())
    xv = torch.randn(2, 4)
    visible_pairs = []
    with torch.no_grad():
        for i in range(5):
            orig.train(i not in (2, 3))
            fixed.train(i not in (2, 3))
            visible_pairs.append((fixed(xv), orig(xv)))
    orig, fixed = orig.double(), WarmupScaleFixed(4, 5).double()
    orig.warmup, orig.step = 5, 0
    fixed.lin.load_state_dict(orig.lin.state_dict())
    with torch.no_grad():
        visible_f64 = [(fixed(xv.double()), orig(xv.double())) for _ in range(3)]
    cases = []
    for warmup in (1, 4, 7):
        orig, fixed = _warm_pair(4, warmup, seed + warmup)
        outs_o, outs_f = [], []
        for i, x in enumerate(xs):                 # training and eval calls, with and without gradients
            mode = (i + warmup) % 3 != 0
            orig.train(mode)
            fixed.train(mode)
            with torch.set_grad_enabled(i % 2 == 0):
                outs_o.append(orig(x).detach())
                outs_f.append(fixed(x).detach())
        cases.append({"warmup": warmup, "orig": outs_o, "fixed": outs_f})
    orig, fixed = _warm_pair(6, 5, seed + 9, double=True)
    f64 = {"orig": [], "fixed": []}
    with torch.no_grad():
        for i in range(7):
            orig.train(i % 2 == 0)
            fixed.train(i % 2 == 0)
            f64["orig"].append(orig(x64))
            f64["fixed"].append(fixed(x64))
    orig, fixed = _warm_pair(4, 4, seed + 11)
    grads = {}
    for label, m in (("orig", orig), ("fixed", fixed)):
        m(xs[0]).sum()                                     # call 1 (graph discarded)
        (m(xs[1]) ** 2).sum().backward()                   # call 2: scale 0.5
        grads[label] = (m.lin.weight.grad, m.lin.bias.grad)
    return {"visible": visible_pairs, "visible_f64": visible_f64, "cases": cases, "f64": f64, "grads": grads}


@probe_warm_values.verdict
def _(got, ref):
    with visible():
        for i, (mine, _) in enumerate(got["visible"]):
            C.check_close(mine, ref["visible"][i][1], name=f"output at call {i + 1} (warmup 3)", rtol=1e-6, atol=1e-7,
                          hint="the scale is min(1, step / warmup) with step = 1 at the first call, counting every "
                               "call (calls 3 and 4 are in eval mode)")
        for i, (mine, _) in enumerate(got["visible_f64"]):
            C.check_close(mine, ref["visible_f64"][i][1], name=f"float64 output at call {i + 1} (warmup 5)",
                          rtol=1e-12, atol=1e-12, hint="compute the scale in the output's dtype, not in float32")
    for case, want in zip(got["cases"], ref["cases"]):
        for i, (mine, w) in enumerate(zip(case["fixed"], want["orig"])):
            C.check_close(mine, w, name=f"output at call {i + 1} with warmup={want['warmup']} (training and eval "
                                        f"calls, with and without gradients)", rtol=1e-6, atol=1e-7,
                          hint="use the warmup given to __init__; count from 1; count every call, in eval mode and "
                               "under no_grad too; the scale stops at 1")
    for i, (mine, w) in enumerate(zip(got["f64"]["fixed"], ref["f64"]["orig"])):
        C.check_close(mine, w, name=f"float64 module, output at call {i + 1}", rtol=1e-12, atol=1e-12,
                      hint="a float64 module must give WarmupScale's float64 outputs: a scale computed as a float32 "
                           "tensor (long / int gives the default dtype) is off in the 8th digit")
    for k, name in enumerate(("lin.weight.grad", "lin.bias.grad")):
        mine, w = got["grads"]["fixed"][k], ref["grads"]["orig"][k]
        C.check_true(mine is not None, f"{name} is None after backward(): no gradient reached lin")
        C.check_close(mine, w, name=f"{name} after a loss at call 2", rtol=1e-5, atol=1e-6,
                      hint="the scale multiplies lin(x); keep lin in the graph")


@judge.probe("test_warmup_one_graph")
def probe_warm_graph(seed):
    g = torch.Generator().manual_seed(seed + 31)
    xs = [torch.randn(2, 5, generator=g) for _ in range(12)]
    torch._dynamo.reset()
    out = {}
    try:
        counter = CompileCounter()
        f = torch.compile(WarmupScaleFixed(4, 3), backend=counter)
        with torch.no_grad():
            for _ in range(12):
                f(torch.ones(1, 4))
        out["visible"] = counter.count
    except Exception as err:  # noqa: BLE001
        out["visible"] = _error_text(err)
    rows = {}
    for label, kwargs, grad in (("no_grad", {}, False), ("training", {}, True), ("fullgraph", {"fullgraph": True}, False)):
        torch._dynamo.reset()
        orig, fixed = _warm_pair(5, 5, seed + 40)
        counter = CompileCounter()
        try:
            f = torch.compile(fixed, backend=counter, **kwargs)
            with torch.set_grad_enabled(grad):
                outs = [f(x) for x in xs]
            with torch.no_grad():
                expected = [orig(x) for x in xs]
            rows[label] = {"graphs": counter.count, "outs": [o.detach() for o in outs], "expected": expected}
        except Exception as err:  # noqa: BLE001
            rows[label] = {"error": _error_text(err)}
    torch._dynamo.reset()
    orig, fixed = _warm_pair(5, 6, seed + 41)
    try:
        f = torch.compile(fixed, backend="aot_eager")
        outs = [f(x) for x in xs[:4]]
        with torch.no_grad():
            expected = [orig(x) for x in xs[:4]]
        rows["aot_eager"] = {"outs": [o.detach() for o in outs], "expected": expected}
    except Exception as err:  # noqa: BLE001
        rows["aot_eager"] = {"error": _error_text(err)}
    torch._dynamo.reset()
    out["rows"] = rows
    return out


@probe_warm_graph.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], 1, name="graphs compiled for 12 calls (WarmupScaleFixed(4, 3))",
                      hint="a Python number that changes every call is guarded: keep the counter in a tensor buffer")
    for label in ("no_grad", "training", "fullgraph"):
        r, w = got["rows"][label], ref["rows"][label]
        C.check_true("error" not in r, f"compiling WarmupScaleFixed ({label}) raised {r.get('error')}",
                     hint="under fullgraph=True an .item() or a Python-side branch on the counter fails")
        C.check_equal(r["graphs"], 1, name=f"graphs compiled for 12 calls ({label})",
                      hint="a guard fails at every call: read the recompiles log (cd.capture_logs('recompiles'))")
        for i, (mine, want) in enumerate(zip(r["outs"], w["expected"])):
            C.check_close(mine, want, name=f"compiled output at call {i + 1} ({label})", rtol=1e-6, atol=1e-7)
    r, w = got["rows"]["aot_eager"], ref["rows"]["aot_eager"]
    C.check_true("error" not in r, f"compiling WarmupScaleFixed with aot_eager raised {r.get('error')}")
    for i, (mine, want) in enumerate(zip(r["outs"], w["expected"])):
        C.check_close(mine, want, name=f"aot_eager output at call {i + 1}", rtol=1e-6, atol=1e-7,
                      hint="update the counter in place so the compiled graph writes it back")


@judge.probe("test_warmup_state")
def probe_warm_state(seed):
    g = torch.Generator().manual_seed(seed + 32)
    xs = [torch.randn(2, 4, generator=g) for _ in range(6)]
    m = WarmupScaleFixed(4, 3)
    with torch.no_grad():
        m(torch.ones(1, 4))
        m(torch.ones(1, 4))
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}    # a snapshot: later instances cannot change it
    out = {"visible_keys": sorted(str(k) for k in sd), "visible_step": sd.get("step")}
    orig, fixed = _warm_pair(4, 6, seed + 50)
    with torch.no_grad():
        for x in xs[:3]:
            orig(x)
            fixed(x)
        state = {k: v.clone() for k, v in fixed.state_dict().items()}
        fresh = WarmupScaleFixed(4, 6)
        fresh.load_state_dict(state)
        out["saved_step"] = state.get("step")
        out["resumed"] = [fresh(x) for x in xs[3:]]
        out["expected_resumed"] = [orig(x) for x in xs[3:]]
    a_orig, a = _warm_pair(4, 4, seed + 51)
    b_orig, b = _warm_pair(4, 4, seed + 52)
    with torch.no_grad():
        for x in xs[:3]:
            a(x)
            a_orig(x)
        out["b_first"] = b(xs[3])
        out["b_expected"] = b_orig(xs[3])
        out["a_next"] = a(xs[4])
        out["a_expected"] = a_orig(xs[4])
    return out


@probe_warm_state.verdict
def _(got, ref):
    with visible():
        C.check_true("step" in got["visible_keys"], f"state_dict() keys are {got['visible_keys']}; expected a 'step' entry",
                     hint="register the counter as a (persistent) buffer: self.register_buffer('step', ...)")
        C.check_tensor(got["visible_step"], 'state_dict()["step"]')
        C.check_true(int(got["visible_step"]) == 2, f'state_dict()["step"] after two calls is {got["visible_step"]}, expected 2')
    C.check_tensor(got["saved_step"], 'state_dict()["step"] after three calls')
    C.check_true(int(got["saved_step"]) == 3, f'state_dict()["step"] after three calls is {got["saved_step"]}, expected 3')
    for i, (mine, want) in enumerate(zip(got["resumed"], ref["expected_resumed"])):
        C.check_close(mine, want, name=f"a fresh module after load_state_dict, call {i + 4} of the warmup",
                      rtol=1e-6, atol=1e-7, hint="load_state_dict must restore the counter, so the warmup resumes")
    C.check_close(got["b_first"], ref["b_expected"], name="first output of a second instance (the first made 3 calls)",
                  rtol=1e-6, atol=1e-7, hint="every instance needs its own counter: no class-level or global state")
    C.check_close(got["a_next"], ref["a_expected"], name="4th output of the first instance", rtol=1e-6, atol=1e-7,
                  hint="every instance needs its own counter")


WHY['warmup_scale_fixed'] = "Dynamo guards on Python int attributes but not on tensor values, so the count lives in a long buffer incremented in place in every mode, which state_dict saves as \"step\". Casting step to the output's dtype before dividing and clamping at 1 keeps float64 precision."
