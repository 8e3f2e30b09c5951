"""Hidden tests of Chapter 1, judged outside the student's kernel (instructor side: never released).

Each grade cell of 01_dynamic_graphs.ipynb has one probe here (it runs with
the notebook's names, in the student's sandbox and in the reference worker)
and one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; any
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from explicit generators (or before the first call
into student code), and catch the student's exceptions where a clear message
helps more than a traceback. A hint that a verdict shares with the visible
test of its cell stays on the line of its check: no line of this file may
equal a line of the released notebook (tests/test_chapters.py reads the
feedback for judge lines).
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


@judge.shared
def attempt(fn):
    """Run fn(); return ("ok", value) or ("error", "Type: message") (shipped with every probe)."""
    try:
        return ("ok", fn())
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        return ("error", f"{type(err).__name__}: {str(err)[:300]}")


def expect_ok(result, what, hint=None):
    """Fail with the student's exception if ``result`` (from attempt) is an error; else return the value."""
    C.check_type(result, (tuple, list), what)
    C.check_true(len(result) == 2 and result[0] in ("ok", "error"), f"{what}: malformed result")
    if result[0] == "error":
        C.check_true(False, f"{what} raised {result[1]}", hint=hint)
    return result[1]


# --- Exercise 1.1 · AdaptiveDepthNet ---------------------------------------------------------------
# clause -> test
#   stops after the first application whose change is strictly below tol ... test_adaptive_depth_values
#                                                                             (trajectories), _data_dependent
#   change = 2-norm of (output - input) over the whole tensor ............. test_adaptive_depth_values
#                                                                             (halving block on 4 rows)
#   returns a tuple (h, steps); h is the last application's output ......... test_adaptive_depth_values
#   steps is a Python int from 1 to max_steps ............................. test_adaptive_depth_values,
#                                                                             test_adaptive_depth_max_steps
#   the block runs exactly steps times ..................................... test_adaptive_depth_max_steps
#   tol <= 0 never stops early, even when a step changes nothing ........... test_adaptive_depth_max_steps
#                                                                             (ReLU on x >= 0, tol=0 and tol=-1)
#   x may have any shape the block accepts ................................. test_adaptive_depth_values (2-D, 3-D,
#                                                                             one row, float64)
#   gradients flow through every application, to the params and to x ...... test_adaptive_depth_gradients
#   the block is a registered submodule .................................... test_adaptive_depth_module
#   every call starts afresh (same input -> same result) ................... test_adaptive_depth_module (also
#                                                                             after calls that hit max_steps)
#   near tol, rounding may stop either way (relative 1e-4) ................ test_adaptive_depth_values,
#                                                                             _data_dependent (the window)

@judge.probe("test_adaptive_depth_values")
def probe_adaptive_values(seed):
    gen = torch.Generator().manual_seed(seed)
    specs = [(3, 0.3, 1e-2, (5, 3), torch.float32), (4, 0.45, 1e-3, (2, 3, 4), torch.float32),
             (5, 0.6, 1e-4, (1, 5), torch.float32), (6, 0.75, 1e-5, (4, 6), torch.float64)]
    inputs = []
    for i, (dim, gain, tol, shape, dtype) in enumerate(specs):
        block = contraction_block(dim, gain=gain, seed=(seed + i) % 1000).to(dtype)
        x = (torch.randn(*shape, generator=gen) * (1 + i)).to(dtype)
        deltas, hs, h = [], [], x
        with torch.no_grad():                          # the trajectory, computed here, not by the student
            for _ in range(50):
                new = block(h)
                deltas.append(float(torch.linalg.vector_norm((new - h).double())))
                hs.append(new)
                h = new
        inputs.append((block, x, tol, deltas, hs))
    # Four rows of ones through the halving block: the whole-tensor norm is twice one row's norm, so a per-row
    # (or averaged) norm stops one step early: 3.46 / 2**9 < 0.01 but 1.73 / 2**8 < 0.01 already.
    halving_x = torch.ones(4, 3)
    out = {"visible": AdaptiveDepthNet(halving_block(4), tol=0.01, max_steps=30)(torch.ones(2, 4)),
           "halving": AdaptiveDepthNet(halving_block(3), tol=0.01, max_steps=30)(halving_x),
           "cases": []}
    for block, x, tol, deltas, hs in inputs:
        out["cases"].append({"tol": tol, "shape": tuple(x.shape), "dtype": str(x.dtype), "deltas": deltas, "hs": hs,
                             "out": attempt(lambda: AdaptiveDepthNet(block, tol=tol, max_steps=50)(x))})
    return out


def check_pair(res, name):
    C.check_type(res, tuple, name, hint="forward returns the tuple (h, steps)")
    C.check_equal(len(res), 2, f"number of values returned by {name}", hint="forward returns the tuple (h, steps)")
    h, n = res
    C.check_true(type(n) is int, f"{name}: steps should be a Python int, got {C.describe(n)}", hint="count with a plain Python integer (steps += 1), not a tensor")
    return h, n


@probe_adaptive_values.verdict
def _(got, ref):
    with visible():
        h, n = check_pair(got["visible"], "AdaptiveDepthNet(halving_block(4), tol=0.01)(ones(2, 4))")
        C.check_equal(n, 9, "steps for ones(2, 4), tol=0.01",
                      hint="the change is the norm of (new - h) over the WHOLE tensor, compared with < tol")
        C.check_close(h, ref["visible"][0], name="h after 9 halvings")
    h, n = check_pair(got["halving"], "AdaptiveDepthNet(halving_block(3), tol=0.01)(ones(4, 3))")
    C.check_equal(n, ref["halving"][1], "steps for ones(4, 3) through the halving block, tol=0.01",
                  hint="take the norm over the whole tensor (all rows together), not per row or averaged")
    C.check_close(h, ref["halving"][0], name="h for ones(4, 3)")
    for g, r in zip(got["cases"], ref["cases"]):
        where = f"(x of shape {r['shape']}, {r['dtype']}, tol={r['tol']:g})"
        h, n = check_pair(expect_ok(g["out"], f"AdaptiveDepthNet(...)(x) {where}"), f"forward {where}")
        deltas, tol = r["deltas"], r["tol"]
        first = next((k + 1 for k, d in enumerate(deltas) if d < tol), len(deltas))
        C.check_true(1 <= n <= len(deltas), f"steps={n} {where}: expected {first} (max_steps=50)")
        # Different norm implementations round differently: accept a stop within 1e-4 of tol either way.
        early = any(d < tol * (1 - 1e-4) for d in deltas[:n - 1])
        late = n < len(deltas) and deltas[n - 1] >= tol * (1 + 1e-4)
        C.check_true(not early and not late,
                     f"steps {where}: expected {first}, got {n}. The change of application {n} was "
                     f"{deltas[n - 1]:.3g}" + (f", of application {first} {deltas[first - 1]:.3g}" if first != n else ""),
                     hint="stop after the FIRST application whose change (norm of new - h over the whole tensor) "
                          "is strictly below tol")
        C.check_close(h, r["hs"][n - 1], name=f"h {where}", rtol=1e-5, atol=1e-6,
                      hint="return the output of the last application of the block")


@judge.probe("test_adaptive_depth_data_dependent")
def probe_adaptive_data_dependent(seed):
    block = contraction_block(6, gain=0.6, seed=7)
    fixed = torch.zeros(1, 6)
    for _ in range(200):                      # the block's fixed point, by brute force
        fixed = block(fixed).detach()
    gen = torch.Generator().manual_seed(seed)
    starts = [fixed + scale * torch.randn(1, 6, generator=gen) for scale in (0.0, 1e-3, 0.1, 3.0)]
    deltas = []
    with torch.no_grad():                     # each start's trajectory, computed here (the judge reads ref's)
        for s in starts:
            h, row = s, []
            for _ in range(60):
                new = block(h)
                row.append(float(torch.linalg.vector_norm((new - h).double())))
                h = new
            deltas.append(row)
    visible_counts = [AdaptiveDepthNet(halving_block(4), tol=1e-3, max_steps=40)(s * torch.ones(1, 4))[1]
                      for s in (0.0, 1.0, 100.0)]
    return {"visible": visible_counts, "deltas": deltas,
            "counts": [AdaptiveDepthNet(block, tol=1e-5, max_steps=60)(s)[1] for s in starts]}


