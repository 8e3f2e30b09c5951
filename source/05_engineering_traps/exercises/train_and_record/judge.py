"""Exercise 'train_and_record' of 05_engineering_traps: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 5.2a · train_and_record (a hook that leaks) -------------------------------------------------
# clause -> test
#   zero_grad, forward, CE, backward, step per batch ..................... test_record_values (parameters;
#                                                                           the models hold stale gradients)
#   record layer's output in every forward, before its step, via a hook,
#     layer nested inside the model ...................................... test_record_values (residual block,
#                                                                            conv features (N, C, L))
#   (losses as Python floats, activations concatenated along dim 0) ..... test_record_values
#   activations without autograd history ................................. test_record_no_graph
#   no graph outlives its step (5 vs 40 batches), none after return ..... test_record_no_graph
#   hook gone after return and after an exception; exception reaches
#     the caller; other hooks on layer kept ............................. test_record_hooks
#   (every cell also checks the returned values against the reference)


@judge.shared
def _j5_record_models(seed):
    """(label, model, layer, batches, optimizer kwargs) for Exercise 5.2a: layers nested in blocks, float64."""
    import torch.nn as _nn

    class Residual(_nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = _nn.Linear(6, 8)
            self.block = _nn.Sequential(_nn.Linear(8, 8), _nn.ReLU(), _nn.Linear(8, 8))
            self.head = _nn.Linear(8, 3)

        def forward(self, x):
            h = torch.tanh(self.inp(x))
            return self.head(h + self.block(h))

    class ConvNet(_nn.Module):
        def __init__(self):
            super().__init__()
            self.features = _nn.Sequential(_nn.Conv1d(2, 4, 3, padding=1), _nn.Tanh())
            self.head = _nn.Linear(4, 3)

        def forward(self, x):
            return self.head(self.features(x).mean(-1))

    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed % 100000 + 71)
    res = Residual().double()
    conv = ConvNet().double()
    res_batches = [(torch.randn(n, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
                   for n in (5, 5, 2)]
    conv_batches = [(torch.randn(n, 2, 7, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
                    for n in (3, 4)]
    return [("a ReLU inside a residual block, momentum 0.9", res, res.block[1], res_batches,
             {"lr": 0.1, "momentum": 0.9}),
            ("a Tanh inside a conv feature block (N, C, L outputs)", conv, conv.features[1], conv_batches,
             {"lr": 0.2})]


@judge.probe("test_record_values")
def probe_record_values(seed):
    m = make_mlp(0)
    visible = train_and_record(m, L.make_batches(4, seed=1), torch.optim.SGD(m.parameters(), lr=0.1), m[1])
    cases = []
    for label, model, layer, batches, kw in _j5_record_models(seed):
        # gradients left from earlier work: zero_grad comes first in every step, so they never reach a step
        sum(p.sum() for p in model.parameters()).backward()
        out = train_and_record(model, batches, torch.optim.SGD(model.parameters(), **kw), layer)
        cases.append({"label": label, "out": out, "params": [p.detach().clone() for p in model.parameters()]})
    return {"visible": visible, "cases": cases}


def check_record(out, want, label, rtol=1e-9, atol=1e-12):
    C.check_type(out, (tuple, list), f"train_and_record(...) ({label})", hint="return (losses, activations)")
    C.check_equal(len(out), 2, f"len(train_and_record(...)) ({label})", hint="return (losses, activations)")
    losses, acts = out
    C.check_type(losses, list, f"losses ({label})")
    C.check_equal(len(losses), len(want[0]), f"number of losses ({label})", hint="one per batch")
    for i, (v, w) in enumerate(zip(losses, want[0])):
        C.check_true(type(v) is float, f"losses[{i}] ({label}) is {C.describe(v)}, expected a Python float",
                     hint="append loss.item()")
        C.check_float(v, w, f"losses[{i}] ({label})", rel=rtol, abs_tol=atol,
                      hint="zero_grad, forward, cross_entropy, backward, step, once per batch")
    C.check_tensor(acts, f"activations ({label})", shape=tuple(want[1].shape), dtype=want[1].dtype,
                   hint="every forward's output of `layer`, concatenated along dimension 0")
    C.check_close(acts, want[1], f"activations ({label})", rtol=rtol, atol=atol,
                  hint="record `layer`'s output in a forward hook, as computed in that batch's forward")


@probe_record_values.verdict
def _(got, ref):
    with visible():
        check_record(got["visible"], ref["visible"], "visible: make_mlp(0), the Tanh", rtol=1e-5, atol=1e-6)
    for g, r in zip(got["cases"], ref["cases"]):
        check_record(g["out"], r["out"], r["label"])
        for k, (p, q) in enumerate(zip(g["params"], r["params"])):
            C.check_close(p, q, f"parameter {k} after the epoch ({r['label']})", rtol=1e-9, atol=1e-12,
                          hint="one optimizer step per batch; the hook must not change what the model computes")


@judge.probe("test_record_no_graph")
def probe_record_no_graph(seed):
    m = make_mlp(2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    vis = L.run_probed(train_and_record, m, L.make_batches(5, seed=2), opt, m[1], optimizer=opt)
    runs = {}
    for nb in (5, 40):
        label, model, layer, _, kw = _j5_record_models(seed)[0]
        opt = torch.optim.SGD(model.parameters(), **kw)
        g = torch.Generator().manual_seed(seed + nb)
        batches = [(torch.randn(4, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (4,), generator=g))
                   for _ in range(nb)]
        run = L.run_probed(train_and_record, model, batches, opt, layer, optimizer=opt)
        runs[nb] = {"nodes": run["nodes"], "final": run["final_nodes"], "result": run["result"]}
    return {"visible": {"nodes": vis["nodes"], "final": vis["final_nodes"], "result": vis["result"]}, "runs": runs}


def check_no_history(out, label):
    acts = out[1] if isinstance(out, (tuple, list)) and len(out) == 2 else None
    C.check_tensor(acts, f"activations ({label})", hint="return (losses, activations): a tensor")
    C.check_true(acts.grad_fn is None and not acts.requires_grad, f"the activations ({label}) carry autograd history",
                 hint="store output.detach() in the hook")


@probe_record_no_graph.verdict
def _(got, ref):
    with visible():
        check_record(got["visible"]["result"], ref["visible"]["result"], "visible: make_mlp(2)", rtol=1e-5, atol=1e-6)
        C.check_equal(got["visible"]["final"], 0, "graph nodes still reachable after train_and_record returned")
        check_no_history(got["visible"]["result"], "visible")
    for nb in (5, 40):
        g, r = got["runs"][nb], ref["runs"][nb]
        check_record(g["result"], r["result"], f"{nb} batches")
        check_no_history(g["result"], f"{nb} batches")
        C.check_equal(len(g["nodes"]), len(r["nodes"]), f"optimizer steps for {nb} batches")
        C.check_equal(g["final"], 0, f"graph nodes reachable after train_and_record returned ({nb} batches)",
                      hint="neither the losses nor the recorded outputs may hold a graph")
        C.check_true(max(g["nodes"]) == min(g["nodes"]),
                     f"the graph alive at each optimizer step changes ({nb} batches): {g['nodes'][:8]} ...",
                     hint="a stored hook output keeps the graph before the layer: store output.detach()")
    p5, p40 = max(got["runs"][5]["nodes"]), max(got["runs"][40]["nodes"])
    C.check_true(p40 <= p5, f"the live graph grows with the number of batches: {p5} nodes for 5, {p40} for 40",
                 hint="something keeps a tensor with history from every step (a hook output, a loss)")


@judge.probe("test_record_hooks")
def probe_record_hooks(seed):
    def hook_ids(mod):
        return list(mod._forward_hooks)

    out = {}
    m = make_mlp(3)
    seen = []
    theirs = m[1].register_forward_hook(lambda mod, inp, o: seen.append(1))
    before = hook_ids(m[1])
    train_and_record(m, L.make_batches(2, seed=3), torch.optim.SGD(m.parameters(), lr=0.1), m[1])
    out["visible_after"] = hook_ids(m[1]) == before
    try:
        train_and_record(m, FailingLoader(L.make_batches(2, seed=4)), torch.optim.SGD(m.parameters(), lr=0.1), m[1])
        out["visible_raised"] = None
    except RuntimeError as err:
        out["visible_raised"] = str(err)
    out["visible_after_raise"] = hook_ids(m[1]) == before
    out["visible_seen"] = len(seen)
    theirs.remove()
    label, model, layer, batches, kw = _j5_record_models(seed)[1]
    mine = []
    theirs = layer.register_forward_hook(lambda mod, inp, o: mine.append(o.shape[0]))
    pre = layer.register_forward_pre_hook(lambda mod, inp: None)
    before = (hook_ids(layer), list(layer._forward_pre_hooks))
    first = train_and_record(model, batches, torch.optim.SGD(model.parameters(), **kw), layer)
    out["after"] = (hook_ids(layer), list(layer._forward_pre_hooks)) == before
    second = train_and_record(model, batches, torch.optim.SGD(model.parameters(), **kw), layer)
    out["second_rows"] = tuple(second[1].shape) if isinstance(second, (tuple, list)) and len(second) == 2 \
        and isinstance(second[1], torch.Tensor) else None
    out["first"] = first
    n_before = len(mine)
    model(batches[0][0])   # a forward after the call: only the other hook may see it
    out["theirs_after_call"] = len(mine) - n_before
    try:
        train_and_record(model, FailingLoader(batches[:1]), torch.optim.SGD(model.parameters(), **kw), layer)
        out["raised"] = None
    except RuntimeError as err:
        out["raised"] = str(err)
    out["after_raise"] = (hook_ids(layer), list(layer._forward_pre_hooks)) == before
    theirs.remove()
    pre.remove()
    return out


@probe_record_hooks.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_after"] is True, "the layer's forward hooks changed after train_and_record returned",
                     hint="remove the handle register_forward_hook gave you, and only that one")
        C.check_equal(got["visible_raised"], ref["visible_raised"], "the exception the loop raised, as the caller sees it",
                      hint="let the exception propagate (try/finally, no except)")
        C.check_true(got["visible_after_raise"] is True, "the layer's forward hooks changed after an exception",
                     hint="remove your hook in a finally: block")
        C.check_equal(got["visible_seen"], ref["visible_seen"], "forwards seen by the other hook")
    check_record(got["first"], ref["first"], "a conv model whose layer has other hooks")
    C.check_true(got["after"] is True, "after train_and_record returned, the layer's forward (pre-)hooks are not "
                 "the ones it had before", hint="remove exactly your own handle; leave other hooks alone")
    C.check_equal(got["second_rows"], ref["second_rows"], "shape of the activations of a second call",
                  hint="a hook left from the first call would record twice per forward")
    C.check_equal(got["theirs_after_call"], ref["theirs_after_call"],
                  "forwards the other hook saw after train_and_record returned",
                  hint="other hooks on the layer must keep working")
    C.check_equal(got["raised"], ref["raised"], "the exception the loop raised (conv model), as the caller sees it")
    C.check_true(got["after_raise"] is True, "after an exception in the loop, the layer's hooks are not the ones it had",
                 hint="remove your hook in a finally: block")


WHY['train_and_record'] = "The hook appends output.detach(), which keeps the values but not the graph, so no batch's graph outlives its step and the activations have no history. Only the handle this function registered is removed, in finally: the hook is gone after a return or an exception, other hooks stay."
