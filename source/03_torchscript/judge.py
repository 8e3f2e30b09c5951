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


# --- Exercise 3.1 · divergent_input ------------------------------------------------------------------
# clause -> test
#   returns a float32 tensor of shape (4,) with finite values ........... test_divergent_input_type
#   ... on every call (the grader calls it more than once) ................ test_divergent_input_type
#   traced and eager route disagree on it (also a fresh trace) ........... test_divergent_input_differs
# The trace of route on ones(4) records `x * 2`; eager route is x*2 if mean > 0.5 else x - 1. The verdict
# recomputes both from the returned tensor, so nothing it compares with comes from the student's kernel.

@judge.probe("test_divergent_input_type")
def probe_divergent_type(seed):
    return [divergent_input() for _ in range(3)]


@probe_divergent_type.verdict
def _(got, ref):
    C.check_type(got, list, "results of divergent_input()")
    for i, x in enumerate(got):
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            C.check_tensor(x, name=f"divergent_input() (call {i + 1})", shape=(4,), dtype=torch.float32,
                           hint="return a tensor like torch.ones(4): same shape and dtype as the tracing example")
            C.check_true(bool(torch.isfinite(x).all()), f"divergent_input() (call {i + 1}) contains NaN or inf",
                         hint="pick ordinary finite numbers")


def _nullcontext():
    from contextlib import nullcontext
    return nullcontext()


def _route_gap(x):
    eager = x * 2 if float(x.mean()) > 0.5 else x - 1
    return float((x * 2 - eager).abs().max())


@judge.probe("test_divergent_input_differs")
def probe_divergent_differs(seed):
    import warnings

    def fresh_route(x):
        if x.mean() > 0.5:
            return x * 2
        return x - 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = torch.jit.trace(fresh_route, torch.ones(4))
    xs = [divergent_input() for _ in range(3)]
    return {"xs": xs, "fresh_trace": [judge_attempt(lambda x=x: fresh(x.clone())) for x in xs]}


@probe_divergent_differs.verdict
def _(got, ref):
    for i, x in enumerate(got["xs"]):
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            C.check_tensor(x, name=f"divergent_input() (call {i + 1})", shape=(4,), dtype=torch.float32)
            C.check_true(bool(torch.isfinite(x).all()), f"divergent_input() (call {i + 1}) contains NaN or inf")
            gap = _route_gap(x.double())
            C.check_true(gap > 1e-4, f"traced and eager route agree on {x.tolist()} (max difference {gap:.2g})",
                         hint="the trace recorded `x * 2`; you need an input where eager takes `x - 1` "
                              "(mean at most 0.5) AND the two formulas differ (x * 2 == x - 1 only at x = -1)")
    for rec, x in zip(got["fresh_trace"], got["xs"]):
        out = _out(rec, "a fresh trace of route")
        C.check_close(out, x * 2, name="a fresh trace of route on your input", rtol=1e-6, atol=1e-6)


# --- Exercise 3.2 · MaskedMean -----------------------------------------------------------------------
# clause -> test
#   mean over the LAST dimension, without a mask .......................... test_masked_mean_eager
#   with a boolean mask, only True positions count ......................... test_masked_mean_eager
#   any number of dimensions (1-D, 2-D, 3-D; last dim of size 1) ........... test_masked_mean_eager, _script_values
#   keeps x's dtype (float64), shape x.shape[:-1] .......................... test_masked_mean_eager, _script_values
#   script_masked_mean returns a scripted (not traced) module .............. test_masked_mean_scripted
#   annotations keep the None case (schema `Tensor? mask=None`, is-None in the graph)  test_masked_mean_scripted
#   scripted module accepts calls with and without a mask .................. test_masked_mean_script_values
#   survives torch.jit.save / torch.jit.load ............................... test_masked_mean_roundtrip

@judge.shared
def judge_masked_cases(seed, shapes, dtypes):
    """Inputs (x, mask) for MaskedMean: each row has at least one True and (if possible) one False."""
    g = torch.Generator().manual_seed(seed)
    cases = []
    for shape, dtype in zip(shapes, dtypes):
        x = torch.randn(shape, generator=g).to(dtype)
        m = torch.rand(shape, generator=g) > 0.5
        m[..., 0] = True
        if shape[-1] > 1:
            m[..., -1] = False
        cases.append((x, m))
    return cases


@judge.probe("test_masked_mean_eager")
def probe_masked_eager(seed):
    vx = torch.tensor([[1.0, 2.0, 3.0, 6.0], [4.0, 0.0, 0.0, 8.0]])
    vm = torch.tensor([[True, False, True, False], [True, True, False, True]])
    cases = judge_masked_cases(seed, [(5, 7), (2, 3, 9), (4, 1), (6,), (3, 5)],
                               [torch.float32, torch.float32, torch.float32, torch.float32, torch.float64])
    full = torch.ones(3, 5, dtype=torch.bool)
    vis = [judge_attempt(lambda: MaskedMean()(vx)), judge_attempt(lambda: MaskedMean()(vx, vm))]
    rows = []
    for x, m in cases:
        rows.append([judge_attempt(lambda x=x: MaskedMean()(x)), judge_attempt(lambda x=x, m=m: MaskedMean()(x, m))])
    all_true = judge_attempt(lambda: MaskedMean()(cases[4][0][:3], full))
    return {"visible": vis, "rows": rows, "all_true": all_true, "shapes": [tuple(x.shape) for x, _ in cases]}