@probe_adaptive_data_dependent.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], ref["visible"], "steps for inputs 0, 1 and 100 times ones(1, 4)", hint="the number of steps must come from the stopping rule, not a fixed count")
    counts = got["counts"]
    C.check_type(counts, list, "step counts")
    C.check_true(len(counts) == len(ref["counts"]) and all(type(n) is int for n in counts),
                 f"step counts: {counts!r}; expected {len(ref['counts'])} Python ints")
    tol = 1e-5
    for n, deltas in zip(counts, ref["deltas"]):
        first = next((k + 1 for k, d in enumerate(deltas) if d < tol), len(deltas))
        early = any(d < tol * (1 - 1e-4) for d in deltas[:max(0, n - 1)])
        late = n < len(deltas) and deltas[n - 1] >= tol * (1 + 1e-4)
        C.check_true(1 <= n <= len(deltas) and not early and not late,
                     f"step counts for starts at growing distance from the block's fixed point: {counts}; "
                     f"the stopping rule gives {first} for the start that took {n}",
                     hint="the number of steps must come from the stopping rule, not a fixed count")


@judge.probe("test_adaptive_depth_gradients")
def probe_adaptive_gradients(seed):
    out = {}
    # the visible example, with the block unrolled for step counts around this run's own (the judge reads the
    # reference's, so the expected gradients come from the reference's step count, give or take rounding)
    vis_block = contraction_block(4)
    x_vis = torch.ones(2, 4)
    with torch.no_grad():                             # this run's step count; unroll around it only
        n_guess = AdaptiveDepthNet(vis_block, tol=1e-3, max_steps=30)(x_vis)[1]
    n_guess = n_guess if type(n_guess) is int else 1
    unrolled_vis = {}
    for n in range(max(1, n_guess - 2), min(30, n_guess + 2) + 1):
        vis_block.zero_grad()
        h = x_vis
        for _ in range(n):
            h = vis_block(h)
        h.sum().backward()
        unrolled_vis[n] = vis_block[0].weight.grad.clone()
    vis_block.zero_grad()
    o, n_vis = AdaptiveDepthNet(vis_block, tol=1e-3, max_steps=30)(x_vis)
    o.sum().backward()
    vis_grad = vis_block[0].weight.grad
    own = None                                        # the notebook's visible test: unrolled steps times, this run's
    if type(n_vis) is int and 1 <= n_vis <= 30:
        vis_block.zero_grad()
        h = x_vis
        for _ in range(n_vis):
            h = vis_block(h)
        h.sum().backward()
        own = vis_block[0].weight.grad
    out.update(visible_n=n_vis, visible_grad=vis_grad, visible_own=own, visible_unrolled=unrolled_vis)
    # float64, gradients to the block's parameters AND to x
    torch.manual_seed(seed)
    block = contraction_block(5, gain=0.7, seed=seed % 1000).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    with torch.no_grad():
        n_guess = AdaptiveDepthNet(block, tol=1e-6, max_steps=12)(x)[1]
    n_guess = n_guess if type(n_guess) is int else 1
    unrolled = {}
    for n in range(max(1, n_guess - 2), min(12, n_guess + 2) + 1):
        block.zero_grad()
        xr = x.clone().requires_grad_()
        h = xr
        for _ in range(n):
            h = block(h)
        (h ** 2).sum().backward()
        unrolled[n] = (block[0].weight.grad.clone(), block[0].bias.grad.clone(), xr.grad.clone())
    block.zero_grad()
    xs = x.clone().requires_grad_()
    h_out, n = AdaptiveDepthNet(block, tol=1e-6, max_steps=12)(xs)
    (h_out ** 2).sum().backward()
    out.update(n=n, weight_grad=block[0].weight.grad, bias_grad=block[0].bias.grad, x_grad=xs.grad, unrolled=unrolled)
    return out


@probe_adaptive_gradients.verdict
def _(got, ref):
    with visible():
        if got["visible_grad"] is None:
            C.check_true(False, "block weight.grad is None after backward(): no gradient reached the block",
                         hint="the loss was computed from a .detach()-ed copy, or under torch.no_grad()")
        n = got["visible_n"]
        C.check_true(got["visible_own"] is not None, f"steps={n!r} is not an int from 1 to max_steps=30")
        C.check_close(got["visible_grad"], got["visible_own"], name="block weight gradient",
                      rtol=1e-5, atol=1e-7, hint="if only the last application contributes, something detached h")
    C.check_true(type(n) is int and n in ref["visible_unrolled"],
                 f"steps={n!r}; the stopping rule gives {ref['visible_n']} here", hint="stop after the first application whose change is below tol")
    C.check_close(got["visible_grad"], ref["visible_unrolled"][n], name="block weight gradient (ones(2, 4))",
                  rtol=1e-5, atol=1e-7, hint="if only the last application contributes, something detached h")
    n = got["n"]
    C.check_true(type(n) is int and n >= 3, f"expected several steps here, got {n!r}")
    C.check_true(n in ref["unrolled"], f"steps={n} (float64 example, max_steps=12); the stopping rule gives {ref['n']}",
                 hint="stop after the first application whose change is below tol, and never run more than max_steps")
    gw, gb, gx = ref["unrolled"][n]
    if got["weight_grad"] is None:
        C.check_true(False, "block weight.grad is None after backward()",
                     hint="if no step contributes, the output was detached from the block")
    C.check_close(got["weight_grad"], gw, name="block weight gradient (float64)", rtol=1e-8, atol=1e-10,
                  hint="if only the last step contributes, something detached h inside the loop")
    C.check_close(got["bias_grad"], gb, name="block bias gradient (float64)", rtol=1e-8, atol=1e-10)
    if got["x_grad"] is None:
        C.check_true(False, "x.grad is None: no gradient flowed back to the input x",
                     hint="start the loop from x itself, not from x.detach() or a copy made under no_grad")
    C.check_close(got["x_grad"], gx, name="gradient with respect to x (float64)", rtol=1e-8, atol=1e-10,
                  hint="the gradient must flow through every application back to x")


