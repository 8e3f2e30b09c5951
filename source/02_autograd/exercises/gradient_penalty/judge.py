"""Exercise 'gradient_penalty' of 02_autograd: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# =====================================================================================================
# Exercise 2.5 · gradient_penalty
# clause -> test
#   xhat = alpha * real + (1 - alpha) * fake, alpha (B, 1, ..., 1) broadcasts .. test_gradient_penalty_value
#   critic scores of shape (B,) or (B, 1) ....................................... test_gradient_penalty_value
#   mean over samples of (||g_i||_2 - 1)^2, norm over all other dims (images) ... test_gradient_penalty_value
#   returned as a 0-dim tensor ................................................... value, in_graph, double_backward
#   create_graph=True: the penalty is part of the graph (and has the value) .... test_gradient_penalty_in_graph
#   penalty.backward() gives the critic the gradient of the penalty and nothing
#     else (MLP, conv and linear critics) ...................................... test_gradient_penalty_double_backward
#   gradient_penalty changes no .grad: gradients the critic held before the call
#     stay, penalty.backward() adds to them ..................................... test_gradient_penalty_double_backward
#   fake = G(z) with its graph: after penalty.backward() G's .grad stay None,
#     and the critic still gets the penalty's gradient .......................... test_gradient_penalty_double_backward
# =====================================================================================================

@judge.shared
def gp_inputs(seed, shapes):
    """(real, fake, alpha) float64 batches of the given sample shapes, from an explicit generator."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape in shapes:
        real = torch.randn(shape, generator=g, dtype=torch.float64) * 2
        fake = torch.randn(shape, generator=g, dtype=torch.float64)
        alpha = torch.rand((shape[0],) + (1,) * (len(shape) - 1), generator=g, dtype=torch.float64)
        out.append((real, fake, alpha))
    return out


@judge.shared
def gp_conv_critic(seed, channels, size):
    torch.manual_seed(seed)
    k = size - 2
    return torch.nn.Sequential(torch.nn.Conv2d(channels, 3, 3), torch.nn.Softplus(), torch.nn.Flatten(),
                               torch.nn.Linear(3 * k * k, 1)).double()


def _check_penalty(g, r, label, hint=None):
    C.check_tensor(g, name=f"gradient_penalty({label})", shape=(), hint="return the mean over samples, a 0-dim tensor")
    C.check_close(g, r, name=f"gradient_penalty({label})", hint=hint)


@judge.probe("test_gradient_penalty_value")
def probe_gp_value(seed):
    (vr, vf, va), (r1, f1, a1), (r3, f3, a3) = gp_inputs(seed, [(4, 2), (5, 6), (7, 6)])
    (rc, fc, ac), = gp_inputs(seed + 1, [(3, 2, 6, 6)])
    w_rand = torch.randn(6, generator=torch.Generator().manual_seed(seed + 2), dtype=torch.float64)
    mlp = make_critic(6, 8, seed=(seed + 62) % 1000)
    conv = gp_conv_critic(seed + 63, 2, 6)

    class FlatScores(torch.nn.Module):                    # scores of shape (B,), not (B, 1)
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x).squeeze(1)

    return {"visible": gradient_penalty(LinearCritic(torch.tensor([3.0, 4.0], dtype=torch.float64)), vr, vf, va),
            "mlp": gradient_penalty(mlp, r1, f1, a1),
            "flat_scores": gradient_penalty(FlatScores(make_critic(6, 5, seed=(seed + 3) % 1000)), r1, f1, a1),
            "conv": gradient_penalty(conv, rc, fc, ac),
            "linear": gradient_penalty(LinearCritic(w_rand), r3, f3, a3),
            "linear_expected": (w_rand.norm() - 1) ** 2}


@probe_gp_value.verdict
def _(got, ref):
    with visible():
        _check_penalty(got["visible"], torch.tensor(16.0, dtype=torch.float64), "linear critic with ||w|| = 5",
                       "(||w|| - 1)^2 = 16: a norm per sample, minus 1, squared, then the mean")
    _check_penalty(got["mlp"], ref["mlp"], "MLP critic", "norm per sample (over dim 1 onwards), then (norm - 1)^2, then the mean")
    _check_penalty(got["flat_scores"], ref["flat_scores"], "critic with scores of shape (B,)")
    _check_penalty(got["conv"], ref["conv"], "conv critic on (B, C, H, W)",
                   "alpha has shape (B, 1, 1, 1); the norm of each sample is over C, H and W together")
    _check_penalty(got["linear"], ref["linear_expected"], "a random linear critic")


@judge.probe("test_gradient_penalty_in_graph")
def probe_gp_graph(seed):
    (r0, f0, a0), (r1, f1, a1) = gp_inputs(seed + 4, [(3, 6), (4, 6)])
    (rc, fc, ac), = gp_inputs(seed + 5, [(2, 1, 5, 5)])
    out = []
    for critic, (r, f, a) in ((make_critic(), (r0, f0, a0)), (make_critic(6, 5, seed=(seed + 65) % 1000), (r1, f1, a1)),
                              (gp_conv_critic(seed + 66, 1, 5), (rc, fc, ac))):
        pen = gradient_penalty(critic, r, f, a)
        out.append({"pen": pen, "has_grad_fn": getattr(pen, "grad_fn", None) is not None,
                    "requires_grad": bool(getattr(pen, "requires_grad", False))})
    return out


