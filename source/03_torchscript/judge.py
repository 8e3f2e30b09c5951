"""Hidden tests of Chapter 3, judged outside the student's kernel (instructor side: never released).

Each grade cell of 03_torchscript.ipynb has one probe here (it runs with the
notebook's names, in the student's sandbox and in the reference worker) and
one verdict (it runs in the judge, on the plain data both sent back). ``got``
is the student's data, ``ref`` the reference solution's. Expectations that do
not come from the student's code are read from ``ref`` (computed by the same
probe in the reference run) or recomputed here from plain data.

Scripted, traced, exported and frozen objects cannot cross to the judge: the
probes run them on seeded inputs and return outputs, type names, schema and
graph facts (strings), and, for inputs that should be refused, the name of
the exception raised (``None`` when the call went through).

TorchScript compiles from source text. Modules that the student's code will
script are therefore built by the shared helper ``judge_module``, which puts
their source into ``linecache`` under a private file name first (as IPython
does for notebook cells); a class defined directly inside a probe could not be
scripted ("could not get source code").
"""
import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


# --- helpers shipped with every probe ----------------------------------------------------------------

@judge.shared
def judge_attempt(fn):
    """Call fn(); return {"ok": True, "out": result} or {"ok": False, "error": "Type: first line"}."""
    try:
        return {"ok": True, "out": fn()}
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything
        first = str(err).strip().splitlines()[0][:300] if str(err).strip() else ""
        return {"ok": False, "error": f"{type(err).__name__}: {first}"}


@judge.shared
def judge_module(source, name, tag):
    """Define class `name` from `source` with its text in linecache (so torch.jit.script can read it)."""
    import linecache

    import torch as _torch
    from torch import nn as _nn
    from typing import Final as _Final, Optional as _Optional
    filename = f"<judge-{tag}-{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": _torch, "nn": _nn, "Tensor": _torch.Tensor, "Optional": _Optional, "Final": _Final,
                 "__name__": "__judge__"}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the judge's own code
    return namespace[name]


def _out(record, what):
    """The output of a judge_attempt record, or a failure that says what raised."""
    if type(record) is not dict or record.get("ok") is not True:
        error = record.get("error", "no result") if type(record) is dict else "no result"
        C.check_true(False, f"{what} raised {error}")
    return record["out"]


def _nullcontext():
    from contextlib import nullcontext
    return nullcontext()


# --- Exercise 3.3 · WeightedMean (an Optional attribute) ----------------------------------------------
# clause -> test
#   weighted mean over the LAST dimension: sum(x*w*m) / sum(w*m) ............. test_weighted_mean_eager
#   no weights -> all ones; no mask -> all True ............................... test_weighted_mean_eager
#   any rank (1-D, 2-D, 3-D), float64 and bfloat16 keep their dtype, also with
#   weights of another dtype (float64 on float32, float32 on bfloat16) ...... test_weighted_mean_eager,
#                                                                                test_weighted_mean_scripted
#   result shape x.shape[:-1], size-1 leading dims kept ((1, 5) -> (1,)) ..... test_weighted_mean_eager
#   the caller's weights tensor is not modified (no in-place rescaling) ...... test_weighted_mean_eager
#   script_weighted_mean returns a scripted (not traced) module ............... test_weighted_mean_scripted
#   it accepts calls with and without a mask (schema `Tensor? mask=None`) ..... test_weighted_mean_scripted
#   weights set / replaced / cleared on the scripted module, created with or
#   without weights, each change taking effect on the next call .............. test_weighted_mean_set_weights
#   survives save/load with the same outputs; weights settable after loading .. test_weighted_mean_roundtrip
# Every expected value is the reference's own output for the same inputs (ref), never the student's.

@judge.shared
def judge_weighted_cases(seed, shapes, dtypes):
    """Inputs (x, weights, mask) for WeightedMean: positive weights; each row has a True and (if possible) a False."""
    g = torch.Generator().manual_seed(seed)
    cases = []
    for shape, dtype in zip(shapes, dtypes):
        x = torch.randn(shape, generator=g).to(dtype)
        w = (torch.rand(shape[-1], generator=g) * 2.0 + 0.25).to(dtype)
        m = torch.rand(shape, generator=g) > 0.5
        m[..., 0] = True
        if shape[-1] > 1:
            m[..., -1] = False
        cases.append((x, w, m))
    return cases


@judge.shared
def judge_weighted_visible():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0], [4.0, 0.0, 0.0, 8.0]])
    w = torch.tensor([1.0, 1.0, 2.0, 4.0])
    m = torch.tensor([[True, False, True, False], [True, True, False, True]])
    return x, w, m