@judge.probe("test_adaptive_depth_max_steps")
def probe_adaptive_max_steps(seed):
    class Counting(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner, self.calls = inner, 0

        def forward(self, x):
            self.calls += 1
            return self.inner(x)

    gen = torch.Generator().manual_seed(seed)
    vis = Counting(halving_block(4))
    _, vis_n = AdaptiveDepthNet(vis, tol=0.0, max_steps=7)(torch.ones(1, 4))
    rows = []
    for m in (1, 2, 5, 13):                                   # tol < 0: never converges
        counting = Counting(contraction_block(3, seed=m))
        _, n = AdaptiveDepthNet(counting, tol=-1.0, max_steps=m)(torch.randn(2, 3, generator=gen))
        rows.append((m, counting.calls, n))
    exact = []                                                 # ReLU leaves x >= 0 unchanged: every change is 0.0
    for tol, m in ((0.0, 6), (-1.0, 4)):
        counting = Counting(nn.ReLU())
        _, n = AdaptiveDepthNet(counting, tol=tol, max_steps=m)(torch.rand(2, 3, generator=gen))
        exact.append((tol, m, counting.calls, n))
    counting = Counting(contraction_block(3, seed=3))
    _, n_one = AdaptiveDepthNet(counting, tol=1e9, max_steps=9)(torch.randn(2, 3, generator=gen))
    return {"visible": (vis.calls, vis_n), "rows": rows, "exact": exact, "converged_at_once": (counting.calls, n_one)}


@probe_adaptive_max_steps.verdict
def _(got, ref):
    with visible():
        calls, n = got["visible"]
        C.check_true(type(n) is int and [calls, n] == list(ref["visible"]),
                     f"tol=0, max_steps=7: steps={n!r} and {calls} block calls; expected {ref['visible'][1]} and "
                     f"{ref['visible'][0]}", hint="check the loop bound: while steps < max_steps")
    for (m, calls, n), (_, rcalls, rn) in zip(got["rows"], ref["rows"]):
        C.check_true(type(n) is int and calls == rcalls and n == rn,
                     f"tol=-1, max_steps={m}: the block was called {calls} times and steps={n!r}; expected {rcalls} "
                     f"and {rn}", hint="check the loop bound: while steps < max_steps, one block call per step")
    for (tol, m, calls, n), (_, _, rcalls, rn) in zip(got["exact"], ref["exact"]):
        C.check_true(type(n) is int and calls == rcalls and n == rn,
                     f"a block that changes nothing (ReLU on x >= 0), tol={tol}, max_steps={m}: {calls} calls and "
                     f"steps={n!r}; expected {rcalls} and {rn}",
                     hint="the stop test is strict: change < tol. With tol <= 0 a change of 0.0 does not stop the loop")
    calls, n = got["converged_at_once"]
    rcalls, rn = ref["converged_at_once"]
    C.check_true(type(n) is int and n == rn and calls == rcalls,
                 f"tol=1e9 (the first application already converges): {calls} block calls, steps={n!r}; expected "
                 f"{rcalls} and {rn}", hint="the block runs exactly steps times: no extra call to test convergence")


@judge.probe("test_adaptive_depth_module")
def probe_adaptive_module(seed):
    vis_block = halving_block(3)
    vis_net = AdaptiveDepthNet(vis_block, tol=1e-2, max_steps=20)
    vis_registered = any(p is vis_block.weight for p in vis_net.parameters())
    vis_first, vis_second = vis_net(torch.ones(1, 3))[1], vis_net(torch.ones(1, 3))[1]
    gen = torch.Generator().manual_seed(seed)
    xs = [torch.randn(3, 4, generator=gen) * (1 + i) for i in range(3)]
    block = contraction_block(4, gain=0.6, seed=seed % 1000)
    net = AdaptiveDepthNet(block, tol=1e-4, max_steps=40)
    ids = {id(p) for p in net.parameters()}
    registered = all(id(p) in ids for p in block.parameters())
    submodule = any(m is block for m in net.modules())
    repeated = [net(x) for x in xs] + [net(xs[0])]
    fresh = [AdaptiveDepthNet(block, tol=1e-4, max_steps=40)(x) for x in xs]
    # calls that end at max_steps without converging, then the same input again: a counter kept on self (reset
    # only when the loop converges) would start the second call at max_steps and run the block 0 times
    capped = AdaptiveDepthNet(block, tol=1e-9, max_steps=3)
    capped_calls = [attempt(lambda: capped(xs[1])) for _ in range(3)]
    return {"visible": (vis_registered, vis_first, vis_second), "registered": registered, "submodule": submodule,
            "repeated": repeated, "fresh": fresh, "capped": capped_calls}


@probe_adaptive_module.verdict
def _(got, ref):
    with visible():
        registered, first, second = got["visible"]
        C.check_true(registered is True, "net.parameters() does not yield the block's weight", hint="assign the block to an attribute of self after super().__init__(), not inside a list or dict")
        C.check_true(type(second) is int and second == first,
                     f"the same input took {first!r} steps on the first call and {second!r} on the second", hint="keep the step counter a local variable of forward, not an attribute that survives the call")
    C.check_true(got["registered"] is True and got["submodule"] is True,
                 "the block is not a registered submodule: net.parameters() misses its parameters",
                 hint="self.block = block registers it; a list, tuple or dict attribute does not")
    fresh = got["fresh"]
    for i, res in enumerate(got["repeated"]):
        h, n = check_pair(res, f"call {i + 1} of the same net")
        fh, fn = check_pair(fresh[i % 3], "a fresh net")
        C.check_true(n == fn, f"call {i + 1} of the same net took {n} steps; a fresh net takes {fn} on that input",
                     hint="nothing may carry over between calls: reset every counter inside forward")
        C.check_close(h, fh, name=f"h on call {i + 1} of the same net", rtol=1e-6, atol=1e-7)
        rh, rn = ref["repeated"][i]
        C.check_true(n == rn, f"call {i + 1} of the same net took {n} steps; expected {rn}",
                     hint="stop after the first application whose change is below tol")
        C.check_close(h, rh, name=f"h on call {i + 1}", rtol=1e-5, atol=1e-6)
    for i, (g, r) in enumerate(zip(got["capped"], ref["capped"])):
        where = f"call {i + 1} of one net with max_steps=3 on the same input (none converges)"
        h, n = check_pair(expect_ok(g, where), where)
        rh, rn = expect_ok(r, "reference")
        C.check_true(n == rn, f"{where}: steps={n}; expected {rn}, as on the first call",
                     hint="every call starts afresh: a counter kept on self must be reset at the start of forward, "
                          "not only when the loop converges (better: keep it a local variable)")
        C.check_close(h, rh, name=f"h on {where}", rtol=1e-5, atol=1e-6,
                      hint="every call starts afresh: the block must run again on each call")


# --- Exercise 1.2 · sgd_step -------------------------------------------------------------------------
# clause -> test
#   do not use torch.optim: write the update yourself .................... test_sgd_step_update (Optimizer
#                                                                           construction and the functional sgd
#                                                                           are spied on during the calls)
#   call loss_fn() once ................................................. test_sgd_step_returns_float (counted,
#                                                                           stochastic loss)
#   only this loss's gradient; stale .grad discarded ...................... test_sgd_step_edge_cases
#   p <- p - lr * (g + weight_decay * p), in place ......................... test_sgd_step_update (shapes, lr,
#                                                                           float32 and float64), _weight_decay
#   update not recorded / params stay the same leaf objects ............... test_sgd_step_leaves
#   a parameter the loss does not use: unchanged, no exception, whatever
#   weight_decay is, also when it held a stale .grad ...................... test_sgd_step_edge_cases
#                                                                           (weight_decay 0.2 in both cases)
#   every .grad cleared (None or zeros) before returning, the stale ones
#   and the unused parameters' included; nothing carries over ............ test_sgd_step_no_accumulation
#   return the loss before the update, as a float ......................... test_sgd_step_returns_float
# Every verdict also compares parameter values or the returned loss with the reference's.

@judge.shared
def spy_optim():
    """Replace torch.optim's entry points by spies that record their use; return (uses, undo)."""
    import torch.optim
    uses = []
    saved = []

    def spy(owner, name, label):
        real = getattr(owner, name, None)
        if real is None:
            return

        def wrapper(*args, **kwargs):
            uses.append(label)
            return real(*args, **kwargs)
        saved.append((owner, name, real))
        setattr(owner, name, wrapper)

    spy(torch.optim.Optimizer, "__init__", "a torch.optim optimiser")
    for mod in ("sgd", "_functional"):
        owner = getattr(torch.optim, mod, None)
        if owner is not None:
            spy(owner, "sgd", "torch.optim's functional sgd")

    def undo():
        for owner, name, real in reversed(saved):
            setattr(owner, name, real)
    return uses, undo


@judge.probe("test_sgd_step_update")
def probe_sgd_update(seed):
    uses, undo = spy_optim()
    try:
        params, loss_fn, _, _ = quadratic_problem(0)
        sgd_step(params, loss_fn, 0.1)
        out = {"visible": [p.detach() for p in params], "cases": []}
        for i, shapes in enumerate([[(4,)], [(3, 2), (5,)], [(1,), (2, 2, 2)]]):
            params, loss_fn, _, _ = quadratic_problem(seed + 10 + i, shapes)
            orig = list(params)
            sgd_step(params, loss_fn, [0.05, 0.2, 0.01][i])
            out["cases"].append([p.detach() for p in orig])
        gen = torch.Generator().manual_seed(seed + 13)               # float32, a loss through a matmul
        w = torch.randn(3, 4, generator=gen).requires_grad_()
        b = torch.zeros(4).requires_grad_()
        xin, y = torch.randn(6, 3, generator=gen), torch.randn(6, 4, generator=gen)
        sgd_step([w, b], lambda: ((xin @ w + b - y) ** 2).mean(), 0.3)
        out["cases"].append([w.detach(), b.detach()])
    finally:
        undo()
    out["optim"] = sorted(set(uses))
    return out


@probe_sgd_update.verdict
def _(got, ref):
    with visible():
        for i, (g, r) in enumerate(zip(got["visible"], ref["visible"])):
            C.check_close(g, r, name=f"parameter {i} after one step",
                          hint="update the tensors in the list in place inside torch.no_grad(); "
                               "`p = p - ...` only rebinds a name")
    for k, (gs, rs) in enumerate(zip(got["cases"], ref["cases"])):
        for i, (g, r) in enumerate(zip(gs, rs)):
            C.check_close(g, r, name=f"parameter {i} after one step (case {k + 1})",
                          hint="p_new = p - lr * p.grad, applied in place to the original tensor object")
    C.check_true(got["optim"] == ref["optim"],
                 f"sgd_step used {', '.join(got['optim'])}: the exercise is to write the update yourself",
                 hint="no torch.optim inside sgd_step: under torch.no_grad(), subtract lr * (grad + weight_decay * p) "
                      "from each parameter in place")


@judge.probe("test_sgd_step_weight_decay")
def probe_sgd_weight_decay(seed):
    params, loss_fn, _, _ = quadratic_problem(5, [(3,), (2,)])
    sgd_step(params, loss_fn, 0.1, weight_decay=0.3)
    out = {"visible": [p.detach() for p in params], "cases": []}
    for i, (lr, wd) in enumerate([(0.1, 0.01), (0.05, 0.5), (0.02, 2.0)]):
        params, loss_fn, _, _ = quadratic_problem(seed + 60 + i, [(2, 3), (4,)])
        orig = list(params)
        sgd_step(params, loss_fn, lr, weight_decay=wd)
        out["cases"].append({"lr": lr, "wd": wd, "params": [p.detach() for p in orig]})
    return out


@probe_sgd_weight_decay.verdict
def _(got, ref):
    with visible():
        for i, (g, r) in enumerate(zip(got["visible"], ref["visible"])):
            C.check_close(g, r, name=f"parameter {i} after one step with weight_decay=0.3",
                          hint="the step is lr * (grad + weight_decay * p), with p from before the update")
    for g, r in zip(got["cases"], ref["cases"]):
        for i, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, name=f"parameter {i}, lr={r['lr']}, weight_decay={r['wd']}",
                          hint="use the weight_decay argument: p <- p - lr * (grad + weight_decay * p)")


