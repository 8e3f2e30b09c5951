"""Exercise 'matmul_flops' of 01_dynamic_graphs: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 1.6 · matmul_flops ---------------------------------------------------------------------
# clause -> test
#   calls fn(*args) exactly once ........................................... test_matmul_flops_own_mode (a spy fn
#                                                                             counts its calls)
#   inside a TorchDispatchMode subclass of your own ........................ test_matmul_flops_own_mode (the spy reads
#                                                                             the active dispatch mode from inside fn)
#   returns a plain dict (not a defaultdict or Counter); fn's result unused  every cell (type(result) is dict)
#   fn may run a forward, or a forward and backward() ...................... test_matmul_flops_values (forward only),
#                                                                             test_matmul_flops_backward
#   counts every mm / addmm / bmm, wherever it comes from (Linear, @,
#   matmul, einsum, backward) ............................................... test_matmul_flops_values (Linear 2-D and
#                                                                             3-D, no bias, einsum, 4-D matmul, addmm
#                                                                             with beta, a transposed operand),
#                                                                             test_matmul_flops_backward (4 models)
#   no other op is counted (only the .default overloads) .................. test_matmul_flops_fresh (no product: {}),
#                                                                             _values (exact dicts: mv, dot absent;
#                                                                             addmm_, mm.out and baddbmm not counted)
#   key = str(op); value = int total of that overload ...................... test_matmul_flops_values (exact dicts,
#                                                                             int values)
#   2*M*K*N; bmm B times that; addmm its product only ...................... test_matmul_flops_values (M, K, N all
#                                                                             different, drawn per seed),
#                                                                             test_matmul_flops_backward
#   agrees with FlopCounterMode op for op .................................. test_matmul_flops_backward (visible: against
#                                                                             FlopCounterMode; hidden: the reference)
#   one key per overload that ran, also with 0 FLOPs; fn without products {} test_matmul_flops_fresh (a 0-row batch
#                                                                             gives {"aten.addmm.default": 0})
#   any float dtype, any sizes ............................................. test_matmul_flops_values (float32 and
#                                                                             float64, sizes drawn per seed, and an mm
#                                                                             of 3,000,001+ squared on the meta device:
#                                                                             FLOPs past 2**63)
#   each call starts afresh; a returned dict is the caller's ............... test_matmul_flops_fresh (a bmm call, then
#                                                                             an mm call: only mm; an earlier result
#                                                                             unchanged by a later call; a call nested
#                                                                             in fn: the outer counts both, the inner
#                                                                             its own)
#   fn raises: the same exception, and the mode is no longer active ........ test_matmul_flops_fresh (KeyError after an
#                                                                             mm; the mode stack is empty afterwards,
#                                                                             and the next call counts right; the very
#                                                                             object arrives, for a ValueError and for
#                                                                             a BaseException that is no Exception)
#   FlopCounterMode / torch.utils.flop_counter / the profiler not allowed .. test_matmul_flops_own_mode (they raise
#                                                                             while the probe runs)

@judge.shared
def flops_of(fn, *args):
    """matmul_flops(fn, *args) as plain data: ("ok", [[key, value], ...] sorted), ("type", name) or ("error", text)."""
    status, out = attempt(lambda: matmul_flops(fn, *args))
    if status != "ok":
        return (status, out)
    if type(out) is not dict:                # the statement asks for a plain dict
        return ("type", type(out).__name__)
    items = [[k if type(k) is str else f"<a {type(k).__name__} key>", v if type(v) is int else f"<a {type(v).__name__}>"]
             for k, v in out.items()]
    return ("ok", sorted(items, key=lambda kv: str(kv[0])))


@judge.shared
def flops_sizes(seed, count):
    """count sizes from 2 to 9, drawn from the seed (distinct where it matters: M, K and N differ)."""
    gen = torch.Generator().manual_seed(seed)
    return [int(v) for v in (torch.randperm(8, generator=gen)[:count] + 2)]


def expect_flops(result, what, hint=None):
    """The student's dict as {key: value}, or fail saying what came back instead."""
    C.check_true(type(result) in (tuple, list) and len(result) == 2, f"{what}: malformed result")
    status, value = result
    C.check_true(status != "error", f"{what} raised {value}", hint=hint)
    C.check_true(status != "type", f"{what} returned a {value}, not a plain dict", hint="return the dict of totals; convert a defaultdict or Counter with dict(...)")
    out = {}
    for k, v in value:
        C.check_true(type(v) is int, f"{what}: the value under {k!r} is {v}, not a Python int",
                     hint="FLOPs are counts: add Python ints (shape entries are ints already)")
        out[k] = v
    return out


