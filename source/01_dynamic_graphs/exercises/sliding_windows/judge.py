"""Exercise 'sliding_windows' of 01_dynamic_graphs: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 1.5 · sliding_windows ------------------------------------------------------------------
# clause -> test
#   x of any dtype, at least one dimension ................................ test_sliding_windows_values (float32,
#                                                                           int64, float64, int32, bool, float16,
#                                                                           bfloat16, complex64, uint8; 1-D to 3-D)
#   any layout: non-contiguous, any storage offset, expanded (stride 0) ... test_sliding_windows_layouts (transposed,
#                                                                           offset slice, stride-0 leading and last
#                                                                           dims, permuted 3-D, stepped slice,
#                                                                           transposed slice), test_sliding_windows_view
#   shape (*x.shape[:-1], n, size); [..., i, j] is x[..., i*step + j] ..... test_sliding_windows_values (step < size,
#                                                                           == size, > size; size 1; size == L)
#   as many windows as fit; a partial last window is left out ............ test_sliding_windows_values (lengths
#                                                                           that do not divide), _layouts (a slice
#                                                                           whose storage goes on past its end)
#   size > L: 0 windows, shape (*x.shape[:-1], 0, size) ................... test_sliding_windows_edge_cases (1-D
#                                                                           and 2-D, counts that would be negative,
#                                                                           L = 0, no rows, int64: x's dtype kept)
#   a view of x, also with no window: shares x's storage ................. test_sliding_windows_view (5 layouts),
#                                                                           _layouts, _edge_cases (0 windows)
#   a view in torch's sense: _base is x's base (shares the version counter) test_sliding_windows_view (set_ on x's
#                                                                           storage shares memory, is no view)
#   every call starts afresh (no state across calls) ...................... test_sliding_windows_layouts (the same
#                                                                           shape twice, in two layouts)
#   element [..., i, j] is the memory of x[..., i*step + j]: writes reach x  test_sliding_windows_view (a write
#                                                                           through the last window, then undone),
#                                                                           _layouts (strides and offset where they
#                                                                           matter: dims longer than 1)
#   nothing is copied ..................................................... test_sliding_windows_view (storage),
#                                                                           the copying ops it ran are named
#   built from x's strides and offset; no Tensor.unfold ................... test_sliding_windows_view (the aten ops
#                                                                           of each call, logged by a dispatch mode)
#   x left as it was (shape, strides, offset, values) ..................... test_sliding_windows_view, _values
#   size < 1 or step < 1 raises ValueError ................................ test_sliding_windows_edge_cases (0 and
#                                                                           negative, each alone and together)

@judge.shared
def window_errors():
    """The exception types a verdict names (by their position here)."""
    return ("ValueError", "RuntimeError", "IndexError", "TypeError", "ZeroDivisionError", "AttributeError")


@judge.shared
def window_facts(x, size, step, ops=False):
    """Call sliding_windows(x, size, step) once; return what the verdicts compare (plain data) and the result."""
    from torch.utils._python_dispatch import TorchDispatchMode

    expected = (*x.shape[:-1], max(0, (x.shape[-1] - size) // step + 1), size)     # values are sent at this shape only
    before = (tuple(x.shape), x.stride(), x.storage_offset())
    values_before = x.clone()
    names = set()

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            names.add(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    if ops:
        with Log():
            status, out = attempt(lambda: sliding_windows(x, size, step))
    else:
        status, out = attempt(lambda: sliding_windows(x, size, step))
    # an exception as numbers the judge can name (the text the student's code raised is not shown in the hidden
    # tests): the index of its type in window_errors() (0: another type), and whether it said "out of bounds"
    kind = next((k for k, n in enumerate(window_errors(), 1) if str(out).startswith(n + ":")), 0) if status == "error" else -1
    facts = {"status": status, "error": kind, "bounds": status == "error" and "out of bounds" in str(out),
             "tensor": False, "dtype": None, "shape": None, "stride": None, "offset": None, "shares": None, "values": None,
             "base": None,
             "x_kept": (tuple(x.shape), x.stride(), x.storage_offset()) == before and torch.equal(x, values_before),
             "ops": ",".join(sorted(names))}
    if status == "ok" and type(out) is torch.Tensor:
        facts.update(tensor=True, dtype=out.dtype, shape=tuple(out.shape), stride=tuple(out.stride()), offset=out.storage_offset(),
                     shares=out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
                     base=out._base is (x if x._base is None else x._base))    # a view in torch's sense
        if facts["shape"] == expected:
            facts["values"] = out
    return facts, out


@judge.shared
def window_call(size, step, name):
    """How a verdict names one call: sliding_windows(<what x is>, size, step)."""
    return f"sliding_windows({name}, {size}, {step})"


def expect_windows(g, r, call, hint=None):
    """The checks every case shares: no exception, a plain tensor, the reference's shape; return the values."""
    if g["status"] != "ok":
        name = window_errors()[g["error"] - 1] if type(g["error"]) is int and 1 <= g["error"] <= 6 else "an exception"
        C.check_true(False, f"{call} raised {name}" + (" (the view would reach past the storage)" if g["bounds"] is True else ""),
                     hint=BOUNDS_HINT if g["bounds"] is True else (hint or "valid arguments must not raise: raise only "
                                                                     "for size < 1 or step < 1"))
    C.check_true(g["tensor"] is True, f"{call} returned something other than a torch.Tensor")
    C.check_equal(g["shape"], r["shape"], f"the shape of {call}",
                  hint="(*x.shape[:-1], number of windows, size); a window counts only if it fits entirely in x")
    C.check_equal(g["dtype"], r["dtype"], f"the dtype of {call}", hint="the windows are x's own elements: x's dtype")
    return g["values"]