@judge.probe("test_weighted_mean_eager")
def probe_weighted_eager(seed):
    vx, vw, vm = judge_weighted_visible()
    cases = judge_weighted_cases(seed, [(5, 7), (2, 3, 9), (4, 1), (6,), (3, 5), (4, 6), (1, 5), (3, 1, 4)],
                                 [torch.float32, torch.float32, torch.float32, torch.float32, torch.float64,
                                  torch.bfloat16, torch.float32, torch.float64])
    vis = [judge_attempt(lambda: WeightedMean()(vx)), judge_attempt(lambda: WeightedMean(vw)(vx)),
           judge_attempt(lambda: WeightedMean(vw)(vx, vm)),
           judge_attempt(lambda: WeightedMean(torch.tensor([1.0, 3.0]))(torch.tensor([2.0, 6.0], dtype=torch.float64)))]
    rows = []
    for x, w, m in cases:
        rows.append([judge_attempt(lambda x=x: WeightedMean()(x)),
                     judge_attempt(lambda x=x, m=m: WeightedMean()(x, m)),
                     judge_attempt(lambda x=x, w=w: WeightedMean(w)(x)),
                     judge_attempt(lambda x=x, w=w, m=m: WeightedMean(w)(x, m))])
    # weights in another dtype than x (the statement: the result keeps x's dtype): float64 weights on a float32 x,
    # float32 weights on a bfloat16 x; a factor left in the weights' dtype promotes the result
    mixed = []
    for (x, w, m), w_dtype in zip(judge_weighted_cases(seed + 1, [(3, 6), (2, 5)], [torch.float32, torch.bfloat16]),
                                  [torch.float64, torch.float32]):
        w = w.to(w_dtype)
        mixed.append([judge_attempt(lambda x=x, w=w: WeightedMean(w)(x)),
                      judge_attempt(lambda x=x, w=w, m=m: WeightedMean(w)(x, m))])
    # the caller's weights after those calls: the same values as drawn (ref's are never touched)
    return {"visible": vis, "rows": rows, "shapes": [tuple(x.shape) for x, _, _ in cases],
            "weights_after": [w for _, w, _ in cases], "mixed": mixed,
            "mixed_dtypes": [("float32", "float64"), ("bfloat16", "float32")]}


@probe_weighted_eager.verdict
def _(got, ref):
    labels = ["WeightedMean()(x)", "WeightedMean(w)(x)", "WeightedMean(w)(x, mask)",
              "WeightedMean([1, 3])(float64 [2, 6])"]
    with visible():
        for label, g, r in zip(labels, got["visible"], ref["visible"]):
            C.check_close(_out(g, label), _out(r, "reference"), name=label, rtol=1e-6, atol=1e-6,
                          hint="sum(x * w * m) / sum(w * m) over dim=-1, in x's dtype")
    names = ["()(x)", "()(x, mask)", "(w)(x)", "(w)(x, mask)"]
    for shape, g_row, r_row in zip(ref["shapes"], got["rows"], ref["rows"]):
        for label, g, r in zip(names, g_row, r_row):
            want = _out(r, "reference")
            tol = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
            C.check_close(_out(g, f"WeightedMean{label} for shape {shape}"), want,
                          name=f"WeightedMean{label} for x of shape {shape}, dtype {want.dtype}", rtol=tol, atol=tol,
                          hint="reduce over the last dimension whatever the rank; masked-out positions count in "
                               "neither the numerator nor the denominator; keep x's dtype and the shape "
                               "x.shape[:-1] (a size-1 batch dimension stays)")
    for (x_dtype, w_dtype), g_row, r_row in zip(ref["mixed_dtypes"], got["mixed"], ref["mixed"]):
        for label, g, r in zip(["(w)(x)", "(w)(x, mask)"], g_row, r_row):
            want = _out(r, "reference")
            tol = 2e-2 if want.dtype == torch.bfloat16 else 1e-5
            name = f"WeightedMean{label} for a {x_dtype} x and {w_dtype} weights"
            C.check_close(_out(g, name), want, name=name, rtol=tol, atol=tol,
                          hint="the result keeps x's dtype whatever the weights' dtype: turn the weights into x's "
                               "dtype as well as the mask")
    for shape, g_w, r_w in zip(ref["shapes"], got["weights_after"], ref["weights_after"]):
        C.check_close(g_w, r_w, name=f"the caller's weights tensor after WeightedMean(w) (x of shape {shape})",
                      rtol=0, atol=0,
                      hint="keep the caller's weights as they are: an in-place operation on them (weights /= ...) "
                           "changes the caller's tensor; compute on a new tensor instead")


@judge.probe("test_weighted_mean_scripted")
def probe_weighted_scripted(seed):
    vx, vw, vm = judge_weighted_visible()
    cases = judge_weighted_cases(seed + 1, [(3, 11), (2, 2, 5), (7,), (4, 3)],
                                 [torch.float32, torch.float32, torch.float32, torch.float64])
    made = judge_attempt(lambda: script_weighted_mean(vw))
    if not made["ok"]:
        return {"made": made}
    s = made["out"]
    info = {"made": {"ok": True, "out": None}, "type": type(s).__name__}
    schema = judge_attempt(lambda: str(s.forward.schema))
    info["schema"] = schema["out"] if schema["ok"] else ""
    info["visible"] = [judge_attempt(lambda: s(vx)), judge_attempt(lambda: s(vx, vm))]
    rows = []
    for x, w, m in cases:
        made_w = judge_attempt(lambda w=w: script_weighted_mean(w))
        made_0 = judge_attempt(lambda: script_weighted_mean())
        rows.append([judge_attempt(lambda x=x, f=made_0: f["out"](x)) if made_0["ok"] else made_0,
                     judge_attempt(lambda x=x, m=m, f=made_0: f["out"](x, m)) if made_0["ok"] else made_0,
                     judge_attempt(lambda x=x, m=m, f=made_w: f["out"](x, m)) if made_w["ok"] else made_w])
    info["rows"] = rows
    info["shapes"] = [tuple(x.shape) for x, _, _ in cases]
    return info