@judge.probe("test_sgd_step_returns_float")
def probe_sgd_float(seed):
    rows = []
    for s, shapes, lr in ((1, ((3,), (2, 2)), 0.1), (seed + 21, ((5,), (2, 3)), 0.3), (seed + 22, ((1,),), 0.05)):
        params, loss_fn, _, _ = quadratic_problem(s, shapes)
        before = loss_fn().item()
        calls = []

        def counted(loss_fn=loss_fn, calls=calls):
            calls.append(1)
            return loss_fn()
        rows.append({"before": before, "got": sgd_step(params, counted, lr), "calls": len(calls)})
    # a stochastic loss (a random weight per call, like a random minibatch): the returned value and the update
    # must both come from the one call
    params, base, _, _ = quadratic_problem(seed + 23, [(3,)])
    gen = torch.Generator().manual_seed(seed)
    values = []

    def noisy():
        loss = (1 + torch.rand((), generator=gen, dtype=torch.float64)) * base()
        values.append(loss.item())
        return loss
    got = sgd_step(params, noisy, 0.1)
    return {"rows": rows, "noisy": {"values": values, "got": got, "param": params[0].detach()}}


@probe_sgd_float.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got["rows"], ref["rows"])):
        with visible() if i == 0 else nullcontext():
            C.check_float(g["got"], r["before"], name="returned loss", rel=1e-9,
                          hint="return loss.item() of the loss you back-propagated: a float carries no graph")
            C.check_true(g["calls"] == 1, f"loss_fn() was called {g['calls']} times; expected once", hint="call loss_fn() once and use that loss for both backward() and the return value")
    g, r = got["noisy"], ref["noisy"]
    C.check_true(len(g["values"]) == 1, f"with a random loss_fn, loss_fn() was called {len(g['values'])} times; "
                 "expected once", hint="each call of loss_fn() may give a different loss (think: a new minibatch)")
    C.check_float(g["got"], r["values"][0], name="returned loss (random loss_fn)", rel=1e-9,
                  hint="return the loss whose gradient you used")
    C.check_close(g["param"], r["param"], name="parameter after a step with a random loss_fn")


@judge.probe("test_sgd_step_no_accumulation")
def probe_sgd_no_accumulation(seed):
    gen = torch.Generator().manual_seed(seed)
    params, loss_fn, _, _ = quadratic_problem(2, [(3,)])
    for _ in range(2):
        sgd_step(params, loss_fn, 0.1)
    visible = {"grad": params[0].grad, "param": params[0].detach()}
    params, loss_fn, _, _ = quadratic_problem(seed + 31, [(4,), (2,)])
    orig = list(params)
    steps = []
    for _ in range(3):
        sgd_step(params, loss_fn, 0.1, weight_decay=0.0)
        steps.append({"params": [p.detach().clone() for p in orig],
                      "grads": [None if p.grad is None else p.grad.clone() for p in orig]})
    # stale gradients before the call, on used parameters and on one the loss does not use: none may survive it
    params, loss_fn, _, _ = quadratic_problem(seed + 32, [(3,), (2, 2)])
    spare = torch.randn(2, generator=gen, dtype=torch.float64).requires_grad_()
    everything = [params[0], spare, params[1]]
    for p in everything:
        p.grad = 3 * torch.randn(p.shape, generator=gen, dtype=torch.float64)
    run = attempt(lambda: sgd_step(everything, loss_fn, 0.1))
    stale = {"run": run[0], "grads": [p.grad for p in everything], "params": [p.detach() for p in everything]}
    return {"visible": visible, "steps": steps, "stale": stale}


def cleared(grad):
    """True when a .grad sent back by a probe is None or all zeros (decided here, in the judge)."""
    return grad is None or (isinstance(grad, torch.Tensor) and not bool(grad.count_nonzero()))


@probe_sgd_no_accumulation.verdict
def _(got, ref):
    with visible():
        C.check_true(cleared(got["visible"]["grad"]), "after the step, .grad should be cleared", hint="set p.grad = None (or zero it) before returning")
        C.check_close(got["visible"]["param"], ref["visible"]["param"], name="parameter after two calls", hint="the second step used old gradients too: backward() adds into .grad")
    for call, (g, r) in enumerate(zip(got["steps"], ref["steps"])):
        C.check_true(all(cleared(gr) for gr in g["grads"]), f"after call {call + 1}, some .grad is not cleared",
                     hint="clear every parameter's .grad before returning")
        for i, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, name=f"parameter {i} after call {call + 1}",
                          hint="the step after the first used old gradients too: clear .grad")
    g, r = got["stale"], ref["stale"]
    C.check_true(g["run"] == "ok", "sgd_step raised on parameters that held stale gradients (one unused)")
    for i, (gp, rp) in enumerate(zip(g["params"], r["params"])):
        C.check_close(gp, rp, name=f"parameter {i} of 3 after a step that started with stale gradients")
    left = [i for i, gr in enumerate(g["grads"]) if not cleared(gr)]
    C.check_true(not left, f"parameters {left} still hold a gradient after sgd_step returned: a stale .grad from "
                 "before the call, or this step's", hint="clear EVERY parameter's .grad before returning (set it to "
                 "None), also one your gradient computation never touched")


