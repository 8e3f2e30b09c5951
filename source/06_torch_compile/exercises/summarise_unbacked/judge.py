"""Exercise 'summarise_unbacked' of 06_torch_compile: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 6.4 · summarise_unbacked -----------------------------------------------------------------
# clause -> test
#   summarise's values: (2, d), mean row then max row, for sets of 2 or more ..... test_summarise_values
#   float32 and float64, any d >= 1 (d = 1, 2, 5, 7 hidden), any finite values
#   (a set far below -1e9, where a sentinel padding value fails; a float64 set
#   near -1e300, below float32's lowest value; float64 entries whose sum overflows:
#   the mean is summarise's +-inf, not clipped to finfo.max) ...................... test_summarise_values
#   does not modify x .............................................................. test_summarise_values
#   every L >= 0: the empty set gives zeros, a one-element set its row twice ...... test_summarise_empty_and_single
#   mark_unbacked(x, 0) + fullgraph=True: one graph for any sequence of sizes,
#   0 and 1 included, with summarise's values (hidden: d in 2, 4, 5, 6; not the
#   visible 3) ........................................................................ test_summarise_one_graph

@judge.shared
def _summary_expected(x):
    """What summarise(x) returns, computed here (the notebook's summarise could be redefined)."""
    if x.shape[0] == 0:
        return x.new_zeros(2, x.shape[1])
    return torch.stack([x.mean(dim=0), x.amax(dim=0)])


@judge.probe("test_summarise_values")
def probe_summarise_values(seed):
    g = torch.Generator().manual_seed(seed + 60)
    torch.manual_seed(1)
    visible_inputs = [torch.randn(4, 3), torch.randn(7, 5, dtype=torch.float64) - 1]
    hidden = [torch.randn(int(torch.randint(2, 10, (), generator=g)), d, generator=g, dtype=dt) + shift
              for d, dt, shift in ((1, torch.float32, 0.0), (2, torch.float64, -3.0), (7, torch.float32, 2.0),
                                   (5, torch.float64, -0.5))]
    hidden.append(torch.randn(4, 3, generator=g) * 1e12 - 1e13)      # finite, far below any "sentinel" value
    hidden.append(torch.randn(3, 2, generator=g, dtype=torch.float64) * 1e299 - 1e300)   # below float32's range
    big = torch.randn(2, 3, generator=g, dtype=torch.float64)
    big[:, 0], big[:, 1] = 1.5e308, -1.5e308             # finite entries whose sums overflow: summarise's mean is +-inf
    hidden.append(big[torch.randperm(2, generator=g)])
    out = {"expected_visible": [_summary_expected(x) for x in visible_inputs],
           "expected": [_summary_expected(x) for x in hidden]}
    results, unchanged = [], []
    for x in visible_inputs + hidden:
        x_in = x.clone()
        try:
            results.append(summarise_unbacked(x_in))
        except Exception as err:  # noqa: BLE001
            results.append(_error_text(err))
        unchanged.append(bool(torch.equal(x_in, x)))
    out["got"], out["unchanged"] = results, unchanged
    return out


@probe_summarise_values.verdict
def _(got, ref):
    n_visible = len(ref["expected_visible"])
    for i, (mine, want) in enumerate(zip(got["got"], ref["expected_visible"] + ref["expected"])):
        where = f"a visible {tuple(want.shape)} summary" if i < n_visible else \
            f"a hidden set (d={want.shape[1]}, {want.dtype})"
        ctx = visible() if i < n_visible else _nullcontext()
        with ctx:
            C.check_true(not isinstance(mine, str), f"summarise_unbacked on {where} raised {mine}")
            C.check_close(mine, want, name=f"summarise_unbacked on {where}",
                          hint="row 0 the mean over the set, row 1 the element-wise max, in x's dtype")
    C.check_true(all(u is True for u in got["unchanged"]), "summarise_unbacked changed its input in place",
                 hint="build new tensors (torch.cat, torch.where ...) instead of writing into x")


@judge.probe("test_summarise_empty_and_single")
def probe_summarise_edges(seed):
    g = torch.Generator().manual_seed(seed + 61)
    torch.manual_seed(2)
    visible_inputs = [torch.zeros(0, 3), torch.randn(1, 3) - 2, torch.zeros(0, 4, dtype=torch.float64)]
    hidden = [torch.zeros(0, int(torch.randint(1, 8, (), generator=g))),
              torch.randn(1, 6, generator=g, dtype=torch.float64) - 5,
              torch.randn(1, 1, generator=g) + 1, torch.zeros(0, 2, dtype=torch.float64),
              torch.randn(1, 4, generator=g)]
    out = {"expected_visible": [_summary_expected(x) for x in visible_inputs],
           "expected": [_summary_expected(x) for x in hidden], "got": [],
           "shapes": [f"({x.shape[0]}, {x.shape[1]}) {x.dtype}" for x in visible_inputs + hidden]}
    for x in visible_inputs + hidden:
        try:
            out["got"].append(summarise_unbacked(x.clone()))
        except Exception as err:  # noqa: BLE001
            out["got"].append(_error_text(err))
    return out


@probe_summarise_edges.verdict
def _(got, ref):
    n_visible = len(ref["expected_visible"])
    for i, (mine, want) in enumerate(zip(got["got"], ref["expected_visible"] + ref["expected"])):
        where = f"{'a visible' if i < n_visible else 'a hidden'} set of shape {ref['shapes'][i]}"
        ctx = visible() if i < n_visible else _nullcontext()
        with ctx:
            C.check_true(not isinstance(mine, str), f"summarise_unbacked on {where} raised {mine}",
                         hint="an empty set must give zeros, not an error: no reduction over an empty dimension")
            C.check_close(mine, want, name=f"summarise_unbacked on {where}",
                          hint="an empty set gives zeros (no NaN); a one-element set gives that row as mean and max")


@judge.probe("test_summarise_one_graph")
def probe_summarise_graph(seed):
    from torch._dynamo.decorators import mark_unbacked as _mark

    g = torch.Generator().manual_seed(seed + 62)
    runs = {}
    torch.manual_seed(3)
    visible_inputs = [torch.randn(L, 3) - 0.5 for L in set_sizes]
    # d >= 2: an empty tensor with a size-1 feature dimension can come with a stride of 0 there (a clone does it),
    # and the stride guard would then recompile whatever the answer does
    d = (2, 4, 5, 6)[int(torch.randint(0, 4, (), generator=g))]          # never the visible example's 3
    dtype = torch.float64 if int(torch.randint(0, 2, (), generator=g)) else torch.float32
    sizes = [int(v) for v in torch.randint(2, 40, (4,), generator=g)] + [0, 1, 0, 1]
    order = torch.randperm(len(sizes), generator=g).tolist()
    hidden_inputs = [torch.randn(sizes[i], d, generator=g, dtype=dtype) - 0.3 for i in order]
    for label, inputs in (("visible", visible_inputs), ("hidden", hidden_inputs)):
        torch._dynamo.reset()
        counter = CompileCounter()
        outs, err = [], None
        try:
            f = torch.compile(summarise_unbacked, backend=counter, fullgraph=True)
            for x in inputs:
                xm = x.clone()
                _mark(xm, 0)
                outs.append(f(xm))
        except Exception as e:  # noqa: BLE001
            err = _error_text(e)
        runs[label] = {"graphs": counter.count, "outs": outs, "error": err,
                       "sizes": [int(x.shape[0]) for x in inputs],
                       "expected": [_summary_expected(x) for x in inputs]}
    torch._dynamo.reset()
    return runs


@probe_summarise_graph.verdict
def _(got, ref):
    for label in ("visible", "hidden"):
        r, w = got[label], ref[label]
        ctx = visible() if label == "visible" else _nullcontext()
        with ctx:
            C.check_equal(r["error"], None, name=f"compiling summarise_unbacked with mark_unbacked ({label} sizes "
                                                 f"{w['sizes']}) raised",
                          hint="'Could not guard on data-dependent expression' names a question your code still asks "
                               "about the size; an error at size 0 means a reduction over an empty set")
            for i, (mine, want) in enumerate(zip(r["outs"], w["expected"])):
                C.check_close(mine, want, name=f"compiled summarise_unbacked, {label} set of size {w['sizes'][i]}")
            C.check_equal(r["graphs"], 1, name=f"graphs compiled for the {label} sizes {w['sizes']}",
                          hint="more than one graph: something was specialised on the size")


WHY['summarise_unbacked'] = "Nothing asks about the unbacked size: max(L, 1) gives a symbolic count, so the mean never divides by 0, and the extra -inf row keeps amax off an empty set, its -inf then replaced by 0. So one graph is right for every L, 0 and 1 included."