@probe_weighted_scripted.verdict
def _(got, ref):
    with visible():
        _out(got["made"], "script_weighted_mean(w)")
        C.check_true(got["type"] == "RecursiveScriptModule",
                     f"script_weighted_mean() returned a {got['type']}, not a module compiled by torch.jit.script",
                     hint="torch.jit.trace records one path; use torch.jit.script")
        C.check_true("Tensor? mask=None" in got["schema"],
                     f"the scripted schema is {got['schema']!r}; expected `Tensor? mask=None`",
                     hint="annotate mask as Optional[Tensor] = None (section 3)")
        for label, g, r in zip(("scripted(x)", "scripted(x, mask)"), got["visible"], ref["visible"]):
            C.check_close(_out(g, label), _out(r, "reference"), name=label, rtol=1e-6, atol=1e-6)
    names = ["script_weighted_mean()(x)", "script_weighted_mean()(x, mask)", "script_weighted_mean(w)(x, mask)"]
    for shape, g_row, r_row in zip(ref["shapes"], got["rows"], ref["rows"]):
        for label, g, r in zip(names, g_row, r_row):
            C.check_close(_out(g, f"{label} for shape {shape}"), _out(r, "reference"),
                          name=f"{label} for x of shape {shape}", rtol=1e-5, atol=1e-6,
                          hint="the scripted module must give the eager values, with and without a mask")


@judge.probe("test_weighted_mean_set_weights")
def probe_weighted_set(seed):
    cases = judge_weighted_cases(seed + 2, [(3, 6), (2, 4, 5), (8,)], [torch.float32, torch.float64, torch.float32])
    g = torch.Generator().manual_seed(seed)
    out = []
    for x, w, m in cases:
        w2 = (torch.rand(x.shape[-1], generator=g) + 0.5).to(x.dtype)
        steps = []
        made_0 = judge_attempt(lambda: script_weighted_mean())
        if made_0["ok"]:
            s = made_0["out"]
            steps.append(judge_attempt(lambda s=s, w=w: setattr(s, "weights", w)))
            steps.append(judge_attempt(lambda s=s, x=x, m=m: s(x, m)))
            steps.append(judge_attempt(lambda s=s, w2=w2: setattr(s, "weights", w2)))
            steps.append(judge_attempt(lambda s=s, x=x: s(x)))
            steps.append(judge_attempt(lambda s=s: setattr(s, "weights", None)))
            steps.append(judge_attempt(lambda s=s, x=x, m=m: s(x, m)))
        else:
            steps = [made_0] * 6
        made_w = judge_attempt(lambda w=w: script_weighted_mean(w))
        if made_w["ok"]:
            s = made_w["out"]
            steps.append(judge_attempt(lambda s=s: setattr(s, "weights", None)))
            steps.append(judge_attempt(lambda s=s, x=x: s(x)))
            steps.append(judge_attempt(lambda s=s, w2=w2: setattr(s, "weights", w2)))
            steps.append(judge_attempt(lambda s=s, x=x, m=m: s(x, m)))
        else:
            steps += [made_w] * 4
        out.append(steps)
    return {"cases": out, "shapes": [tuple(x.shape) for x, _, _ in cases]}


@probe_weighted_set.verdict
def _(got, ref):
    what = ["created without weights: set weights", "... then called with a mask", "... weights replaced",
            "... then called without a mask", "... weights cleared to None", "... then called with a mask",
            "created with weights: cleared to None", "... then called", "... weights set again",
            "... then called with a mask"]
    for shape, g_steps, r_steps in zip(ref["shapes"], got["cases"], ref["cases"]):
        for label, g, r in zip(what, g_steps, r_steps):
            value = _out(g, f"scripted module, x of shape {shape}, {label}")
            want = _out(r, "reference")
            if want is None:
                continue                       # an assignment: it only had to succeed
            C.check_close(value, want, name=f"x of shape {shape}, {label}", rtol=1e-5, atol=1e-6,
                          hint="script typed `weights` from its value at compile time, or read it once: declare "
                               "`weights: Optional[Tensor]` in the class body and read self.weights in forward")


@judge.probe("test_weighted_mean_roundtrip")
def probe_weighted_roundtrip(seed):
    import io
    vx, vw, vm = judge_weighted_visible()
    cases = [(vx, vw, vm)] + judge_weighted_cases(seed + 3, [(4, 6), (2, 3, 4)], [torch.float32, torch.float64])
    rows = []
    for x, w, m in cases:
        made = judge_attempt(lambda w=w: script_weighted_mean(w))
        if not made["ok"]:
            rows.append([made] * 5)
            continue
        s = made["out"]
        buf = io.BytesIO()
        saved = judge_attempt(lambda s=s, buf=buf: torch.jit.save(s, buf))
        if not saved["ok"]:
            rows.append([saved] * 5)
            continue
        buf.seek(0)
        loaded = torch.jit.load(buf)
        rows.append([judge_attempt(lambda x=x, m=m: s(x, m)),
                     judge_attempt(lambda x=x, m=m: loaded(x, m)),
                     judge_attempt(lambda: setattr(loaded, "weights", None)),
                     judge_attempt(lambda x=x, m=m: loaded(x, m)),
                     judge_attempt(lambda x=x: loaded(x))])
    return {"rows": rows}


