"""Exercise 'export_classifier' of 03_torchscript: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 3.1 · export_classifier ----------------------------------------------------------------
# clause -> test
#   returns an ExportedProgram ............................................. every export test
#   eval-mode outputs (dropout off, batch-norm running statistics) ......... test_export_classifier_eval_outputs
#   forward's argument may have any name (`features`, `inputs`) ............ test_export_classifier_eval_outputs,
#                                                                             test_export_classifier_dynamic_batch
#   the network need not start with a Linear (LayerNorm first) ............. test_export_classifier_eval_outputs
#   every batch size from 1 to 1024 ........................................ test_export_classifier_dynamic_batch
#   example may have a single row .......................................... test_export_classifier_dynamic_batch
#   rejects a different number of features (and accepts the right one) ..... test_export_classifier_rejects_features
#   caller's model left as found, submodule by submodule (a frozen BatchNorm
#   inside a train-mode model; a model that arrived in eval mode) ........... test_export_classifier_leaves_model
#   a snapshot: optimizer steps on the model after the call (weights and
#   BatchNorm statistics updated in place) leave the outputs unchanged ..... test_export_classifier_snapshot
# Budget: each probe exports at most twice (the sweep runs every probe 200 times); the visible example is
# replayed where it is cheap (eval outputs), the other probes use hidden models only.

@judge.shared
def judge_classifiers(seed):
    """Fresh classifiers (train mode) for the export probes; built before any student call."""
    from torch import nn as _nn

    class ByFeatures(_nn.Module):                  # argument `features`, LayerNorm first, BatchNorm inside
        def __init__(self, f, c):
            super().__init__()
            self.norm = _nn.LayerNorm(f)
            self.a = _nn.Linear(f, 12)
            self.bn = _nn.BatchNorm1d(12)
            self.drop = _nn.Dropout(0.4)
            self.b = _nn.Linear(12, c)

        def forward(self, features):
            return self.b(self.drop(torch.tanh(self.bn(self.a(self.norm(features))))))

    class ByInputs(_nn.Module):                    # argument `inputs`
        def __init__(self, f, c):
            super().__init__()
            self.a = _nn.Linear(f, 10)
            self.drop = _nn.Dropout(0.5)
            self.b = _nn.Linear(10, c)

        def forward(self, inputs):
            return self.b(torch.nn.functional.gelu(self.drop(self.a(inputs))))

    class ByX(_nn.Module):                         # argument `x`, BatchNorm that a fine-tuner may freeze
        def __init__(self, f, c):
            super().__init__()
            self.a = _nn.Linear(f, 12)
            self.bn = _nn.BatchNorm1d(12)
            self.drop = _nn.Dropout(0.3)
            self.b = _nn.Linear(12, c)

        def forward(self, x):
            return self.b(self.drop(torch.relu(self.bn(self.a(x)))))

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        models = {"features": ByFeatures(9, 4), "inputs": ByInputs(5, 2), "x": ByX(7, 3), "x8": ByX(8, 3)}
        with torch.no_grad():
            for m in models.values():
                for mod in m.modules():
                    if isinstance(mod, _nn.BatchNorm1d):       # statistics as after training
                        mod.running_mean.uniform_(-1.0, 1.0)
                        mod.running_var.uniform_(0.5, 2.0)
    return models


@judge.shared
def judge_eval_outputs(model, xs):
    """The eval-mode outputs of a deep copy of `model` (the caller's model is not touched)."""
    import copy as _copy
    ref = _copy.deepcopy(model).eval()
    with torch.no_grad():
        return [ref(x) for x in xs]


@judge.shared
def judge_program_run(ep, xs):
    """Run ep.module() on each x; one judge_attempt record per input (or the reason there is no program)."""
    if not isinstance(ep, torch.export.ExportedProgram):
        return [{"ok": False, "error": f"not an ExportedProgram but a {type(ep).__name__}"} for _ in xs]
    prog = ep.module()
    with torch.no_grad():
        return [judge_attempt(lambda x=x: prog(x)) for x in xs]


@judge.probe("test_export_classifier_eval_outputs")
def probe_export_eval(seed):
    import torch as _t
    with _t.random.fork_rng():
        _t.manual_seed(0)
        vis_model = TinyClassifier(in_features=6, classes=3)
        vis_x = _t.randn(4, 6)
    models = judge_classifiers(seed)
    g = _t.Generator().manual_seed(seed)
    fx = _t.randn(5, 9, generator=g)
    expect = {"visible": judge_eval_outputs(vis_model, [vis_x])[0],
              "features": judge_eval_outputs(models["features"], [fx])[0]}
    vis_ep = export_classifier(vis_model, vis_x)
    feat_ep = judge_attempt(lambda: export_classifier(models["features"], fx))
    out = {"expect": expect, "visible_type": type(vis_ep).__name__,
           "visible_is_ep": isinstance(vis_ep, _t.export.ExportedProgram),
           "visible": judge_program_run(vis_ep, [vis_x])[0]}
    if feat_ep["ok"]:
        out["features_type"] = type(feat_ep["out"]).__name__
        out["features"] = judge_program_run(feat_ep["out"], [fx, fx])
    else:
        out["features_type"] = "export failed"
        out["features"] = [feat_ep, feat_ep]
    return out


@probe_export_eval.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_is_ep"] is True,
                     f"export_classifier(...) returned a {got['visible_type']}, not a torch.export.ExportedProgram",
                     hint="return the result of torch.export.export(...)")
        C.check_close(_out(got["visible"], "program(example)"), ref["expect"]["visible"], name="program(example)",
                      rtol=1e-5, atol=1e-5,
                      hint="outputs differ from the eval-mode model: is dropout still active? export in eval mode")
    for call, rec in enumerate(got["features"], 1):
        out = _out(rec, "export_classifier on a model whose forward argument is named `features` (or its program)")
        C.check_close(out, ref["expect"]["features"], name=f"program(example), call {call}, for a model whose "
                      "argument is `features` and that starts with a LayerNorm", rtol=1e-5, atol=1e-5,
                      hint="name-keyed dynamic_shapes must use forward's own argument name (a tuple by position "
                           "works for any name), and the model must be in eval mode while you export it")