def same_flops(got, ref, what, hint=None):
    g, r = expect_flops(got, what, hint), expect_flops(ref, what)
    C.check_equal(sorted(g), sorted(r), f"the keys of {what}", hint=hint or "one key per overload that ran: "
                  "'aten.mm.default', 'aten.addmm.default', 'aten.bmm.default'; no other op")
    for k in r:
        C.check_equal(g[k], r[k], f"{what}[{k!r}]", hint=hint or "2 * M * K * N per product, B times that for bmm; "
                      "addmm's first argument is the bias, its product is the last two")


@judge.probe("test_matmul_flops_values")
def probe_flops_values(seed):
    import torch.nn as tnn
    torch.manual_seed(seed)
    d0, d1, d2, d3, b = flops_sizes(seed + 101, 5)
    out = {"visible": [flops_of(tnn.Sequential(tnn.Linear(4, 8), tnn.ReLU(), tnn.Linear(8, 2)), torch.randn(3, 4)),
                       flops_of(torch.matmul, torch.randn(2, 3, 4), torch.randn(2, 4, 5))]}
    mlp = tnn.Sequential(tnn.Linear(d0, d1), tnn.ReLU(), tnn.Linear(d1, d2, bias=False)).double()
    lin = tnn.Linear(d0, d3)
    cases = [(f"an MLP Linear({d0}, {d1}), ReLU, Linear({d1}, {d2}, bias=False) in float64 on {b} rows",
              mlp, (torch.randn(b, d0, dtype=torch.float64),)),
             (f"Linear({d0}, {d3}) on a ({b}, 3, {d0}) input", lin, (torch.randn(b, 3, d0),)),
             (f"einsum('bij,bjk->bik') of ({b}, {d0}, {d1}) and ({b}, {d1}, {d2})",
              lambda p, q: torch.einsum("bij,bjk->bik", p, q), (torch.randn(b, d0, d1), torch.randn(b, d1, d2))),
             (f"a 4-D matmul ({b}, 2, {d0}, {d1}) @ ({b}, 2, {d1}, {d3})", torch.matmul,
              (torch.randn(b, 2, d0, d1), torch.randn(b, 2, d1, d3))),
             (f"torch.addmm(bias, m1, m2, beta=0.5) with m1 ({d1}, {d2}) and m2 ({d2}, {d0})",
              lambda c, p, q: torch.addmm(c, p, q, beta=0.5), (torch.randn(d0), torch.randn(d1, d2), torch.randn(d2, d0))),
             (f"a.t() @ m for a ({d2}, {d3}) and m ({d2}, {d0}), then a matrix-vector product",
              lambda p, q, v: (p.t() @ q) @ v, (torch.randn(d2, d3), torch.randn(d2, d0), torch.randn(d0))),
             (f"an in-place addmm_, mm(out=...) and baddbmm (none counted), then one ({d1}, {d0}) @ ({d0}, {d2}) mm",
              other_products_then_mm, (torch.randn(d1, d0), torch.randn(d0, d2)))]
    out["cases"] = [{"name": name, "flops": flops_of(fn, *args)} for name, fn, args in cases]
    n = 3_000_001 + seed % 1000              # 2 * n**3 FLOPs: past 2**63, so a fixed-width integer wraps around
    huge = torch.empty(n, n, device="meta")  # the meta device: shapes only, no memory
    out["cases"].append({"name": f"a ({n}, {n}) @ ({n}, {n}) product on the meta device", "flops": flops_of(torch.mm, huge, huge)})
    return out