@probe_masked_eager.verdict
def _(got, ref):
    with visible():
        C.check_close(_out(got["visible"][0], "MaskedMean()(x)"), _out(ref["visible"][0], "reference"),
                      name="MaskedMean()(x)", hint="without a mask: x.mean(dim=-1)")
        C.check_close(_out(got["visible"][1], "MaskedMean()(x, mask)"), _out(ref["visible"][1], "reference"),
                      name="MaskedMean()(x, mask)",
                      hint="divide by the number of True entries, not by x.shape[-1]")
    for shape, g_row, r_row in zip(ref["shapes"], got["rows"], ref["rows"]):
        for label, g, r in (("x", g_row[0], r_row[0]), ("x, mask", g_row[1], r_row[1])):
            want = _out(r, "reference")
            C.check_close(_out(g, f"MaskedMean()({label}) for shape {shape}"), want,
                          name=f"MaskedMean()({label}) for x of shape {shape}, dtype {want.dtype}",
                          rtol=1e-5, atol=1e-6,
                          hint="average over the last dimension (dim=-1) whatever the rank, count only the "
                               "True positions, and keep x's dtype (turn the mask into x.dtype, not float32)")
    C.check_close(_out(got["all_true"], "MaskedMean()(x, all-True mask)"), _out(ref["all_true"], "reference"),
                  name="MaskedMean()(x, mask of all True)", rtol=1e-9, atol=1e-12,
                  hint="with every position masked in, the result is the plain mean")


@judge.probe("test_masked_mean_scripted")
def probe_masked_scripted(seed):
    s = script_masked_mean()
    info = {"type": type(s).__name__, "is_script": isinstance(s, torch.jit.ScriptModule)}
    schema = judge_attempt(lambda: str(s.forward.schema))
    graph = judge_attempt(lambda: str(s.graph))
    info["schema"] = schema.get("out") if schema["ok"] else ""
    info["tests_none"] = bool(graph["ok"] and ("aten::__is__" in graph["out"] or "aten::__isnot__" in graph["out"]))
    info["no_mask_call"] = judge_attempt(lambda: s(torch.ones(2, 3)))
    return info


@probe_masked_scripted.verdict
def _(got, ref):
    with visible():
        C.check_true(got["is_script"] is True, f"script_masked_mean() returned a {got['type']}, not a ScriptModule",
                     hint="return torch.jit.script(MaskedMean())")
        C.check_true(got["type"] == "RecursiveScriptModule",
                     f"script_masked_mean() returned a {got['type']}, not a module compiled by torch.jit.script",
                     hint="torch.jit.trace records one path and loses the other branch; use torch.jit.script")
        C.check_true("Tensor? mask=None" in got["schema"],
                     f"the scripted schema is {got['schema']!r}; expected `Tensor? mask=None`",
                     hint="without an annotation, script assumes mask is a Tensor and drops the None case: "
                          "annotate it as Optional[Tensor] = None")
    C.check_true(got["tests_none"] is True, "the scripted graph never tests `mask is None`: the None case was "
                 "compiled away", hint="annotate mask as Optional[Tensor] and test `if mask is None`")
    _out(got["no_mask_call"], "the scripted module called without a mask")


@judge.probe("test_masked_mean_script_values")
def probe_masked_script_values(seed):
    s = script_masked_mean()
    vx = torch.tensor([[1.0, 2.0, 3.0, 6.0]])
    vm = torch.tensor([[True, False, True, False]])
    cases = judge_masked_cases(seed + 1, [(3, 11), (2, 2, 5), (7,), (4, 3)],
                               [torch.float32, torch.float32, torch.float32, torch.float64])
    return {"visible": [judge_attempt(lambda: s(vx)), judge_attempt(lambda: s(vx, vm))],
            "rows": [[judge_attempt(lambda x=x: s(x)), judge_attempt(lambda x=x, m=m: s(x, m))] for x, m in cases],
            "shapes": [tuple(x.shape) for x, _ in cases]}


@probe_masked_script_values.verdict
def _(got, ref):
    with visible():
        C.check_close(_out(got["visible"][0], "scripted(x)"), _out(ref["visible"][0], "reference"),
                      name="scripted(x)", hint="did the None branch survive scripting?")
        C.check_close(_out(got["visible"][1], "scripted(x, mask)"), _out(ref["visible"][1], "reference"),
                      name="scripted(x, mask)")
    for shape, g_row, r_row in zip(ref["shapes"], got["rows"], ref["rows"]):
        for label, g, r in (("x", g_row[0], r_row[0]), ("x, mask", g_row[1], r_row[1])):
            C.check_close(_out(g, f"scripted({label}) for shape {shape}"), _out(r, "reference"),
                          name=f"scripted({label}) for x of shape {shape}", rtol=1e-5, atol=1e-6,
                          hint="the scripted module must accept a call without a mask (Optional[Tensor] = None)")