@judge.probe("test_sgd_step_edge_cases")
def probe_sgd_edge_cases(seed):
    gen = torch.Generator().manual_seed(seed)
    out = {}
    # visible: a stale gradient on the used parameter, and an unused parameter
    params, loss_fn, _, _ = quadratic_problem(4, [(3,)])
    params[0].grad = torch.full_like(params[0], 100.0)
    spare0 = torch.ones(2, dtype=torch.float64, requires_grad=True)
    out["visible"] = {"run": attempt(lambda: sgd_step([params[0], spare0], loss_fn, 0.1)),
                      "param": params[0].detach(), "unused": spare0.detach()}
    # stale gradients on every used parameter
    params, loss_fn, _, _ = quadratic_problem(seed + 51, [(3,), (2, 2)])
    for p in params:
        p.grad = 10 * torch.randn(p.shape, generator=gen, dtype=torch.float64)
    out["stale"] = {"run": attempt(lambda: sgd_step(params, loss_fn, 0.1)), "params": [p.detach() for p in params]}
    # an unused parameter with no gradient, placed between used ones, with weight decay
    params, loss_fn, _, _ = quadratic_problem(seed + 52, [(3,), (2,)])
    spare = torch.randn(4, generator=gen, dtype=torch.float64).requires_grad_()
    spare_before = spare.detach().clone()
    out["no_grad_param"] = {"run": attempt(lambda: sgd_step([params[0], spare, params[1]], loss_fn, 0.1,
                                                            weight_decay=0.2)),
                            "spare": spare.detach(), "spare_before": spare_before}
    # an unused parameter that holds a stale gradient, with weight decay: zeroing that gradient in place leaves a
    # zero gradient (not None), and weight decay would then move the parameter
    params, loss_fn, _, _ = quadratic_problem(seed + 53, [(2,)])
    spare = torch.randn(3, generator=gen, dtype=torch.float64).requires_grad_()
    spare_before = spare.detach().clone()
    spare.grad = torch.full((3,), 5.0, dtype=torch.float64)
    out["stale_unused"] = {"run": attempt(lambda: sgd_step([params[0], spare], loss_fn, 0.1, weight_decay=0.2)),
                           "spare": spare.detach(), "spare_before": spare_before, "param": params[0].detach()}
    return out


@probe_sgd_edge_cases.verdict
def _(got, ref):
    with visible():
        v, rv = got["visible"], ref["visible"]
        expect_ok(v["run"], "sgd_step with an unused parameter", hint="a parameter whose .grad is None after backward() has no gradient: skip it")
        C.check_close(v["param"], rv["param"], name="parameter after a step that started with a stale .grad", hint="backward() adds to what .grad holds: discard old gradients before back-propagating")
        C.check_close(v["unused"], rv["unused"], name="a parameter the loss does not use", hint="a parameter whose .grad is None after backward() has no gradient: skip it")
    expect_ok(got["stale"]["run"], "sgd_step on parameters with stale gradients")
    for i, (gp, rp) in enumerate(zip(got["stale"]["params"], ref["stale"]["params"])):
        C.check_close(gp, rp, name=f"parameter {i} after a step that started with stale gradients",
                      hint="only this loss's gradient may enter the step: clear .grad before backward()")
    g, r = got["no_grad_param"], ref["no_grad_param"]
    expect_ok(g["run"], "sgd_step with a parameter that gets no gradient (weight_decay=0.2)",
              hint="p.grad is None for a parameter the loss does not use: skip it instead of computing with None")
    C.check_close(g["spare"], r["spare_before"], name="an unused parameter, with weight_decay=0.2",
                  hint="a parameter without gradient is left unchanged: no weight decay either (as torch.optim.SGD)")
    g, r = got["stale_unused"], ref["stale_unused"]
    expect_ok(g["run"], "sgd_step with an unused parameter holding a stale .grad (weight_decay=0.2)")
    C.check_close(g["spare"], r["spare_before"], name="an unused parameter that held a stale .grad (weight_decay=0.2)",
                  hint="the loss does not use it, so it gets no gradient from this step: leave it as it was. A stale "
                       ".grad zeroed in place is still a tensor, not None; set stale gradients to None instead")
    C.check_close(g["param"], r["param"], name="the used parameter next to it")


@judge.probe("test_sgd_step_leaves")
def probe_sgd_leaves(seed):
    params, loss_fn, _, _ = quadratic_problem(3)
    orig = list(params)
    sgd_step(params, loss_fn, 0.1)
    visible = [(p is o, p.is_leaf, p.requires_grad) for p, o in zip(params, orig)]
    visible_values = [p.detach() for p in orig]
    params, loss_fn, _, _ = quadratic_problem(seed + 41, [(2, 2), (3,)])
    orig = list(params)
    for _ in range(2):
        sgd_step(params, loss_fn, 0.05, weight_decay=0.1)
    return {"visible": visible, "visible_values": visible_values, "values": [o.detach() for o in orig],
            "rows": [(p is o, o.is_leaf, o.requires_grad, o.grad_fn is None) for p, o in zip(params, orig)]}


@probe_sgd_leaves.verdict
def _(got, ref):
    with visible():
        for i, (same, leaf, rg) in enumerate(got["visible"]):
            C.check_true(same is True, f"params[{i}] is a different tensor object after the step", hint="update in place; do not put new tensors into the list")
            C.check_true(leaf is True and rg is True, f"params[{i}]: is_leaf={leaf}, requires_grad={rg}; "
                         "expected True, True")
    for i, (g, r) in enumerate(zip(got["visible_values"], ref["visible_values"])):
        C.check_close(g, r, name=f"params[{i}] after the step (the original tensor object)")
    for i, (same, leaf, rg, no_fn) in enumerate(got["rows"]):
        C.check_true(same is True, f"params[{i}] was replaced by a new tensor after two steps",
                     hint="update the original tensor in place; an optimiser holding it would not see a new one")
        C.check_true(leaf is True and rg is True and no_fn is True,
                     f"params[{i}]: is_leaf={leaf}, requires_grad={rg}, grad_fn is None: {no_fn}; expected True, "
                     "True, True", hint="do the update under torch.no_grad(), in place")
    for i, (g, r) in enumerate(zip(got["values"], ref["values"])):
        C.check_close(g, r, name=f"params[{i}] after two steps with weight_decay=0.1",
                      hint="update the original tensors in place, under torch.no_grad()")


# --- Exercise 1.3 · pooled_scores ------------------------------------------------------------------
# clause -> test
#   x (B, T, D) float32/float64, lengths int64 in 1..T, w (D,) ............ test_pooled_scores_values (float32
#                                                                           and float64, B = 1, lengths 1 and T)
#   shape (B,), x's dtype, equal to pooled_scores_loop whatever the
#   padding holds, small or huge .......................................... test_pooled_scores_values (padding:
#                                                                           100 in the visible case, random
#                                                                           values, 1e8 in float32 and -1e30 in
#                                                                           float64 in the hidden ones)
#   gradients w.r.t. x and w equal the loop's, zero on the padding ......... test_pooled_scores_gradients (float64)
#   no Python loop over the samples: the same number of ops for every B ... test_pooled_scores_batched (B = 1, 5,
#                                                                           16, T = 8; counted by a dispatch mode)
#   nothing read back to Python, no op whose size depends on values ....... test_pooled_scores_batched
#                                                                           (_local_scalar_dense, nonzero,
#                                                                           masked_select, boolean-mask index,
#                                                                           index_put of a tensor of several
#                                                                           values, tolist, numpy); a number
#                                                                           written through a mask into a new
#                                                                           tensor is allowed (alternative
#                                                                           pooled_clone_masked_write)
#   a loop over T or D is not forbidden ................................... (nothing to test: the op count is
#                                                                           compared across B at one T and D)
#   B = 0 returns an empty tensor of shape (0,) in x's dtype ............... test_pooled_scores_edge_cases
#                                                                           (float32 and float64)
#   x, lengths and w left unchanged ........................................ test_pooled_scores_edge_cases
#   each call stands alone (nothing kept between calls) .................... test_pooled_scores_edge_cases (two
#                                                                           batches of one shape, other lengths)
# Every verdict also compares the scores with the reference's.

@judge.shared
def pooled_case(batch, steps, dim, dtype, seed, lengths=None, pad=None):
    """A padded batch with random lengths (or the given ones) whose padding holds random values (or ``pad``)."""
    gen = torch.Generator().manual_seed(seed)
    if lengths is None:
        lengths = torch.randint(1, steps + 1, (batch,), generator=gen)
    x, lengths, w = padded_batch(lengths, steps, dim, dtype=dtype, pad=pad, seed=seed)
    return x, lengths, w


