"""Hidden tests of Chapter 6, judged outside the student's kernel (instructor side: never released).

Each grade cell of 06_torch_compile.ipynb has one probe here (it runs with the
notebook's names, in the student's sandbox and in the reference worker) and
one verdict (it runs in the judge, on the plain data both sent back). ``got``
is the student's data, ``ref`` the reference solution's; every expectation
that does not come from the student's code is read from ``ref``.

Probes reset Dynamo (``torch._dynamo.reset()``) before every case whose counts
they return, compile only with capture backends (``eager``, ``aot_eager`` or a
counting backend: no Inductor, so a cold cache costs nothing), and return
counts, strings, booleans and tensors. Inputs come from an explicit
``torch.Generator`` built before the first call into student code.
"""
import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


@judge.shared
def _error_text(err):
    """'ExcType: first line of the message' (what a probe returns instead of an exception)."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


def _explanation(record):
    """The 'Explanation: ...' line of a graph_breaks log record (the part that names the cause), or its first line."""
    for line in record.splitlines():
        if line.strip().startswith("Explanation:"):
            return line.strip()
    lines = [line.strip() for line in record.splitlines() if line.strip()]
    return lines[0] if lines else ""


# --- Exercise 6.1 · break_report ---------------------------------------------------------------------
# clause -> test
#   "graphs": graphs Dynamo compiled for one call (a backend's count) ........ test_break_report_counts
#   "breaks": one per graph_breaks log record, a leading break included ..... test_break_report_counts
#   a function with no ops has 0 graphs and 0 breaks ......................... test_break_report_counts
#   "fullgraph": whether fullgraph=True compiles (may disagree with breaks) .. test_break_report_fullgraph
#   "reasons": the text of each log record, in order ......................... test_break_report_reasons
#   the same report twice in a row / after fn was compiled elsewhere ........ test_break_report_repeat
#   the logging settings are left as they were ............................... test_break_report_repeat
#   returns a plain dict with exactly those keys ............................. every test

@judge.shared
def _br_functions():
    """Hidden functions for Exercise 6.1: leading breaks, no ops, breaks in loops and helpers, clean code."""
    import subprocess

    def lead_sub(x):
        subprocess.run(["true"], check=False)
        return torch.cos(x) * 2

    def no_ops(x):
        return x

    def only_print(x):
        print("  (probe: only_print)")
        return x

    def loop_print(x):
        for i in range(2):
            x = x + i
            print("  (probe: loop)", i)
        return x

    def _helper(t):
        print("  (probe: helper)")
        return t * 3

    def nested(x):
        return _helper(torch.sin(x)) + 1

    def two_leading(x):
        print("  (probe: one)")
        print("  (probe: two)")
        return torch.sin(x) - 1

    def clean(x):
        return torch.relu(x) * 2 - x.mean()

    def lead_if(x):
        if x.sum() > 0:
            x = x + 1
        return torch.tanh(x)

    def lead_item(x):
        s = x.sum().item()
        return x * s

    def vectorized(x):
        return legacy_score(x * 2) + 1

    def item_if(x):
        if x.sum().item() > 0:
            return x + 1
        return x - 1

    return {"lead_sub": lead_sub, "no_ops": no_ops, "only_print": only_print, "loop_print": loop_print,
            "nested": nested, "two_leading": two_leading, "clean": clean, "lead_if": lead_if,
            "lead_item": lead_item, "vectorized": vectorized, "item_if": item_if}


@judge.shared
def _br_call(fn, x):
    """break_report(fn, x) from a fresh cache, as plain data (or the error text)."""
    torch._dynamo.reset()
    try:
        r = break_report(fn, x)
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return {"error": _error_text(err)}
    return r


@judge.probe("test_break_report_counts")
def probe_br_counts(seed):
    g = torch.Generator().manual_seed(seed)
    fns = _br_functions()
    names = ["lead_sub", "no_ops", "only_print", "loop_print", "nested", "two_leading", "lead_if", "vectorized"]
    xs = {name: torch.randn(int(torch.randint(3, 9, (), generator=g)), generator=g) for name in names}
    out = {"visible": [_br_call(leading_print, torch.randn(3)), _br_call(two_ops_and_a_print, torch.randn(3))]}
    out["cases"] = {name: _br_call(fns[name], xs[name]) for name in names}
    return out


def _check_report_form(r, where):
    C.check_type(r, dict, name=f"break_report({where})", hint="return a plain dict")
    if "error" in r and len(r) == 1:
        C.check_true(False, f"break_report({where}) raised {r['error']}")
    C.check_equal(sorted(str(k) for k in r), ["breaks", "fullgraph", "graphs", "reasons"],
                  name=f"keys of break_report({where})")


@probe_br_counts.verdict
def _(got, ref):
    with visible():
        for r, name, want in zip(got["visible"], ("leading_print", "two_ops_and_a_print"), ((1, 1), (2, 1))):
            _check_report_form(r, name)
            C.check_equal((r["graphs"], r["breaks"]), want, name=f"(graphs, breaks) for {name}",
                          hint="graphs: what your backend received; breaks: records of the graph_breaks log "
                               "(explain misses a break before the first op)")
    for name, want in ref["cases"].items():
        r = got["cases"].get(name)
        _check_report_form(r, f"a hidden function ({name})")
        hint = None
        if name in ("lead_sub", "only_print", "two_leading", "loop_print", "no_ops"):
            hint = ("this function breaks before its first op (or has no ops, or breaks in a loop): explain's "
                    "counts are wrong here, the graph_breaks log and a counting backend are not")
        C.check_equal(r["graphs"], want["graphs"], name=f'report["graphs"] for a hidden function ({name})',
                      hint=hint or "count the graphs your backend receives during one call")
        C.check_equal(r["breaks"], want["breaks"], name=f'report["breaks"] for a hidden function ({name})',
                      hint=hint or "one break per record of the graph_breaks log")


@judge.probe("test_break_report_fullgraph")
def probe_br_fullgraph(seed):
    g = torch.Generator().manual_seed(seed + 1)
    fns = _br_functions()
    names = ["lead_item", "no_ops", "item_if", "clean"]
    xs = {name: torch.randn(5, generator=g) for name in names}
    out = {"visible": [_br_call(leading_print, torch.randn(3)), _br_call(lambda t: torch.relu(t) * 2, torch.randn(3))]}
    out["cases"] = {name: _br_call(fns[name], xs[name]) for name in names}
    return out


@probe_br_fullgraph.verdict
def _(got, ref):
    with visible():
        for r, name, want in zip(got["visible"], ("leading_print", "a clean function"), (False, True)):
            _check_report_form(r, name)
            C.check_equal(r["fullgraph"], want, name=f'report["fullgraph"] for {name}')
    for name, want in ref["cases"].items():
        r = got["cases"].get(name)
        _check_report_form(r, f"a hidden function ({name})")
        hint = "report whether torch.compile(fn, backend='eager', fullgraph=True)(*args) raised, from a fresh cache"
        if name == "lead_item":
            hint = ("this function has a graph break (the log shows it), yet fullgraph=True compiles it (.item() "
                    "captured as an unbacked scalar): compile it, do not infer it from the break count")
        if name == "no_ops":
            hint = ("a function with no ops compiles with fullgraph=True; reset Dynamo before the fullgraph compile "
                    "(the earlier compile marked the frame as skipped)")
        C.check_equal(r["fullgraph"], want["fullgraph"], name=f'report["fullgraph"] for a hidden function ({name})',
                      hint=hint)


@judge.probe("test_break_report_reasons")
def probe_br_reasons(seed):
    g = torch.Generator().manual_seed(seed + 2)
    fns = _br_functions()
    names = ["two_leading", "nested", "lead_if", "vectorized"]
    xs = {name: torch.randn(4, generator=g) for name in names}
    out = {"visible": _br_call(leading_print, torch.randn(3))}
    out["cases"] = {name: _br_call(fns[name], xs[name]) for name in names}
    return out


@probe_br_reasons.verdict
def _(got, ref):
    with visible():
        r = got["visible"]
        _check_report_form(r, "leading_print")
        C.check_type(r["reasons"], list, name='report["reasons"]')
        C.check_equal(len(r["reasons"]), 1, name="number of reasons for leading_print")
        C.check_type(r["reasons"][0], str, name='report["reasons"][0]')
        C.check_true("print" in r["reasons"][0],
                     f'the reason for leading_print should mention `print`, got {r["reasons"][0][:120]!r}',
                     hint="keep the whole text of each graph_breaks log record")
    for name, want in ref["cases"].items():
        r = got["cases"].get(name)
        _check_report_form(r, f"a hidden function ({name})")
        C.check_type(r["reasons"], list, name=f'report["reasons"] ({name})')
        C.check_equal(len(r["reasons"]), len(want["reasons"]), name=f"number of reasons for a hidden function ({name})",
                      hint="one string per graph_breaks log record")
        for i, (text, expected) in enumerate(zip(r["reasons"], want["reasons"])):
            C.check_type(text, str, name=f'report["reasons"][{i}] ({name})')
            key = _explanation(expected)
            C.check_true(key in text, f'report["reasons"][{i}] for {name} should contain the log\'s explanation '
                                      f'{key[:140]!r}; got {text[:160]!r}',
                         hint="keep each record's whole text, in the order the log gave them")


@judge.probe("test_break_report_repeat")
def probe_br_repeat(seed):
    import torch._logging._internal as _log_internal

    g = torch.Generator().manual_seed(seed + 3)
    fns = _br_functions()
    torch._dynamo.reset()
    try:
        first = break_report(two_ops_and_a_print, torch.randn(3))
        second = break_report(two_ops_and_a_print, torch.randn(3))
        visible_pair = [first, second]
    except Exception as err:  # noqa: BLE001
        visible_pair = [{"error": _error_text(err)}, {"error": _error_text(err)}]
    cases = {}
    for name in ("nested", "lead_sub", "no_ops"):
        x = torch.randn(6, generator=g)
        torch._dynamo.reset()
        try:
            torch.compile(fns[name], backend="eager")(x)          # compiled before, as in a real notebook
            cases[name] = [break_report(fns[name], x), break_report(fns[name], x)]
        except Exception as err:  # noqa: BLE001
            cases[name] = [{"error": _error_text(err)}] * 2
    torch._dynamo.reset()
    logging_left_on = [a for a in ("graph_breaks", "recompiles", "guards")
                       if _log_internal.log_state.is_artifact_enabled(a)]
    return {"visible": visible_pair, "cases": cases, "logging_left_on": logging_left_on}


@probe_br_repeat.verdict
def _(got, ref):
    with visible():
        first, second = got["visible"]
        _check_report_form(first, "two_ops_and_a_print")
        _check_report_form(second, "two_ops_and_a_print, second call")
        C.check_equal((second["graphs"], second["breaks"]), (first["graphs"], first["breaks"]),
                      name="(graphs, breaks) of a second report on the same function",
                      hint="the second compile found the first one's cached code: reset Dynamo before compiling")
    for name, (w, _) in ref["cases"].items():
        for k, r in enumerate(got["cases"][name]):
            _check_report_form(r, f"{name}, call {k + 1}")
            C.check_equal({key: r[key] for key in ("graphs", "breaks", "fullgraph")},
                          {key: w[key] for key in ("graphs", "breaks", "fullgraph")},
                          name=f"report {k + 1} on a hidden function ({name}) that had been compiled before",
                          hint="start from a fresh cache (torch._dynamo.reset()) before each compile, so cached "
                               "code cannot hide graphs and breaks")
    C.check_equal(got["logging_left_on"], ref["logging_left_on"], name="torch log artifacts still on after break_report",
                  hint="switch the logs back off (torch._logging.set_logs(), or use cd.capture_logs)")


# --- Exercise 6.2 · postprocess_fixed -----------------------------------------------------------------
# clause -> test
#   same values, shape and dtype as postprocess, any shape/float dtype ....... test_postprocess_values
#   entries equal to the mean are zeroed (strict >), ties at non-zero means . test_postprocess_values
#   does not modify logits ................................................... test_postprocess_values
#   zero graph breaks, one graph (explain AND the graph_breaks log) ......... test_postprocess_one_graph
#   compiles with fullgraph=True, with the right values ...................... test_postprocess_fullgraph

@judge.shared
def _pp_cases(seed):
    g = torch.Generator().manual_seed(seed + 20)
    cases = [torch.randn(4, 7, generator=g), torch.randn(3, 2, 5, generator=g, dtype=torch.float64),
             torch.randn(9, generator=g) * 3, torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
             torch.tensor([-4.0, -1.0, -1.0, 2.0]), torch.randn(1, generator=g)]
    for n in (6, 10):                       # integer entries whose mean is an entry: ties at a non-zero mean
        m = int(torch.randint(1, 3, (), generator=g)) * (1 if float(torch.rand((), generator=g)) > 0.5 else -1)
        v = torch.randint(-3, 4, (n - 1,), generator=g).double()
        v[0] = m
        cases.append(torch.cat([v, torch.tensor([m * n - float(v.sum())], dtype=torch.float64)]))
    return cases


@judge.probe("test_postprocess_values")
def probe_pp_values(seed):
    cases = _pp_cases(seed)
    ref_values = [torch.where(x > x.mean(), torch.where(x > 0, x * x, 0.5 * x), torch.zeros_like(x)) for x in cases]
    torch._dynamo.reset()
    visible_out = postprocess_fixed(pp_input.clone())
    outs, unchanged = [], []
    for x in cases:
        x_in = x.clone()
        outs.append(postprocess_fixed(x_in))
        unchanged.append(bool(torch.equal(x_in, x)))
    return {"visible": visible_out, "visible_ref": postprocess(pp_input.clone()), "outs": outs,
            "expected": ref_values, "unchanged": unchanged}


@probe_pp_values.verdict
def _(got, ref):
    with visible():
        C.check_close(got["visible"], ref["visible_ref"], name="postprocess_fixed(pp_input)",
                      hint="the mean of pp_input is 2.0 and two entries equal it: they must be zeroed (strict `>`)")
    for i, (out, want) in enumerate(zip(got["outs"], ref["expected"])):
        C.check_close(out, want, name=f"postprocess_fixed on hidden input {i} (shape {tuple(want.shape)}, {want.dtype})",
                      hint="same dtype as the input; entries equal to the mean are zeroed (strict >)")
    C.check_true(all(u is True for u in got["unchanged"]), "postprocess_fixed changed its input in place",
                 hint="build new tensors (torch.where, *, ...) instead of writing into logits")


@judge.probe("test_postprocess_one_graph")
def probe_pp_one_graph(seed):
    g = torch.Generator().manual_seed(seed + 21)
    xs = [pp_input, torch.randn(5, 3, generator=g), torch.randn(2, 8, generator=g, dtype=torch.float64)]
    rows = []
    for x in xs:
        torch._dynamo.reset()
        try:
            out = torch._dynamo.explain(postprocess_fixed)(x)
            torch._dynamo.reset()
            counter = CompileCounter()
            with capture_logs("graph_breaks") as logs:
                torch.compile(postprocess_fixed, backend=counter)(x)
            rows.append({"explain": (out.graph_count, out.graph_break_count), "graphs": counter.count,
                         "logged": len(logs["graph_breaks"])})
        except Exception as err:  # noqa: BLE001
            rows.append({"error": _error_text(err)})
    torch._dynamo.reset()
    return rows


@probe_pp_one_graph.verdict
def _(got, ref):
    for i, (r, w) in enumerate(zip(got, ref)):
        where = "pp_input" if i == 0 else f"a hidden input ({i})"
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            C.check_true("error" not in r, f"compiling postprocess_fixed on {where} raised {r.get('error')}")
            C.check_equal(r["explain"], w["explain"], name=f"explain (graph_count, graph_break_count) on {where}",
                          hint="a print, an .item() or a NumPy call is still in the function")
        C.check_equal((r["graphs"], r["logged"]), (w["graphs"], w["logged"]),
                      name=f"(graphs compiled, graph_breaks log records) on {where}",
                      hint="explain misses a break before the first op; the log does not: remove every print, "
                           ".item() and NumPy call, wherever it is")


def _nullcontext():
    from contextlib import nullcontext
    return nullcontext()


@judge.probe("test_postprocess_fullgraph")
def probe_pp_fullgraph(seed):
    g = torch.Generator().manual_seed(seed + 22)
    xs = [pp_input, torch.randn(3, 6, generator=g, dtype=torch.float64), torch.randn(11, generator=g)]
    expected = [torch.where(x > x.mean(), torch.where(x > 0, x * x, 0.5 * x), torch.zeros_like(x)) for x in xs]
    rows = []
    for i, x in enumerate(xs):
        torch._dynamo.reset()
        try:
            y = torch.compile(postprocess_fixed, backend="eager", fullgraph=True, dynamic=(i == 1))(x.clone())
            rows.append({"out": y})
        except Exception as err:  # noqa: BLE001
            rows.append({"error": _error_text(err)})
    torch._dynamo.reset()
    return {"rows": rows, "expected": expected}


@probe_pp_fullgraph.verdict
def _(got, ref):
    for i, (r, want) in enumerate(zip(got["rows"], ref["expected"])):
        where = "pp_input" if i == 0 else f"a hidden input ({tuple(want.shape)}, {want.dtype})"
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            C.check_true("error" not in r, f"torch.compile(postprocess_fixed, fullgraph=True) on {where} raised "
                                           f"{r.get('error')}", hint="fullgraph=True turns every graph break into this error")
            C.check_close(r["out"], want, name=f"compiled postprocess_fixed on {where}")


# --- Exercise 6.3 · WarmupScaleFixed --------------------------------------------------------------------
# clause -> test
#   has .lin = nn.Linear(features, features); forward = lin(x) * min(1, step/warmup) . test_warmup_values
#   step = 1 at the first call, any warmup >= 1, scale stays 1 after warmup ........ test_warmup_values
#   float32 and float64 modules and inputs ............................................ test_warmup_values
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
    with torch.no_grad():
        visible_pairs = [(fixed(xv), orig(xv)) for _ in range(5)]
    cases = []
    for warmup in (1, 4, 7):
        orig, fixed = _warm_pair(4, warmup, seed + warmup)
        with torch.no_grad():
            cases.append({"warmup": warmup, "orig": [orig(x) for x in xs], "fixed": [fixed(x) for x in xs]})
    orig, fixed = _warm_pair(6, 5, seed + 9, double=True)
    with torch.no_grad():
        f64 = {"orig": [orig(x64) for _ in range(7)], "fixed": [fixed(x64) for _ in range(7)]}
    orig, fixed = _warm_pair(4, 4, seed + 11)
    grads = {}
    for label, m in (("orig", orig), ("fixed", fixed)):
        m(xs[0]).sum()                                     # call 1 (graph discarded)
        (m(xs[1]) ** 2).sum().backward()                   # call 2: scale 0.5
        grads[label] = (m.lin.weight.grad, m.lin.bias.grad)
    return {"visible": visible_pairs, "cases": cases, "f64": f64, "grads": grads}


@probe_warm_values.verdict
def _(got, ref):
    with visible():
        for i, (mine, _) in enumerate(got["visible"]):
            C.check_close(mine, ref["visible"][i][1], name=f"output at call {i + 1} (warmup 3)", rtol=1e-6, atol=1e-7,
                          hint="the scale is min(1, step / warmup) with step = 1 at the first call")
    for case, want in zip(got["cases"], ref["cases"]):
        for i, (mine, w) in enumerate(zip(case["fixed"], want["orig"])):
            C.check_close(mine, w, name=f"output at call {i + 1} with warmup={want['warmup']}", rtol=1e-6, atol=1e-7,
                          hint="use the warmup given to __init__; count from 1; the scale stops at 1")
    for i, (mine, w) in enumerate(zip(got["f64"]["fixed"], ref["f64"]["orig"])):
        C.check_close(mine, w, name=f"float64 module, output at call {i + 1}", rtol=1e-6, atol=1e-9,
                      hint="a float64 module and input must give a float64 output")
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
    sd = m.state_dict()
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


# --- Exercise 6.4 · compile_for_lengths -----------------------------------------------------------------
# clause -> test
#   compiled once with backend, run(*tensors) -> model(*tensors) ............... test_compile_for_lengths_outputs
#   exactly one compilation for lengths 2..64, other sizes fixed ............... test_compile_for_lengths_one_compile
#   ... even when a length equals the batch or feature size (duck sizing) ..... test_compile_for_lengths_one_compile
#   several inputs share the length (masks) ..................................... test_compile_for_lengths_one_compile
#   dimension `dim` is the length (dim=0, dim=2) ................................ test_compile_for_lengths_dim
#   same outputs as the model, every call ........................................ test_compile_for_lengths_outputs

@judge.shared
def _cfl_models():
    class SeqFirstMean(torch.nn.Module):
        """(L, batch, d) features and an (L, batch) mask -> (batch, d)."""

        def __init__(self, d):
            super().__init__()
            self.proj = torch.nn.Linear(d, d)

        def forward(self, x, mask):
            h = torch.relu(self.proj(x)) * mask.unsqueeze(-1)
            return h.sum(dim=0) / mask.sum(dim=0).unsqueeze(-1).clamp(min=1)

    class ChannelsFirst(torch.nn.Module):
        """(batch, channels, L) signal and a (batch, 1, L) weight -> (batch, channels, L)."""

        def __init__(self, c):
            super().__init__()
            self.conv = torch.nn.Conv1d(c, c, 3, padding=1)

        def forward(self, x, w):
            return torch.tanh(self.conv(x)) * w

    class BiasedScores(torch.nn.Module):
        """(batch, L, d), (batch, L) mask and (batch, L) bias -> (batch, L) scores."""

        def __init__(self, d):
            super().__init__()
            self.score = torch.nn.Linear(d, 1)

        def forward(self, x, mask, bias):
            return torch.softmax(self.score(x).squeeze(-1) + bias + (mask - 1) * 1e4, dim=-1)

    return {"SeqFirstMean": SeqFirstMean, "ChannelsFirst": ChannelsFirst, "BiasedScores": BiasedScores}


@judge.shared
def _cfl_count(model, calls, dim):
    """Compile model with compile_for_lengths and a counting backend; run the calls; return the count or an error."""
    torch._dynamo.reset()
    counter = CompileCounter()
    try:
        run = compile_for_lengths(model, counter, dim) if dim != 1 else compile_for_lengths(model, counter)
        with torch.no_grad():
            for args in calls:
                run(*args)
    except Exception as err:  # noqa: BLE001
        torch._dynamo.reset()
        return _error_text(err)
    torch._dynamo.reset()
    return counter.count


@judge.shared
def _cfl_lengths(g, forced):
    """Forced lengths (equal to other sizes) first, then random lengths in 2..64."""
    return list(forced) + [int(v) for v in torch.randint(2, 65, (3,), generator=g)]


@judge.probe("test_compile_for_lengths_one_compile")
def probe_cfl_one(seed):
    g = torch.Generator().manual_seed(seed + 60)
    models = _cfl_models()
    out = {}
    calls = [(torch.randn(2, L, 16), (torch.rand(2, L) > 0.3).float()) for L in (16, 20, 64)]
    out["visible"] = _cfl_count(MaskedMean(16).eval(), calls, 1)
    cases = {}
    lengths = _cfl_lengths(g, (8, 2, 33))
    calls = [(torch.randn(8, L, 8, generator=g), (torch.rand(8, L, generator=g) > 0.3).float()) for L in lengths]
    cases["MaskedMean(8), batch 8"] = _cfl_count(MaskedMean(8).eval(), calls, 1)
    lengths = _cfl_lengths(g, (12, 5, 40))
    calls = [(torch.randn(5, L, 12, generator=g),) for L in lengths]
    cases["TinyEncoder(12), batch 5"] = _cfl_count(TinyEncoder(12).eval(), calls, 1)
    lengths = _cfl_lengths(g, (6, 3, 17))
    calls = [(torch.randn(3, L, 6, generator=g), (torch.rand(3, L, generator=g) > 0.2).float(),
              torch.randn(3, L, generator=g)) for L in lengths]
    cases["BiasedScores(6), three inputs"] = _cfl_count(models["BiasedScores"](6).eval(), calls, 1)
    out["cases"] = cases
    return out


@probe_cfl_one.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], 1, name="compilations of MaskedMean(16) for lengths 16, 20, 64",
                      hint="2: the first length was specialised (automatic dynamic, or duck sizing with the 16 "
                           "features under dynamic=True); an error: mark every input, not only the first")
    for label, want in ref["cases"].items():
        C.check_equal(got["cases"][label], want, name=f"compilations for a hidden model ({label})",
                      hint="mark_dynamic the length dimension of every input before each call; dynamic=True alone "
                           "loses to duck sizing when a length equals the batch or feature size")


@judge.probe("test_compile_for_lengths_dim")
def probe_cfl_dim(seed):
    g = torch.Generator().manual_seed(seed + 61)
    models = _cfl_models()
    calls = [(torch.randn(L, 3, 4), torch.ones(L, 3)) for L in (5, 9, 30)]
    out = {"visible": _cfl_count(lambda x, m: (x * m.unsqueeze(-1)).sum(dim=0), calls, 0)}
    cases = {}
    lengths = _cfl_lengths(g, (10, 4, 21))
    calls = [(torch.randn(L, 4, 10, generator=g), (torch.rand(L, 4, generator=g) > 0.3).float()) for L in lengths]
    cases["SeqFirstMean(10), dim=0"] = _cfl_count(models["SeqFirstMean"](10).eval(), calls, 0)
    lengths = _cfl_lengths(g, (6, 2, 45))
    calls = [(torch.randn(2, 6, L, generator=g), torch.rand(2, 1, L, generator=g)) for L in lengths]
    cases["ChannelsFirst(6), dim=2"] = _cfl_count(models["ChannelsFirst"](6).eval(), calls, 2)
    out["cases"] = cases
    return out


@probe_cfl_dim.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], 1, name="compilations for lengths 5, 9, 30 at dim=0",
                      hint="mark dimension `dim` of each input, not always dimension 1")
    for label, want in ref["cases"].items():
        C.check_equal(got["cases"][label], want, name=f"compilations for a hidden model ({label})",
                      hint="the length is at dimension `dim` of every input")


@judge.probe("test_compile_for_lengths_outputs")
def probe_cfl_outputs(seed):
    g = torch.Generator().manual_seed(seed + 62)
    models = _cfl_models()
    torch.manual_seed(0)
    visible_model = MaskedMean(16).eval()
    xv, mv = torch.randn(2, 12, 16), (torch.rand(2, 12) > 0.3).float()
    torch.manual_seed(seed)
    enc = TinyEncoder(8).eval()
    seqf = models["SeqFirstMean"](8).eval()
    enc_inputs = [(torch.randn(3, L, 8, generator=g),) for L in (8, 13, 3, 50)]
    seq_inputs = [(torch.randn(L, 3, 8, generator=g), (torch.rand(L, 3, generator=g) > 0.3).float()) for L in (8, 3, 27)]
    out = {}
    with torch.no_grad():
        out["visible_expected"] = visible_model(xv, mv)
        out["enc_expected"] = [enc(*a) for a in enc_inputs]
        out["seq_expected"] = [seqf(*a) for a in seq_inputs]
        for key, model, inputs, dim in (("visible", visible_model, [(xv, mv)], 1), ("enc", enc, enc_inputs, 1),
                                        ("seq", seqf, seq_inputs, 0)):
            torch._dynamo.reset()
            try:
                run = compile_for_lengths(model, "eager", dim) if dim != 1 else compile_for_lengths(model, "eager")
                out[key] = [run(*a) for a in inputs]
            except Exception as err:  # noqa: BLE001
                out[key] = _error_text(err)
    torch._dynamo.reset()
    return out


@probe_cfl_outputs.verdict
def _(got, ref):
    with visible():
        C.check_true(not isinstance(got["visible"], str), f"run(x, mask) raised {got['visible']}")
        C.check_close(got["visible"][0], ref["visible_expected"], name="compiled MaskedMean output", atol=1e-6, rtol=1e-5)
    for key, label in (("enc", "TinyEncoder(8)"), ("seq", "a sequence-first model at dim=0")):
        C.check_true(not isinstance(got[key], str), f"run(...) on {label} raised {got[key]}")
        for i, (mine, want) in enumerate(zip(got[key], ref[f"{key}_expected"])):
            C.check_close(mine, want, name=f"output of {label}, call {i + 1}", atol=1e-5, rtol=1e-5,
                          hint="run must return the compiled model's output for the tensors it was given")


# --- Exercise 6.5 · register_numpy_op -------------------------------------------------------------------
# clause -> test
#   op(x) == legacy_score(x): values, shape, dtype; float32/float64; any shape ... test_numpy_op_values
#   several calls with different names ............................................. every test (new name each)
#   opcheck passes: float32, float64, requires_grad, transposed input ............. test_numpy_op_opcheck
#   gradient 2x (x > 0), 0.5 elsewhere incl. x == 0, times the incoming gradient .. test_numpy_op_grad
#   fullgraph=True (aot_eager) forward and backward through a model ................ test_numpy_op_fullgraph

@judge.shared
def _op_name(tag, seed):
    return f"ch6judge_{tag}_{seed % 100000}::score"


@judge.probe("test_numpy_op_values")
def probe_op_values(seed):
    g = torch.Generator().manual_seed(seed + 70)
    xs = [torch.randn(4, 3, generator=g), torch.randn(2, 3, 4, generator=g, dtype=torch.float64) * 5,
          torch.randn(11, generator=g), torch.randn(3, 5, generator=g).t(), torch.zeros(0, 3), torch.tensor(-1.5)]
    want = [torch.where(x > 0, x * x, 0.5 * x) for x in xs]
    out = {"expected": want}
    try:
        op = register_numpy_op(_op_name("values_v", seed))
        out["visible"] = op(torch.tensor([-2.0, -0.5, 0.0, 0.5, 3.0]))
        op = register_numpy_op(_op_name("values", seed))
        out["outs"] = [op(x) for x in xs]
    except Exception as err:  # noqa: BLE001
        out["error"] = _error_text(err)
    return out


@probe_op_values.verdict
def _(got, ref):
    C.check_true("error" not in got, f"register_numpy_op or its op raised {got.get('error')}",
                 hint="each call registers a new name: define the custom op inside register_numpy_op")
    with visible():
        C.check_close(got["visible"], torch.tensor([-1.0, -0.25, 0.0, 0.25, 9.0]), name="op(x)")
    for i, (mine, want) in enumerate(zip(got["outs"], ref["expected"])):
        C.check_close(mine, want, name=f"op on a hidden input (shape {tuple(want.shape)}, {want.dtype})")


@judge.probe("test_numpy_op_opcheck")
def probe_op_opcheck(seed):
    g = torch.Generator().manual_seed(seed + 71)
    cases = {"float32 (3, 4)": torch.randn(3, 4, generator=g),
             "float64 (2, 3, 4)": torch.randn(2, 3, 4, generator=g, dtype=torch.float64),
             "float32 transposed": torch.randn(4, 3, generator=g).t(),
             "float64 transposed": torch.randn(5, 2, generator=g, dtype=torch.float64).t(),
             "float64 one element": torch.randn(1, generator=g, dtype=torch.float64)}
    out = {}
    try:
        op = register_numpy_op(_op_name("opcheck", seed))
    except Exception as err:  # noqa: BLE001
        return {"register": _error_text(err)}
    for label, x in cases.items():
        try:
            torch.library.opcheck(op, (x.requires_grad_(),))
            out[label] = None
        except Exception as err:  # noqa: BLE001
            out[label] = _error_text(err)
    torch._dynamo.reset()
    return {"register": None, "cases": out}


@probe_op_opcheck.verdict
def _(got, ref):
    C.check_equal(got["register"], None, name="register_numpy_op(...) raised")
    hints = {"float64": "the fake implementation must give the input's dtype (torch.empty(x.shape) is always float32)",
             "transposed": "legacy_score returns a contiguous tensor; torch.empty_like(x) copies x's strides, so the "
                           "fake and the real output differ for a transposed input"}
    for label in ref["cases"]:
        hint = next((h for k, h in hints.items() if k in label), None)
        text = got["cases"].get(label, "missing")
        if text is not None and "autograd" in text:
            hint = "register a backward with op.register_autograd(backward, setup_context=...)"
        ctx = visible() if label == "float32 (3, 4)" else _nullcontext()
        with ctx:
            C.check_equal(text, None, name=f"torch.library.opcheck on a {label} input", hint=hint)


@judge.probe("test_numpy_op_grad")
def probe_op_grad(seed):
    g = torch.Generator().manual_seed(seed + 72)
    x = torch.randn(4, 3, generator=g, dtype=torch.float64)
    x = torch.where(x.abs() < 0.1, x + 0.3 * x.sign() + 0.3 * (x == 0), x)     # away from the kink at 0
    up = torch.randn(4, 3, generator=g, dtype=torch.float64)
    xz = torch.tensor([0.0, -0.0, 1e-3, -2.0, 3.0], dtype=torch.float64)
    upz = torch.tensor([2.0, -1.0, 3.0, 0.5, -2.0], dtype=torch.float64)
    x32 = torch.randn(6, generator=g)
    out = {}
    try:
        op = register_numpy_op(_op_name("grad_v", seed))
        xv = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
        (op(xv) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
        out["visible"] = xv.grad
        op = register_numpy_op(_op_name("grad", seed))
        out["gradcheck"] = bool(torch.autograd.gradcheck(op, (x.clone().requires_grad_(),), raise_exception=False))
        grads = []
        for inp, upstream in ((x, up), (xz, upz), (x32, torch.ones(6))):
            leaf = inp.clone().requires_grad_()
            (op(leaf) * upstream).sum().backward()
            grads.append(leaf.grad)
        out["grads"] = grads
    except Exception as err:  # noqa: BLE001
        out["error"] = _error_text(err)
    out["expected"] = [u * torch.where(i > 0, 2 * i, torch.full_like(i, 0.5))
                       for i, u in ((x, up), (xz, upz), (x32, torch.ones(6)))]
    return out


@probe_op_grad.verdict
def _(got, ref):
    C.check_true("error" not in got, f"backward through the op raised {got.get('error')}",
                 hint="register a backward with op.register_autograd(backward, setup_context=setup_context)")
    with visible():
        C.check_close(got["visible"], torch.tensor([0.5, 1.0, 12.0], dtype=torch.float64), name="x.grad",
                      hint="d/dx is 2x for x > 0 and 0.5 elsewhere (also at 0); multiply by the incoming gradient")
    C.check_true(got["gradcheck"] is True, "torch.autograd.gradcheck fails for the op on a float64 input",
                 hint="the analytic gradient of your backward differs from finite differences")
    for i, (mine, want) in enumerate(zip(got["grads"], ref["expected"])):
        C.check_close(mine, want, name=f"gradient on hidden input {i}",
                      hint="at x == 0 the derivative is 0.5 (x > 0 is False); the result has the input's dtype")


@judge.probe("test_numpy_op_fullgraph")
def probe_op_fullgraph(seed):
    g = torch.Generator().manual_seed(seed + 73)
    w = torch.randn(5, 5, generator=g, dtype=torch.float64) / 3
    b = torch.randn(5, generator=g, dtype=torch.float64)
    xs = [torch.randn(6, 5, generator=g, dtype=torch.float64) for _ in range(2)]
    out = {"expected": []}
    for x in xs:                                   # the expected gradients, written without the op
        wl, bl = w.clone().requires_grad_(), b.clone().requires_grad_()
        h = x @ wl.t() + bl
        s = torch.where(h > 0, h * h, 0.5 * h)
        (s.sum(dim=-1) * torch.arange(1.0, 7.0, dtype=torch.float64)).sum().backward()
        out["expected"].append((wl.grad, bl.grad))
    torch._dynamo.reset()
    try:
        op = register_numpy_op(_op_name("full", seed))
        lin = torch.nn.Linear(5, 5).double()
        with torch.no_grad():
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        weights = torch.arange(1.0, 7.0, dtype=torch.float64)
        counter = CompileCounter()

        def step(t):
            return (op(lin(t)).sum(dim=-1) * weights).sum()

        f = torch.compile(step, backend="aot_eager", fullgraph=True)
        grads = []
        for x in xs:
            lin.zero_grad()
            f(x).backward()
            grads.append((lin.weight.grad.clone(), lin.bias.grad.clone()))
        out["grads"] = grads
        torch._dynamo.reset()
        with capture_logs("graph_breaks") as logs:
            torch.compile(lambda t: op(torch.tanh(t)) * 2 + op(t), backend=counter)(xs[0])
        out["graphs"], out["breaks"] = counter.count, len(logs["graph_breaks"])
    except Exception as err:  # noqa: BLE001
        out["error"] = _error_text(err)
    torch._dynamo.reset()
    return out


@probe_op_fullgraph.verdict
def _(got, ref):
    C.check_true("error" not in got, f"compiling a model that uses your op (fullgraph=True, aot_eager) raised "
                                     f"{got.get('error')}",
                 hint="'no fake impl' needs register_fake; 'no autograd formula' needs register_autograd; a fake "
                      "that calls .numpy() cannot run on fake tensors")
    for i, ((gw, gb), (ww, wb)) in enumerate(zip(got["grads"], ref["expected"])):
        C.check_close(gw, ww, name=f"lin.weight.grad through the compiled op, step {i + 1}", rtol=1e-7, atol=1e-9,
                      hint="multiply the local derivative by the incoming gradient")
        C.check_close(gb, wb, name=f"lin.bias.grad through the compiled op, step {i + 1}", rtol=1e-7, atol=1e-9)
    C.check_equal((got["graphs"], got["breaks"]), (1, 0),
                  name="(graphs, graph breaks) of a function calling the op twice")