@probe_gp_graph.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got, ref)):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["pen"], name="gradient_penalty(...)", shape=())
            C.check_true(g["has_grad_fn"] is True and g["requires_grad"] is True,
                         "the penalty has no grad_fn: the optimiser would see it as a constant",
                         hint="pass create_graph=True to torch.autograd.grad so the gradient itself is recorded")
        C.check_close(g["pen"], r["pen"], name=f"gradient_penalty (critic {i + 1})",
                      hint="mean over samples of (||d critic(xhat) / d xhat_i|| - 1)^2")


@judge.probe("test_gradient_penalty_double_backward")
def probe_gp_double(seed):
    (r0, f0, a0), (r1, f1, a1), (r3, f3, a3) = gp_inputs(seed + 6, [(4, 6), (6, 6), (5, 3)])
    (rc, fc, ac), = gp_inputs(seed + 7, [(3, 1, 5, 5)])
    (rg, _, ag), (rg2, _, ag2) = gp_inputs(seed + 9, [(5, 6), (3, 1, 5, 5)])
    w = torch.randn(3, generator=torch.Generator().manual_seed(seed + 8), dtype=torch.float64)
    critics = [("MLP critic", make_critic(), (r0, f0, a0)),
               ("a fresh MLP critic that holds earlier gradients", make_critic(6, 7, seed=(seed + 67) % 1000),
                (r1, f1, a1)),
               ("a conv critic that holds earlier gradients", gp_conv_critic(seed + 68, 1, 5), (rc, fc, ac)),
               ("a linear critic", LinearCritic(w), (r3, f3, a3))]
    out = {"critics": []}
    gh = torch.Generator().manual_seed(seed + 11)
    for k, (label, critic, (r, f, a)) in enumerate(critics):
        critic.zero_grad(set_to_none=True)
        if k in (1, 2):                                   # a critic that holds the Wasserstein loss's gradient
            for p in critic.parameters():
                p.grad = torch.randn(p.shape, generator=gh, dtype=p.dtype)
        pen = gradient_penalty(critic, r, f, a)
        pen.backward()
        out["critics"].append({"label": label, "pen": pen, "grads": [p.grad for p in critic.parameters()],
                               "shapes": [tuple(p.shape) for p in critic.parameters()]})
    torch.manual_seed(seed % 100000)
    gz = torch.randn(5, 3, generator=torch.Generator().manual_seed(seed + 10), dtype=torch.float64)
    gens = [("a linear generator, MLP critic", torch.nn.Linear(3, 6).double(), gz, make_critic(6, 5, seed=(seed + 69) % 1000),
             rg, ag),
            ("a generator of 5x5 images, conv critic",
             torch.nn.Sequential(torch.nn.Linear(3, 25), torch.nn.Unflatten(1, (1, 5, 5))).double(), gz[:3],
             gp_conv_critic(seed + 70, 1, 5), rg2, ag2)]
    out["generators"] = []
    for label, gen, z, critic, r, a in gens:
        fake = gen(z)                                     # still attached to the generator's graph
        pen = gradient_penalty(critic, r, fake, a)
        pen.backward()
        out["generators"].append({"label": label, "gen_grads": [p.grad for p in gen.parameters()],
                                  "critic_grads": [p.grad for p in critic.parameters()],
                                  "shapes": [tuple(p.shape) for p in critic.parameters()]})
    return out


@probe_gp_double.verdict
def _(got, ref):
    for i, (g, r) in enumerate(zip(got["critics"], ref["critics"])):
        with visible() if i == 0 else nullcontext():
            C.check_tensor(g["pen"], name=f"gradient_penalty({r['label']})", shape=())
            for k, (gg, rr, shape) in enumerate(zip(g["grads"], r["grads"], r["shapes"])):
                gg = torch.zeros(shape, dtype=F64) if gg is None else gg
                rr = torch.zeros(shape, dtype=F64) if rr is None else rr
                C.check_close(gg, rr, name=f"{r['label']}: parameter {k}.grad after penalty.backward() (None counts as zero)",
                              hint="only the penalty may put gradients into the critic, and gradients it held before "
                                   "the call stay: use torch.autograd.grad with create_graph=True, not "
                                   "scores.backward() followed by zero_grad()")
    for g, r in zip(got["generators"], ref["generators"]):
        for k, gg in enumerate(g["gen_grads"]):
            C.check_true(gg is None, f"{r['label']}: after penalty.backward() the generator's parameter {k} has .grad "
                         f"{C.describe(gg)}; expected None (the penalty trains the critic only)",
                         hint="make xhat a fresh leaf: (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)")
        for k, (gg, rr, shape) in enumerate(zip(g["critic_grads"], r["critic_grads"], r["shapes"])):
            gg = torch.zeros(shape, dtype=F64) if gg is None else gg
            rr = torch.zeros(shape, dtype=F64) if rr is None else rr
            C.check_close(gg, rr, name=f"{r['label']}: critic parameter {k}.grad after penalty.backward() "
                          "(None counts as zero)")


WHY['gradient_penalty'] = "detach().requires_grad_(True) makes xhat a fresh leaf, so penalty.backward() cannot reach the generator through fake. autograd.grad with create_graph=True returns a recorded gradient without touching .grad, and summing the scores is enough because each score depends only on its own sample."