@judge.shared
def counted_call(fn):
    """Run fn() counting the ops it dispatches; return (attempt's result, total ops, {host-sync op: count})."""
    import collections

    from torch.utils._python_dispatch import TorchDispatchMode

    counts = collections.Counter()

    class Counting(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            index = args[1] if name in ("index", "index_put", "index_put_") and len(args) > 1 else ()
            masks = [i for i in index or () if isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)]
            if masks:
                name = name.rstrip("_") + " (boolean mask)"
                # y[mask] = number: ATen turns it into masked_fill_ (no nonzero, nothing read back) when the value
                # is one element on the CPU and the mask is the only tensor index (canDispatchToMaskedFill)
                value = args[2] if len(args) > 2 else (kwargs or {}).get("values")
                accumulate = args[3] if len(args) > 3 else (kwargs or {}).get("accumulate", False)
                if (name.startswith("index_put") and isinstance(value, torch.Tensor) and value.numel() == 1
                        and value.device.type == "cpu" and not accumulate
                        and sum(i is not None for i in index) == 1 and masks[0].device == args[0].device):
                    name = "index_put (boolean mask, one value: masked_fill_)"
            counts[name] += 1
            return func(*args, **(kwargs or {}))

    names = ("tolist", "numpy")
    own = {n: torch.Tensor.__dict__[n] for n in names if n in torch.Tensor.__dict__}
    real = {n: getattr(torch.Tensor, n) for n in names}

    def spy(n):
        def wrapper(self, *a, **k):
            counts["Tensor." + n] += 1
            return real[n](self, *a, **k)
        return wrapper
    try:
        for n in names:
            setattr(torch.Tensor, n, spy(n))
        with Counting():
            result = attempt(fn)
    finally:
        for n in names:
            if n in own:
                setattr(torch.Tensor, n, own[n])
            else:
                delattr(torch.Tensor, n)
    syncs = {k: v for k, v in counts.items()
             if k in ("_local_scalar_dense", "nonzero", "masked_select", "index (boolean mask)",
                      "index_put (boolean mask)", "Tensor.tolist", "Tensor.numpy")}
    return result, sum(counts.values()), syncs


def check_scores(result, expected, where, hint):
    out = expect_ok(result, f"pooled_scores on {where}", hint=hint)
    C.check_tensor(out, f"scores for {where}", shape=tuple(expected.shape), dtype=expected.dtype,
                   hint="one score per sample: shape (B,), in x's dtype")
    tol = 1e-4 if expected.dtype == torch.float32 else 1e-9
    C.check_close(out, expected, name=f"scores for {where}", rtol=tol, atol=tol, hint=hint)


PADDING_HINT = ("average only each sample's first lengths[i] time steps: the padding rows after them hold arbitrary "
                "values, so summing them in (or dividing by T) gives wrong scores")


@judge.probe("test_pooled_scores_values")
def probe_pooled_values(seed):
    x, lengths, w = padded_batch([5, 2, 3], 5, 4)
    out = {"visible": attempt(lambda: pooled_scores(x, lengths, w)), "cases": []}
    specs = [(1, 1, 3, torch.float32, None), (5, 7, 4, torch.float64, None), (8, 3, 6, torch.float32, None),
             (6, 9, 2, torch.float64, None), (4, 6, 3, torch.float32, 1e8), (3, 5, 4, torch.float64, -1e30)]
    for i, (b, t, d, dtype, pad) in enumerate(specs):
        if i == 2:                                       # every sample full length: no padding at all
            x, lengths, w = pooled_case(b, t, d, dtype, seed + i, lengths=torch.full((b,), t))
        else:                                            # huge padding: summing it and subtracting it again
            x, lengths, w = pooled_case(b, t, d, dtype, seed + i, pad=pad)     # loses the real values to rounding
            lengths[0] = 1                               # the shortest possible sample
            if b > 1:
                lengths[-1] = max(1, t // 2)             # and one with padding after it
        kind = "random values" if pad is None else f"{pad:g}"
        out["cases"].append({"where": f"B={b}, T={t}, D={d}, {str(dtype).replace('torch.', '')}, padding {kind}",
                             "got": attempt(lambda: pooled_scores(x, lengths, w))})
    return out


@probe_pooled_values.verdict
def _(got, ref):
    with visible():
        check_scores(got["visible"], expect_ok(ref["visible"], "reference"), "the example batch (lengths 5, 2, 3)",
                     PADDING_HINT)
    for g, r in zip(got["cases"], ref["cases"]):
        check_scores(g["got"], expect_ok(r["got"], "reference"), r["where"], PADDING_HINT)


@judge.probe("test_pooled_scores_gradients")
def probe_pooled_gradients(seed):
    def grads(x, lengths, w, weights):
        xs, ws = x.clone().requires_grad_(), w.clone().requires_grad_()

        def run():
            scores = pooled_scores(xs, lengths, ws)
            (scores * weights).sum().backward()
            return scores.detach()
        result = attempt(run)
        return {"scores": result, "x_grad": xs.grad, "w_grad": ws.grad}

    x, lengths, w = padded_batch([5, 2, 3], 5, 4, dtype=torch.float64)
    out = {"visible": grads(x, lengths, w, torch.ones(3, dtype=torch.float64)), "cases": []}
    gen = torch.Generator().manual_seed(seed)
    for i, (b, t, d) in enumerate([(4, 6, 3), (1, 4, 5), (7, 2, 4)]):
        x, lengths, w = pooled_case(b, t, d, torch.float64, seed + 20 + i)
        out["cases"].append(grads(x, lengths, w, torch.randn(b, generator=gen, dtype=torch.float64)))
    return out


def check_grads(g, r, where):
    expect_ok(g["scores"], f"pooled_scores(...) and backward() on {where}",
              hint="the scores must be computed from x and w with tensor ops, so that backward() reaches them")
    for name, hint in (("x_grad", "the gradient must reach x through your ops: no .detach(), no torch.no_grad(), no "
                                  "new tensor built from x's values; padding rows get 0"),
                       ("w_grad", "the gradient must reach w through your ops")):
        if g[name] is None:
            C.check_true(False, f"{name.replace('_', '.')} is None after backward() on {where}", hint=hint)
        C.check_close(g[name], r[name], name=f"{name.replace('_grad', '')}.grad on {where}", rtol=1e-9, atol=1e-12,
                      hint=hint)


@probe_pooled_gradients.verdict
def _(got, ref):
    with visible():
        check_grads(got["visible"], ref["visible"], "the example batch in float64")
    for k, (g, r) in enumerate(zip(got["cases"], ref["cases"])):
        check_grads(g, r, f"hidden batch {k + 1} (float64)")


@judge.probe("test_pooled_scores_batched")
def probe_pooled_batched(seed):
    x2, l2, w2 = padded_batch([3, 1], 4, 3)
    x8, l8, w8 = padded_batch([4, 1, 2, 3, 4, 4, 1, 2], 4, 3)
    vis = [counted_call(lambda: pooled_scores(x2, l2, w2)), counted_call(lambda: pooled_scores(x8, l8, w8))]
    rows = []
    for i, b in enumerate((1, 5, 16)):
        x, lengths, w = pooled_case(b, 8, 3, torch.float32, seed + 40 + i)     # T = 8: no other call uses it
        result, ops, syncs = counted_call(lambda: pooled_scores(x, lengths, w))
        rows.append({"b": b, "result": result, "ops": ops, "syncs": syncs})
    return {"visible": vis, "rows": rows}


@probe_pooled_batched.verdict
def _(got, ref):
    loop_hint = ("no Python loop over the samples: compare every time index with every length at once "
                 "(broadcasting), so that one set of ops handles the whole batch")
    sync_hint = ("read nothing back to Python (.item(), int(t), .tolist(), .numpy(), lengths.max() used as a "
                 "slice bound), do not read through a boolean mask (x[mask]) or write a tensor through one: multiply "
                 "by a 0/1 mask, or use torch.where or masked_fill, instead")
    (r2, n2, s2), (r8, n8, s8) = got["visible"]
    with visible():
        check_scores(r8, expect_ok(ref["visible"][1][0], "reference"), "a batch of 8", PADDING_HINT)
        C.check_true(n2 == n8, f"pooled_scores ran {n2} ops for a batch of 2 and {n8} for a batch of 8",
                     hint=loop_hint)
        C.check_true(not s2 and not s8, f"pooled_scores read values back to the host: {s8 or s2}", hint=sync_hint)
    check_scores(r2, expect_ok(ref["visible"][0][0], "reference"), "a batch of 2", PADDING_HINT)
    for g, r in zip(got["rows"], ref["rows"]):
        check_scores(g["result"], expect_ok(r["result"], "reference"), f"a batch of {r['b']}", PADDING_HINT)
    counts = {g["b"]: g["ops"] for g in got["rows"]}
    C.check_true(len(set(counts.values())) == 1,
                 f"ops per call by batch size: {counts}; a batched computation runs the same ops for every B",
                 hint=loop_hint)
    for g in got["rows"]:
        C.check_true(not g["syncs"], f"for a batch of {g['b']}, pooled_scores ran ops that need a value on the host: "
                     f"{g['syncs']} (one sync each on a GPU)", hint=sync_hint)


@judge.probe("test_pooled_scores_edge_cases")
def probe_pooled_edge_cases(seed):
    x, lengths, w = padded_batch([5, 2, 3], 5, 4)
    vis_scores = attempt(lambda: pooled_scores(x, lengths, w))
    empty = padded_batch([], 5, 4)
    # the inputs as they are after the call: the judge compares them with the reference's (which leaves them alone)
    vis = {"empty": attempt(lambda: pooled_scores(*empty)), "scores": vis_scores, "after": [x, lengths, w]}
    out = {"visible": vis}
    # an empty float64 batch of another shape
    e64 = padded_batch([], 3, 6, dtype=torch.float64)
    out["empty64"] = attempt(lambda: pooled_scores(*e64))
    # two batches of the same shape with other lengths, one after the other: nothing may carry over
    first = pooled_case(4, 6, 3, torch.float64, seed + 60)
    second = pooled_case(4, 6, 3, torch.float64, seed + 61, lengths=first[1] % 6 + 1)   # every length differs
    out["first"] = attempt(lambda: pooled_scores(*first))
    out["second"] = attempt(lambda: pooled_scores(*second))
    out["after"] = [*first, *second]
    return out


@probe_pooled_edge_cases.verdict
def _(got, ref):
    with visible():
        v, rv = got["visible"], ref["visible"]
        empty = expect_ok(v["empty"], "pooled_scores on an empty batch (B = 0)",
                          hint="with B = 0 the batched ops give an empty result by themselves; no special case needed")
        C.check_tensor(empty, "scores for an empty batch", shape=(0,), dtype=torch.float32)
        check_scores(v["scores"], expect_ok(rv["scores"], "reference"), "the example batch", PADDING_HINT)
        for name, g, r in zip(("x", "lengths", "w"), v["after"], rv["after"]):
            C.check_close(g, r, name=f"{name} after the call", rtol=0, atol=0, hint="do not write into x (no "
                          "in-place ops such as x.mul_ or x[...] = 0): build a new tensor")
    empty = expect_ok(got["empty64"], "pooled_scores on an empty float64 batch (B = 0)")
    C.check_tensor(empty, "scores for an empty float64 batch", shape=(0,), dtype=torch.float64)
    check_scores(got["first"], expect_ok(ref["first"], "reference"), "a first batch of shape (4, 6, 3)", PADDING_HINT)
    check_scores(got["second"], expect_ok(ref["second"], "reference"),
                 "a second batch of the same shape with other lengths",
                 "each call stands alone: compute the mask from this call's lengths, do not keep it from an earlier call")
    for k, (g, r) in enumerate(zip(got["after"], ref["after"])):
        C.check_close(g, r, name=f"{('x', 'lengths', 'w')[k % 3]} of call {k // 3 + 1} after the calls", rtol=0,
                      atol=0, hint="build new tensors; never write into x, lengths or w")


# --- Exercise 1.4 · record_activations ---------------------------------------------------------------
# clause -> test
#   model(x) runs exactly once; a new dict each call ...................... test_record_activations_fresh
#   keys from named_modules(), nested ones included, root left out ........ test_record_activations_shapes
#   a module registered under two names appears once, first name .......... test_record_activations_repeated
#   values are output.shape (torch.Size) of tensor outputs ................ test_record_activations_shapes
#   non-tensor outputs (LSTM's tuple) and modules that never run left out . test_record_activations_shapes
#   a submodule that runs more than once keeps the shape of its last call
#   that returned a tensor (a later tuple changes nothing) ................ test_record_activations_repeated
#   every hook removed, also when forward raises .......................... test_record_activations_cleanup
#   the exception reaches the caller unchanged ............................ test_record_activations_cleanup
#   hooks that were there before stay ..................................... test_record_activations_cleanup

@judge.probe("test_record_activations_shapes")
def probe_record_shapes(seed):
    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.inner = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU())
            self.out = nn.Linear(2 * d, d)

        def forward(self, x):
            return self.out(self.inner(x)) + x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(5, 7)
            self.blocks = nn.ModuleList([Block(7), Block(7)])
            self.head = nn.Sequential(nn.LayerNorm(7), nn.Linear(7, 3))

        def forward(self, x):
            x = self.embed(x)
            for blk in self.blocks:
                x = blk(x)
            return self.head(x)

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(4, 6, batch_first=True)      # returns a tuple: left out
            self.head = nn.Linear(6, 2)
            self.spare = nn.Linear(2, 2)                    # never runs: left out

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    gen = torch.Generator().manual_seed(seed)
    b = 2 + seed % 5
    xs = (torch.randn(2, 3, 16, 16, generator=gen), torch.randn(b, 5, generator=gen), torch.randn(b, 3, 4, generator=gen))
    return {"visible": attempt(lambda: record_activations(small_cnn().eval(), xs[0])), "batch": b,
            "nested": attempt(lambda: record_activations(Net(), xs[1])),
            "recurrent": attempt(lambda: record_activations(Recurrent(), xs[2]))}


