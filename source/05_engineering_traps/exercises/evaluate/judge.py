"""Exercise 'evaluate' of 05_engineering_traps: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

@judge.shared
def _j5_modes(model):
    return [(name, m.training) for name, m in model.named_modules()]


# --- Exercise 5.2b · evaluate ---------------------------------------------------------------------------------
# clause -> test
#   mean CE per target value: sum of reduction="sum" / sum of y.numel(),
#     batches of different sizes; (N,) and (N, d1, ...) targets; float test_evaluate_value
#   in evaluation mode (Dropout off, BN running stats, not updated) ..... test_evaluate_value, test_evaluate_modes
#   no autograd graph; no .grad touched ................................. test_evaluate_no_graph
#   every submodule's mode restored, mixed modes, even if the loop raises test_evaluate_modes

@judge.probe("test_evaluate_value")
def probe_eval_value(seed):
    m = make_net(0)
    visible_value = evaluate(m, L.make_batches(3, seed=4))
    g = torch.Generator().manual_seed(seed)
    batches = [(torch.randn(bs, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (bs,), generator=g))
               for bs in (7, 7, 3)]
    m = make_net(9, torch.float64, p=0.9)
    rm_before = (m[1].running_mean.clone(), m[1].running_var.clone(), int(m[1].num_batches_tracked))
    first = evaluate(m, batches)
    second = evaluate(m, batches)
    loader = DataLoader(TensorDataset(torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches])),
                        batch_size=5)
    m2 = make_net(10, torch.float64, p=0.5)
    via_loader = evaluate(m2, loader)
    _g = torch.Generator().manual_seed(8)
    tag_batches = [(torch.randn(n, 6, 5, generator=_g), torch.randint(0, 3, (n, 5), generator=_g)) for n in (4, 2)]
    visible_tagger = evaluate(make_tagger(1), tag_batches)
    tagger_batches = [(torch.randn(n, 6, length, generator=g, dtype=torch.float64),
                       torch.randint(0, 3, (n, length), generator=g)) for n, length in ((3, 4), (5, 2), (1, 6))]
    tagger = evaluate(make_tagger(11, torch.float64, p=0.7), tagger_batches)
    torch.manual_seed(seed % 10000 + 5)
    seg = nn.Sequential(nn.Conv2d(2, 4, 1), nn.BatchNorm2d(4), nn.Dropout(0.5), nn.Conv2d(4, 3, 1)).double().train()
    seg_batches = [(torch.randn(n, 2, 3, 2, generator=g, dtype=torch.float64),
                    torch.randint(0, 3, (n, 3, 2), generator=g)) for n in (2, 3)]
    segment = evaluate(seg, seg_batches)
    return {"visible": visible_value, "first": first, "second": second, "rm_before": rm_before,
            "rm_after": (m[1].running_mean.clone(), m[1].running_var.clone(), int(m[1].num_batches_tracked)),
            "loader": via_loader, "visible_tagger": visible_tagger, "tagger": tagger, "segment": segment}


@probe_eval_value.verdict
def _(got, ref):
    hint = "model.eval() for the loop (Dropout off, BatchNorm on its running statistics); sum over samples / count"
    with visible():
        C.check_float(got["visible"], ref["visible"], "evaluate(make_net(0), batches)", rel=1e-5, abs_tol=1e-6, hint=hint)
    C.check_float(got["first"], ref["first"], "evaluate(...) on float64 batches of 7, 7 and 3 rows", rel=1e-9,
                  abs_tol=1e-12, hint="mean over samples, not the mean of batch means (the last batch is smaller); "
                                      "and in eval mode")
    C.check_float(got["second"], ref["second"], "a second evaluate(...) of the same model", rel=1e-9, abs_tol=1e-12,
                  hint="the same model on the same data must give the same value: no Dropout, no BatchNorm update")
    for k, name in enumerate(("running_mean", "running_var")):
        C.check_close(got["rm_after"][k], ref["rm_before"][k], f"BatchNorm {name} after evaluate",
                      hint="a training-mode forward updates BatchNorm's running statistics: use model.eval()")
    C.check_equal(got["rm_after"][2], ref["rm_before"][2], "BatchNorm num_batches_tracked after evaluate",
                  hint="model.eval() before the loop")
    C.check_float(got["loader"], ref["loader"], "evaluate(...) over a DataLoader with batch_size=5", rel=1e-9,
                  abs_tol=1e-12, hint=hint)
    per_position = "divide by the number of target values (the sum of y.numel()), not by the number of rows"
    with visible():
        C.check_float(got["visible_tagger"], ref["visible_tagger"], "evaluate(make_tagger(1), batches with (N, 5) "
                      "targets)", rel=1e-5, abs_tol=1e-6, hint=per_position)
    C.check_float(got["tagger"], ref["tagger"], "evaluate(...) of a float64 tagger, (N, L) targets, batches of 3, 5 and 1 "
                  "sequences of lengths 4, 2 and 6",
                  rel=1e-9, abs_tol=1e-12, hint=per_position)
    C.check_float(got["segment"], ref["segment"], "evaluate(...) of a segmentation model, (N, 3, 2) targets",
                  rel=1e-9, abs_tol=1e-12, hint=per_position)


@judge.probe("test_evaluate_no_graph")
def probe_eval_no_graph(seed):
    m = make_mlp(0)
    visible_saved = L.run_probed(evaluate, m, L.make_batches(5, seed=5), model=m)["saved_packed"]
    rows = []
    for nb in (2, 20):
        m = make_mlp(10 + nb)
        run = L.run_probed(evaluate, m, L.make_batches(nb, seed=60 + nb + seed % 100), model=m)
        rows.append({"nb": nb, "saved": run["saved_packed"], "final": run["final_nodes"],
                     "grads_none": all(p.grad is None for p in m.parameters()), "value": run["result"]})
    m = make_net(4)
    g = torch.Generator().manual_seed(seed)
    stale = [torch.randn(p.shape, generator=g) for p in m.parameters()]
    for p, s in zip(m.parameters(), stale):
        p.grad = s.clone()
    run = L.run_probed(evaluate, m, L.make_batches(3, seed=seed % 100), model=m)
    return {"visible": visible_saved, "rows": rows, "bn_saved": run["saved_packed"], "stale": stale,
            "grads_after": [None if p.grad is None else p.grad.clone() for p in m.parameters()]}


@probe_eval_no_graph.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], 0, "tensors saved for backward during evaluate",
                      hint="wrap the loop in `with torch.no_grad():` (or torch.inference_mode())")
    for row, want in zip(got["rows"], ref["rows"]):
        C.check_float(row["value"], want["value"], f"evaluate(...) of an MLP over {row['nb']} batches", rel=1e-5,
                      abs_tol=1e-6, hint="the mean cross-entropy per target value, in eval mode")
        C.check_equal(row["saved"], 0, f"tensors saved for backward during evaluate ({row['nb']} batches)",
                      hint="no graph at all: torch.no_grad() around the whole loop")
        C.check_equal(row["final"], 0, f"graph nodes reachable after evaluate returned ({row['nb']} batches)")
        C.check_true(row["grads_none"] is True, f"evaluate set .grad on the parameters ({row['nb']} batches)",
                     hint="evaluate must not call backward")
    C.check_equal(got["bn_saved"], 0, "tensors saved for backward while evaluating a model with BatchNorm and Dropout")
    for k, (g, s) in enumerate(zip(got["grads_after"], ref["stale"])):
        C.check_true(g is not None, f"evaluate cleared the gradient of parameter {k}",
                     hint="evaluate must leave .grad alone (no zero_grad, no backward)")
        C.check_close(g, s, f"gradient of parameter {k} after evaluate", hint="evaluate must leave .grad alone")


@judge.probe("test_evaluate_modes")
def probe_eval_modes(seed):
    cases = {}
    for key, mode in (("train", True), ("eval", False)):
        m = make_net(1).train(mode)
        before = _j5_modes(m)
        evaluate(m, L.make_batches(2, seed=6))
        cases[key] = {"before": before, "after": _j5_modes(m)}
    m = make_net(2 + seed % 50)
    m[1].eval()  # a frozen BatchNorm inside a model that is training
    before = _j5_modes(m)
    seen = []
    hooks = [mod.register_forward_pre_hook(lambda mod, inp: seen.append(mod.training)) for mod in m.modules()]
    try:
        evaluate(m, L.make_batches(3, seed=7))
    finally:
        for h in hooks:
            h.remove()
    cases["mixed"] = {"before": before, "after": _j5_modes(m), "during": sorted(set(seen))}

    def broken_loader():
        for i, batch in enumerate(L.make_batches(4, seed=8)):
            if i == 2:
                raise ValueError("the loader broke")
            yield batch

    m = make_net(3)
    m[3].eval()
    before = _j5_modes(m)
    try:
        evaluate(m, broken_loader())
        raised = None
    except ValueError as err:
        raised = str(err)
    cases["raising"] = {"before": before, "after": _j5_modes(m), "raised": raised}
    return cases


@probe_eval_modes.verdict
def _(got, ref):
    for key, label in (("train", "a model in train mode"), ("eval", "a model in eval mode")):
        with visible():
            C.check_equal(sorted({t for _, t in got[key]["after"]}), sorted({t for _, t in ref[key]["before"]}),
                          f"the modules' training flags after evaluate on {label}",
                          hint="remember the mode before model.eval(), and restore it before returning")
    C.check_equal(got["mixed"]["during"], [False], "the modules' training flags seen by forward during evaluate",
                  hint="every module in eval() during the loop: model.eval()")
    C.check_equal(got["mixed"]["after"], ref["mixed"]["before"],
                  "every module's training flag after evaluate, for a training model with a frozen BatchNorm in eval()",
                  hint="model.train() after the loop puts the frozen BatchNorm into training mode: "
                       "restore each module's own flag")
    C.check_equal(got["raising"]["raised"], ref["raising"]["raised"],
                  "the exception raised by evaluate when the loader raises",
                  hint="let the loader's exception reach the caller (do not swallow it)")
    C.check_equal(got["raising"]["after"], ref["raising"]["before"],
                  "every module's training flag after evaluate, when the loader raised mid-way",
                  hint="restore the modes in a finally: block")


WHY['evaluate'] = "model.eval() switches Dropout and BatchNorm, torch.no_grad() stops any graph; summing with reduction=\"sum\" and dividing by the total y.numel() counts every target value once. Each module's own training flag is saved first and put back in finally, even when the loop raises."
