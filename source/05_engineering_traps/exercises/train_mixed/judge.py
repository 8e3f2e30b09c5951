"""Exercise 'train_mixed' of 05_engineering_traps: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 5.3 · train_mixed (GradScaler with accumulation and clipping) --------------------------------
# clause -> test
#   groups of accum_steps, in order; last group shorter; accum_steps=1;
#     accum_steps >= len(micro_batches): one group ..................... test_mixed_values (+ calls: sizes 3,3,1 / 2 / 1)
#   F.cross_entropy(model(x), y); micro-batches of different sizes ...... test_mixed_values
#   backward of scaled loss / actual group size (the group mean) ......... test_mixed_values (last group of 1,
#                                                                           one group of 4 uneven micro-batches)
#   one unscale_, one step, one update per group, none per micro-batch . test_mixed_calls (a spy on the real
#                                                                           GradScaler and optimizer; order too);
#                                                                           test_mixed_values (a scale that doubles
#                                                                           at every update: a per-micro-batch
#                                                                           update mixes scales)
#   clip the total 2-norm of the unscaled grads to max_norm as
#     clip_grad_norm_ does; inf clips nothing ............................ test_mixed_clip (binding 0.1 and 0.3;
#                                                                           1e3 never reached: a clip of scaled
#                                                                           gradients still bites; 0.15 on groups of
#                                                                           3: the bound is on the group's mean
#                                                                           gradient); values use inf
#   a group with inf/NaN gradients changes no parameter, the scale backs
#     off, training goes on ............................................... test_mixed_overflow (first, middle
#                                                                           and single-micro-batch groups; SGD with
#                                                                           momentum, Adam; growing scale)
#   gradients cleared after every group, clear at return ................ test_mixed_calls (grads_clear),
#                                                                           test_mixed_values (stale grads would
#                                                                           add into the next group)
#   one Python float per group: mean of unscaled micro-batch losses ..... test_mixed_values, test_mixed_overflow
#   no autocast inside (float64 models checked against the float64
#     reference at rtol 1e-9) ............................................. every cell; test_mixed_calls (a pre-hook
#                                                                           on the model sees no autocast region)
# Expected values are the reference solution's, run on the same float64 inputs with a real GradScaler("cpu"): the
# scale is a power of two, so scaling and unscaling are exact and the reference equals plain float64 training.

@judge.shared
def _j5_mixed_run(seed, spec, spy=False):
    """Build one case from its spec, run train_mixed on it; plain data back (losses, parameters, calls, scale)."""
    name, kind, d, rows, accum, opt_kind, lr, max_norm, scaler_kw, poison = spec
    g = torch.Generator().manual_seed(seed)
    micro = [(torch.randn(n, d, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
             for n in rows]
    torch.manual_seed(seed + 1)
    if kind == "linear":
        model = nn.Linear(d, 3).double()
    else:
        model = nn.Sequential(nn.Linear(d, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    if poison is not None:   # entries +-1e307 and the least likely class: scaled by >= 2**6 the gradient is inf
        bad_x = 1e307 * torch.sign(torch.randn(rows[poison], d, generator=g, dtype=torch.float64))
        with torch.no_grad():
            micro[poison] = (bad_x, model(bad_x).argmin(dim=1))
    if opt_kind == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9 if opt_kind == "sgd_momentum" else 0.0)
    scaler = torch.amp.GradScaler("cpu", **scaler_kw)
    log = []
    autocast_seen = []     # whether an autocast region was active while the model ran: the caller decides precision
    model.register_forward_pre_hook(lambda module, args: autocast_seen.append(
        torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")))
    if spy:
        class _Spy:
            def __init__(self, inner, tag):
                self._inner, self._tag = inner, tag

            def __getattr__(self, attr_name):
                attr = getattr(self._inner, attr_name)
                if attr_name not in ("scale", "unscale_", "step", "update", "zero_grad"):
                    return attr

                def call(*args, **kwargs):
                    log.append(f"{self._tag}.{attr_name}")
                    return attr(*[a._inner if isinstance(a, _Spy) else a for a in args], **kwargs)
                return call
        scaler_arg, opt_arg = _Spy(scaler, "scaler"), _Spy(optimizer, "optimizer")
    else:
        scaler_arg, opt_arg = scaler, optimizer
    losses = train_mixed(model, micro, opt_arg, scaler_arg, accum, max_norm)
    if isinstance(losses, (list, tuple)):
        losses = [v.detach() if torch.is_tensor(v) else v for v in losses]
    else:
        losses = repr(type(losses).__name__)
    sizes = [len(rows[i:i + accum]) for i in range(0, len(rows), accum)]
    return {"name": name, "losses": losses, "params": [p.detach().clone() for p in model.parameters()],
            "log": log, "scale": float(scaler.get_scale()), "sizes": sizes,
            "grads_clear": all(p.grad is None or not bool(p.grad.any()) for p in model.parameters()),
            "autocast": any(autocast_seen)}


@judge.shared
def _j5_mixed_cases(which):
    """The hidden cases of one grade cell: (name, model, d, rows per micro-batch, accum_steps, optimizer, lr,
    max_norm, GradScaler kwargs, index of an overflowing micro-batch or None)."""
    inf = float("inf")
    fast = {"init_scale": 2.0 ** 8, "growth_interval": 1}
    return {
        "values": [
            ("7 micro-batches, accum_steps=3 (last group of 1), SGD momentum 0.9, the scale doubling at every update",
             "linear", 5, [4] * 7, 3, "sgd_momentum", 0.3, inf, fast, None),
            ("an MLP, 3 micro-batches, accum_steps=1, Adam", "mlp", 5, [4, 4, 4], 1, "adam", 0.05, inf, {}, None),
            ("an MLP, micro-batches of 2, 5, 3 and 4 rows, accum_steps=6 (one group)", "mlp", 4, [2, 5, 3, 4], 6,
             "sgd", 0.5, inf, {}, None),
            ("5 micro-batches of 2 rows, accum_steps=2", "linear", 3, [2] * 5, 2, "sgd", 0.4, inf, {}, None)],
        "clip": [
            ("an MLP, 4 micro-batches, accum_steps=1, max_norm=0.1, SGD momentum 0.9", "mlp", 5, [3] * 4, 1,
             "sgd_momentum", 0.2, 0.1, {}, None),
            ("micro-batches of 2, 6 and 4 rows, accum_steps=1, max_norm=0.3, init_scale=2**12", "linear", 6, [2, 6, 4],
             1, "sgd", 0.5, 0.3, {"init_scale": 2.0 ** 12}, None),
            ("3 micro-batches, accum_steps=1, max_norm=1000 (never reached)", "linear", 4, [3] * 3, 1, "sgd", 0.5,
             1000.0, {}, None),
            ("an MLP, 6 micro-batches, accum_steps=3, max_norm=0.15 (the bound is on the group's mean gradient)",
             "mlp", 5, [3] * 6, 3, "sgd", 0.3, 0.15, {}, None)],
        "calls": [
            ("7 micro-batches, accum_steps=3", "linear", 5, [3] * 7, 3, "sgd", 0.3, inf, {}, None),
            ("an MLP, 2 micro-batches, accum_steps=4 (one group)", "mlp", 4, [3, 3], 4, "sgd_momentum", 0.2, 1.0, {},
             None),
            ("3 micro-batches, accum_steps=1, Adam", "linear", 4, [2, 3, 4], 1, "adam", 0.05, inf, {}, None)],
        "overflow": [
            ("6 micro-batches, accum_steps=2, micro-batch 0 overflows, SGD momentum 0.9", "linear", 5, [3] * 6, 2,
             "sgd_momentum", 0.3, inf, {}, 0),
            ("7 micro-batches, accum_steps=3, micro-batch 4 overflows (middle group), Adam, the scale doubling at "
             "every update", "linear", 6, [3] * 7, 3, "adam", 0.05, inf, fast, 4),
            ("3 micro-batches, accum_steps=1, micro-batch 1 overflows, max_norm=0.5", "linear", 4, [4] * 3, 1, "sgd",
             0.5, 0.5, {}, 1)],
    }[which]


def check_mixed_values(g, r, params=True):
    label = r["name"]
    C.check_type(g["losses"], list, f"train_mixed(...) ({label})", hint="return a list of Python floats")
    C.check_equal(len(g["losses"]), len(r["losses"]), f"number of group losses ({label})",
                  hint="one loss per group: the last group may be shorter than accum_steps")
    for i, (gv, rv) in enumerate(zip(g["losses"], r["losses"])):
        C.check_float(gv, rv, f"group loss {i} ({label})", rel=1e-9, abs_tol=1e-12,
                      hint="the mean of the group's unscaled micro-batch losses, as a Python float")
    if params:
        for k, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, f"parameter {k} after training ({label})", rtol=1e-9, atol=1e-12,
                          hint="backpropagate scaler.scale(loss / size of the group); unscale_, step, update and "
                               "zero_grad once per group")


@judge.probe("test_mixed_values")
def probe_mixed_values(seed):
    return {"cases": [_j5_mixed_run(seed + 7 * i, spec) for i, spec in enumerate(_j5_mixed_cases("values"))]}


@probe_mixed_values.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        check_mixed_values(g, r)


@judge.probe("test_mixed_clip")
def probe_mixed_clip(seed):
    return {"cases": [_j5_mixed_run(seed + 11 * i, spec) for i, spec in enumerate(_j5_mixed_cases("clip"))]}


@probe_mixed_clip.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        for k, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, f"parameter {k} after training ({r['name']})", rtol=1e-9, atol=1e-12,
                          hint="clip only once the scaler has unscaled the gradients: before, they are scale times too "
                               "large, and max_norm bounds the true gradients")


def check_mixed_calls(g, r):
    label = r["name"]
    calls = [c for c in g["log"] if c != "optimizer.zero_grad"]
    want = []
    for k in r["sizes"]:
        want += ["scaler.scale"] * k + ["scaler.unscale_", "scaler.step", "scaler.update"]
    C.check_equal(calls, want, f"calls to the scaler and the optimizer, zero_grad left out ({label})",
                  hint="scale every micro-batch's loss; then once per group unscale_, step and update, all through "
                       "the scaler (optimizer.step() directly skips its inf check)")
    # zero_grad between a group's first scale and its step would drop gradients of that group
    inside = False
    for c in g["log"]:
        if c == "scaler.scale":
            inside = True
        elif c == "scaler.step":
            inside = False
        elif c == "optimizer.zero_grad":
            C.check_true(not inside, f"optimizer.zero_grad() ran between a group's first backward and its step "
                                     f"({label})", hint="clear the gradients after the group's step, not inside it")
    C.check_true(g["grads_clear"] is True, f"gradients are not clear after train_mixed returns ({label})",
                 hint="optimizer.zero_grad() after every group's step, the last one too")
    C.check_true(g.get("autocast") is False, f"the model ran inside an autocast region that train_mixed opened ({label})",
                 hint="the caller decides the precision: train_mixed calls no autocast itself")


# The calls a correct answer makes may differ in their zero_grad calls (before a group, after it, once more at the
# end): the log is a diagnostic the verdict reads, not part of the answer's form.
@judge.probe("test_mixed_calls", free=("log",))
def probe_mixed_calls(seed):
    return {"cases": [_j5_mixed_run(seed + 13 * i, spec, spy=True) for i, spec in enumerate(_j5_mixed_cases("calls"))]}


@probe_mixed_calls.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        check_mixed_calls(g, r)


@judge.probe("test_mixed_overflow")
def probe_mixed_overflow(seed):
    return {"cases": [_j5_mixed_run(seed + 17 * i, spec) for i, spec in enumerate(_j5_mixed_cases("overflow"))]}


@probe_mixed_overflow.verdict
def _(got, ref):
    for g, r in zip(got["cases"], ref["cases"]):
        label = r["name"]
        check_mixed_values(g, r, params=False)
        for k, (gp, rp) in enumerate(zip(g["params"], r["params"])):
            C.check_close(gp, rp, f"parameter {k} after training ({label})", rtol=1e-9, atol=1e-12,
                          hint="step through the scaler, not the optimizer: it skips the step when unscale_ found inf or "
                               "NaN; calling optimizer.step() yourself writes NaN into the parameters")
        C.check_float(g["scale"], r["scale"], f"the scaler's scale after training ({label})", rel=0, abs_tol=0,
                      hint="scaler.update() once per group, also after a skipped step: it halves the scale")


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.


WHY['train_mixed'] = "Each micro-batch backpropagates scaler.scale(loss / group size), so .grad holds scale times the group-mean gradient; unscale_ once divides it back, so clip_grad_norm_ bounds the true gradient; scaler.step skips the optimizer when unscale_ found inf or NaN, update() changes the scale only between groups (halved after a skip), and zero_grad after every group leaves the gradients clear."