@probe_record_shapes.verdict
def _(got, ref):
    with visible():
        shapes = expect_ok(got["visible"], "record_activations(small_cnn(), x)")
        C.check_type(shapes, dict, "the returned mapping")
        C.check_equal(shapes, ref["visible"][1], "recorded shapes for small_cnn", hint="one entry per name from model.named_modules() except the root '', valued output.shape")
    nested = expect_ok(got["nested"], "record_activations on a model with nested blocks")
    C.check_type(nested, dict, "the returned mapping")
    C.check_equal(nested, ref["nested"][1], "recorded shapes for a model with nested blocks in a ModuleList",
                  hint="every named submodule that returns a tensor, keyed by its dotted name; not the root")
    rec = expect_ok(got["recurrent"], "record_activations on a model with an nn.LSTM (whose output is a tuple)",
                    hint="a module's output need not be a tensor: record only when isinstance(output, torch.Tensor)")
    C.check_type(rec, dict, "the returned mapping")
    C.check_equal(rec, ref["recurrent"][1], "recorded shapes for an LSTM model with an unused layer",
                  hint="leave out submodules whose output is not a tensor (the LSTM's tuple) and those that never ran")


@judge.probe("test_record_activations_repeated")
def probe_record_repeated(seed):
    class Pyramid(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.MaxPool1d(2)
            self.proj = nn.Conv1d(2, 2, 1)

        def forward(self, x):
            for _ in range(3):
                x = self.proj(self.pool(x))
            return x

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(5, 3)
            self.act = nn.ReLU()
            self.dec = nn.Linear(3, 5)
            self.also_enc = self.enc                         # the same module under a second name

        def forward(self, x):
            y = self.dec(self.act(self.enc(x)))
            return self.also_enc(y[:1])                      # its last call sees one row

    class Split(nn.Module):
        """Returns a tensor for a wide input and a tuple (two halves) for a narrow one."""
        def forward(self, x):
            return x[..., :2] if x.shape[-1] > 2 else (x[..., :1], x[..., 1:])

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.split = Split()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            first = self.split(x)                            # a tensor: shape (n, 2)
            halves = self.split(self.lin(first))             # a tuple: its last call returns no tensor
            return halves[0]

    gen = torch.Generator().manual_seed(seed)
    pool = nn.MaxPool1d(2)
    length = 8 * (2 + seed % 3)
    xs = (torch.randn(1, 2, 8, generator=gen), torch.randn(2, 2, length, generator=gen),
          torch.randn(3 + seed % 4, 5, generator=gen), torch.randn(2 + seed % 3, 6, generator=gen))
    return {"visible": attempt(lambda: record_activations(nn.Sequential(pool, nn.Identity(), pool), xs[0])),
            "pyramid": attempt(lambda: record_activations(Pyramid(), xs[1])),
            "tied": attempt(lambda: record_activations(Tied(), xs[2])),
            "mixed": attempt(lambda: record_activations(Mixed(), xs[3]))}


@probe_record_repeated.verdict
def _(got, ref):
    with visible():
        C.check_equal(expect_ok(got["visible"], "record_activations(Sequential(pool, Identity(), pool), x)"),
                      ref["visible"][1], "recorded shapes", hint="keep the LAST call's shape; list modules as model.named_modules() does (each module once)")
    C.check_equal(expect_ok(got["pyramid"], "record_activations on a model whose modules run three times"),
                  ref["pyramid"][1], "shapes when modules run three times", hint="keep the shape of the LAST call")
    C.check_equal(expect_ok(got["tied"], "record_activations on a model with a module registered twice"),
                  ref["tied"][1], "shapes for a module registered under two names ('enc' and 'also_enc')",
                  hint="model.named_modules() lists a shared module once, under its first name; keep its last shape")
    C.check_equal(expect_ok(got["mixed"], "record_activations on a module that returns a tensor, then a tuple"),
                  ref["mixed"][1], "shapes when a module's last call returns a tuple",
                  hint="keep the shape of the last call that returned a tensor: a later call that returns something "
                       "else changes nothing")


@judge.probe("test_record_activations_cleanup")
def probe_record_cleanup(seed):
    def hooks_left(model):
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError(f"boom {x.shape[0]}")

    gen = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, 3, generator=gen) for n in (1, 2, 2, 3, 4)]
    m = small_cnn()
    first = attempt(lambda: record_activations(m, torch.randn(1, 3, 8, 8, generator=gen)))
    visible_left = hooks_left(m)
    bad = nn.Sequential(nn.Linear(3, 3), nn.Linear(4, 2))          # raises: 3 features into Linear(4, 2)
    vis_raise = attempt(lambda: record_activations(bad, xs[0]))
    err_type = vis_raise[1].split(":")[0] if vis_raise[0] == "error" else ""
    out = {"visible": (first[0], visible_left, vis_raise[0], err_type, hooks_left(bad))}
    m = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3), nn.Tanh()), nn.Linear(3, 3))
    for x in xs[1:3]:
        record_activations(m, x)
    out["after_two"] = hooks_left(m)
    deep = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Tanh(), Boom()), nn.Linear(3, 3))
    out["raised"] = attempt(lambda: record_activations(deep, xs[3]))
    out["after_raise"] = hooks_left(deep)
    # a hook the user had before the call must survive it
    user = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    seen = []
    user[0].register_forward_hook(lambda module, inputs, output: seen.append(tuple(output.shape)))
    run = attempt(lambda: record_activations(user, xs[4]))
    user(xs[1])
    out["user"] = {"run": run[0], "hooks": len(user[0]._forward_hooks), "seen": seen}
    return out