@judge.probe("test_export_classifier_dynamic_batch")
def probe_export_dynamic(seed):
    import torch as _t
    models = judge_classifiers(seed + 1)
    g = _t.Generator().manual_seed(seed)
    in_example = _t.randn(3, 5, generator=g)
    in_xs = [_t.randn(b, 5, generator=g) for b in (1, 2, 7, 1024)]
    one_row = _t.randn(1, 7, generator=g)
    one_xs = [_t.randn(b, 7, generator=g) for b in (1, 2, 5, 64)]
    expect = {"inputs": judge_eval_outputs(models["inputs"], in_xs),
              "one_row": judge_eval_outputs(models["x"], one_xs)}
    got = {"expect": expect}
    for key, model, example, xs in (("inputs", models["inputs"], in_example, in_xs),
                                    ("one_row", models["x"], one_row, one_xs)):
        rec = judge_attempt(lambda m=model, e=example: export_classifier(m, e))
        got[key] = judge_program_run(rec["out"], xs) if rec["ok"] else [rec] * len(xs)
    return got


@probe_export_dynamic.verdict
def _(got, ref):
    for b, rec, want in zip((1, 2, 7, 1024), got["inputs"], ref["expect"]["inputs"]):
        C.check_close(_out(rec, f"the program of a model whose argument is `inputs`, on a batch of {b}"), want,
                      name=f"program(batch of {b}), argument named `inputs`", rtol=1e-5, atol=1e-5,
                      hint="every batch size from 1 to 1024 must work, whatever forward's argument is called")
    for b, rec, want in zip((1, 2, 5, 64), got["one_row"], ref["expect"]["one_row"]):
        C.check_close(_out(rec, f"export from a 1-row example, then a batch of {b}"), want,
                      name=f"program(batch of {b}), exported from a 1-row example", rtol=1e-5, atol=1e-5,
                      hint="an example of size 1 in a dynamic dimension is specialised away (section 1.3): "
                           "export from at least 2 rows")


@judge.probe("test_export_classifier_rejects_features")
def probe_export_rejects(seed):
    import torch as _t
    models = judge_classifiers(seed + 2)
    g = _t.Generator().manual_seed(seed)
    example = _t.randn(2, 8, generator=g)
    bad = [_t.randn(2, f, generator=g) for f in (7, 9, 16)]
    out = {}
    for key, model, ex, xs in (("hidden", models["x8"], example, [example] + bad),):
        rec = judge_attempt(lambda m=model, e=ex: export_classifier(m, e))
        runs = judge_program_run(rec["out"], xs) if rec["ok"] else [rec] * len(xs)
        out[key] = {"right": runs[0]["ok"], "right_error": runs[0].get("error"),
                    "wrong": [None if r["ok"] else r.get("error") for r in runs[1:]],
                    "export_error": None if rec["ok"] and isinstance(rec["out"], _t.export.ExportedProgram)
                    else (rec.get("error") or f"returned a {type(rec.get('out')).__name__}")}
    return out