@judge.shared
def other_products_then_mm(p, q):
    """Three products that are other ops or overloads than the three counted (aten.addmm_.default, aten.mm.out,
    aten.baddbmm.default), then one aten.mm.default."""
    acc = torch.zeros(p.shape[0], q.shape[1])
    acc.addmm_(p, q)
    torch.mm(p, q, out=torch.empty(p.shape[0], q.shape[1]))
    torch.baddbmm(torch.zeros(1, p.shape[0], q.shape[1]), p[None], q[None])
    return p @ q


@probe_flops_values.verdict
def _(got, ref):
    with visible():
        first = expect_flops(got["visible"][0], "matmul_flops(mlp, x), x of shape (3, 4)")
        C.check_equal(first, expect_flops(ref["visible"][0], "the MLP"), "matmul_flops(mlp, x) for x of shape (3, 4)", hint="each Linear with a bias is one addmm; count 2 * M * K * N for its (M, K) @ (K, N) product")
        same_flops(got["visible"][1], ref["visible"][1], "matmul_flops(torch.matmul, a, b) for shapes (2, 3, 4) and (2, 4, 5)", hint="bmm: B times 2 * M * K * N")
    for g, r in zip(got["cases"], ref["cases"]):
        same_flops(g["flops"], r["flops"], f"matmul_flops on {r['name']}")


@judge.probe("test_matmul_flops_backward")
def probe_flops_backward(seed):
    import torch.nn as tnn
    torch.manual_seed(seed + 7)
    d0, d1, d2, d3, b = flops_sizes(seed + 211, 5)
    visible_mlp = tnn.Sequential(tnn.Linear(6, 5), tnn.Tanh(), tnn.Linear(5, 3))
    out = {"visible": flops_of(lambda inp: visible_mlp(inp).sum().backward(), torch.randn(7, 6))}
    mlp = tnn.Sequential(tnn.Linear(d0, d1), tnn.Tanh(), tnn.Linear(d1, d2)).double()
    deep = tnn.Sequential(tnn.Linear(d0, d1, bias=False), tnn.ReLU(), tnn.Linear(d1, d3))

    def twice(inp):                  # two backward passes over one graph, inside one fn
        loss = deep(inp).square().sum()
        loss.backward(retain_graph=True)
        loss.backward()

    def attention_like(q, k):
        (torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ k).sum().backward()

    cases = [(f"forward and backward of Linear({d0}, {d1}), Tanh, Linear({d1}, {d2}) in float64, x requires grad",
              lambda inp: mlp(inp).sum().backward(), (torch.randn(b, d0, dtype=torch.float64, requires_grad=True),)),
             (f"two backward() calls through Linear({d0}, {d1}, bias=False), ReLU, Linear({d1}, {d3})",
              twice, (torch.randn(b, d0),)),
             (f"q @ k^T, softmax, @ k and backward, q ({b}, {d1}, {d0}), k ({b}, {d2}, {d0}), both require grad",
              attention_like, (torch.randn(b, d1, d0, requires_grad=True), torch.randn(b, d2, d0, requires_grad=True))),
             (f"Linear({d0}, {d2}) on a ({b}, 2, {d0}) input, forward and backward",
              lambda inp: mlp[0](inp.double()).sum().backward(), (torch.randn(b, 2, d0),))]
    out["cases"] = [{"name": name, "flops": flops_of(fn, *args)} for name, fn, args in cases]
    return out


@probe_flops_backward.verdict
def _(got, ref):
    with visible():
        same_flops(got["visible"], ref["visible"], "matmul_flops(forward and backward of an MLP)", hint="backward() runs inside fn, so its aten ops pass through your mode too: mm for the gradients")
    for g, r in zip(got["cases"], ref["cases"]):
        same_flops(g["flops"], r["flops"], f"matmul_flops on {r['name']}",
                   hint="the ops backward() runs (mm, bmm for the gradients) pass through the mode that is active "
                        "when it runs: count them like the forward's")