def same_values(got, ref, call, hint=None):
    """Exact equality (the windows are x's own elements), complex dtypes compared as pairs of reals."""
    C.check_tensor(got, call, dtype=ref.dtype, hint="the windows keep x's dtype")
    if ref.is_complex():
        got, ref = torch.view_as_real(got), torch.view_as_real(ref)
    C.check_close(got, ref, name=call, rtol=0, atol=0,
                  hint=hint or "element [..., i, j] of the result is x[..., i * step + j]")


LAYOUT_HINT = ("take the strides from x.stride() and the offset from x.storage_offset(): strides computed from the "
               "shape describe a contiguous tensor, and an offset of 0 is the start of the storage, not of x")
BOUNDS_HINT = ("as_strided refuses a view that reaches past the end of the storage: count only the windows that fit "
               "entirely in x, and give strides and the offset in elements (not bytes), taken from x")
COPY_OPS = ("clone", "copy_", "_to_copy", "stack", "cat", "index", "empty", "empty_like", "new_empty")
COPY_HINT = "build one view on x's own storage (as_strided); clone, contiguous(), stack, cat and .numpy() copy or rewrap"


@judge.probe("test_sliding_windows_values")
def probe_windows_values(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.arange(20, dtype=torch.float32).reshape(2, 10)
    y = torch.arange(7)
    out = {"visible": [window_facts(x, 4, 3)[0], window_facts(y, 2, 2)[0]], "cases": []}
    specs = [((13,), torch.float64, 4, 1), ((3, 11), torch.int32, 3, 4), ((2, 3, 9), torch.bool, 3, 3),
             ((5, 7), torch.float16, 7, 2), ((2, 12), torch.bfloat16, 1, 5), ((4, 2, 10), torch.complex64, 5, 2),
             ((6, 16), torch.uint8, 8, 3), ((1, 9), torch.float32, 2, 7)]
    for shape, dtype, size, step in specs:
        if dtype == torch.bool:
            x = torch.randint(0, 2, shape, generator=gen).bool()
        elif dtype in (torch.int32, torch.uint8):
            x = torch.randint(0, 100, shape, generator=gen).to(dtype)
        elif dtype == torch.complex64:
            x = torch.complex(torch.randn(shape, generator=gen), torch.randn(shape, generator=gen))
        else:
            x = torch.randn(shape, generator=gen).to(dtype)
        out["cases"].append({"call": f"sliding_windows(x, {size}, {step}) for x of shape {shape}, "
                                     f"{str(dtype).replace('torch.', '')}", "facts": window_facts(x, size, step)[0]})
    return out


@probe_windows_values.verdict
def _(got, ref):
    with visible():
        g, r = got["visible"][0], ref["visible"][0]
        values = expect_windows(g, r, "sliding_windows(x, 4, 3) for x of shape (2, 10)")
        same_values(values, r["values"], "the windows of a (2, 10) tensor", hint="window i of a row is x[..., i * step : i * step + size]")
        g, r = got["visible"][1], ref["visible"][1]
        values = expect_windows(g, r, "sliding_windows(arange(7), 2, 2)")
        same_values(values, r["values"], "sliding_windows(arange(7), 2, 2)", hint="3 windows: one starting at 6 would need an 8th element")
    for g, r in zip(got["cases"], ref["cases"]):
        values = expect_windows(g["facts"], r["facts"], r["call"])
        same_values(values, r["facts"]["values"], r["call"])
    for g in [*got["visible"], *(c["facts"] for c in got["cases"])]:
        C.check_true(g["x_kept"] is True, "sliding_windows changed x itself (its shape, strides, offset or values)",
                     hint="leave x as it was: as_strided (no underscore) makes a new tensor; as_strided_ rewrites x")


@judge.probe("test_sliding_windows_view")
def probe_windows_view(seed):
    gen = torch.Generator().manual_seed(seed)

    def written_through(x, w, size, step, facts):
        """Write a new value through the last window's last element, read x where it should land, undo it."""
        if facts["values"] is None or w.numel() == 0 or not facts["x_kept"]:
            return None
        lead = tuple(n - 1 for n in x.shape[:-1])
        k = (w.shape[-2] - 1) * step + size - 1                  # that element's index in x's last dimension
        old = w[(*lead, -1, -1)].clone()
        new = ~old if x.dtype == torch.bool else old + 17
        w[(*lead, -1, -1)] = new
        landed = bool((x[(*lead, k)] == new).all())
        w[(*lead, -1, -1)] = old
        return landed

    out = {}
    x = torch.zeros(2, 8)
    facts, w = window_facts(x, 3, 2, ops=True)
    landed = None
    if facts["values"] is not None and x.shape == (2, 8):    # the notebook's own write: windows[1, 2, 0] is x[1, 4]
        w[1, 2, 0] = 5.0
        landed = x[1, 4].item() == 5.0
    out["visible"] = {"facts": facts, "landed": landed}
    base = torch.randn(6, 9, generator=gen, dtype=torch.float64)
    line = torch.arange(40, dtype=torch.float32)
    cases = [("a contiguous (6, 9) float64 x", base, 4, 2),
             ("x = base.t(), int64", (base * 10).long().t(), 3, 1),
             ("x = base[2:, 3:], float32 at storage offset 21", base.float()[2:, 3:], 2, 3),
             ("x = a row expanded to (3, 9)", base[1].expand(3, 9), 5, 2),
             ("x = arange(40.)[1::3], stride 3 at offset 1", line[1::3], 4, 3)]
    out["cases"] = []
    for name, x, size, step in cases:
        facts, w = window_facts(x, size, step, ops=True)
        out["cases"].append({"call": window_call(size, step, name), "facts": facts,
                             "landed": written_through(x, w, size, step, facts)})
    return out


def check_view(g, r, call):
    f, rf = g["facts"], r["facts"]
    expect_windows(f, rf, call)
    ran = f["ops"].split(",") if type(f["ops"]) is str else []
    C.check_true("unfold" not in ran, f"{call} called Tensor.unfold",
                 hint="the exercise is to build the view yourself from x's strides and storage offset: no unfold")
    copies = [op for op in COPY_OPS if op in ran]
    C.check_true(f["shares"] is True, f"{call} does not share x's storage: a copy"
                 + (f" (the ops it ran include {', '.join(copies)})" if copies else ""), hint=COPY_HINT)
    C.check_true(f["base"] is True, f"{call} shares x's memory but is not a view of x in torch's sense: its _base is "
                 "not x's base, so it does not share x's version counter and autograd does not see it as a view",
                 hint="a view-making op on x (as_strided, view, slicing...) records x as the base; pointing a new tensor "
                      "at x's storage (set_) does not")
    C.check_true(g["landed"] is True, f"{call}: a value written into the last window did not reach x where that "
                 "window element sits", hint="element [..., i, j] must be the memory of x[..., i * step + j]: " + LAYOUT_HINT)
    C.check_true(f["x_kept"] is True, f"{call} changed x itself (its shape, strides, offset or values)",
                 hint="leave x as it was: as_strided (no underscore) makes a new tensor; as_strided_ rewrites x")


@probe_windows_view.verdict
def _(got, ref):
    with visible():
        f = got["visible"]["facts"]
        call = "sliding_windows(zeros(2, 8), 3, 2)"
        expect_windows(f, ref["visible"]["facts"], call)
        C.check_true(f["shares"] is True, "the windows do not share x's storage: they are a copy", hint="build a view over x's storage; stack, cat, clone() and contiguous() copy")
        C.check_equal(f["stride"], (8, 2, 1), f"the strides of {call}",
                      hint="the next window is `step` elements of x further on, the next element in a window is one element further on: both are steps of x.stride(-1) storage positions")
        C.check_true(got["visible"]["landed"] is True, "writing into windows[1, 2, 0] did not change x[1, 4]", hint="the result must be a view of x itself, not of a copy of x")
    check_view(got["visible"], ref["visible"], "sliding_windows(zeros(2, 8), 3, 2)")
    for g, r in zip(got["cases"], ref["cases"]):
        check_view(g, r, r["call"])


@judge.probe("test_sliding_windows_layouts")
def probe_windows_layouts(seed):
    gen = torch.Generator().manual_seed(seed)
    vis_base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    visible = [window_facts(x, size, step)[0] for x, size, step in
               [(vis_base.t(), 3, 1), (vis_base[1:, 2:], 2, 2), (torch.arange(5.0).expand(3, 5), 2, 1)]]
    # distinct values everywhere, so equal values mean the very same storage element
    cube = torch.randperm(60, generator=gen).float().reshape(3, 4, 5)
    wide = torch.randperm(40, generator=gen).reshape(4, 10)
    tall = torch.randperm(40, generator=gen).double().reshape(5, 8)
    col = torch.randn(4, 1, generator=gen)
    cases = [("x = cube.permute(2, 0, 1), last stride 5", cube.permute(2, 0, 1), 2, 1),
             ("x = wide[:, 1::2], last stride 2 at offset 1", wide[:, 1::2], 3, 2),
             ("x = a column expanded to (4, 7), last stride 0", col.expand(4, 7), 3, 2),
             ("x = tall.t()[1:], stride (1, 8) at offset 1", tall.t()[1:], 2, 2),
             ("x = wide[:, 2:9], whose storage goes on past its end", wide[:, 2:9], 3, 3),
             ("x = arange(30.)[7:25], 1-D at offset 7", torch.arange(30.0)[7:25], 5, 4),
             # the same shape twice in a row, in two layouts: nothing may be remembered from the first call
             ("x = a contiguous (4, 6)", torch.randperm(24, generator=gen).float().reshape(4, 6), 3, 1),
             ("x = a (6, 4) transposed: shape (4, 6) again, strides (1, 4)",
              torch.randperm(24, generator=gen).float().reshape(6, 4).t(), 3, 1)]
    return {"visible": visible,
            "cases": [{"call": window_call(size, step, name), "facts": window_facts(x, size, step)[0]}
                      for name, x, size, step in cases]}


def check_layout(g, r, call):
    values = expect_windows(g, r, call, hint=LAYOUT_HINT)
    same_values(values, r["values"], call, hint=LAYOUT_HINT)
    C.check_true(g["shares"] is True, f"{call} does not share x's storage", hint=COPY_HINT)
    # strides matter only along dimensions longer than 1, the offset only when there is an element to place
    dims = [k for k, n in enumerate(r["shape"]) if n > 1]
    got_strides = tuple(g["stride"][k] for k in dims)
    want = tuple(r["stride"][k] for k in dims)
    C.check_true(got_strides == want, f"{call}: strides {g['stride']}, expected {r['stride']} (along the dimensions "
                 "longer than 1)", hint=LAYOUT_HINT)
    C.check_true(0 in r["shape"] or g["offset"] == r["offset"],
                 f"{call}: storage offset {g['offset']}, expected {r['offset']}", hint=LAYOUT_HINT)


@probe_windows_layouts.verdict
def _(got, ref):
    names = ["sliding_windows(base.t(), 3, 1)", "sliding_windows(base[1:, 2:], 2, 2)",
             "sliding_windows(arange(5.).expand(3, 5), 2, 1)"]
    with visible():
        for g, r, call in zip(got["visible"], ref["visible"], names):
            values = expect_windows(g, r, call, hint=LAYOUT_HINT)
            same_values(values, r["values"], call, hint="take the strides from x.stride() and the offset from x.storage_offset(): strides computed from the shape assume a contiguous x, and offset 0 is the start of the storage")
            C.check_true(g["shares"] is True, f"the windows of {call} do not share its storage", hint="no contiguous(), clone() or stack: build the view on x itself")
    for g, r in zip(got["visible"], ref["visible"]):
        check_layout(g, r, "one of the visible layouts")
    for g, r in zip(got["cases"], ref["cases"]):
        check_layout(g["facts"], r["facts"], r["call"])


@judge.probe("test_sliding_windows_edge_cases")
def probe_windows_edges(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.arange(5.0)

    def raised(size, step, on=x):
        """1 for ValueError, another window_errors() position for those types, 0 for others, -1: no exception."""
        status, value = attempt(lambda: sliding_windows(on, size, step))
        return next((k for k, n in enumerate(window_errors(), 1) if value.startswith(n + ":")), 0) if status == "error" else -1

    visible = {"too_long": window_facts(x, 8, 1)[0], "whole": window_facts(x, 5, 2)[0],
               "errors": [raised(0, 1), raised(2, 0)]}
    m = torch.randn(3, 4, generator=gen)
    cases = [("x of shape (3, 4), size 9, step 2: no window fits", m, 9, 2),
             ("arange(5.), size 6, step 1: no window fits", x, 6, 1),
             ("x of shape (2, 0), size 1, step 1: L = 0", torch.zeros(2, 0), 1, 1),
             ("x of shape (6,), size 2, step 10: one window", torch.randn(6, generator=gen), 2, 10),
             ("arange(5.), size 6, step 3: no window fits (one short by less than a step)", x, 6, 3),
             ("x of shape (3, 4), size 5, step 2: no window fits", m, 5, 2),
             ("x of shape (3, 1), size 1, step 1", torch.randn(3, 1, generator=gen), 1, 1),
             ("x of shape (3, 4), size 4, step 4: one window", m, 4, 4),
             ("x of shape (0, 6), size 2, step 2: no rows", torch.zeros(0, 6, dtype=torch.int16), 2, 2),
             ("an int64 x of shape (2, 3), size 7, step 1: no window fits", torch.arange(6).reshape(2, 3), 7, 1)]
    return {"visible": visible,
            "cases": [{"call": name, "facts": window_facts(t, size, step)[0]} for name, t, size, step in cases],
            "errors": [raised(s, k, m) for s, k in ((-1, 1), (2, -3), (0, 0), (-2, -2))],
            "after": window_facts(m, 2, 1)[0]}


def raised_name(code):
    if type(code) is not int or code < -1 or code > 6:
        return "something unexpected"
    return "no exception" if code == -1 else "another exception" if code == 0 else window_errors()[code - 1]


@probe_windows_edges.verdict
def _(got, ref):
    with visible():
        v, rv = got["visible"], ref["visible"]
        expect_windows(v["too_long"], rv["too_long"], "sliding_windows(arange(5.), 8, 1)", hint="no window fits: the count is 0, never negative")
        same_values(expect_windows(v["whole"], rv["whole"], "sliding_windows(arange(5.), 5, 2)"), rv["whole"]["values"],
                    "sliding_windows(arange(5.), 5, 2): one window, all of x")
        for e, call in zip(v["errors"], ("size=0, step=1", "size=2, step=0")):
            C.check_true(e == 1, f"sliding_windows(x, {call}): expected ValueError, got {raised_name(e)}",
                         hint="check the arguments first: raise ValueError when size < 1 or step < 1")
    for g, r in zip(got["cases"], ref["cases"]):
        g, r, call = g["facts"], r["facts"], r["call"]
        values = expect_windows(g, r, f"sliding_windows on {call}", hint="no window fits when size > L: return 0 windows "
                                "(the count is never negative), still as a view of x")
        if r["values"] is not None and r["values"].numel():
            same_values(values, r["values"], f"sliding_windows on {call}")
        if r["shares"] is True:
            C.check_true(g["shares"] is True, f"sliding_windows on {call}: the result does not share x's storage",
                         hint="a result without windows is still a view of x: the same call that builds the windows "
                              "builds it, with a count of 0")
    for e, (size, step) in zip(got["errors"], ((-1, 1), (2, -3), (0, 0), (-2, -2))):
        C.check_true(e == 1, f"sliding_windows(x, size={size}, step={step}): expected ValueError, got {raised_name(e)}",
                     hint="raise ValueError when size < 1 or step < 1, whatever x is")
    values = expect_windows(got["after"], ref["after"], "sliding_windows(x, 2, 1) after the calls that raised")
    same_values(values, ref["after"]["values"], "sliding_windows(x, 2, 1) after the calls that raised")


WHY['sliding_windows'] = "Element [..., i, j] is x[..., i * step + j], which sits (i * step + j) * s storage positions past x[..., 0] (s = x.stride(-1)): so the window dimension steps step * s, the position in a window s, the leading dimensions keep x's strides and window 0 starts at x's own storage offset. as_strided with exactly these is a view on any layout (transposed, offset, stride 0); max(0, ...) makes no window a count of 0, and floor division leaves a partial window out."