@probe_weighted_roundtrip.verdict
def _(got, ref):
    labels = ["before saving (x, mask)", "loaded (x, mask)", "loaded: weights cleared", "loaded, cleared (x, mask)",
              "loaded, cleared (x)"]
    for i, (g_row, r_row) in enumerate(zip(got["rows"], ref["rows"])):
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            before = _out(g_row[0], f"case {i}: the scripted module before saving")
            after = _out(g_row[1], f"case {i}: the loaded module")
            C.check_close(after, before, name=f"case {i}: loaded vs before saving",
                          hint="save with torch.jit.save and load with torch.jit.load")
            for label, g, r in zip(labels, g_row, r_row):
                want = _out(r, "reference")
                value = _out(g, f"case {i}: {label}")
                if want is not None:
                    C.check_close(value, want, name=f"case {i}: {label}", rtol=1e-5, atol=1e-6,
                                  hint="after loading, clearing weights must give the plain (masked) mean")


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


# --- Exercise 3.2 · export_for_serving -----------------------------------------------------------------
# clause -> test
#   returns an ExportedProgram ............................................. every serving test
#   called with the keywords input_ids= / attention_mask= .................. every serving test (probes call it so)
#   returns the logits TENSOR (not the dict) ............................... test_serving_logits (type checked)
#   equal to the eval-mode model's logits (dropout off), padded masks ....... test_serving_logits
#   "the eval-mode model" is model.eval(): the hidden model of this cell also
#   drops out through F.dropout(..., training=self.training) (as BERT's
#   attention does), so switching only the nn.Dropout submodules fails ...... test_serving_logits
#   other model sizes (vocab, hidden, labels, max positions) ............... test_serving_logits, _shapes, _snapshot
#   "a dict, or a transformers ModelOutput": a real BertForSequenceClassification
#   (small config, offline, train mode as constructed) ..................... test_serving_logits
#   every batch 1..64 and length 2..config.max_position_embeddings ......... test_serving_shapes (a hidden max
#                                                                             above the visible 24: no hard-coding)
#   refuses a sequence longer than max_position_embeddings ................. test_serving_shapes
#   a snapshot: training the caller's model afterwards changes nothing ..... test_serving_snapshot
#   the caller's model keeps its modes, module by module (a frozen LayerNorm
#   inside a train-mode model) ............................................. test_serving_snapshot
# Budget: one export per probe for the hidden model, plus the visible example in test_serving_logits.
#
# --- Exercise 3.2 · package_for_serving (its own solution cell) -------------------------------------------------
# clause -> test (one probe, one AOTInductor compile of a small hidden model: its own time limit)
#   compiles `program` into the package file `path` (the file is there),
#   replacing a file already there, and the file works on its own ........... test_serving_package (an old file
#                                                                             is put at path first; a new process
#                                                                             loads path and runs it)
#   loads it and returns the loaded package, an AOTICompiledModel ........... test_serving_package (type)
#   called like the program (keywords), on every shape the program accepts ... test_serving_package (a new batch
#                                                                             size and length)
#   the weights are inside: training the model the program came from (the
#   program shares its weights) changes nothing ............................. test_serving_package
#   get_metadata() holds max_batch, max_length, num_labels as decimal strings,
#   read from the program (a hidden program: batch max 8, not the visible
#   64; a length max from the seed, 3 below the position table's rows; 2 to
#   5 labels; its last parameter is a temperature, not the head's bias) .... test_serving_package
#   (not caught: a contract computed once and cached across calls; catching
#   it takes a second AOTInductor compile per graded package, ~8 s)

@judge.shared
def judge_text_setup(seed, min_positions, max_positions, functional_dropout=False):
    """A hidden TinyTextClassifier config and model (train mode), built before any student call.

    With functional_dropout, the model also drops out its logits through F.dropout(training=self.training),
    a dropout that no nn.Dropout submodule holds: only model.eval() switches it off; and its output has an
    entry before "logits" (the first value of the mapping is not the logits)."""
    import torch as _t
    g = _t.Generator().manual_seed(seed)
    pick = lambda lo, hi: int(_t.randint(lo, hi + 1, (1,), generator=g))
    config = TextConfig(vocab_size=pick(30, 70), hidden_size=pick(8, 20),
                        max_position_embeddings=pick(min_positions, max_positions), num_labels=pick(2, 5),
                        dropout=0.2)
    cls = TinyTextClassifier
    if functional_dropout:
        class FunctionalDropout(TinyTextClassifier):
            def forward(self, input_ids, attention_mask=None):
                logits = super().forward(input_ids=input_ids, attention_mask=attention_mask)["logits"]
                # another entry before "logits", as real models return (hidden states, pooled output...)
                return {"hidden_states": self.tokens(input_ids),
                        "logits": _t.nn.functional.dropout(logits, p=0.3, training=self.training)}
        cls = FunctionalDropout
    with _t.random.fork_rng():
        _t.manual_seed(seed)
        model = cls(config)
    return config, model


