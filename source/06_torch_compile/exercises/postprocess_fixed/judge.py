"""Exercise 'postprocess_fixed' of 06_torch_compile: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 6.2 · postprocess_fixed -----------------------------------------------------------------
# clause -> test
#   same values, shape and dtype as postprocess: float16/32/64, any shape ... test_postprocess_values (float16 with
#                                                                               the mean computed in float16, as postprocess does)
#   the empty tensor included ................................................. test_postprocess_values (zeros(0, 3):
#                                                                               amax of an empty tensor raises)
#   one threshold: the mean of ALL entries (not per row) ..................... test_postprocess_values (rows with
#                                                                               different means, visible pp_input too)
#   (bfloat16 is outside the contract: postprocess raises on it; not tested)
#   entries equal to the mean are dropped (strict >), ties at non-zero means .. test_postprocess_values
#   rescaled by the smallest 2**k, k >= 0, that brings every magnitude to <= 1:
#     no rescaling when all are already <= 1 ................................. test_postprocess_values (scores < 1)
#     a largest magnitude that is an exact power of two (1 stays 1) .......... test_postprocess_values (4.0 exactly)
#     one ulp above a power of two (a rounded log2 lands on the integer) ..... test_postprocess_values (float32 and
#                                                                               float64, 2**j * (1 + eps))
#     float16 scores above 2**15 (2**16 overflows float16) ................... test_postprocess_values
#   does not modify logits ................................................... test_postprocess_values
#   finite inputs with finite scores (the loop never ends on inf); the float16
#   sum / numel overflows where mean() does not .............................. test_postprocess_values
#   (inf and NaN inputs, and infinite scores, are outside the contract: not tested)
#   zero graph breaks, one graph (explain AND the graph_breaks log), with
#   the right values from that compiled call (float64 near 1e20) .............. test_postprocess_one_graph
#   compiles with fullgraph=True, with the right values (float64 near 1e20,
#   and dynamic=True) ........................................................ test_postprocess_fullgraph

@judge.shared
def _pp_expected(x):
    """postprocess's values, computed as postprocess does (the loop included), without print or NumPy."""
    out = torch.where(x > x.mean(), torch.where(x > 0, x * x, 0.5 * x), torch.zeros_like(x))
    while out.numel() > 0 and bool(out.abs().max() > 1.0):
        out = out / 2
    return out


@judge.shared
def _pp_cases(seed):
    g = torch.Generator().manual_seed(seed + 20)
    cases = [torch.randn(4, 7, generator=g), torch.randn(3, 2, 5, generator=g, dtype=torch.float64),
             torch.randn(9, generator=g) * 3, torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]),
             torch.tensor([-4.0, -1.0, -1.0, 2.0]), torch.randn(1, generator=g)]
    rows = torch.randn(3, 6, generator=g) + torch.tensor([[-2.0], [0.0], [3.0]])   # rows whose means differ a lot
    cases += [rows, torch.randn(4, 5, generator=g).half(), (torch.randn(7, generator=g) * 4).half(), torch.zeros(0, 3)]
    # float16 whose mean, rounded to float16 as postprocess computes it, lies above entries that a float32 mean keeps
    base = float(torch.randint(64, 127, (), generator=g))            # float16 spacing 1/16 in [64, 128)
    cases.append(torch.tensor([base, base] + [base + 0.0625] * 3, dtype=torch.float16)[torch.randperm(5, generator=g)])
    for n in (6, 10):                       # integer entries whose mean is an entry: ties at a non-zero mean
        m = int(torch.randint(1, 3, (), generator=g)) * (1 if float(torch.rand((), generator=g)) > 0.5 else -1)
        v = torch.randint(-3, 4, (n - 1,), generator=g).double()
        v[0] = m
        cases.append(torch.cat([v, torch.tensor([m * n - float(v.sum())], dtype=torch.float64)]))
    # float16 entries in [200, 240): finite squares above 2**15 (2**16 is inf in float16), and a sum that overflows
    # float16 where mean() does not
    cases.append((torch.rand(20, 20, generator=g) * 40 + 200).half())
    # scores already within [-1, 1]: no rescaling
    cases.append(torch.rand(5, generator=g) * 0.3 + 0.1)          # scores below 1/2: no rescaling, and no scaling up
    # a largest score that is exactly a power of two (4.0, and 1.0 that stays 1)
    cases.append(torch.tensor([-10.0, 2.0, 1.0, float(torch.rand((), generator=g)) + 0.1]))
    cases.append(torch.tensor([-3.0, 1.0, 0.5], dtype=torch.float64))
    # largest magnitudes one ulp above 2**j: a rounded log2 of them is exactly j
    for dtype in (torch.float32, torch.float64):
        j = int(torch.randint(4, 40, (), generator=g))
        x = -(2.0 ** (j + 1)) * (1 + torch.finfo(dtype).eps)           # score 0.5 * x = -2**j * (1 + eps)
        anchor = -torch.finfo(dtype).max / 16                          # below the mean: dropped, pulls the mean down
        cases.append(torch.tensor([anchor, x, 0.5 * x, 0.3], dtype=dtype)[torch.randperm(4, generator=g)])
    return cases