@judge.probe("test_matmul_flops_own_mode")
def probe_flops_own_mode(seed):
    import torch.nn.functional as tF
    import torch.profiler as tprof
    import torch.autograd.profiler as aprof
    import torch.utils.flop_counter as fc
    from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode

    d0, d1, d2, b = flops_sizes(seed + 307, 4)
    gen = torch.Generator().manual_seed(seed + 308)
    w = torch.randn(d1, d0, generator=gen, requires_grad=True)
    m = torch.randn(b, d2, d1, generator=gen)
    seen = {"calls": 0, "modes": []}

    def spy(x):
        seen["calls"] += 1
        mode = _get_current_dispatch_mode()
        seen["modes"].append([type(mode).__name__, isinstance(mode, TorchDispatchMode)])
        (m @ tF.linear(x, w).unsqueeze(-1)).sum().backward()

    def refuse(*a, **k):
        raise RuntimeError("not allowed in matmul_flops (the statement rules it out)")

    registry = dict(fc.flop_registry)
    saved = [(fc.FlopCounterMode, "__init__", fc.FlopCounterMode.__init__),
             (tprof.profile, "__init__", tprof.profile.__init__), (aprof.profile, "__init__", aprof.profile.__init__)]
    saved += [(fc, n, getattr(fc, n)) for n in ("mm_flop", "addmm_flop", "bmm_flop", "baddbmm_flop", "_FlopCounterMode")]
    try:
        for owner, name, _ in saved:
            setattr(owner, name, refuse)
        fc.flop_registry.clear()
        flops = flops_of(spy, torch.randn(b, d0, generator=gen))
    finally:
        for owner, name, old in saved:
            setattr(owner, name, old)
        fc.flop_registry.update(registry)
    return {"calls": seen["calls"], "modes": seen["modes"], "flops": flops}


@probe_flops_own_mode.verdict
def _(got, ref):
    what = "matmul_flops(fn) where fn runs linear, a batched matmul and backward"
    C.check_equal(got["calls"], 1, f"how many times {what} called fn",
                  hint="one call: fn(*args) inside your mode; count while it runs instead of running it again")
    name, is_mode = got["modes"][0] if got["modes"] else ("?", False)
    C.check_true(is_mode is True and name not in ("_FlopCounterMode", "NoneType"),
                 f"inside fn, the active dispatch mode was {name}: the count must come from a TorchDispatchMode "
                 "subclass of your own", hint="a TorchFunctionMode, the profiler or FlopCounterMode is not what the "
                 "statement asks for: subclass torch.utils._python_dispatch.TorchDispatchMode")
    same_flops(got["flops"], ref["flops"], what, hint="with FlopCounterMode and the flop_counter formulas unavailable, "
               "the count must come from your own mode and your own formula")


@judge.probe("test_matmul_flops_fresh")
def probe_flops_fresh(seed):
    import torch.nn as tnn
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    torch.manual_seed(seed + 11)
    d0, d1, d2, b = flops_sizes(seed + 401, 4)
    leaf = torch.randn(b, d0, requires_grad=True)
    out = {"none_visible": flops_of(lambda t: (t * 2).relu().sum(), torch.randn(4)),
           "none": flops_of(lambda t: (t.exp() * t).sum().backward(), leaf),
           "empty": flops_of(tnn.Linear(d0, d1), torch.randn(0, d0)),
           "first": flops_of(torch.bmm, torch.randn(b, d0, d1), torch.randn(b, d1, d2)),
           "second": flops_of(torch.mm, torch.randn(d2, d0), torch.randn(d0, d1))}

    def fails(t):
        t @ t
        raise KeyError("raised by fn")

    raised = flops_of(fails, torch.randn(d0, d0))
    out["raised"] = raised[0] == "error" and str(raised[1]).startswith("KeyError:")
    out["raised_what"] = raised[1].split(":")[0][:60] if raised[0] == "error" else f"no error ({raised[0]})"

    def pop_modes():                         # leave no student mode behind for the checks after this one
        from torch.utils._python_dispatch import _pop_mode
        left = _get_current_dispatch_mode()
        while _get_current_dispatch_mode() is not None:
            _pop_mode()
        return None if left is None else type(left).__name__

    out["left"] = pop_modes()
    out["after"] = flops_of(torch.mm, torch.randn(d1, d2), torch.randn(d2, d0))

    class StopNow(BaseException):            # not an Exception: what KeyboardInterrupt and SystemExit are
        pass

    for name, exc in (("same_error", ValueError("raised by fn")), ("base_error", StopNow("stop"))):
        def raises(t, exc=exc):
            t @ t
            raise exc
        try:
            matmul_flops(raises, torch.randn(d1, d1))
            out[name] = "no error"
        except BaseException as caught:      # noqa: BLE001 - the check is which object arrives
            out[name] = "same" if caught is exc else f"another {type(caught).__name__} object"
        out[name + "_left"] = pop_modes()

    # An earlier result stays as it was returned, and a call inside fn is a call of its own: the outer call counts
    # every product that ran during it (the inner one's included), the inner call only its own.
    first = attempt(lambda: matmul_flops(torch.mm, torch.randn(d0, d1), torch.randn(d1, d2)))
    kept = dict(first[1]) if first[0] == "ok" and isinstance(first[1], dict) else None
    attempt(lambda: matmul_flops(torch.bmm, torch.randn(b, d2, d0), torch.randn(b, d0, d1)))
    out["kept"] = ("not a dict" if kept is None else
                   "same" if isinstance(first[1], dict) and first[1] == kept else f"now {sorted(first[1].items())[:3]}")
    inner = {}

    def calls_itself(p, q):
        inner["flops"] = flops_of(torch.mm, p, q)
        return p @ q

    out["nested_outer"] = flops_of(calls_itself, torch.randn(d2, d1), torch.randn(d1, d0))
    out["nested_inner"] = inner.get("flops", ("error", "fn was not called"))
    pop_modes()
    return out