@judge.probe("test_masked_mean_roundtrip")
def probe_masked_roundtrip(seed):
    import io
    s = script_masked_mean()
    buf = io.BytesIO()
    torch.jit.save(s, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    vx = torch.tensor([[1.0, 2.0, 3.0, 6.0], [4.0, 0.0, 0.0, 8.0]])
    vm = torch.tensor([[True, False, True, False], [True, True, False, True]])
    cases = [(vx, vm)] + judge_masked_cases(seed + 2, [(4, 6), (2, 3, 4)], [torch.float32, torch.float64])
    rows = []
    for x, m in cases:
        rows.append({"before": [judge_attempt(lambda x=x: s(x)), judge_attempt(lambda x=x, m=m: s(x, m))],
                     "after": [judge_attempt(lambda x=x: loaded(x)), judge_attempt(lambda x=x, m=m: loaded(x, m))]})
    return {"type": type(loaded).__name__, "rows": rows}


@probe_masked_roundtrip.verdict
def _(got, ref):
    # A round trip must not change anything: the loaded module is compared with the student's own scripted one.
    for i, row in enumerate(got["rows"]):
        ctx = visible() if i == 0 else _nullcontext()
        with ctx:
            for label, before, after in (("x", row["before"][0], row["after"][0]),
                                         ("x, mask", row["before"][1], row["after"][1])):
                want = _out(before, f"scripted({label}) before saving")
                C.check_close(_out(after, f"loaded({label})"), want, name=f"loaded({label}) vs before saving, case {i}",
                              equal_nan=True, hint="save with torch.jit.save and load with torch.jit.load")
    C.check_true(got["type"] == "RecursiveScriptModule", f"torch.jit.load gave back a {got['type']}")


# --- Exercise 3.3 · export_classifier ----------------------------------------------------------------
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
    with _t.random.fork_rng():
        _t.manual_seed(1)
        vis_model = TinyClassifier(in_features=6, classes=3)
        vis_example = _t.randn(4, 6)
        vis_xs = [_t.randn(b, 6) for b in (1, 5, 128)]
    models = judge_classifiers(seed + 1)
    g = _t.Generator().manual_seed(seed)
    in_example = _t.randn(3, 5, generator=g)
    in_xs = [_t.randn(b, 5, generator=g) for b in (1, 2, 7, 1024)]
    one_row = _t.randn(1, 7, generator=g)
    one_xs = [_t.randn(b, 7, generator=g) for b in (1, 2, 5, 64)]
    expect = {"visible": judge_eval_outputs(vis_model, vis_xs),
              "inputs": judge_eval_outputs(models["inputs"], in_xs),
              "one_row": judge_eval_outputs(models["x"], one_xs)}
    got = {"expect": expect}
    for key, model, example, xs in (("visible", vis_model, vis_example, vis_xs),
                                    ("inputs", models["inputs"], in_example, in_xs),
                                    ("one_row", models["x"], one_row, one_xs)):
        rec = judge_attempt(lambda m=model, e=example: export_classifier(m, e))
        got[key] = judge_program_run(rec["out"], xs) if rec["ok"] else [rec] * len(xs)
    return got


@probe_export_dynamic.verdict
def _(got, ref):
    with visible():
        for b, rec, want in zip((1, 5, 128), got["visible"], ref["expect"]["visible"]):
            C.check_close(_out(rec, f"program(batch of {b})"), want, name=f"program(batch of {b})",
                          rtol=1e-5, atol=1e-5, hint="make dimension 0 dynamic with dynamic_shapes and Dim")
    for b, rec, want in zip((1, 2, 7, 1024), got["inputs"], ref["expect"]["inputs"]):
        C.check_close(_out(rec, f"the program of a model whose argument is `inputs`, on a batch of {b}"), want,
                      name=f"program(batch of {b}), argument named `inputs`", rtol=1e-5, atol=1e-5,
                      hint="every batch size from 1 to 1024 must work, whatever forward's argument is called")
    for b, rec, want in zip((1, 2, 5, 64), got["one_row"], ref["expect"]["one_row"]):
        C.check_close(_out(rec, f"export from a 1-row example, then a batch of {b}"), want,
                      name=f"program(batch of {b}), exported from a 1-row example", rtol=1e-5, atol=1e-5,
                      hint="an example of size 1 in a dynamic dimension is specialised away (section 6.3): "
                           "export from at least 2 rows")


@judge.probe("test_export_classifier_rejects_features")
def probe_export_rejects(seed):
    import torch as _t
    with _t.random.fork_rng():
        _t.manual_seed(2)
        vis_model = TinyClassifier(in_features=6, classes=3)
        vis_example = _t.randn(4, 6)
        vis_bad = _t.randn(4, 7)
    models = judge_classifiers(seed + 2)
    g = _t.Generator().manual_seed(seed)
    example = _t.randn(2, 8, generator=g)
    bad = [_t.randn(2, f, generator=g) for f in (7, 9, 16)]
    out = {}
    for key, model, ex, xs in (("visible", vis_model, vis_example, [vis_example, vis_bad]),
                               ("hidden", models["x8"], example, [example] + bad)):
        rec = judge_attempt(lambda m=model, e=ex: export_classifier(m, e))
        runs = judge_program_run(rec["out"], xs) if rec["ok"] else [rec] * len(xs)
        out[key] = {"right": runs[0]["ok"], "right_error": runs[0].get("error"),
                    "wrong": [None if r["ok"] else r.get("error") for r in runs[1:]],
                    "export_error": None if rec["ok"] and isinstance(rec["out"], _t.export.ExportedProgram)
                    else (rec.get("error") or f"returned a {type(rec.get('out')).__name__}")}
    return out


@probe_export_rejects.verdict
def _(got, ref):
    for key, sizes in (("visible", (7,)), ("hidden", (7, 9, 16))):
        ctx = visible() if key == "visible" else _nullcontext()
        with ctx:
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
    with _t.random.fork_rng():
        _t.manual_seed(3)
        vis_model = TinyClassifier(in_features=6, classes=3)
        vis_example = _t.randn(4, 6)
    models = judge_classifiers(seed + 3)
    g = _t.Generator().manual_seed(seed)
    frozen_bn = models["x"]
    frozen_bn.bn.eval()                       # fine-tuning: the batch norm is frozen, the rest trains
    eval_model = models["x8"].eval()          # a caller that hands over an eval-mode model
    cases = [("visible", vis_model, vis_example), ("frozen_bn", frozen_bn, _t.randn(3, 7, generator=g)),
             ("eval_model", eval_model, _t.randn(3, 8, generator=g))]
    out = {}
    for key, model, example in cases:
        before = [m.training for m in model.modules()]
        rec = judge_attempt(lambda m=model, e=example: export_classifier(m, e))
        out[key] = {"before": before, "after": [m.training for m in model.modules()],
                    "error": None if rec["ok"] else rec["error"]}
    return out


@probe_export_leaves.verdict
def _(got, ref):
    labels = {"visible": "a TinyClassifier in train mode",
              "frozen_bn": "a train-mode model whose BatchNorm was frozen in eval mode",
              "eval_model": "a model handed over in eval mode"}
    for key in ("visible", "frozen_bn", "eval_model"):
        ctx = visible() if key == "visible" else _nullcontext()
        with ctx:
            g, r = got[key], ref[key]
            C.check_true(g["error"] is None, f"export_classifier raised {g['error']} on {labels[key]}")
            C.check_equal(g["after"], r["before"], name=f"training flags of {labels[key]} after the call "
                          "(one per submodule)",
                          hint="export a copy (copy.deepcopy(model).eval()), or record every submodule's mode and "
                               "restore it: model.train() would also switch on submodules that were frozen")


# --- Exercise 3.4 · ClampOrScale ---------------------------------------------------------------------
# clause -> test
#   x.sum() > 0: clamp into [-limit, limit] ................................ test_clamp_or_scale_eager
#   otherwise: x * scale .................................................. test_clamp_or_scale_eager
#   uses the constructor's limit / scale (non-default values) ............. test_clamp_or_scale_eager, _export
#   any shape of x ......................................................... test_clamp_or_scale_eager, _export
#   one exported program holds a cond ...................................... test_clamp_or_scale_export
#   ... whichever branch the export example takes, both branches right ..... test_clamp_or_scale_export

@judge.shared
def judge_clamp_inputs(seed, shape):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(shape, generator=g) * 3
    return base.abs() + 0.5, -base.abs() - 0.5          # clearly positive sum, clearly negative sum


@judge.probe("test_clamp_or_scale_eager")
def probe_clamp_eager(seed):
    vpos = torch.tensor([3.0, -2.0, 0.5, 1.5])
    vneg = torch.tensor([-3.0, 2.0, -0.5, -1.5])
    combos = [(2.5, 0.25, (3, 4)), (0.3, -1.5, (7,)), (1.2, 3.0, (2, 2, 3))]
    inputs = [judge_clamp_inputs(seed + i, shape) for i, (_, _, shape) in enumerate(combos)]
    mixed = torch.tensor([[4.0, -3.0], [-2.0, 2.5]])         # positive sum, entries beyond both bounds
    m = ClampOrScale()
    out = {"visible": [judge_attempt(lambda: m(vpos)), judge_attempt(lambda: m(vneg))], "rows": []}
    for (limit, scale, _), (xp, xn) in zip(combos, inputs):
        mod = ClampOrScale(limit=limit, scale=scale)
        out["rows"].append([judge_attempt(lambda x=xp: mod(x)), judge_attempt(lambda x=xn: mod(x))])
    out["mixed"] = judge_attempt(lambda: ClampOrScale(limit=1.5, scale=2.0)(mixed))
    out["combos"] = [(limit, scale) for limit, scale, _ in combos]
    return out


@probe_clamp_eager.verdict
def _(got, ref):
    with visible():
        C.check_close(_out(got["visible"][0], "ClampOrScale()(positive-sum x)"), _out(ref["visible"][0], "reference"),
                      name="ClampOrScale()(positive-sum x)", hint="clamp into [-limit, limit] when x.sum() > 0")
        C.check_close(_out(got["visible"][1], "ClampOrScale()(negative-sum x)"), _out(ref["visible"][1], "reference"),
                      name="ClampOrScale()(negative-sum x)", hint="multiply by scale when x.sum() <= 0")
    for (limit, scale), g_row, r_row in zip(ref["combos"], got["rows"], ref["rows"]):
        for branch, g, r in (("positive", g_row[0], r_row[0]), ("negative", g_row[1], r_row[1])):
            C.check_close(_out(g, f"ClampOrScale(limit={limit}, scale={scale})"), _out(r, "reference"),
                          name=f"ClampOrScale(limit={limit}, scale={scale}) on a {branch}-sum input",
                          hint="use self.limit and self.scale, not fixed numbers")
    C.check_close(_out(got["mixed"], "ClampOrScale(limit=1.5, scale=2.0)"), _out(ref["mixed"], "reference"),
                  name="ClampOrScale(limit=1.5, scale=2.0) on [[4, -3], [-2, 2.5]]",
                  hint="clamp on both sides: into [-limit, limit]")


@judge.probe("test_clamp_or_scale_export")
def probe_clamp_export(seed):
    vpos = torch.tensor([3.0, -2.0, 0.5, 1.5])
    vneg = torch.tensor([-3.0, 2.0, -0.5, -1.5])
    combos = [(1.7, 0.1), (0.4, 2.0)]
    inputs = [judge_clamp_inputs(seed + 10 + i, (5, 3)) for i in range(len(combos))]

    def export_and_run(module, first, xs):
        with deploy.quiet_logs():
            rec = judge_attempt(lambda: torch.export.export(module, (first,)))
        if not rec["ok"]:
            return {"has_cond": False, "error": rec["error"], "outs": [rec] * len(xs)}
        ep = rec["out"]
        has_cond = any(n.target is torch.ops.higher_order.cond for n in ep.graph.nodes)
        prog = ep.module()
        return {"has_cond": has_cond, "error": None, "outs": [judge_attempt(lambda x=x: prog(x)) for x in xs]}

    out = {"visible": export_and_run(ClampOrScale(), vpos, [vneg]), "rows": [], "combos": combos}
    for (limit, scale), (xp, xn) in zip(combos, inputs):
        xm = xp.clone()
        xm[0, 0] = -limit - 1.0                  # one entry below -limit; the sum stays clearly positive
        for first_name, first in (("positive", xp), ("negative", xn)):
            res = export_and_run(ClampOrScale(limit=limit, scale=scale), first, [xp, xn, xm])
            res["first"] = first_name
            out["rows"].append(res)
    return out


@probe_clamp_export.verdict
def _(got, ref):
    with visible():
        v = got["visible"]
        C.check_true(v["error"] is None, f"torch.export.export(ClampOrScale(), ...) failed: {v['error']}",
                     hint="a Python `if` on a tensor cannot be exported; write the branch with torch.cond")
        C.check_true(v["has_cond"] is True, "the exported graph has no torch.cond: only one branch (or torch.where) "
                     "was captured", hint="write the branch with torch.cond(pred, true_fn, false_fn, (x,))")
        C.check_close(_out(v["outs"][0], "exported(negative-sum x)"), _out(ref["visible"]["outs"][0], "reference"),
                      name="exported(negative-sum x)",
                      hint="the program was exported on a positive-sum input: did it keep the other branch?")
    for g, r in zip(got["rows"], ref["rows"]):
        C.check_true(g["error"] is None, f"exporting on a {r['first']}-sum example failed: {g['error']}",
                     hint="use torch.cond")
        C.check_true(g["has_cond"] is True, f"exported on a {r['first']}-sum example, the graph has no torch.cond",
                     hint="use torch.cond")
        for branch, go, ro in (("positive", g["outs"][0], r["outs"][0]), ("negative", g["outs"][1], r["outs"][1]),
                               ("positive (one entry below -limit)", g["outs"][2], r["outs"][2])):
            C.check_close(_out(go, "the exported program"), _out(ro, "reference"),
                          name=f"program exported on a {r['first']}-sum example, run on a {branch}-sum input",
                          hint="both branches must be in the exported program and use self.limit / self.scale")


# --- Exercise 3.5 · freeze_for_inference -------------------------------------------------------------
# clause -> test
#   eval-mode outputs (dropout off, batch-norm statistics) ................. test_freeze_outputs
#   the same on every call ................................................. test_freeze_outputs
#   data-dependent control flow in forward (an if on x, a while loop) ...... test_freeze_outputs (GateNet, LoopNet)
#   need not start with a Linear (Conv1d first) ............................ test_freeze_outputs, _no_parameters
#   any input the module accepts (other batch sizes) ....................... test_freeze_outputs
#   no parameters remain ................................................... test_freeze_no_parameters
#   names in keep survive: an exported method callable, right values ....... test_freeze_preserved
#   ... an attribute settable, and setting it changes forward .............. test_freeze_preserved
#   keep=() keeps nothing extra ............................................ test_freeze_preserved
#   survives save/load, kept names included ................................ test_freeze_roundtrip
#   (the caller's module may be left in eval mode: not tested, by the statement)

@judge.shared
def judge_freeze_sources():
    """The source text of GateNet and LoopNet (scripted by the student's code, so defined from text)."""
    gate = '''
class GateNet(nn.Module):
    """Conv1d first, then a data-dependent branch on the input, a tunable threshold and an exported method."""

    def __init__(self, channels: int = 4, classes: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, channels, 3, padding=1)
        self.bn = nn.BatchNorm1d(channels)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(channels, classes)
        self.threshold = 0.0

    def forward(self, x: Tensor) -> Tensor:
        h = self.features(x)
        if x.mean() > self.threshold:
            h = h * 2.0
        else:
            h = -h
        return self.head(self.drop(h))

    @torch.jit.export
    def features(self, x: Tensor) -> Tensor:
        return torch.relu(self.bn(self.conv(x))).mean(dim=-1)
'''
    loop = '''
class LoopNet(nn.Module):
    """Linear first, then a loop whose number of steps depends on the input's values."""

    def __init__(self, features: int = 6, classes: int = 3) -> None:
        super().__init__()
        self.inp = nn.Linear(features, 8)
        self.bn = nn.BatchNorm1d(8)
        self.step = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(8, classes)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.bn(self.inp(x)))
        n = 0
        while bool(x.abs().max() > 1.0) and n < 3:
            h = torch.tanh(self.step(h))
            x = x * 0.5
            n += 1
        return self.out(self.drop(h))
'''
    return gate, loop


@judge.shared
def judge_freeze_models(seed):
    """GateNet and LoopNet instances (train mode, trained-looking BatchNorm statistics), built before student code."""
    from torch import nn as _nn
    gate_source, loop_source = judge_freeze_sources()
    GateNet = judge_module(gate_source, "GateNet", seed)
    LoopNet = judge_module(loop_source, "LoopNet", seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        models = {"gate": GateNet(), "loop": LoopNet(), "gate2": GateNet(channels=6, classes=2)}
        with torch.no_grad():
            for m in models.values():
                for mod in m.modules():
                    if isinstance(mod, _nn.BatchNorm1d):
                        mod.running_mean.uniform_(-1.0, 1.0)
                        mod.running_var.uniform_(0.5, 2.0)
    return models


@judge.shared
def judge_serving_net(seed):
    """A ServingNet built from `seed` (train mode), without touching the global RNG."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return ServingNet()


@judge.shared
def judge_serving_visible(rows):
    """The visible tests' ServingNet and input: manual_seed(0), ServingNet(), then randn(rows, 8)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = ServingNet()
        return net, torch.randn(rows, 8)


@judge.probe("test_freeze_outputs")
def probe_freeze_outputs(seed):
    import copy as _copy
    vis_net, vis_x = judge_serving_visible(5)
    models = judge_freeze_models(seed)
    other_serving = judge_serving_net(seed + 7)
    g = torch.Generator().manual_seed(seed)
    gate_xs = [torch.randn(4, 2, 5, generator=g) + 2.0, torch.randn(3, 2, 5, generator=g) - 2.0,
               torch.randn(1, 2, 5, generator=g) + 2.0]
    loop_xs = [torch.rand(4, 6, generator=g) * 0.5, torch.randn(6, 6, generator=g) * 3.0,
               torch.rand(2, 6, generator=g) * 0.5]
    serve_xs = [torch.randn(7, 8, generator=g), torch.randn(1, 8, generator=g)]
    cases = [("visible", vis_net, [vis_x, vis_x]), ("gate", models["gate"], gate_xs),
             ("loop", models["loop"], loop_xs), ("serving", other_serving, serve_xs)]
    expect = {}
    for name, model, xs in cases:
        ref_model = _copy.deepcopy(model).eval()
        with torch.no_grad():
            expect[name] = [ref_model(x) for x in xs]
    out = {"expect": expect}
    for name, model, xs in cases:
        rec = judge_attempt(lambda m=model: freeze_for_inference(m))
        if not rec["ok"]:
            out[name] = {"error": rec["error"], "type": None, "outs": []}
            continue
        frozen = rec["out"]
        with torch.no_grad():
            outs = [judge_attempt(lambda x=x: frozen(x)) for x in xs]
            outs.append(judge_attempt(lambda: frozen(xs[0])))          # called again
        out[name] = {"error": None, "type": type(frozen).__name__,
                     "is_script": isinstance(frozen, torch.jit.ScriptModule), "outs": outs}
    return out


@probe_freeze_outputs.verdict
def _(got, ref):
    labels = {"visible": "ServingNet", "gate": "GateNet (Conv1d first, an `if` on the input)",
              "loop": "LoopNet (a loop whose length depends on the input)", "serving": "another ServingNet"}
    for name in ("visible", "gate", "loop", "serving"):
        ctx = visible() if name == "visible" else _nullcontext()
        with ctx:
            g = got[name]
            C.check_true(g["error"] is None, f"freeze_for_inference({labels[name]}) raised {g['error']}",
                         hint="script (not trace) the module, switch it to eval mode, then freeze it")
            C.check_true(g["is_script"] is True, f"freeze_for_inference({labels[name]}) returned a {g['type']}, "
                         "not a ScriptModule", hint="return the result of torch.jit.freeze")
            wants = ref["expect"][name] + [ref["expect"][name][0]]
            for i, (rec, want) in enumerate(zip(g["outs"], wants)):
                what = "called again on the first input" if i == len(wants) - 1 else f"input {i + 1}"
                C.check_close(_out(rec, f"the frozen {labels[name]}"), want,
                              name=f"frozen {labels[name]}, {what} (batch {want.shape[0]})", rtol=1e-4, atol=1e-5,
                              hint="eval mode (batch norm statistics, no dropout), and script rather than trace: "
                                   "a trace keeps only the branch or the number of loop steps of its example")


@judge.probe("test_freeze_no_parameters")
def probe_freeze_params(seed):
    vis = judge_serving_net(0)
    models = judge_freeze_models(seed + 1)
    out = {}
    for name, model in (("visible", vis), ("gate", models["gate2"]), ("loop", models["loop"])):
        rec = judge_attempt(lambda m=model: freeze_for_inference(m))
        if rec["ok"]:
            frozen = rec["out"]
            params = judge_attempt(lambda: sum(p.numel() for p in frozen.parameters()))
            out[name] = {"error": None, "params": params.get("out"), "params_error": params.get("error"),
                         "type": type(frozen).__name__}
        else:
            out[name] = {"error": rec["error"]}
    return out


@probe_freeze_params.verdict
def _(got, ref):
    for name, label in (("visible", "ServingNet"), ("gate", "GateNet (Conv1d first)"), ("loop", "LoopNet")):
        ctx = visible() if name == "visible" else _nullcontext()
        with ctx:
            g = got[name]
            C.check_true(g["error"] is None, f"freeze_for_inference({label}) raised {g['error']}")
            C.check_true(type(g["params"]) is int, f"could not count the parameters of the frozen {label}: "
                         f"{g.get('params_error')}")
            C.check_equal(g["params"], 0, name=f"number of parameter values left in the frozen {label}",
                          hint="a scripted but unfrozen module keeps every parameter: call torch.jit.freeze")


@judge.probe("test_freeze_preserved")
def probe_freeze_preserved(seed):
    import copy as _copy
    vis, vis_x = judge_serving_visible(3)
    models = judge_freeze_models(seed + 2)
    gate = models["gate"]
    g = torch.Generator().manual_seed(seed)
    gx = torch.randn(4, 2, 5, generator=g) + 0.5          # mean about 0.5: the threshold decides the branch
    # expectations, from eval-mode copies
    vis_ref = _copy.deepcopy(vis).eval()
    gate_ref = _copy.deepcopy(gate).eval()
    with torch.no_grad():
        expect = {"vis_embed": vis_ref.embed(vis_x)}
        vis_ref.temperature = 2.0
        expect["vis_t2"] = vis_ref(vis_x)
        expect["gate_features"] = gate_ref.features(gx)
        expect["gate_default"] = gate_ref(gx)
        gate_ref.threshold = 5.0
        expect["gate_t5"] = gate_ref(gx)
    out = {"expect": expect}
    rec = judge_attempt(lambda: freeze_for_inference(vis, keep=["embed", "temperature"]))
    if rec["ok"]:
        f = rec["out"]
        with torch.no_grad():
            out["vis_has_embed"] = hasattr(f, "embed")
            out["vis_embed"] = judge_attempt(lambda: f.embed(vis_x))
            out["vis_set"] = judge_attempt(lambda: setattr(f, "temperature", 2.0))
            out["vis_t2"] = judge_attempt(lambda: f(vis_x))
    else:
        out["vis_error"] = rec["error"]
    rec = judge_attempt(lambda: freeze_for_inference(gate, ("features", "threshold")))   # keep as a tuple, by position
    if rec["ok"]:
        f = rec["out"]
        with torch.no_grad():
            out["gate_has_features"] = hasattr(f, "features")
            out["gate_features"] = judge_attempt(lambda: f.features(gx))
            out["gate_default"] = judge_attempt(lambda: f(gx))
            out["gate_set"] = judge_attempt(lambda: setattr(f, "threshold", 5.0))
            out["gate_t5"] = judge_attempt(lambda: f(gx))
    else:
        out["gate_error"] = rec["error"]
    rec = judge_attempt(lambda: freeze_for_inference(models["gate2"]))                   # keep=()
    out["plain_has_features"] = hasattr(rec["out"], "features") if rec["ok"] else None
    out["plain_error"] = None if rec["ok"] else rec["error"]
    return out


@probe_freeze_preserved.verdict
def _(got, ref):
    e = ref["expect"]
    with visible():
        C.check_true("vis_error" not in got, f"freeze_for_inference(ServingNet(), keep=[...]) raised "
                     f"{got.get('vis_error')}", hint="pass the names on to torch.jit.freeze(..., preserved_attrs=...)")
        C.check_true(got["vis_has_embed"] is True, "the frozen module has no method `embed`",
                     hint="freezing drops methods that forward does not call, unless you preserve them")
        C.check_close(_out(got["vis_embed"], "frozen.embed(x)"), e["vis_embed"], name="frozen.embed(x)",
                      rtol=1e-4, atol=1e-5)
        _out(got["vis_set"], "setting frozen.temperature")
        C.check_close(_out(got["vis_t2"], "frozen(x) after setting temperature"), e["vis_t2"],
                      name="frozen(x) after setting temperature = 2.0", rtol=1e-4, atol=1e-5,
                      hint="a frozen attribute is a constant: setting it changes nothing unless it was preserved")
    C.check_true("gate_error" not in got, f"freeze_for_inference(GateNet, ('features', 'threshold')) raised "
                 f"{got.get('gate_error')}", hint="`keep` may be any sequence of names, a tuple too")
    C.check_true(got["gate_has_features"] is True, "the frozen GateNet lost its exported method `features`")
    C.check_close(_out(got["gate_features"], "frozen GateNet.features(x)"), e["gate_features"],
                  name="frozen GateNet.features(x)", rtol=1e-4, atol=1e-5)
    C.check_close(_out(got["gate_default"], "frozen GateNet(x)"), e["gate_default"],
                  name="frozen GateNet(x) with the default threshold", rtol=1e-4, atol=1e-5)
    _out(got["gate_set"], "setting frozen GateNet.threshold")
    C.check_close(_out(got["gate_t5"], "frozen GateNet(x) after setting threshold"), e["gate_t5"],
                  name="frozen GateNet(x) after setting threshold = 5.0 (the other branch)", rtol=1e-4, atol=1e-5,
                  hint="preserve the attribute, so that forward reads it at run time instead of a folded constant")
    C.check_true(got["plain_error"] is None, f"freeze_for_inference(GateNet) with keep=() raised {got['plain_error']}")
    C.check_true(got["plain_has_features"] is False, "with keep=() the frozen GateNet still has `features`: "
                 "nothing beyond forward should be kept", hint="preserve exactly the names in `keep`")


@judge.probe("test_freeze_roundtrip")
def probe_freeze_roundtrip(seed):
    import io
    vis, vis_x = judge_serving_visible(3)
    models = judge_freeze_models(seed + 3)
    g = torch.Generator().manual_seed(seed)
    gx = torch.randn(5, 2, 5, generator=g) + 0.5

    def roundtrip(module):
        buf = io.BytesIO()
        torch.jit.save(module, buf)
        buf.seek(0)
        return torch.jit.load(buf)

    out = {}
    with torch.no_grad():
        rec = judge_attempt(lambda: freeze_for_inference(vis))
        if rec["ok"]:
            frozen = rec["out"]
            loaded = judge_attempt(lambda: roundtrip(frozen))
            out["visible"] = {"before": judge_attempt(lambda: frozen(vis_x)),
                              "after": judge_attempt(lambda: loaded["out"](vis_x)) if loaded["ok"] else loaded}
        else:
            out["visible"] = {"before": rec, "after": rec}
        rec = judge_attempt(lambda: freeze_for_inference(models["gate"], keep=["features", "threshold"]))
        if rec["ok"]:
            frozen = rec["out"]
            loaded_rec = judge_attempt(lambda: roundtrip(frozen))
            if loaded_rec["ok"]:
                loaded = loaded_rec["out"]
                out["gate"] = {"before": judge_attempt(lambda: frozen(gx)), "after": judge_attempt(lambda: loaded(gx)),
                               "features_before": judge_attempt(lambda: frozen.features(gx)),
                               "features_after": judge_attempt(lambda: loaded.features(gx))}
                judge_attempt(lambda: setattr(frozen, "threshold", 5.0))
                out["gate"]["set_after"] = judge_attempt(lambda: setattr(loaded, "threshold", 5.0))
                out["gate"]["t5_before"] = judge_attempt(lambda: frozen(gx))
                out["gate"]["t5_after"] = judge_attempt(lambda: loaded(gx))
            else:
                out["gate"] = {"error": loaded_rec["error"]}
        else:
            out["gate"] = {"error": rec["error"]}
    return out


@probe_freeze_roundtrip.verdict
def _(got, ref):
    # A round trip must not change anything: the loaded module is compared with the student's own frozen one.
    with visible():
        want = _out(got["visible"]["before"], "the frozen ServingNet")
        C.check_close(_out(got["visible"]["after"], "the loaded frozen ServingNet"), want,
                      name="loaded(x) vs frozen(x) before saving")
    g = got["gate"]
    C.check_true("error" not in g, f"freezing or saving GateNet with keep=['features', 'threshold'] failed: "
                 f"{g.get('error')}")
    for label, before, after in (("GateNet(x)", "before", "after"),
                                 ("GateNet.features(x), a kept method", "features_before", "features_after")):
        C.check_close(_out(g[after], f"loaded {label}"), _out(g[before], f"frozen {label}"),
                      name=f"loaded {label} vs before saving",
                      hint="the names kept by freezing must survive torch.jit.save / torch.jit.load")
    _out(g["set_after"], "setting threshold on the loaded module")
    C.check_close(_out(g["t5_after"], "loaded GateNet(x) after setting threshold"),
                  _out(g["t5_before"], "frozen GateNet(x) after setting threshold"),
                  name="loaded GateNet(x) after setting threshold = 5.0, vs the frozen module with the same setting",
                  hint="a kept attribute must stay an attribute after save/load")