@probe_record_cleanup.verdict
def _(got, ref):
    with visible():
        status, left, raised, err_type, left_bad = got["visible"]
        C.check_true(status == "ok", "record_activations(small_cnn(), x) raised an exception")
        C.check_true(left == 0, f"{left} hook(s) are still registered after record_activations returned", hint="keep the handles from register_forward_hook and call handle.remove() on each")
        C.check_true(raised == "error" and err_type == "RuntimeError",
                     f"on a model whose forward raises RuntimeError, record_activations gave: {raised} {err_type}", hint="let the model's exception reach the caller: try/finally, no except")
        C.check_true(left_bad == 0, f"{left_bad} hook(s) left behind after a forward pass that raised", hint="remove the hooks in a finally: block")
    C.check_true(got["after_two"] == 0, f"{got['after_two']} hook(s) left after two calls on the same model")
    C.check_true(got["raised"] == ref["raised"],
                 f"a forward that raises {ref['raised'][1]} deep inside the model: record_activations gave "
                 f"{got['raised'][0]} {got['raised'][1] if got['raised'][0] == 'error' else ''}".rstrip(),
                 hint="do not catch the exception (no except, or re-raise it unchanged): the caller must see it")
    C.check_true(got["after_raise"] == 0, f"{got['after_raise']} hook(s) left behind after a forward pass that raised", hint="remove the hooks in a finally: block")
    u, ru = got["user"], ref["user"]
    C.check_true(u["run"] == "ok" and u["hooks"] == ru["hooks"] and u["seen"] == ru["seen"],
                 f"a forward hook the model had before the call: {u['hooks']} registered afterwards (expected "
                 f"{ru['hooks']}), it saw the calls {u['seen']} (expected {ru['seen']})",
                 hint="remove only the handles you registered; never clear module._forward_hooks")


@judge.probe("test_record_activations_fresh")
def probe_record_fresh(seed):
    class CountingNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return self.body(x)

    gen = torch.Generator().manual_seed(seed)
    xs = [torch.randn(n, k, generator=gen) for n, k in ((2, 3), (6, 4), (3, 4), (5 + seed % 3, 4))]
    record_activations(nn.Sequential(nn.Linear(3, 5), nn.ReLU()), xs[0])
    vis = attempt(lambda: record_activations(nn.Sequential(nn.Linear(4, 1)), xs[1]))
    net = CountingNet()
    first = record_activations(net, xs[2])
    calls_once = net.calls
    second = record_activations(net, xs[3])
    other = record_activations(nn.Sequential(nn.Linear(4, 3)), xs[3])
    return {"visible": vis, "calls": calls_once, "second": second, "other": other,
            "distinct": first is not second and second is not other}


@probe_record_fresh.verdict
def _(got, ref):
    with visible():
        C.check_equal(expect_ok(got["visible"], "a second record_activations call"), ref["visible"][1],
                      "shapes returned by the second call", hint="create the dict inside the function (a mutable default argument is shared between calls)")
    C.check_true(got["calls"] == 1, f"record_activations ran the model's forward {got['calls']} times; expected once",
                 hint="one forward pass: the hooks record everything during it")
    C.check_equal(got["second"], ref["second"], "shapes from a second call on the same model with another batch",
                  hint="nothing from earlier calls: a new dict each call")
    C.check_equal(got["other"], ref["other"], "shapes from a call on another model",
                  hint="nothing from earlier calls: a new dict each call")
    C.check_true(got["distinct"] is True, "two calls returned the same dict object",
                 hint="create the dict inside the function, not as a default argument or a global")


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
WHY = {
    "adaptive_depth": "Assigning block to self after super().__init__() registers it as a submodule. h and steps are locals, so each call starts afresh; .item() only reads the change for the Python stop test, while h = new keeps every application in the graph, and the strict < never fires when tol <= 0.",
    "sgd_step": "backward() adds into .grad, so stale gradients are set to None first and one backward gives exactly this loss's gradient. The update runs in place under no_grad (same leaves, not recorded) and skips parameters whose grad is None, so unused ones keep their value whatever the weight decay.",
    "pooled_scores": "One broadcast comparison, arange(T) < lengths[:, None], builds the (B, T) mask on the device: the op count does not depend on B and nothing is read back. Multiplying x by it zeroes the padding in a new tensor (zero gradient there); the sum over time / lengths is each mean.",
    "record_activations": "make_hook(name) binds each name when its hook is made, named_modules() lists a shared module once, and each call overwrites its entry, so the last tensor output wins. The handles are removed in finally with no except: the hooks go even when model(x) raises, and the error propagates.",
    "sliding_windows": "Element [..., i, j] is x[..., i * step + j], which sits (i * step + j) * s storage positions past x[..., 0] (s = x.stride(-1)): so the window dimension steps step * s, the position in a window s, the leading dimensions keep x's strides and window 0 starts at x's own storage offset. as_strided with exactly these is a view on any layout (transposed, offset, stride 0); max(0, ...) makes no window a count of 0, and floor division leaves a partial window out.",
    "matmul_flops": "A TorchDispatchMode sits below autograd, so it sees F.linear as addmm and every mm/bmm that backward() runs. Each product's FLOPs come from its last two arguments (addmm's first is the bias): 2*M*K*N, times B for bmm. The dict is local to the call, and `with` pops the mode even when fn raises.",
}
