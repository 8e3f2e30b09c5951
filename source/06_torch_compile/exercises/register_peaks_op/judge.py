"""Exercise 'register_peaks_op' of 06_torch_compile: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 6.5 · register_peaks_op -------------------------------------------------------------------------
# clause -> test
#   op(x) == legacy_peaks(x): int64 values, 1-D; float32/float64; any length (0, 1, 2: no peak) . test_peaks_values
#   reachable as torch.ops.<namespace>.<opname> after the call ........................................ test_peaks_values
#   several calls with different names ................................................ every test (new name each)
#   op(x) == legacy_peaks(x) for float64 peaks 1e-12 high (a float32 copy has none) .................. test_peaks_values
#   opcheck passes: no peak / one / many, float32 and float64, with and without requires_grad
#   (and the op's values on those inputs, so an op that is not legacy_peaks loses this cell too) ..... test_peaks_opcheck
#   the output (the fake's too) is on x's device: the fake run on a fake CUDA signal ................ test_peaks_opcheck
#   x[op(x)] * 2 compiles with fullgraph=True, once for one length whatever the number of peaks,
#   with eager's values; op(x).shape[0] is the real count; gradients reach x ......................... test_peaks_compiled

@judge.shared
def _peaks_name(tag, seed):
    """A new op name for every call: the reference and the answer never share a registration."""
    import uuid

    return f"ch6judge_{tag}_{seed % 100000}_{uuid.uuid4().hex[:10]}::peaks"


@judge.shared
def _peaks_expected(x):
    """legacy_peaks(x), computed here (the notebook's legacy_peaks could be redefined)."""
    v = x.detach().tolist()
    return torch.tensor([i for i in range(1, len(v) - 1) if v[i - 1] < v[i] > v[i + 1]], dtype=torch.int64)


@judge.shared
def _signals(g, n, length, dtype=torch.float32):
    """Random 1-D signals plus, in order, one with no peak, one with exactly one, and one with as many as possible."""
    out = [torch.randn(length, generator=g, dtype=dtype) for _ in range(n)]
    out.append(torch.linspace(-1.0, 1.0, length, dtype=dtype))                              # no peak
    one = torch.zeros(length, dtype=dtype)
    one[length // 2] = 1.0
    out.append(one)                                                                           # one peak
    out.append(torch.tensor([float(i % 2) for i in range(length)], dtype=dtype))              # many peaks
    return out


@judge.probe("test_peaks_values")
def probe_peaks_values(seed):
    g = torch.Generator().manual_seed(seed + 70)
    inputs = (_signals(g, 2, 11) + _signals(g, 1, 9, torch.float64)
              + [torch.zeros(0), torch.ones(1), torch.tensor([1.0, 2.0]), torch.tensor([0.0, 3.0, 1.0], dtype=torch.float64)])
    # float64 peaks 1e-12 high: a float32 copy of the signal has none
    inputs.append(1.0 + torch.randn(10, generator=g, dtype=torch.float64) * 1e-12)
    out = {"expected": [_peaks_expected(x) for x in inputs]}
    try:
        op = register_peaks_op(_peaks_name("values_v", seed))
        signal = torch.tensor([0.0, 2.0, 1.0, 3.0, 0.5, 0.2, 4.0, -1.0])      # the notebook's example
        out["visible"] = [op(signal), op(torch.tensor([1.0, 0.0, 1.0, 0.0, 2.0], dtype=torch.float64)),
                          op(torch.zeros(2))]
        name = _peaks_name("values", seed)
        op = register_peaks_op(name)
        out["got"] = [op(x) for x in inputs]
        ns, opname = name.split("::")
        via_ops = getattr(getattr(torch.ops, ns), opname)
        out["via_ops"] = [via_ops(x) for x in inputs[:3]]
    except Exception as err:  # noqa: BLE001
        out["error"] = _error_text(err)
    return out


@probe_peaks_values.verdict
def _(got, ref):
    C.check_true("error" not in got, f"register_peaks_op, its op or torch.ops.<namespace>.<name> raised {got.get('error')}",
                 hint="each call registers a new name: define the custom op inside register_peaks_op, with that name")
    with visible():
        for mine, want, name in zip(got["visible"], (torch.tensor([1, 3, 6]), torch.tensor([2]),
                                                     torch.zeros(0, dtype=torch.int64)),
                                    ("op(signal)", "op on a float64 signal with one peak", "op on a length-2 signal")):
            C.check_close(mine, want, name=name)
    for i, (mine, want) in enumerate(zip(got["got"], ref["expected"])):
        C.check_close(mine, want, name=f"op on hidden signal {i} ({len(want)} peaks)",
                      hint="the op returns legacy_peaks(x): int64 indices")
    for i, (mine, want) in enumerate(zip(got["via_ops"], ref["expected"])):
        C.check_close(mine, want, name=f"torch.ops.<namespace>.<opname> on hidden signal {i}",
                      hint="register the op under the name you were given")


@judge.probe("test_peaks_opcheck")
def probe_peaks_opcheck(seed):
    g = torch.Generator().manual_seed(seed + 71)
    sig = _signals(g, 1, 10) + _signals(g, 1, 7, torch.float64)
    signal = torch.tensor([0.0, 2.0, 1.0, 3.0, 0.5, 0.2, 4.0, -1.0])              # the notebook's example
    cases = {"signal (visible)": signal, "arange(6) (visible, no peak)": torch.arange(6.0),
             "float32 random": sig[0], "float32 with one peak": sig[2],
             "float64 with many peaks, requires_grad": sig[7].clone().requires_grad_(),
             "float64 length 1": torch.randn(1, generator=g, dtype=torch.float64)}
    try:
        op = register_peaks_op(_peaks_name("opcheck", seed))
    except Exception as err:  # noqa: BLE001
        return {"register": _error_text(err), "cases": {}, "values": [], "fake_device": None,
                "expected": [_peaks_expected(x) for x in cases.values()]}
    out, values = {}, []
    for label, x in cases.items():
        try:
            torch.library.opcheck(op, (x,))
            out[label] = None
        except Exception as err:  # noqa: BLE001
            out[label] = _error_text(err)
        try:
            values.append(op(x.detach()))
        except Exception as err:  # noqa: BLE001
            values.append(_error_text(err))
    # the fake on a CUDA signal, run on fake tensors (no GPU needed): its output must be on x's device
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        with FakeTensorMode(shape_env=ShapeEnv()):
            y = op(torch.empty(9, device="cuda", dtype=torch.float64))
            fake_device = (str(y.device), str(y.dtype), y.dim())
    except Exception as err:  # noqa: BLE001
        fake_device = _error_text(err)
    torch._dynamo.reset()
    return {"register": None, "cases": out, "values": values, "fake_device": fake_device,
            "expected": [_peaks_expected(x) for x in cases.values()]}


@probe_peaks_opcheck.verdict
def _(got, ref):
    C.check_equal(got["register"], None, name="register_peaks_op(...) raised")
    for label, mine, want in zip(ref["cases"], got["values"], ref["expected"]):      # what opcheck checked it on
        C.check_true(not isinstance(mine, str), f"op on the {label} signal raised {mine}")
        C.check_close(mine, want, name=f"op on the {label} signal", hint="the op returns legacy_peaks(x)")
    for label in ref["cases"]:
        text = got["cases"].get(label, "missing")
        hint = ("'mismatched tensor metadata' means the fake describes another length or dtype than the real output: "
                "its length is a new data-dependent size; 'data-dependent' or 'fake' errors mean the fake looked at values")
        if text is not None and "no fake impl" in text.lower().replace("-", " "):
            hint = "register a fake implementation with op.register_fake"
        ctx = visible() if "visible" in label else _nullcontext()
        with ctx:
            C.check_equal(text, None, name=f"torch.library.opcheck on a {label} signal", hint=hint)
    C.check_equal(got["fake_device"], ref["fake_device"],
                  name="(device, dtype, dim) of the fake's output for a float64 CUDA signal (run on fake tensors)",
                  hint="the real output is on x's device, so the fake's must be too: allocate it with x.new_empty "
                       "(torch.empty uses the default device)")


@judge.probe("test_peaks_compiled")
def probe_peaks_compiled(seed):
    g = torch.Generator().manual_seed(seed + 72)
    gen = torch.Generator().manual_seed(4)
    visible_inputs = [torch.randn(12, generator=gen) for _ in range(4)] + [torch.arange(12.0)]
    length = int(torch.randint(8, 20, (), generator=g))
    hidden_inputs = _signals(g, 3, length, torch.float64)
    runs = {}
    for label, inputs, backend in (("visible", visible_inputs, "count"), ("hidden", hidden_inputs, "count")):
        torch._dynamo.reset()
        counter = CompileCounter()
        res = {"outs": [], "counts": [], "graphs": None, "error": None,
               "expected": [x[_peaks_expected(x)] * 2 for x in inputs],
               "expected_counts": [len(_peaks_expected(x)) for x in inputs]}
        try:
            op = register_peaks_op(_peaks_name(f"compiled_{label}", seed))
            f = torch.compile(lambda t: (t[op(t)] * 2, op(t).shape[0] + t.new_zeros(())), backend=counter,
                              fullgraph=True)
            for x in inputs:
                y, n = f(x)
                res["outs"].append(y)
                res["counts"].append(int(n))
            res["graphs"] = counter.count
        except Exception as err:  # noqa: BLE001
            res["error"] = _error_text(err)
        runs[label] = res
    # gradients through x[op(x)] under aot_eager
    torch._dynamo.reset()
    xg = hidden_inputs[0].clone().requires_grad_()
    up = torch.randn(length, generator=g, dtype=torch.float64)
    runs["grad_expected"] = torch.zeros(length, dtype=torch.float64).index_add_(
        0, _peaks_expected(xg), 2 * xg.detach()[_peaks_expected(xg)] * up[_peaks_expected(xg)])
    try:
        op = register_peaks_op(_peaks_name("compiled_grad", seed))
        f = torch.compile(lambda t, u: (t[op(t)] ** 2 * u[op(t)]).sum(), backend="aot_eager", fullgraph=True)
        f(xg, up).backward()
        runs["grad"] = xg.grad
    except Exception as err:  # noqa: BLE001
        runs["grad"] = _error_text(err)
    torch._dynamo.reset()
    return runs


@probe_peaks_compiled.verdict
def _(got, ref):
    for label in ("visible", "hidden"):
        r, w = got[label], ref[label]
        ctx = visible() if label == "visible" else _nullcontext()
        with ctx:
            C.check_equal(r["error"], None, name=f"compiling and running a function that uses the op ({label} signals)",
                          hint="'no fake impl' needs register_fake; a fake that reads values cannot run on fake tensors")
            for i, (mine, want) in enumerate(zip(r["outs"], w["expected"])):
                C.check_close(mine, want, name=f"compiled x[op(x)] * 2, {label} signal {i}")
            C.check_equal(r["counts"], w["expected_counts"], name=f"compiled op(x).shape[0], {label} signals",
                          hint="inside compiled code the output length is what the fake says: make it a new "
                               "data-dependent size, not a function of the input's length")
            C.check_equal(r["graphs"], 1, name=f"graphs compiled for the {label} signals (one length)")
    C.check_true(not isinstance(got["grad"], str), f"backward through x[op(x)] (aot_eager, fullgraph) raised {got['grad']}")
    C.check_close(got["grad"], ref["grad_expected"], name="x.grad through x[op(x)] in compiled code")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.


WHY['register_peaks_op'] = "As a custom op, legacy_peaks is opaque to Dynamo, so it causes no break; the fake returns an int64 tensor of new_dynamic_size() length on x's device, an unbacked size, so one graph serves any number of peaks. The integer output needs no autograd formula: x[op(x)] carries the gradient."
