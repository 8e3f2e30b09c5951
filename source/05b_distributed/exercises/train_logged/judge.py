"""Exercise 'train_logged' of 05b_distributed: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- Exercise 5b.1b · train_logged (a bottleneck found in a trace) ------------------------------------------
# clause -> test
#   one training step per batch (zero_grad, CE, backward, step) .......... test_logged_values (parameters)
#   intervals of log_every; last shorter; log_every >= len: one ......... test_logged_values (+ collectives)
#   global per-sample mean: sum of loss*len(y) over ranks and steps / n . test_logged_values (uneven batches
#                                                                          within and between ranks)
#   one float per interval, in order, the same on every rank ............ test_logged_values
#   at most one collective per interval (c10d:: events outside DDP's
#     forward and backward, counted in a profiler trace; barrier counts) test_logged_collectives
#   any number of ranks ................................................... test_logged_values (3 ranks)
#   repeated calls do not mix (each call logs its own steps) ............ both (cases run one after another
#                                                                          in the same ranks)

@judge.shared
def _j5_logged_cases(seed, world_size):
    """(batches per rank, log_every, lr) cases for Exercise 5b.1b: uneven batches within and between ranks."""
    g = torch.Generator().manual_seed(seed)

    def batches(sizes):
        return [(torch.randn(n, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g))
                for n in sizes]

    if world_size == 2:
        return [([batches((2, 4, 3, 1, 5, 2, 3)), batches((6, 6, 2, 6, 6, 6, 1))], 3, 0.2),
                ([batches((3, 3, 3)), batches((1, 2, 3))], 1, 0.4),
                ([batches((4, 2, 4, 2)), batches((5, 5, 5, 5))], 9, 0.3)]
    return [([batches((2, 3, 4, 5, 1)), batches((6, 1, 1, 1, 2)), batches((3, 3, 3, 3, 3))], 2, 0.3)]


# The names of the collectives a student's train_logged issued (and DDP's own) depend on the answer (all_gather
# is as right as all_reduce): diagnostics the verdicts read, not part of the answer's form.
_LOGGED_FREE = ("outside", "in_ddp")


@judge.probe("test_logged_values", free=_LOGGED_FREE)
def probe_logged_values(seed):
    two = [(EX52B_BATCHES, 2, 0.3)] + _j5_logged_cases(seed, 2)
    return {"two": P.launch(P.logged_train_worker, world_size=2, args=(train_logged, two), timeout=120),
            "three": P.launch(P.logged_train_worker, world_size=3, args=(train_logged, _j5_logged_cases(seed + 1, 3)),
                              timeout=120),
            "labels": ["visible: 5 steps, log_every=2", "7 steps, log_every=3, uneven batches", "log_every=1",
                       "log_every=9 > 4 steps (one interval)"]}


def check_logged(g_case, r_case, label, params=True):
    res, want = g_case["result"], r_case["result"]
    C.check_type(res, list, f"train_logged(...) ({label})", hint="return a list of Python floats")
    C.check_equal(len(res), len(want), f"number of logged values ({label})",
                  hint="one value per interval of log_every steps; the last interval may be shorter")
    for i, (v, w) in enumerate(zip(res, want)):
        C.check_true(type(v) is float, f"logged value {i} ({label}) is {C.describe(v)}, expected a Python float",
                     hint=".item() of the reduced value")
        C.check_float(v, w, f"logged value {i} ({label})", rel=1e-6, abs_tol=1e-9,
                      hint="sum of loss.item() * len(y) over all ranks and the interval's steps, divided by the number "
                           "of samples (not the mean of per-rank or per-step means); reset after each interval")
    if params:
        for k, (p, q) in enumerate(zip(g_case["params"], r_case["params"])):
            C.check_close(p, q, f"parameter {k} after training ({label})", rtol=1e-9, atol=1e-12,
                          hint="one zero_grad / forward / cross_entropy / backward / step per batch")


@probe_logged_values.verdict
def _(got, ref):
    labels = ref["labels"]
    for rank in range(2):
        for j, label in enumerate(labels):
            with visible() if j == 0 else __import__("contextlib").nullcontext():
                check_logged(got["two"][rank][j], ref["two"][rank][j], f"rank {rank} of 2, {label}")
    for rank in range(3):
        check_logged(got["three"][rank][0], ref["three"][rank][0], f"rank {rank} of 3, 5 steps, log_every=2")


@judge.probe("test_logged_collectives", free=_LOGGED_FREE)
def probe_logged_collectives(seed):
    two = [(EX52B_BATCHES, 2, 0.3)] + _j5_logged_cases(seed + 2, 2)
    return {"two": P.launch(P.logged_train_worker, world_size=2, args=(train_logged, two), timeout=120),
            "labels": ["visible: 5 steps, log_every=2", "7 steps, log_every=3", "log_every=1",
                       "log_every=9 > 4 steps (one interval)"]}


@probe_logged_collectives.verdict
def _(got, ref):
    for rank in range(2):
        for j, label in enumerate(ref["labels"]):
            g, r = got["two"][rank][j], ref["two"][rank][j]
            with visible() if j == 0 else __import__("contextlib").nullcontext():
                check_logged(g, r, f"rank {rank}, {label}", params=False)
                n = len(r["result"])
                C.check_true(type(g.get("extra")) is int and g["extra"] <= n,
                             f"rank {rank}, {label}: train_logged issued {g.get('extra')} collectives itself "
                             f"({g.get('outside')}) for {n} logged interval(s)",
                             hint="one collective per interval at most: keep the sum and the count locally, reduce "
                                  "both in one tensor at the end of the interval, and no barrier")


WHY['train_logged'] = "The sample-weighted sum loss.item() * len(y) and the sample count accumulate locally in one two-element float64 tensor, with no collective; at the end of each interval one all_reduce of that tensor gives the global sum and count (the tensor is then zeroed for the next interval), whose ratio weighs every sample on every rank equally."
