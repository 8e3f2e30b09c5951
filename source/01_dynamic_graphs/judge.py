"""Hidden tests of Chapter 1, judged outside the student's kernel (instructor side: never released).

Each grade cell of 01_dynamic_graphs.ipynb has one probe here (it runs with
the notebook's names, in the student's sandbox and in the reference worker)
and one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; any
expectation that does not come from the student's code is read from ``ref``.
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


# --- Exercise 1.1 · AdaptiveDepthNet ---------------------------------------------------------------
# clause -> test
#   keeps one shared block, applies it until ||new - h|| < tol ....... test_adaptive_depth_values
#   returns (h, steps), steps a Python int ............................. test_adaptive_depth_values
#   depth depends on the data ........................................... test_adaptive_depth_data_dependent
#   gradients flow through every application ............................ test_adaptive_depth_gradients
#   never more than max_steps block calls ............................... test_adaptive_depth_max_steps

@judge.probe("test_adaptive_depth_values")
def probe_adaptive_values(seed):
    net = AdaptiveDepthNet(contraction_block(4), tol=1e-3, max_steps=30)
    visible_out = net(torch.ones(2, 4))
    cases = []
    for i in range(4):
        torch.manual_seed(seed + 100 + i)
        dim = 3 + i
        block = contraction_block(dim, gain=0.3 + 0.15 * i, seed=(seed + i) % 1000)
        x = torch.randn(5, dim) * (1 + i)
        tol = [1e-2, 1e-3, 1e-4, 1e-5][i]
        out = AdaptiveDepthNet(block, tol=tol, max_steps=50)(x)
        cases.append({"tol": tol, "out": out})
    return {"visible": visible_out, "cases": cases}


@probe_adaptive_values.verdict
def _(got, ref):
    with visible():
        C.check_type(got["visible"], tuple, "AdaptiveDepthNet(...)(x)", hint="forward returns (h, steps)")
        C.check_equal(len(got["visible"]), 2, "number of returned values", hint="forward returns (h, steps)")
        out, steps = got["visible"]
        C.check_tensor(out, "output", shape=(2, 4))
        C.check_true(type(steps) is int, f"steps should be a Python int, got {C.describe(steps)}",
                     hint="count with a plain Python integer (steps += 1), not a tensor")
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_type(g["out"], tuple, "AdaptiveDepthNet(...)(x)")
        (g_out, g_n), (r_out, r_n) = g["out"], r["out"]
        C.check_true(type(g_n) is int and g_n == r_n, f"steps: expected {r_n}, got {g_n!r} (tol={r['tol']})",
                     hint="stop as soon as the norm of (new - h) is below tol; count every block call")
        C.check_close(g_out, r_out, name=f"output (tol={r['tol']})", rtol=1e-5, atol=1e-6)


@judge.probe("test_adaptive_depth_data_dependent")
def probe_adaptive_data_dependent(seed):
    block = contraction_block(6, gain=0.6, seed=7)
    fixed = torch.zeros(1, 6)
    for _ in range(200):                      # the block's fixed point, by brute force
        fixed = block(fixed).detach()
    g = torch.Generator().manual_seed(seed)
    starts = [fixed + scale * torch.randn(1, 6, generator=g) for scale in (0.0, 1e-3, 0.1, 3.0)]
    return [AdaptiveDepthNet(block, tol=1e-5, max_steps=60)(s)[1] for s in starts]


@probe_adaptive_data_dependent.verdict
def _(got, ref):
    C.check_type(got, list, "step counts")
    C.check_true(all(type(n) is int for n in got) and len(set(got)) >= 3,
                 f"step counts for starts at growing distance from the fixed point: {got}; expected them to differ",
                 hint="the number of steps must come from the stopping rule, not a fixed count")
    C.check_true(got == sorted(got), f"starts further away should not need fewer steps: {got}")


@judge.probe("test_adaptive_depth_gradients")
def probe_adaptive_gradients(seed):
    out = {}
    block = contraction_block(4)
    o, _ = AdaptiveDepthNet(block, tol=1e-3, max_steps=30)(torch.ones(2, 4))
    o.sum().backward()
    out["visible_grad"] = block[0].weight.grad
    torch.manual_seed(seed)
    block = contraction_block(5, gain=0.7, seed=seed % 1000).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    # What every number of steps should give: the block unrolled n times (used from the reference run).
    unrolled = {}
    for n in range(1, 16):
        block.zero_grad()
        h = x
        for _ in range(n):
            h = block(h)
        (h ** 2).sum().backward()
        unrolled[n] = (block[0].weight.grad.clone(), block[0].bias.grad.clone())
    block.zero_grad()
    h_out, n = AdaptiveDepthNet(block, tol=1e-6, max_steps=12)(x)
    (h_out ** 2).sum().backward()
    out.update(n=n, weight_grad=block[0].weight.grad, bias_grad=block[0].bias.grad, unrolled=unrolled)
    return out


@probe_adaptive_gradients.verdict
def _(got, ref):
    with visible():
        if got["visible_grad"] is None:
            C.check_true(False, "block weight.grad is None after backward(): no gradient reached the block",
                         hint="the loss was computed from a .detach()-ed copy, or under torch.no_grad()")
        C.check_tensor(got["visible_grad"], "block weight.grad")
    n = got["n"]
    C.check_true(type(n) is int and n >= 3, f"expected several steps here, got {n!r}")
    if got["weight_grad"] is None:
        C.check_true(False, "block weight.grad is None after backward()",
                     hint="if no step contributes, the output was detached from the block")
    if n not in ref["unrolled"]:
        C.check_true(False, f"steps={n} with max_steps=12: more block calls than allowed")
    gw, gb = ref["unrolled"][n]
    C.check_close(got["weight_grad"], gw, name="block weight gradient", rtol=1e-8, atol=1e-10,
                  hint="if only the last step contributes, something detached h inside the loop")
    C.check_close(got["bias_grad"], gb, name="block bias gradient", rtol=1e-8, atol=1e-10)


@judge.probe("test_adaptive_depth_max_steps")
def probe_adaptive_max_steps(seed):
    class Counting(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner, self.calls = inner, 0

        def forward(self, x):
            self.calls += 1
            return self.inner(x)

    _, visible_n = AdaptiveDepthNet(contraction_block(4), tol=0.0, max_steps=7)(torch.ones(1, 4))
    rows = []
    for m in (1, 2, 5, 13):
        counting = Counting(contraction_block(3, seed=m))
        _, n = AdaptiveDepthNet(counting, tol=-1.0, max_steps=m)(torch.randn(2, 3))
        rows.append((m, counting.calls, n))
    return {"visible": visible_n, "rows": rows}


@probe_adaptive_max_steps.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible"] == 7 and type(got["visible"]) is int,
                     f"with tol=0 the loop must stop at max_steps=7, got {C.describe(got['visible'])}")
    for m, calls, n in got["rows"]:
        C.check_true(calls == m and n == m,
                     f"max_steps={m}: the block was called {calls} times and steps={n!r}; expected {m} and {m}",
                     hint="check the loop bound: while steps < max_steps")


# --- Exercise 1.2 · sgd_step -------------------------------------------------------------------------
# clause -> test
#   update p <- p - lr * p.grad, in place ............................... test_sgd_step_update
#   return the loss before the update, as a float ...................... test_sgd_step_returns_float
#   clear the gradients (no accumulation across calls) ................. test_sgd_step_no_accumulation
#   parameters stay the same leaf tensors with requires_grad ........... test_sgd_step_leaves

@judge.probe("test_sgd_step_update")
def probe_sgd_update(seed):
    cases = []
    for i in range(3):
        shapes = [(4,), (3, 2), (1,)][: i + 1]
        params, loss_fn, _, _ = quadratic_problem(seed + 10 + i, shapes)
        orig = list(params)
        lr = [0.05, 0.2, 0.01][i]
        sgd_step(params, loss_fn, lr)
        cases.append([p.detach() for p in orig])
    params, loss_fn, _, _ = quadratic_problem(0)
    sgd_step(params, loss_fn, 0.1)
    return {"visible": [p.detach() for p in params], "cases": cases}


@probe_sgd_update.verdict
def _(got, ref):
    with visible():
        for i, (g, r) in enumerate(zip(got["visible"], ref["visible"])):
            C.check_close(g, r, name=f"parameter {i} after one step",
                          hint="update them in place (p -= lr * p.grad) inside torch.no_grad(); "
                               "`p = p - ...` only rebinds a name")
    for k, (gs, rs) in enumerate(zip(got["cases"], ref["cases"])):
        for i, (g, r) in enumerate(zip(gs, rs)):
            C.check_close(g, r, name=f"parameter {i} after one step (case {k})",
                          hint="p_new = p - lr * p.grad, applied to the original tensor object")


@judge.probe("test_sgd_step_returns_float")
def probe_sgd_float(seed):
    rows = []
    for s in (1, seed + 21, seed + 22):
        params, loss_fn, _, _ = quadratic_problem(s, [(5,), (2, 3)] if s != 1 else ((3,), (2, 2)))
        before = loss_fn().item()
        rows.append((before, sgd_step(params, loss_fn, 0.1 if s == 1 else 0.3)))
    return rows


@probe_sgd_float.verdict
def _(got, ref):
    for i, ((_, g), (expected, _)) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_float(g, expected, name="returned loss", rel=1e-9,
                          hint="return loss.item(): a float carries no graph, a tensor would keep one alive")


@judge.probe("test_sgd_step_no_accumulation")
def probe_sgd_no_accumulation(seed):
    params, loss_fn, _, _ = quadratic_problem(2, [(3,)])
    sgd_step(params, loss_fn, 0.1)
    g = params[0].grad
    visible_cleared = g is None or bool((g == 0).all())
    params, loss_fn, _, _ = quadratic_problem(seed + 31, [(4,), (2,)])
    orig = list(params)
    steps = []
    for _ in range(3):
        sgd_step(params, loss_fn, 0.1)
        steps.append([p.detach().clone() for p in orig])
    return {"visible_cleared": visible_cleared, "steps": steps}


@probe_sgd_no_accumulation.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_cleared"] is True, "after the step, grad should be cleared",
                     hint="set p.grad = None (or p.grad.zero_()) after the update")
    for call, (gs, rs) in enumerate(zip(got["steps"], ref["steps"])):
        for i, (g, r) in enumerate(zip(gs, rs)):
            C.check_close(g, r, name=f"parameter {i} after call {call + 1}",
                          hint="the step after the first used old gradients too: clear .grad after each update")


@judge.probe("test_sgd_step_leaves")
def probe_sgd_leaves(seed):
    params, loss_fn, _, _ = quadratic_problem(3)
    ids = [id(p) for p in params]
    sgd_step(params, loss_fn, 0.1)
    visible_same = [id(p) for p in params] == ids
    params, loss_fn, _, _ = quadratic_problem(seed + 41, [(2, 2), (3,)])
    orig = list(params)
    for _ in range(2):
        sgd_step(params, loss_fn, 0.05)
    return {"visible_same": visible_same,
            "rows": [(p is o, p.is_leaf, p.requires_grad) for p, o in zip(params, orig)]}


@probe_sgd_leaves.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_same"] is True, "params now holds different tensor objects",
                     hint="update in place; do not assign new tensors into the list")
    for i, (same, leaf, rg) in enumerate(got["rows"]):
        C.check_true(same is True, f"params[{i}] was replaced by a new tensor")
        C.check_true(leaf is True and rg is True,
                     f"params[{i}] is_leaf={leaf}, requires_grad={rg}; expected True, True",
                     hint="rebinding a parameter to `p - lr * p.grad` (outside torch.no_grad()) creates a new, "
                          "non-leaf tensor; update the original in place under torch.no_grad()")


# --- Exercise 1.3 · make_preprocess ------------------------------------------------------------------
# clause -> test
#   a PIL RGB image -> normalised float32 CHW tensor of `size` ........ test_make_preprocess_pil
#   an HWC uint8 NumPy array, read with the right channel order ....... test_make_preprocess_numpy
#   a CHW uint8 tensor; scaled to [0, 1] before normalising ........... test_make_preprocess_tensor

@judge.shared
def preprocess_case(kind, h, w, size, mean, std, seed):
    arr = sample_image(h, w, seed=seed)
    pil, np_img, t = as_three_kinds(arr)
    img = {"pil": pil, "numpy": np_img, "tensor": t}[kind]
    expected = reference_preprocess(t, size, mean, std)
    out = make_preprocess(size, mean, std)(img)
    return {"out": out, "expected": expected, "atol": 2.5 / 255 / min(std), "size": size}


def check_preprocess_cases(got, ref, kind, hint):
    for g, r in zip(got, ref):
        C.check_tensor(g["out"], f"output for a {kind} image", shape=(3, *r["size"]), dtype=torch.float32, hint=hint)
        C.check_close(g["out"], r["expected"], name=f"{kind} output {r['size']}", atol=r["atol"], rtol=0, hint=hint)


@judge.probe("test_make_preprocess_pil")
def probe_preprocess_pil(seed):
    cases = [preprocess_case("pil", 40, 52, (24, 32), MEAN, STD, 5)]
    for i, (h, w, size) in enumerate([(33, 47, (16, 20)), (64, 48, (32, 24))]):
        mean, std = (0.3 + 0.1 * i, 0.5, 0.2), (0.2, 0.3 + 0.05 * i, 0.25)
        cases.append(preprocess_case("pil", h, w, size, mean, std, seed % 997 + 50 + i))
    return cases


@probe_preprocess_pil.verdict
def _(got, ref):
    with visible():
        check_preprocess_cases(got[:1], ref[:1], "PIL", None)
    check_preprocess_cases(got[1:], ref[1:], "PIL", "scale to [0, 1] first, then (x - mean) / std per channel")


@judge.probe("test_make_preprocess_numpy")
def probe_preprocess_numpy(seed):
    cases = [preprocess_case("numpy", 40, 52, (24, 32), MEAN, STD, 6)]
    for i, (h, w, size) in enumerate([(30, 30, (20, 20)), (45, 70, (15, 35)), (24, 24, (8, 8))]):
        mean, std = (0.1, 0.2 + 0.1 * i, 0.6), (0.3, 0.2, 0.4)
        cases.append(preprocess_case("numpy", h, w, size, mean, std, seed % 997 + 60 + i))
    return cases


@probe_preprocess_numpy.verdict
def _(got, ref):
    with visible():
        check_preprocess_cases(got[:1], ref[:1], "NumPy", None)
    check_preprocess_cases(got[1:], ref[1:], "NumPy",
                           "HWC -> CHW is a permute, not a reshape; v2.ToImage() does it for you")


@judge.probe("test_make_preprocess_tensor")
def probe_preprocess_tensor(seed):
    cases = [preprocess_case("tensor", 40, 52, (24, 32), MEAN, STD, 7)]
    for i, (h, w, size) in enumerate([(50, 40, (25, 20)), (31, 63, (31, 63))]):
        cases.append(preprocess_case("tensor", h, w, size, (0.5, 0.5, 0.5), (0.5, 0.25, 0.125), seed % 997 + 70 + i))
    return cases


@probe_preprocess_tensor.verdict
def _(got, ref):
    with visible():
        check_preprocess_cases(got[:1], ref[:1], "tensor", None)
    check_preprocess_cases(got[1:], ref[1:], "tensor", "uint8 values must be scaled to [0, 1] before normalising")


# --- Exercise 1.4 · record_activations ---------------------------------------------------------------
# clause -> test
#   every submodule's output shape, nested ones included, root left out .. test_record_activations_shapes
#   a submodule that runs more than once keeps its last shape; shapes ... test_record_activations_repeated
#   every hook removed before returning, even if forward raises ......... test_record_activations_cleanup

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

    visible_shapes = record_activations(small_cnn().eval(), torch.randn(2, 3, 16, 16))
    b = 2 + seed % 5
    return {"visible": visible_shapes, "batch": b, "nested": record_activations(Net(), torch.randn(b, 5))}


@probe_record_shapes.verdict
def _(got, ref):
    with visible():
        C.check_type(got["visible"], dict, "the returned mapping")
        C.check_equal(got["visible"].get("0"), torch.Size([2, 8, 16, 16]), "shape of submodule '0'")
        C.check_equal(got["visible"].get("2.0"), torch.Size([2, 16, 7, 7]), "shape of nested submodule '2.0'",
                      hint="use model.named_modules(), which walks nested modules too")
    C.check_type(got["nested"], dict, "the returned mapping")
    C.check_equal(got["nested"], ref["nested"], "recorded shapes for a model with nested blocks",
                  hint="every named submodule that returns a tensor, keyed by its dotted name; not the root")


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

    shared = nn.Linear(4, 4)
    twice = record_activations(nn.Sequential(shared, nn.ReLU(), shared), torch.randn(3, 4))
    length = 8 * (2 + seed % 3)
    return {"visible_type": type(twice.get("1")).__name__ if isinstance(twice, dict) else type(twice).__name__,
            "pyramid": record_activations(Pyramid(), torch.randn(2, 2, length))}


@probe_record_repeated.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible_type"] == "Size", f"value for '1' should be a torch.Size, got {got['visible_type']}",
                     hint="store output.shape, not the output tensor")
    C.check_equal(got["pyramid"], ref["pyramid"], "shapes when modules run three times",
                  hint="keep the shape of the LAST call")


@judge.probe("test_record_activations_cleanup")
def probe_record_cleanup(seed):
    def hooks_left(model):
        return sum(len(m._forward_hooks) for m in model.modules())

    m = small_cnn()
    record_activations(m, torch.randn(1, 3, 8, 8))
    visible_left = hooks_left(m)
    m = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3), nn.Tanh()), nn.Linear(3, 3))
    for _ in range(2):
        record_activations(m, torch.randn(2, 3))
    after_two = hooks_left(m)
    bad = nn.Sequential(nn.Linear(3, 3), nn.Linear(4, 2))          # the second layer fails: wrong in-features
    raised = False
    try:
        record_activations(bad, torch.randn(2, 3))
    except Exception:
        raised = True
    return {"visible": visible_left, "after_two": after_two, "after_raise": hooks_left(bad), "raised": raised}


@probe_record_cleanup.verdict
def _(got, ref):
    with visible():
        C.check_true(got["visible"] == 0, f"{got['visible']} forward hook(s) are still registered after "
                     "record_activations returned",
                     hint="keep the handles from register_forward_hook and call handle.remove() on each")
    C.check_true(got["after_two"] == 0, "hooks left after two calls")
    C.check_true(got["after_raise"] == 0, f"{got['after_raise']} hook(s) left behind after a forward pass that raised",
                 hint="remove the hooks in a finally: block")
