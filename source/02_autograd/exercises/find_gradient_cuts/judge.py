"""Exercise 'find_gradient_cuts' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# =====================================================================================================
# Exercise 2.3 · find_gradient_cuts
# clause -> test
#   returns a list of names in the order of `terms` ............................ every test
#   cut off entirely: .item(), NumPy, no_grad, set_grad_enabled(False), a custom
#     backward returning zeros; several cuts in one dict; any shape of x ...... test_find_cuts_full
#   cut on one of several paths: x * x.detach(), detached denominator, .data
#     branch, a custom backward off by a factor or of the wrong sign (same
#     norm: a comparison of norms misses it), an error that sums to zero over the
#     elements (one directional derivative misses it); size-1 x ............. test_find_cuts_partial
#   no false alarms: constants, weight decay on other tensors that require grad,
#     a .detach() that changes nothing, steep clean terms, a derivative of
#     exactly 0 (a relative tolerance alone flags it), {} -> [] (one real
#     cut among the clean terms, so that [] is not the answer) ............... test_find_cuts_no_false_alarms
#   the cut in SEG_TERMS ....................................................... test_find_cuts_segmentation
#   no side effects: x's values, requires_grad and .grad (None, or an existing
#     one) unchanged; no .grad on a term's parameters (an nn.Module, a weight-
#     decay tensor) and an existing .grad there unchanged; nothing flows into
#     the graph x came from; x's values bit for bit (a nudge-and-restore of x in
#     place drifts by rounding); same answer twice (and the reference's); a term's
#     exception propagates; the answers themselves are the reference's ....... test_find_cuts_side_effects
# =====================================================================================================

@judge.shared
def cut_term_sets(seed, which):
    """Named term sets (term functions plus the point x) for the find_gradient_cuts probes."""
    import numpy as np

    F64_ = torch.float64
    g = torch.Generator().manual_seed(seed)
    nnf = torch.nn.functional

    class ZeroGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.exp()

        @staticmethod
        def backward(ctx, grad_output):
            return torch.zeros_like(grad_output)

    class HalfGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.sin()

        @staticmethod
        def backward(ctx, grad_output):
            (t,) = ctx.saved_tensors
            return 0.5 * grad_output * t.cos()

    class FlippedGrad(torch.autograd.Function):          # the right size, the wrong sign
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.tanh()

        @staticmethod
        def backward(ctx, grad_output):
            (t,) = ctx.saved_tensors
            return -grad_output * (1 - t.tanh() ** 2)

    def under_no_grad(t):
        with torch.no_grad():
            return t.exp().mean()

    def grad_disabled(t):
        with torch.set_grad_enabled(False):
            return (t ** 2).sum() * 0.3

    if which == "full":
        return [
            (torch.randn(3, 4, generator=g, dtype=F64_), {
                "mse": lambda t: ((t - 0.5) ** 2).mean(),
                "through_item": lambda t: torch.tensor(t.pow(2).sum().item(), dtype=F64_),
                "through_numpy": lambda t: torch.from_numpy(np.tanh(t.detach().numpy())).sum(),
                "softplus": lambda t: nnf.softplus(t).sum(),
                "helper_under_no_grad": under_no_grad}),
            (torch.randn(2, 3, 2, generator=g, dtype=F64_), {
                "grad_disabled": grad_disabled,
                "logsumexp": lambda t: t.flatten().logsumexp(0),
                "custom_zero_backward": lambda t: ZeroGrad.apply(t).mean()}),
            (torch.randn(6, generator=g, dtype=F64_), {
                "clean_cubic": lambda t: (t ** 3).mean(),
                "rebuilt_from_list": lambda t: torch.tensor([v.item() for v in t], dtype=F64_).pow(2).sum()}),
        ]
    if which == "partial":
        return [
            (torch.randn(2, 3, 2, generator=g, dtype=F64_), {
                "two_paths": lambda t: (t * t.detach()).sum(),
                "clean": lambda t: t.sin().pow(2).sum(),
                "detached_denominator": lambda t: (t ** 2).sum() / (1 + t.detach().abs().sum()),
                "custom_half_backward": lambda t: HalfGrad.apply(t).sum()}),
            (torch.randn(5, generator=g, dtype=F64_), {
                "data_branch": lambda t: t.data.cos().sum() + t.sum(),
                "custom_flipped_backward": lambda t: (FlippedGrad.apply(t) * torch.linspace(0.5, 1.5, t.numel(),
                                                                                           dtype=F64_)).sum(),
                "sigmoid_mse": lambda t: ((t.sigmoid() - 0.3) ** 2).sum(),
                # the gradient misses half of 2 (t - mean), an error that sums to zero: one directional
                # derivative along the all-ones vector sees no difference
                "times_detached_centered": lambda t: (t * (t - t.mean()).detach()).sum()}),
            (torch.randn(1, generator=g, dtype=F64_), {
                "exp_clean": lambda t: t.exp().sum(),
                "exp_times_detached_exp": lambda t: (t.exp() * t.exp().detach()).sum()}),
        ]
    if which == "clean":
        w = torch.randn(3, generator=g, dtype=F64_).requires_grad_(True)
        target = torch.randn(4, generator=g, dtype=F64_)
        return [
            ((torch.randn(4, generator=g, dtype=F64_)), {
                "constant": lambda t: torch.tensor(2.0),
                "through_item": lambda t: torch.tensor((t ** 3).sum().item(), dtype=F64_),   # one real cut among them
                "weight_decay": lambda t: (w ** 2).sum(),
                "target_only": lambda t: (target ** 2).mean(),
                "steep": lambda t: (t.exp() ** 2).sum(),
                "centered_detached_mean": lambda t: ((t - t.detach().mean()) ** 2).sum(),
                "many_paths": lambda t: (t.sin() * t.cos() + t * t.tanh()).sum(),
                "zero_times": lambda t: 0.0 * t.sum()}),
            ((torch.randn(1, 1, generator=g, dtype=F64_)), {
                "size_one": lambda t: (t ** 4).sum() + t.sum()}),
            ((torch.randn(3, generator=g, dtype=F64_)), {}),
            (torch.zeros(2, dtype=F64_), {                                # a point where the derivative is 0:
                "cubic_at_zero": lambda t: (t ** 3).sum(),               # central differences give about 1e-12
                "quartic_at_zero": lambda t: (t ** 4).sum() * 0.1}),
        ]
    raise ValueError(which)


def _check_cuts(got, ref, label, hint):
    C.check_type(got, list, name=f"find_gradient_cuts({label})", hint="return a list of term names")
    missing = [n for n in ref if n not in got]
    extra = [n for n in got if n not in ref]
    if missing or extra:
        _fail(f"find_gradient_cuts({label}): expected {ref}, got {got!r:.300}"
              + (f"; missed {missing}" if missing else "") + (f"; not cut, but reported: {extra}" if extra else ""),
              hint)
    C.check_equal(got, ref, name=f"find_gradient_cuts({label})", hint="keep the order of the terms dict")


@judge.probe("test_find_cuts_full")
def probe_cuts_full(seed):
    sets = cut_term_sets(seed, "full")
    xv = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    toy = {"square": lambda t: (t ** 2).sum(),
           "through_item": lambda t: torch.tensor(t.pow(3).sum().item(), dtype=torch.float64),
           "constant": lambda t: torch.tensor(2.0, dtype=torch.float64)}
    out = {"visible": find_gradient_cuts(toy, xv)}
    out["cases"] = [(list(terms), find_gradient_cuts(terms, x)) for x, terms in sets]
    return out


@probe_cuts_full.verdict
def _(got, ref):
    with visible():
        _check_cuts(got["visible"], ref["visible"], "toy terms", ".item() makes the value a Python number: it "
                    "changes with x, but autograd sees no dependence; a constant does not depend on x at all")
    for (names, g), (_, r) in zip(got["cases"], ref["cases"]):
        _check_cuts(g, r, f"terms {names}",
                    "a term that does not require grad, or whose gradient is zero, although its value changes with "
                    "x, is cut: compare autograd's gradient with finite differences of the values (and report "
                    "every cut term, not only the first)")


@judge.probe("test_find_cuts_partial")
def probe_cuts_partial(seed):
    sets = cut_term_sets(seed + 1, "partial")
    xv = torch.tensor([[0.3, -0.8], [1.5, 0.1]], dtype=torch.float64)
    toy = {"clean": lambda t: t.sin().pow(2).sum(), "half_detached": lambda t: (t * t.detach()).sum()}
    out = {"visible": find_gradient_cuts(toy, xv)}
    out["cases"] = [(list(terms), find_gradient_cuts(terms, x)) for x, terms in sets]
    return out


@probe_cuts_partial.verdict
def _(got, ref):
    with visible():
        _check_cuts(got["visible"], ref["visible"], "toy terms",
                    "a nonzero gradient can still be wrong: compare it with finite differences, not with zero")
    for (names, g), (_, r) in zip(got["cases"], ref["cases"]):
        _check_cuts(g, r, f"terms {names}",
                    "a term cut on one of two paths still has a nonzero gradient: only a comparison with the "
                    "derivative of its values (finite differences, gradcheck) finds it")


@judge.probe("test_find_cuts_no_false_alarms")
def probe_cuts_clean(seed):
    sets = cut_term_sets(seed + 2, "clean")
    xv = torch.tensor([0.2, -1.4, 0.9, 2.2], dtype=torch.float64)
    wd = torch.tensor([0.5, -0.5], dtype=torch.float64, requires_grad=True)
    toy = {"weight_decay": lambda t: (wd ** 2).sum(),
           "centered": lambda t: ((t - t.detach().mean()) ** 2).sum(),
           "curvy": lambda t: (t.exp() ** 2).sum()}
    out = {"visible": [find_gradient_cuts(toy, xv), find_gradient_cuts({}, xv)]}
    out["cases"] = [(list(terms), find_gradient_cuts(terms, x)) for x, terms in sets]
    return out


@probe_cuts_clean.verdict
def _(got, ref):
    hint = ("a term that does not use x has gradient zero (allow_unused=True) and derivative zero; a float64 "
            "central difference with a small step matches a clean gradient to about 1e-8")
    with visible():
        _check_cuts(got["visible"][0], ref["visible"][0], "clean toy terms", hint)
        _check_cuts(got["visible"][1], ref["visible"][1], "{}", None)
    for (names, g), (_, r) in zip(got["cases"], ref["cases"]):
        _check_cuts(g, r, f"clean terms {names}", hint)


@judge.probe("test_find_cuts_segmentation")
def probe_cuts_segmentation(seed):
    g = torch.Generator().manual_seed(seed)
    logits, masks = AT.blob_masks(1, 6, generator=g, dtype=torch.float64)
    fresh_terms = AT.segmentation_loss_terms(masks)
    return {"visible": find_gradient_cuts(SEG_TERMS, SEG_LOGITS),
            "fresh": find_gradient_cuts(fresh_terms, logits * 1.5)}


@probe_cuts_segmentation.verdict
def _(got, ref):
    with visible():
        C.check_type(got["visible"], list, name="find_gradient_cuts(SEG_TERMS, SEG_LOGITS)")
        C.check_true(len(got["visible"]) == 1, f"expected exactly one term name, got {got['visible']!r:.200}",
                     hint="one term of the segmentation loss is cut on one path")
    _check_cuts(got["visible"], ref["visible"], "SEG_TERMS, SEG_LOGITS",
                "the gradient of exactly one term differs from the derivative of its values")
    _check_cuts(got["fresh"], ref["fresh"], "the same four terms on another batch of masks", None)


@judge.probe("test_find_cuts_side_effects")
def probe_cuts_side_effects(seed):
    g = torch.Generator().manual_seed(seed)
    f64 = torch.float64
    x_leaf = torch.randn(2, 3, generator=g, dtype=f64).requires_grad_(True)
    x_plain = torch.randn(4, generator=g, dtype=f64)
    base = torch.randn(3, generator=g, dtype=f64).requires_grad_(True)
    x_nonleaf = base * 2.0
    x_graded = torch.randn(3, generator=g, dtype=f64).requires_grad_(True)
    x_graded.grad = torch.randn(3, generator=g, dtype=f64)            # an x that already holds a gradient
    x_graded_grad = x_graded.grad.clone()
    torch.manual_seed(seed % 100000)
    lin = torch.nn.Linear(3, 2).double()
    w_decay = torch.randn(2, generator=g, dtype=f64).requires_grad_(True)
    w_held = torch.randn(3, generator=g, dtype=f64).requires_grad_(True)
    w_held.grad = torch.randn(3, generator=g, dtype=f64)              # a weight that already holds a gradient
    w_held_grad = w_held.grad.clone()
    x_param = torch.randn(2, 3, generator=g, dtype=f64)
    vis_x = torch.tensor([0.5, -1.0, 2.0], dtype=f64, requires_grad=True)
    vis_wd = torch.tensor([0.3, -0.2], dtype=f64, requires_grad=True)
    terms = {"square": lambda t: (t ** 2).sum(), "cut": lambda t: (t.detach() ** 2).sum() + t.sum(),
             "tanh": lambda t: t.tanh().sum()}
    param_terms = {"fit": lambda t: (lin(t.reshape(-1, 3)) ** 2).sum(),
                   "decay": lambda t: (t ** 2).sum() + (w_decay ** 2).sum(),
                   "held": lambda t: (t.reshape(-1, 3) * w_held).sum() + (w_held ** 2).sum(),
                   "cut_fit": lambda t: (lin(t.reshape(-1, 3).detach()) ** 2).sum() + t.sum()}

    def broken(t):
        raise ValueError("a broken loss term")

    out = {}
    vis_terms = {"square": lambda t: (t ** 2).sum(), "cut": lambda t: (t.detach() ** 2).sum() + t.sum(),
                 "decay": lambda t: (t ** 2).sum() + (vis_wd ** 2).sum()}
    out["visible"] = {"answer": find_gradient_cuts(vis_terms, vis_x), "grad": vis_x.grad,
                      "requires_grad": vis_x.requires_grad, "x": vis_x.detach(), "wd_grad": vis_wd.grad}
    first = find_gradient_cuts(terms, x_leaf)
    second = find_gradient_cuts(terms, x_leaf)
    out["twice"] = [first, second]
    out["leaf"] = {"grad": x_leaf.grad, "requires_grad": x_leaf.requires_grad, "x": x_leaf.detach()}
    find_gradient_cuts(terms, x_plain)
    out["plain"] = {"grad": x_plain.grad, "requires_grad": x_plain.requires_grad, "x": x_plain}
    find_gradient_cuts(terms, x_nonleaf)
    out["nonleaf"] = {"base_grad": base.grad, "x": x_nonleaf.detach()}
    find_gradient_cuts(terms, x_graded)
    out["graded"] = {"grad": x_graded.grad, "before": x_graded_grad}
    out["params"] = {"answer": find_gradient_cuts(param_terms, x_param),
                     "lin": [lin.weight.grad, lin.bias.grad], "decay": w_decay.grad,
                     "held": w_held.grad, "held_before": w_held_grad, "x": x_param}
    try:
        find_gradient_cuts({"square": lambda t: (t ** 2).sum(), "broken": broken, "tanh": lambda t: t.tanh().sum()},
                           x_plain)
        out["raised"] = None
    except ValueError as err:
        out["raised"] = str(err)
    except Exception as err:  # noqa: BLE001 - a different exception is a wrong answer, not a crash
        out["raised"] = f"{type(err).__name__}: {err}"
    out["after_raise"] = {"grad": x_plain.grad, "requires_grad": x_plain.requires_grad, "x": x_plain}
    return out


@probe_cuts_side_effects.verdict
def _(got, ref):
    hint_leaf = "work on x.detach().clone().requires_grad_(True), never on the caller's x"
    hint_grad = ("backward() adds into .grad of every leaf the term uses; torch.autograd.grad(value, leaf) returns the "
                 "gradient and touches no .grad")
    with visible():
        _check_cuts(got["visible"]["answer"], ref["visible"]["answer"], "square, cut, decay", None)
        C.check_true(got["visible"]["grad"] is None, f"x.grad is {C.describe(got['visible']['grad'])} after the "
                     "call; expected None", hint="compute gradients on a fresh leaf copy of x, with "
                                                  "torch.autograd.grad, which does not touch .grad")
        C.check_true(got["visible"]["requires_grad"] is True, "x.requires_grad changed")
        C.check_close(got["visible"]["x"], ref["visible"]["x"], name="x after the call")
        C.check_true(got["visible"]["wd_grad"] is None, f"w.grad is {C.describe(got['visible']['wd_grad'])} after "
                     "the call: a term's weights got a gradient", hint=hint_grad)
    _check_cuts(got["twice"][0], ref["twice"][0], "three terms on a leaf x that requires grad", None)
    C.check_equal(got["twice"][1], got["twice"][0], name="the second call's answer (it must equal the first's)",
                  hint="state left over from the first call (an accumulated .grad?) changes the second")
    for key, label, rg in (("leaf", "a leaf x that requires grad", True), ("plain", "an x without grad", False),
                           ("after_raise", "an x without grad, after a term raised", False)):
        C.check_true(got[key]["grad"] is None, f"{label}: x.grad is {C.describe(got[key]['grad'])}; expected None",
                     hint=hint_leaf)
        C.check_true(got[key]["requires_grad"] is rg, f"{label}: x.requires_grad is {got[key]['requires_grad']}, "
                     f"expected {rg}", hint="do not call x.requires_grad_() on the caller's tensor")
        C.check_close(got[key]["x"], ref[key]["x"], name=f"{label}: x after the call (bit for bit)", rtol=0, atol=0,
                      hint="do not modify x, not even to nudge it and put it back (x + h - 2h + h is not x in "
                           "floating point): evaluate the terms at new tensors x + h * e and x - h * e")
    C.check_true(got["nonleaf"]["base_grad"] is None,
                 "x came from base * 2, and after the call base.grad is set: gradients flowed back into the caller's "
                 "graph", hint="detach: differentiate with respect to a fresh leaf copy of x")
    C.check_close(got["nonleaf"]["x"], ref["nonleaf"]["x"], name="a non-leaf x after the call (bit for bit)",
                  rtol=0, atol=0, hint="do not modify x, not even through .data")
    C.check_close(_grad_or_fail(got["graded"]["grad"], "x"), ref["graded"]["before"],
                  name="x.grad of an x that already held a gradient, after the call", hint=hint_leaf)
    params = got["params"]
    _check_cuts(params["answer"], ref["params"]["answer"], "terms that use an nn.Linear and weight tensors", None)
    for k, grad in enumerate(params["lin"]):
        C.check_true(grad is None, f"a term calls an nn.Linear, and after the call its parameter {k} has .grad "
                     f"{C.describe(grad)}; expected None", hint=hint_grad)
    C.check_true(params["decay"] is None, f"the weight-decay tensor's .grad is {C.describe(params['decay'])} after the "
                 "call; expected None", hint=hint_grad)
    C.check_close(_grad_or_fail(params["held"], "w"), ref["params"]["held_before"],
                  name="w.grad of a weight that already held a gradient, after the call", hint=hint_grad)
    C.check_true(got["raised"] == ref["raised"],
                 f"a term that raises ValueError should make the call raise it; got {got['raised']!r}",
                 hint="do not wrap the terms in try/except: a broken term is a bug to see, not a cut")


WHY['find_gradient_cuts'] = "autograd.grad on a private detached copy of x returns the gradient without writing any .grad (an unused or gradless result counts as zero); central differences under no_grad measure the true derivative. allclose flags a term only where they really disagree; nothing is caught, so errors propagate."