@judge.shared
def judge_bert_setup(seed):
    """A real transformers model, offline: BertForSequenceClassification from a small config (random weights,
    train mode as constructed; its attention dropout reads self.training), sizes drawn from the seed."""
    import torch as _t
    import logging as _logging
    _logging.getLogger("transformers").setLevel(_logging.ERROR)
    from transformers import BertConfig as _BertConfig, BertForSequenceClassification as _Bert
    g = _t.Generator().manual_seed(seed)
    pick = lambda lo, hi: int(_t.randint(lo, hi + 1, (1,), generator=g))
    heads = pick(1, 2)
    config = _BertConfig(vocab_size=pick(30, 70), hidden_size=8 * heads, num_hidden_layers=1,
                         num_attention_heads=heads, intermediate_size=pick(16, 32),
                         max_position_embeddings=pick(24, 36), num_labels=pick(2, 4),
                         hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.2, attn_implementation="sdpa")
    with _t.random.fork_rng():
        _t.manual_seed(seed)
        model = _Bert(config)
    model.train()
    return config, model


@judge.shared
def judge_package_in_fresh_process(path, batch):
    """Load the package file at `path` in a new Python process, as a server would, and run it on `batch`
    (ids, mask) with keywords: {"ok": True, "out": tensor} or an error record. A crash stays in that process."""
    import os as _os
    import subprocess as _subprocess
    import sys as _sys
    import tempfile as _tempfile
    import torch as _t
    folder = _tempfile.mkdtemp(prefix="judge-load-")
    inputs, outputs = _os.path.join(folder, "inputs.pt"), _os.path.join(folder, "outputs.pt")
    _t.save({"input_ids": batch[0], "attention_mask": batch[1]}, inputs)
    code = ("import sys, torch, torch._inductor\n"
            "kw = torch.load(sys.argv[2])\n"
            "with torch.no_grad():\n"
            "    y = torch._inductor.aoti_load_package(sys.argv[1])(**kw)\n"
            "torch.save(y if isinstance(y, torch.Tensor) else None, sys.argv[3])\n")
    try:
        proc = _subprocess.run([_sys.executable, "-c", code, path, inputs, outputs], capture_output=True,
                               text=True, timeout=180)
    except _subprocess.TimeoutExpired:
        return {"ok": False, "error": "a new process loading the package file ran for over 180 s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1][:300]
        return {"ok": False, "error": f"a new process could not load and run the file (exit code "
                                      f"{proc.returncode}): {last}"}
    out = _t.load(outputs)
    if not isinstance(out, _t.Tensor):
        return {"ok": True, "out": None, "type": "non-tensor"}
    return {"ok": True, "out": out}


@judge.shared
def judge_tensor_record(rec):
    """A judge_attempt record as the wire carries it: a tensor output stays, any other output becomes its type name."""
    import torch as _t
    if rec.get("ok") and not isinstance(rec["out"], _t.Tensor):
        return {"ok": True, "out": None, "type": type(rec["out"]).__name__}
    return rec


@judge.shared
def judge_logits_run(program, batches):
    """Run program.module() with keywords on each (ids, mask); one record per batch, with the output's type."""
    if not isinstance(program, torch.export.ExportedProgram):
        return [{"ok": False, "error": f"not an ExportedProgram but a {type(program).__name__}"} for _ in batches]
    prog = program.module()
    out = []
    with torch.no_grad():
        for ids, mask in batches:
            out.append(judge_tensor_record(judge_attempt(lambda ids=ids, mask=mask: prog(input_ids=ids,
                                                                                     attention_mask=mask))))
    return out


@judge.shared
def judge_eval_logits(model, batches):
    import copy as _copy
    ref = _copy.deepcopy(model).eval()
    with torch.no_grad():
        return [ref(input_ids=ids, attention_mask=mask)["logits"] for ids, mask in batches]


def _logits(rec, what):
    out = _out(rec, what)
    C.check_true(out is not None, f"{what} returned a {rec.get('type', 'non-tensor')}, not the logits tensor",
                 hint="a C++ caller receives tensors: export a wrapper whose forward returns the 'logits' entry")
    return out


@judge.probe("test_serving_logits")
def probe_serving_logits(seed):
    import torch as _t
    with _t.random.fork_rng():
        _t.manual_seed(0)
        vis_config = TextConfig()
        vis_model = TinyTextClassifier(vis_config)
    vis_batch = text_batch(vis_config, 3, 10, seed=0)
    config, model = judge_text_setup(seed, 24, 40, functional_dropout=True)   # at least the visible 24 positions
    example = text_batch(config, 4, 9, seed=seed)
    other = text_batch(config, 2, 9, seed=seed + 1)      # another batch of the example's length
    expect = {"visible": judge_eval_logits(vis_model, [vis_batch]),
              "hidden": judge_eval_logits(model, [example, other])}
    bert_config, bert = judge_bert_setup(seed + 4)       # a real transformers model: its output is a ModelOutput
    bert_example = text_batch(bert_config, 3, 7, seed=seed + 2)
    bert_other = text_batch(bert_config, 2, 7, seed=seed + 3)   # the example's length: lengths are _shapes' business
    expect["bert"] = judge_eval_logits(bert, [bert_example, bert_other])
    got = {"expect": expect}
    for key, m, ex, batches in (("visible", vis_model, vis_batch, [vis_batch]),
                                ("hidden", model, example, [example, other]),
                                ("bert", bert, bert_example, [bert_example, bert_other])):
        rec = judge_attempt(lambda m=m, ex=ex: export_for_serving(m, *ex))
        got[key] = judge_logits_run(rec["out"], batches) if rec["ok"] else [rec] * len(batches)
    return got


@probe_serving_logits.verdict
def _(got, ref):
    with visible():
        C.check_close(_logits(got["visible"][0], "program(input_ids=..., attention_mask=...)"),
                      ref["expect"]["visible"][0], name="program(...) on the example", rtol=1e-5, atol=1e-5,
                      hint="compare with the eval-mode model: is dropout still on?")
    for label, rec, want in zip(("the example", "another padded batch"), got["hidden"], ref["expect"]["hidden"]):
        C.check_close(_logits(rec, f"the program of a model with other sizes, on {label}"), want,
                      name=f"program(...) on {label}, another model size", rtol=1e-5, atol=1e-5,
                      hint="the eval-mode logits of this model, whatever its vocabulary, width and number of "
                           "labels; call .eval() on the model (or its copy): code that reads the module's own "
                           "self.training, such as F.dropout(..., training=self.training), ignores nn.Dropout's mode")
    for label, rec, want in zip(("an example", "another padded batch"), got["bert"], ref["expect"]["bert"]):
        C.check_close(_logits(rec, f"the program of a transformers BertForSequenceClassification, on {label}"), want,
                      name=f"program(...) of a transformers BERT (small config), on {label}", rtol=1e-5, atol=1e-5,
                      hint="a transformers model returns a ModelOutput: take its 'logits' entry; its attention "
                           "dropout reads self.training, so export the model in eval mode")


@judge.probe("test_serving_shapes")
def probe_serving_shapes(seed):
    import torch as _t
    config, model = judge_text_setup(seed + 1, 28, 44)  # above the visible 24: a hard-coded maximum fails
    top = config.max_position_embeddings
    example = text_batch(config, 3, 8, seed=seed)
    batches = [text_batch(config, b, length, seed=seed + b) for b, length in
               ((1, 2), (7, top // 2 + 1), (64, top), (2, 25))]
    expect = judge_eval_logits(model, batches)
    too_long = text_batch(config, 2, top + 1, seed=seed + 99)
    rec = judge_attempt(lambda: export_for_serving(model, *example))
    if not rec["ok"]:
        return {"expect": expect, "runs": [rec] * len(batches), "too_long": rec, "top": top}
    runs = judge_logits_run(rec["out"], batches + [too_long])
    return {"expect": expect, "runs": runs[:-1], "too_long": runs[-1], "top": top}


@probe_serving_shapes.verdict
def _(got, ref):
    top = ref["top"]
    sizes = ((1, 2), (7, top // 2 + 1), (64, top), (2, 25))
    for (b, length), rec, want in zip(sizes, got["runs"], ref["expect"]):
        C.check_close(_logits(rec, f"the program on batch {b}, length {length} (max_position_embeddings {top})"), want,
                      name=f"batch {b}, length {length}", rtol=1e-5, atol=1e-5,
                      hint="both dimensions of both inputs dynamic (the same Dim objects), the length's maximum "
                           "read from model.config.max_position_embeddings")
    C.check_true(got["too_long"].get("ok") is False,
                 f"the program accepted a sequence of {top + 1} tokens, one more than max_position_embeddings",
                 hint="the position table has max_position_embeddings rows: the program must refuse longer input")


@judge.probe("test_serving_snapshot")
def probe_serving_snapshot(seed):
    import torch as _t
    config, model = judge_text_setup(seed + 2, 24, 40)
    example = text_batch(config, 4, 11, seed=seed)
    later = text_batch(config, 3, 11, seed=seed + 5)     # the example's length: this cell tests the snapshot only
    targets = _t.randint(0, config.num_labels, (4,), generator=_t.Generator().manual_seed(seed))
    want = judge_eval_logits(model, [example, later])
    model.norm.eval()                              # frozen, as in fine-tuning: the caller's modes are mixed
    before = [m.training for m in model.modules()]
    rec = judge_attempt(lambda: export_for_serving(model, *example))
    modes = {"before": before, "after": [m.training for m in model.modules()]}
    if not rec["ok"]:
        return {"want": want, "after": [rec, rec], "moved": None, "modes": modes}
    opt = _t.optim.SGD(model.parameters(), lr=0.5)
    model.train()
    for _ in range(3):                             # training goes on after the export
        opt.zero_grad()
        logits = model(input_ids=example[0], attention_mask=example[1])["logits"]
        _t.nn.functional.cross_entropy(logits, targets).backward()
        opt.step()
    now = judge_eval_logits(model, [example, later])
    moved = max(float((a - b).abs().max()) for a, b in zip(now, want))
    return {"want": want, "after": judge_logits_run(rec["out"], [example, later]), "moved": moved, "modes": modes}


@probe_serving_snapshot.verdict
def _(got, ref):
    C.check_true(ref["moved"] is not None and ref["moved"] > 1e-3,
                 "judge error: training did not move the reference model")
    C.check_true(ref["modes"]["after"] == ref["modes"]["before"], "judge error: the reference changed the modes")
    C.check_type(got["modes"], dict, "the modes record")
    flags = got["modes"].get("after")
    C.check_true(flags == ref["modes"]["before"],
                 "the caller's model came back with other train/eval modes than it had (a frozen submodule in a "
                 f"train-mode model): {flags} instead of {ref['modes']['before']}",
                 hint="switch a copy to eval mode, never the caller's model: its modes are the caller's to set")
    for label, rec, want in zip(("the example", "another batch"), got["after"], ref["want"]):
        C.check_close(_logits(rec, f"the program after training the model, on {label}"), want,
                      name=f"program(...) on {label} after three optimizer steps on the model", rtol=1e-5, atol=1e-5,
                      hint="the program shares the model's weights (section 1.2.1): export a deep copy")


# The reference run of a grading skips the compile (below): its record holds want, top, moved and call only, so
# the structure check leaves every other key, and call, to the verdict.
@judge.probe("test_serving_package", seconds=240,   # an AOTInductor compile: seconds, not milliseconds
             free=("call", "type", "is_package", "new", "file", "from_file", "after", "metadata"))
def probe_serving_package(seed):
    import os as _os
    import tempfile as _tempfile
    import torch as _t

    class _Temperature(_t.nn.Module):
        def __init__(self):
            super().__init__()
            self.t = _t.nn.Parameter(_t.ones(1))

        def forward(self, logits):
            return logits / self.t

    class _JudgeLogits(_t.nn.Module):
        """A program from elsewhere: its last parameter is a temperature (1.0), not the head's bias."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self.post = _Temperature()                   # registered after inner: last in the state dict

        def forward(self, input_ids, attention_mask):
            return self.post(self.inner(input_ids=input_ids, attention_mask=attention_mask)["logits"])

    config, model = judge_text_setup(seed + 3, 12, 24)
    # The program serves shorter sequences than the model's position table holds: its own limit is the contract.
    top = config.max_position_embeddings - 3
    example = text_batch(config, 3, 6, seed=seed)
    new = text_batch(config, 5, top - 1, seed=seed + 7)          # another batch size and length than the example's
    want = judge_eval_logits(model, [example, new])
    model.eval()
    batch = _t.export.Dim("batch", min=1, max=8)      # below every length limit (9 to 21): a sorted pair fails
    length = _t.export.Dim("length", min=2, max=top)
    program = _t.export.export(_JudgeLogits(model), (), {"input_ids": example[0], "attention_mask": example[1]},
                               dynamic_shapes={"input_ids": {0: batch, 1: length},
                                               "attention_mask": {0: batch, 1: length}})   # shares model's weights
    targets = _t.randint(0, config.num_labels, (3,), generator=_t.Generator().manual_seed(seed))

    def train_model():                                           # training goes on after packaging
        opt = _t.optim.SGD(model.parameters(), lr=0.5)
        model.train()
        for _ in range(3):
            opt.zero_grad()
            logits = model(input_ids=example[0], attention_mask=example[1])["logits"]
            _t.nn.functional.cross_entropy(logits, targets).backward()
            opt.step()
        with _t.no_grad():
            return float((program.module()(input_ids=example[0], attention_mask=example[1]) - want[0]).abs().max())

    # The serving contract the package must carry: this program's batch (1..8) and length (2..top, three below
    # the position table's rows) maxima and its logits' width, as decimal strings. Known here from how the program
    # was built, so the reference run needs no compile to state it.
    contract = {"max_batch": "8", "max_length": str(top), "num_labels": str(config.num_labels)}
    got = {"want": want, "top": top, "contract": contract}
    if _os.environ.get("COURSE_JUDGE_REFERENCE_RUN") == "1":
        # The reference run of a grading: the verdict reads only want, top and moved from it, so the compile is
        # skipped there (the sweep runs this probe in full on the reference). Set by a student, it skips their
        # own call, which the verdict then fails.
        return {**got, "moved": train_model(), "call": {"ok": False, "error": "not called (reference run)"}}
    path = _os.path.join(_tempfile.mkdtemp(prefix="judge-package-"), f"served-{seed}.pt2")
    with open(path, "wb") as fh:                                 # an old file at path: it must be replaced
        fh.write(b"an old file, not this program's package\n")
    import torch._inductor.config as _inductor_config
    # One compile in a fresh sandbox: building Inductor's precompiled header first costs more than it saves, and
    # a pool of compile workers is not worth starting. Neither changes what is compiled.
    with _inductor_config.patch({"aot_inductor.precompile_headers": False, "compile_threads": 1}):
        rec = judge_attempt(lambda: package_for_serving(program, path))
    if not rec["ok"]:
        return {**got, "call": rec}
    served = rec["out"]
    got["type"] = f"{type(served).__module__}.{type(served).__qualname__}"
    try:
        from torch.export.pt2_archive._package import AOTICompiledModel as _Loaded
        got["is_package"] = isinstance(served, _Loaded)
    except ImportError:                                          # another torch: the class name decides
        got["is_package"] = type(served).__name__ == "AOTICompiledModel"
    got["call"] = {"ok": True, "out": None}

    def read_contract():
        meta = dict(served.get_metadata())
        return {key: (value[:64] if isinstance(value, str) else f"<a {type(value).__name__}>")
                for key, value in meta.items() if key in contract}
    got["metadata"] = judge_attempt(read_contract)
    with _t.no_grad():
        got["new"] = judge_attempt(lambda: served(input_ids=new[0], attention_mask=new[1]))
    got["file"] = _os.path.isfile(path)
    if got["file"]:
        got["from_file"] = judge_package_in_fresh_process(path, new)
    got["moved"] = train_model()
    with _t.no_grad():
        got["after"] = judge_attempt(lambda: served(input_ids=example[0], attention_mask=example[1]))
    for key in ("new", "after"):                                 # the wire carries tensors, not the student's types
        got[key] = judge_tensor_record(got[key])
    return got


@probe_serving_package.verdict
def _(got, ref):
    C.check_true(ref.get("moved") is not None and ref["moved"] > 1e-3,
                 "judge error: training did not move the program the package was compiled from")
    call = got.get("call", {})
    C.check_true(call.get("ok") is True, f"package_for_serving(program, path) raised {call.get('error')}",
                 hint="torch._inductor.aoti_compile_and_package(program, package_path=path), then load that file")
    C.check_true(got.get("file") is True, "after package_for_serving(program, path) there is no file at path",
                 hint="compile into the file you were given: package_path=path")
    C.check_true(got.get("is_package") is True,
                 f"package_for_serving returned a {got.get('type', '?')}, not the loaded AOTInductor package",
                 hint="return what torch._inductor.aoti_load_package(path) gives back (an AOTICompiledModel), "
                      "not the program or its module")
    meta = got.get("metadata", {})
    C.check_true(meta.get("ok") is True, f"the loaded package's get_metadata() raised {meta.get('error')}")
    have = meta.get("out")
    C.check_type(have, dict, "the package's contract entries")
    for key, want in ref["contract"].items():
        C.check_true(have.get(key) == want,
                     f"the package's metadata has {key}={have.get(key)!r}; the program it was compiled from says "
                     f"{want!r}" + (" (no such entry)" if key not in have else ""),
                     hint="read the contract from the program given (the ranges of its input's size symbols, the "
                          "width of its output), never from a model, a config or a constant, and store strings")
    label = f"batch 5, length {ref['top'] - 1}"
    C.check_close(_logits(got.get("from_file", {}), f"the package file at path, loaded in a new process, on {label}"),
                  ref["want"][1], name=f"the package file at path, loaded in a new process, on {label}",
                  rtol=1e-4, atol=1e-5,
                  hint="the file at path must be this program's package, weights included, replacing any old "
                       "file there: compile into path, then load path")
    C.check_close(_logits(got.get("new", {}), f"the loaded package on {label}"), ref["want"][1],
                  name=f"the loaded package on {label}", rtol=1e-4, atol=1e-5,
                  hint="the package must run every shape the program accepts, called with keywords")
    C.check_close(_logits(got.get("after", {}), "the loaded package after training the model"), ref["want"][0],
                  name="the loaded package after three optimizer steps on the model", rtol=1e-4, atol=1e-5,
                  hint="a package holds its own copy of the weights: return the package, not the program")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.
WHY = {
    "weighted_mean": "The class annotation weights: Optional[Tensor] types the scripted attribute as tensor-or-None whatever it held at compile time, so it can be set and cleared. Reading it into the local w lets script refine the Optional after the is-not-None test; the caller's tensor is only cast, never changed.",
    "export_classifier": "Exporting copy.deepcopy(model).eval() gives a program with dropout off and its own weights, so later training and the caller's modes are untouched. Doubling a 1-row example avoids the 0/1 specialisation, and dynamic_shapes by position works whatever the argument's name; features stay static.",
    "export_for_serving": "The wrapper's forward(input_ids, attention_mask) returns just the logits tensor of an eval-mode deepcopy (a snapshot without dropout). Giving both inputs the same batch and length Dim objects says their shapes match, and the length's max from model.config makes longer inputs fail.",
    "package_for_serving": "aoti_compile_and_package compiles the program and writes it, with its own copy of the weights, to the file at path, replacing what was there; aoti_load_package loads that file, so the returned package depends on neither the program nor the model. The contract comes from the program itself: the input_ids placeholder's fake tensor has symbolic sizes whose ranges range_constraints holds, the output node's fake tensor gives the logits' width, and aot_inductor.metadata stores the three strings in the package.",
}
