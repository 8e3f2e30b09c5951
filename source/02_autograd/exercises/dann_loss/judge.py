"""Exercise 'dann_loss' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# =====================================================================================================
# Exercise 2.4 · dann_loss
# clause -> test
#   h = encoder(x) once, feeding both heads; x (B, features), domain 0/1, y real for source only ... every test
#   a target sample's y is a placeholder (-1, or >= classes): never given to cross_entropy ........ test_dann_value
#   returns a 0-dim tensor task + adv: task = mean CE over source samples only (0 when none),
#     adv = mean CE of the domain head over all samples; any lambd; a deeper encoder ............ test_dann_value
#   no source sample: the task head takes no part, its .grad as before (None stays None, held
#     gradients keep their values), the encoder gets -lambd times adv's gradient only ............ test_dann_heads,
#                                                                                                  test_dann_encoder
#   task head: gradient of task; domain head: gradient of adv, normal sign ....................... test_dann_heads
#   encoder: gradient of task minus lambd times gradient of adv; lambd 0, 0.5, 1, a random one,
#     other sizes, a deeper encoder, a batch without source samples ............................. test_dann_encoder
#   lambd belongs to the call (two calls, one graph) ............................................. test_dann_per_call
#   no backward inside, no .grad (None stays None, gradients held from earlier micro-batches stay
#     as they were), parameters and inputs unchanged, nothing left behind (earlier calls change
#     nothing later); the encoder runs once per call ............................................. test_dann_per_call
# =====================================================================================================

@judge.shared
def dann_case(seed, n=8, in_features=4, hidden=6, classes=3, deep=False, domains=None, placeholder=None):
    """(encoder, task_head, domain_head, x, y, domain) for one hidden case; every input from explicit seeds.
    ``placeholder``: the y entry of every target sample (not a class index), else a random class."""
    if deep:
        torch.manual_seed(seed % 100000)
        nn_ = torch.nn
        encoder = nn_.Sequential(nn_.Linear(in_features, hidden), nn_.GELU(), nn_.Linear(hidden, hidden),
                                 nn_.Tanh()).double()
        task_head = nn_.Linear(hidden, classes).double()
        domain_head = nn_.Sequential(nn_.Linear(hidden, 3), nn_.Tanh(), nn_.Linear(3, 2)).double()
    else:
        encoder, task_head, domain_head = make_dann(in_features, hidden, classes, seed=seed % 1000)
    g = torch.Generator().manual_seed(seed + 7)
    x = torch.randn(n, in_features, generator=g, dtype=torch.float64)
    y = torch.randint(0, classes, (n,), generator=g)
    if domains is None:
        domain = torch.randint(0, 2, (n,), generator=g)
        domain[0], domain[-1] = 0, 1                       # both domains present
    else:
        domain = torch.tensor(domains)
    if placeholder is not None:
        y = torch.where(domain == 1, torch.full_like(y, placeholder), y)
    return encoder, task_head, domain_head, x, y, domain


@judge.shared
def dann_grads(modules):
    return [None if p.grad is None else p.grad.clone() for m in modules for p in m.parameters()]


def _check_grads(got, ref, label, hint):
    C.check_equal(len(got), len(ref), name=f"number of {label} gradients")
    for k, (g, r) in enumerate(zip(got, ref)):
        C.check_close(_grad_or_fail(g, f"{label} parameter {k}", hint="the loss must reach it: no detach, no no_grad"),
                      r, name=f"{label} parameter {k}.grad", hint=hint)


@judge.probe("test_dann_value")
def probe_dann_value(seed):
    enc, task, dom = make_dann()
    vx, vy, _ = dann_batch(6)
    vd = torch.tensor([0, 0, 1, 0, 1, 1])
    out = {"visible": dann_loss(enc, task, dom, vx, vy, vd, lambd=0.5), "cases": []}
    specs = [("8 mixed samples, lambd 1", dict(n=8), 1.0),
             ("5 target samples only (no label)", dict(n=5, domains=[1, 1, 1, 1, 1]), 1.0),
             ("4 source samples only", dict(n=4, domains=[0, 0, 0, 0], classes=5), 2.5),
             ("a deeper encoder, 7 samples", dict(n=7, deep=True, in_features=3, hidden=5), 0.0),
             ("one source sample among 6", dict(n=6, domains=[1, 1, 0, 1, 1, 1], classes=4), 0.7),
             ("8 mixed samples, target y = -1", dict(n=8, placeholder=-1), 1.0),
             ("6 mixed samples, target y = 7 (3 classes)", dict(n=6, placeholder=7), 0.4),
             ("4 target samples only, y = -1", dict(n=4, domains=[1, 1, 1, 1], placeholder=-1), 1.0)]
    cases = [(label, dann_case(seed + 11 * k, **kw), lambd) for k, (label, kw, lambd) in enumerate(specs)]
    for label, (e, t, d, x, y, dm), lambd in cases:
        try:
            loss = dann_loss(e, t, d, x, y, dm, lambd=lambd)
        except (IndexError, RuntimeError) as err:              # cross_entropy on a placeholder label
            loss = f"{type(err).__name__}: {str(err)[:200]}"
        out["cases"].append({"label": label, "loss": loss})
    return out


@probe_dann_value.verdict
def _(got, ref):
    hint = ("task: cross-entropy over the source samples only (domain == 0), 0 when there are none; adv: the domain "
            "head's cross-entropy over all samples; return task + adv (lambd changes gradients, not the value)")
    if any(isinstance(c["loss"], str) for c in got["cases"]):
        bad = next(c for c in got["cases"] if isinstance(c["loss"], str))
        _fail(f"dann_loss ({bad['label']}) raised {bad['loss']!r:.300}",
              "a target sample's y is a placeholder, not a class index (-1, or a value past the last class): select "
              "the source samples before cross_entropy sees y (y[source]), do not compute it on every sample and "
              "mask afterwards")
    with visible():
        C.check_tensor(got["visible"], name="dann_loss(...)", shape=(), hint="return task + adv, a 0-dim tensor")
        C.check_close(got["visible"], ref["visible"], name="dann_loss on 3 source and 3 target samples", hint=hint)
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_tensor(g["loss"], name=f"dann_loss ({r['label']})", shape=())
        C.check_close(g["loss"], r["loss"], name=f"dann_loss ({r['label']})", hint=hint)


@judge.probe("test_dann_heads")
def probe_dann_heads(seed):
    out = []
    enc, task, dom = make_dann()
    vx, vy, vd = dann_batch(8, seed=1)
    dann_loss(enc, task, dom, vx, vy, vd, lambd=0.5).backward()
    out.append({"label": "the notebook's example", "task": dann_grads([task]), "domain": dann_grads([dom])})
    for k, (kw, lambd) in enumerate(((dict(n=9, deep=True), 1.7), (dict(n=6, classes=5, hidden=4), 0.3),
                                     (dict(n=7, in_features=2), 3.0))):
        e, t, d, x, y, dm = dann_case(seed + 5 * k + 1, **kw)
        dann_loss(e, t, d, x, y, dm, lambd=lambd).backward()
        out.append({"label": f"case {k + 1}, lambd {lambd}", "task": dann_grads([t]), "domain": dann_grads([d])})
    # no source sample: the task head takes no part in the loss (its .grad as before: None, or held gradients)
    for k, (kw, held) in enumerate(((dict(n=5, domains=[1, 1, 1, 1, 1], placeholder=-1), False),
                                    (dict(n=4, domains=[1, 1, 1, 1], deep=True), True))):
        e, t, d, x, y, dm = dann_case(seed + 31 + k, **kw)
        if held:
            gh = torch.Generator().manual_seed(seed + 41)
            for p in t.parameters():
                p.grad = torch.randn(p.shape, generator=gh, dtype=p.dtype)
        dann_loss(e, t, d, x, y, dm, lambd=1.3).backward()
        out.append({"label": f"{len(dm)} target samples and no source sample" + (", task head holding gradients"
                                                                                  if held else ""),
                    "task": dann_grads([t]), "domain": dann_grads([d])})
    return out


@probe_dann_heads.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        if "no source" in r["label"]:
            C.check_equal(len(g["task"]), len(r["task"]), name=f"number of task head gradients ({r['label']})")
            for k, (gg, rr) in enumerate(zip(g["task"], r["task"])):
                name = f"task head parameter {k}.grad after backward ({r['label']})"
                hint = ("with no source sample the task head takes no part in the loss: task is a 0-dim zero with no "
                        "graph, not task_head(...) times 0 or a sum divided by a count, which put zeros into .grad")
                if rr is None:
                    C.check_true(gg is None, f"{name} is {C.describe(gg)}; expected None (as before the call)", hint=hint)
                else:
                    C.check_close(_grad_or_fail(gg, name, hint=hint), rr, name=f"{name} (held before the call)",
                                  hint=hint)
            _check_grads(g["domain"], r["domain"], f"domain head ({r['label']})",
                         "the domain head learns to tell the domains apart, with or without source samples")
            continue
        with visible() if i == 0 else nullcontext():
            _check_grads(g["task"], r["task"], f"task head ({r['label']})",
                         "the task head learns the task loss only, on the source samples")
            _check_grads(g["domain"], r["domain"], f"domain head ({r['label']})",
                         "the domain head learns to tell the domains apart: its gradient keeps its sign, the "
                         "reversal sits between the encoder and the domain head")


@judge.probe("test_dann_encoder")
def probe_dann_encoder(seed):
    out = []
    enc, task, dom = make_dann()
    vx, vy, vd = dann_batch(8, seed=2)
    dann_loss(enc, task, dom, vx, vy, vd, lambd=0.5).backward()
    out.append({"label": "the notebook's example, lambd 0.5", "encoder": dann_grads([enc])})
    lambd_rand = 0.05 + 3.0 * float(torch.rand((), generator=torch.Generator().manual_seed(seed)))
    specs = [(dict(n=8), 0.0), (dict(n=8), 1.0), (dict(n=10, deep=True, hidden=5), 2.5),
             (dict(n=6, classes=4, in_features=3), lambd_rand), (dict(n=5, domains=[1, 1, 1, 1, 1]), 1.5)]
    for k, (kw, lambd) in enumerate(specs):
        e, t, d, x, y, dm = dann_case(seed + 3 * k + 2, **kw)
        dann_loss(e, t, d, x, y, dm, lambd=lambd).backward()
        out.append({"label": f"case {k + 1}, lambd {lambd:.3g}", "encoder": dann_grads([e])})
    return out


@probe_dann_encoder.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            _check_grads(g["encoder"], r["encoder"], f"encoder ({r['label']})",
                         "the encoder gets the task gradient minus lambd times the domain gradient: reverse the "
                         "domain branch only (not h itself, which the task head uses too)")


@judge.probe("test_dann_per_call")
def probe_dann_per_call(seed):
    out = {}
    enc, task, dom = make_dann()
    b1, b2 = dann_batch(6, seed=3), dann_batch(6, seed=4)
    l1 = dann_loss(enc, task, dom, *b1, lambd=1.0)
    l2 = dann_loss(enc, task, dom, *b2, lambd=3.0)
    out["visible_no_grad"] = all(p.grad is None for p in enc.parameters())
    (l1 + l2).backward()
    out["visible"] = dann_grads([enc])
    # two calls on one batch, different lambd, a deeper encoder
    e, t, d, x, y, dm = dann_case(seed + 21, n=7, deep=True)
    la, lb = dann_loss(e, t, d, x, y, dm, lambd=0.2), dann_loss(e, t, d, x, y, dm, lambd=4.0)
    (la + 2 * lb).backward()
    out["two_calls"] = dann_grads([e, t, d])
    # earlier calls (results dropped) must change nothing later; the call itself changes nothing
    e, t, d, x, y, dm = dann_case(seed + 22, n=8)
    attributes_before = [set(vars(m)) for m in (e, t, d)]
    calls = []
    counter = e.register_forward_pre_hook(lambda module, args: calls.append(1))
    dann_loss(e, t, d, x, y, dm, lambd=1.0)
    counter.remove()
    out["encoder_calls"] = len(calls)
    gh = torch.Generator().manual_seed(seed + 23)
    for p in (p for m in (e, t, d) for p in m.parameters()):   # gradients held from earlier micro-batches
        p.grad = torch.randn(p.shape, generator=gh, dtype=p.dtype)
    params_before = [p.detach().clone() for m in (e, t, d) for p in m.parameters()]
    inputs_before = [x.clone(), y.clone(), dm.clone()]
    for _ in range(3):
        dann_loss(e, t, d, x, y, dm, lambd=2.0)
    loss = dann_loss(e, t, d, x, y, dm, lambd=0.5)
    out["grads_after_calls"] = dann_grads([e, t, d])
    out["params_changed"] = [not torch.equal(a, p.detach()) for a, p in zip(params_before, [p for m in (e, t, d)
                                                                                             for p in m.parameters()])]
    out["inputs_changed"] = [not torch.equal(a, b) for a, b in zip(inputs_before, (x, y, dm))]
    out["attributes_added"] = [len(set(vars(m)) - keys) for m, keys in zip((e, t, d), attributes_before)]
    loss.backward()
    out["after_calls"] = dann_grads([e, t, d])
    return out


@probe_dann_per_call.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_no_grad"] is True, "an encoder parameter has a .grad before any backward",
                     hint="dann_loss only builds the loss: no backward inside")
        _check_grads(got["visible"], ref["visible"], "encoder after two calls (lambd 1 and 3) and one backward",
                     "keep lambd with this call (ctx, or a hook on a tensor made in this call), not on a class")
    _check_grads(got["two_calls"], ref["two_calls"], "model after two calls on one batch (lambd 0.2 and 4)",
                 "each call reverses by its own lambd")
    for k, (g, r) in enumerate(zip(got["grads_after_calls"], ref["grads_after_calls"])):
        if g is None:
            _fail(f"parameter {k} held a gradient (accumulated over earlier micro-batches) and after four dann_loss "
                  "calls its .grad is None", "dann_loss must leave .grad alone: no zero_grad() inside")
        C.check_close(g, r, name=f"parameter {k}.grad, held before four dann_loss calls (no backward), after them",
                      hint="dann_loss must not call backward, zero_grad or write .grad: gradients accumulated over "
                           "earlier micro-batches stay as they were")
    C.check_true(not any(got["params_changed"]), "dann_loss changed a parameter", hint="build the loss only")
    C.check_true(not any(got["inputs_changed"]), "dann_loss changed x, y or domain in place")
    added = got["attributes_added"]
    C.check_true(type(added) is list and all(type(n) is int for n in added) and not any(added),
                 f"dann_loss left new attributes on the modules (encoder, task head, domain head: {added})",
                 hint="keep what one call computes in local names: an attribute on a module outlives the call and "
                      "holds its graph")
    C.check_equal(got["encoder_calls"], ref["encoder_calls"], name="how many times one dann_loss call ran the encoder",
                  hint="compute h = encoder(x) once and feed both heads from it")
    _check_grads(got["after_calls"], ref["after_calls"], "model after three earlier calls (lambd 2) and one call "
                 "(lambd 0.5)", "a hook registered on a module or a parameter stays after the call and acts on every "
                 "later backward: put the reversal on a tensor made in this call")


WHY['dann_loss'] = "The reversal hook sits on h.clone(), a tensor made in this call that feeds only the domain head, so only that branch's gradient reaches the encoder times -lambd, using this call's lambd, with no hook on a module. An empty source mask gives a 0-dim zero with no graph (h.new_zeros(())), not the NaN of an empty mean, and the task head stays out of the loss."