@judge.probe("test_postprocess_values")
def probe_pp_values(seed):
    cases = _pp_cases(seed)
    ref_values = [_pp_expected(x) for x in cases]
    torch._dynamo.reset()
    visible_out = [postprocess_fixed(pp_input.clone()), postprocess_fixed(pp_input.T.double())]
    outs, unchanged = [], []
    for x in cases:
        x_in = x.clone()
        outs.append(postprocess_fixed(x_in))
        unchanged.append(bool(torch.equal(x_in, x)))
    visible_ref = [_pp_expected(x) for x in (pp_input.clone(), pp_input.T.double())]
    return {"visible": visible_out, "visible_ref": visible_ref, "outs": outs, "expected": ref_values,
            "unchanged": unchanged}


@probe_pp_values.verdict
def _(got, ref):
    with visible():
        for mine, want, name in zip(got["visible"], ref["visible_ref"], ("pp_input", "pp_input.T.double()")):
            C.check_close(mine, want, name=f"postprocess_fixed({name})",
                          hint="one threshold, the mean of ALL entries (2.5; the rows' own means differ), and "
                               "entries equal to it are zeroed (strict `>`)")
    for i, (out, want) in enumerate(zip(got["outs"], ref["expected"])):
        C.check_close(out, want, name=f"postprocess_fixed on hidden input {i} (shape {tuple(want.shape)}, {want.dtype})",
                      hint="same dtype as the input; one mean over all entries (not per row); entries equal to the "
                           "mean are zeroed (strict >); then the smallest 2**k, k >= 0, with every magnitude <= 1 "
                           "(exact powers of two and one ulp above them, float16 above 2**15, the empty tensor)")
    C.check_true(all(u is True for u in got["unchanged"]), "postprocess_fixed changed its input in place",
                 hint="build new tensors (torch.where, *, ...) instead of writing into logits")


@judge.probe("test_postprocess_one_graph")
def probe_pp_one_graph(seed):
    g = torch.Generator().manual_seed(seed + 21)
    # float64 entries near 1e20: their squares overflow float32 (a float32 computation is caught on every seed)
    xs = [pp_input.clone(), torch.randn(2, 8, generator=g, dtype=torch.float64) * 1e20]
    rows = []
    for x in xs:
        torch._dynamo.reset()
        try:
            out = torch._dynamo.explain(postprocess_fixed)(x.clone())
            torch._dynamo.reset()
            counter = CompileCounter()
            with capture_logs("graph_breaks") as logs:
                y = torch.compile(postprocess_fixed, backend=counter)(x.clone())
            rows.append({"explain": (out.graph_count, out.graph_break_count), "graphs": counter.count,
                         "logged": len(logs["graph_breaks"]), "out": y,
                         "expected": _pp_expected(x)})
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
                          hint="a print, an .item(), a NumPy call or a loop on tensor values is still in the function")
        C.check_equal((r["graphs"], r["logged"]), (w["graphs"], w["logged"]),
                      name=f"(graphs compiled, graph_breaks log records) on {where}",
                      hint="explain misses a break before the first op; the log does not: remove every print, loop on values, "
                           ".item() and NumPy call, wherever it is")
        C.check_close(r["out"], w["expected"], name=f"the compiled postprocess_fixed on {where}",
                      hint="one graph is not enough: it must compute postprocess's values")


def _nullcontext():
    from contextlib import nullcontext
    return nullcontext()


@judge.probe("test_postprocess_fullgraph")
def probe_pp_fullgraph(seed):
    g = torch.Generator().manual_seed(seed + 22)
    xs = [pp_input.clone(), torch.randn(3, 6, generator=g, dtype=torch.float64) * 1e20]   # beyond float32's range
    expected = [_pp_expected(x) for x in xs]
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


WHY['postprocess_fixed'] = "Every break source is replaced by tensor ops: comparing with the 0-d logits.mean() needs no .item(), torch.where computes both cases of legacy_score elementwise, and the print is gone. Values keep logits' dtype, and a float16 inf where keep is False still becomes 0."