@probe_export_rejects.verdict
def _(got, ref):
    for key, sizes in (("hidden", (7, 9, 16)),):
        with _nullcontext():
            g = got[key]
            C.check_true(g["export_error"] is None, f"export_classifier did not give a program: {g['export_error']}")
            C.check_true(g["right"] is True, f"the program refused an input with the right number of features: "
                         f"{g['right_error']}")
            for f, err in zip(sizes, g["wrong"]):
                C.check_true(err is not None, f"the program accepted an input with {f} features",
                             hint="only the batch dimension should be dynamic; the feature size stays a guard")


@judge.probe("test_export_classifier_leaves_model")
def probe_export_leaves(seed):
    import torch as _t
    models = judge_classifiers(seed + 3)
    g = _t.Generator().manual_seed(seed)
    frozen_bn = models["x"]
    frozen_bn.bn.eval()                       # fine-tuning: the batch norm is frozen, the rest trains
    eval_model = models["x8"].eval()          # a caller that hands over an eval-mode model
    cases = [("frozen_bn", frozen_bn, _t.randn(3, 7, generator=g)),
             ("eval_model", eval_model, _t.randn(3, 8, generator=g))]
    out = {}
    for key, model, example in cases:
        before = [m.training for m in model.modules()]
        want = judge_eval_outputs(model, [example])[0]
        rec = judge_attempt(lambda m=model, e=example: export_classifier(m, e))
        out[key] = {"before": before, "after": [m.training for m in model.modules()],
                    "error": None if rec["ok"] else rec["error"], "want": want,
                    "run": judge_program_run(rec["out"], [example])[0] if rec["ok"] else rec}
    return out


@probe_export_leaves.verdict
def _(got, ref):
    labels = {"frozen_bn": "a train-mode model whose BatchNorm was frozen in eval mode",
              "eval_model": "a model handed over in eval mode"}
    for key in ("frozen_bn", "eval_model"):
        with _nullcontext():
            g, r = got[key], ref[key]
            C.check_true(g["error"] is None, f"export_classifier raised {g['error']} on {labels[key]}")
            C.check_equal(g["after"], r["before"], name=f"training flags of {labels[key]} after the call "
                          "(one per submodule)",
                          hint="export a copy (copy.deepcopy(model).eval()), or record every submodule's mode and "
                               "restore it: model.train() would also switch on submodules that were frozen")
            C.check_close(_out(g["run"], f"the program exported from {labels[key]}"), r["want"],
                          name=f"program(example) for {labels[key]}", rtol=1e-5, atol=1e-5,
                          hint="the program must still give the eval-mode outputs")




@judge.probe("test_export_classifier_snapshot")
def probe_export_snapshot(seed):
    import torch as _t
    models = judge_classifiers(seed + 4)
    model = models["features"]                     # LayerNorm, BatchNorm (statistics move when training), dropout
    g = _t.Generator().manual_seed(seed + 4)
    example = _t.randn(6, 9, generator=g)
    xs = [example, _t.randn(6, 9, generator=g)]      # the example's batch size: this cell tests the snapshot only
    targets = _t.randint(0, 4, (6,), generator=g)
    want = judge_eval_outputs(model, xs)           # the eval-mode outputs at export time
    rec = judge_attempt(lambda: export_classifier(model, example))
    if not rec["ok"]:
        return {"want": want, "after": [rec] * len(xs), "moved": None}
    opt = _t.optim.SGD(model.parameters(), lr=0.5)
    model.train()
    for _ in range(3):                             # training goes on after the export
        opt.zero_grad()
        _t.nn.functional.cross_entropy(model(example), targets).backward()
        opt.step()
    now = judge_eval_outputs(model, xs)
    moved = max(float((a - b).abs().max()) for a, b in zip(now, want))
    return {"want": want, "after": judge_program_run(rec["out"], xs), "moved": moved}


@probe_export_snapshot.verdict
def _(got, ref):
    C.check_true(ref["moved"] is not None and ref["moved"] > 1e-3,
                 "judge error: training did not move the reference model")  # the test itself must bite
    for i, (rec, want) in enumerate(zip(got["after"], ref["want"])):
        C.check_close(_out(rec, f"the program after training the model (input {i})"), want,
                      name=f"program(input {i}) after three optimizer steps on the model", rtol=1e-5, atol=1e-5,
                      hint="the program holds the model's parameters and buffers by reference (section 1.2.1): "
                           "export a deep copy, so that training the caller's model cannot reach it")


WHY['export_classifier'] = "Exporting copy.deepcopy(model).eval() gives a program with dropout off and its own weights, so later training and the caller's modes are untouched. Doubling a 1-row example avoids the 0/1 specialisation, and dynamic_shapes by position works whatever the argument's name; features stay static."