@probe_flops_fresh.verdict
def _(got, ref):
    with visible():
        C.check_equal(expect_flops(got["none_visible"], "matmul_flops(fn with no matmul)"), {},
                      "matmul_flops(fn that runs no mm, addmm or bmm)", hint="only mm, addmm and bmm get keys, and only when they ran")
    same_flops(got["none"], ref["none"], "matmul_flops(elementwise ops and their backward)",
               hint="only mm, addmm and bmm are counted: a fn without them gives {}")
    same_flops(got["empty"], ref["empty"], "matmul_flops(Linear on a batch of 0 rows)",
               hint="the addmm still runs, with 0 FLOPs: its key is there, with 0")
    same_flops(got["first"], ref["first"], "matmul_flops(torch.bmm, a, b)")
    same_flops(got["second"], ref["second"], "matmul_flops(torch.mm, ...) right after a bmm call",
               hint="each call starts from an empty dict of its own: nothing from an earlier call")
    C.check_true(got["raised"] is True, f"matmul_flops(fn that raises KeyError) gave {got['raised_what']}, not the KeyError",
                 hint="let fn's exception through unchanged: no except that swallows or wraps it")
    C.check_true(got["left"] is None, f"after fn raised, the dispatch mode {got['left']} was still active",
                 hint="a `with` block leaves the mode even when fn raises; __enter__ without __exit__ does not")
    same_flops(got["after"], ref["after"], "matmul_flops(torch.mm, ...) after a call whose fn raised")
    for name, what in (("same_error", "a ValueError"), ("base_error", "an exception that is not an Exception (like KeyboardInterrupt)")):
        C.check_true(got[name] == "same", f"fn raised {what}; the caller got {got[name]}, not that same exception object",
                     hint="let the exception through untouched: no except that wraps, copies or swallows it")
        C.check_true(got[name + "_left"] is None, f"after fn raised {what}, the dispatch mode {got[name + '_left']} was still active",
                     hint="a `with` block leaves the mode whatever fn raises; an except clause only catches what it names")
    C.check_true(got["kept"] == "same", f"a dict returned earlier changed when matmul_flops was called again ({got['kept']})",
                 hint="each call builds and returns a dict of its own; never clear and reuse one shared dict")
    same_flops(got["nested_outer"], ref["nested_outer"], "matmul_flops(fn) whose fn calls matmul_flops itself, then runs one mm",
               hint="the outer call counts every product that runs during its fn, the inner call's too")
    same_flops(got["nested_inner"], ref["nested_inner"], "the inner matmul_flops call, made inside another call's fn",
               hint="the inner call counts only the products of its own fn")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.


WHY['matmul_flops'] = "A TorchDispatchMode sits below autograd, so it sees F.linear as addmm and every mm/bmm that backward() runs. Each product's FLOPs come from its last two arguments (addmm's first is the bias): 2*M*K*N, times B for bmm. The dict is local to the call, and `with` pops the mode even when fn raises."
