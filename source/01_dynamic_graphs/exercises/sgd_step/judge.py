"""Exercise 'sgd_step' of 01_dynamic_graphs: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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


WHY['sgd_step'] = "backward() adds into .grad, so stale gradients are set to None first and one backward gives exactly this loss's gradient. The update runs in place under no_grad (same leaves, not recorded) and skips parameters whose grad is None, so unused ones keep their value whatever the weight decay."
