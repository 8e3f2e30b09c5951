"""Exercise 'train_accumulated' of 05b_distributed: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

@judge.shared
def _j5_accum_cases(seed):
    """(name, world_size, micro_batches per rank, accum_steps, lr, momentum) for Exercise 5b.1c."""
    g = torch.Generator().manual_seed(seed)

    def micro(n, rows):
        return [(torch.randn(rows, 6, generator=g, dtype=torch.float64), torch.randint(0, 3, (rows,), generator=g))
                for _ in range(n)]

    return [("7 micro-batches, accum_steps=3 (last group of 1), momentum 0.9", 2, [micro(7, 3), micro(7, 3)], 3, 0.3, 0.9),
            ("3 micro-batches, accum_steps=1", 2, [micro(3, 4), micro(3, 4)], 1, 0.2, 0.0),
            ("3 ranks of different batch sizes, 5 micro-batches, accum_steps=2", 3,
             [micro(5, 2), micro(5, 3), micro(5, 4)], 2, 0.4, 0.0),
            ("4 micro-batches, accum_steps=6 (one group)", 2, [micro(4, 3), micro(4, 3)], 6, 0.5, 0.0)]


@judge.shared
def _j5_run_accum(cases, visible_case=None):
    """Run the cases in one launch per world size (starting the ranks is the cost of these probes)."""
    out = []
    groups = {}
    for case in cases:
        groups.setdefault(case[1], []).append(case)
    for ws, group in groups.items():
        args = [(micro, k, lr, 0, mom) for _, _, micro, k, lr, mom in group]
        if ws == 2 and visible_case is not None:
            args = [visible_case] + args
        res = P.launch(P.accumulation_cases_worker, world_size=ws, args=(train_accumulated, args), timeout=120)
        if ws == 2 and visible_case is not None:
            out.append({"name": "visible", "ranks": [r[0] for r in res]})
            res = [r[1:] for r in res]
        for j, (name, *_rest) in enumerate(group):
            out.append({"name": name, "ranks": [r[j] for r in res]})
    return out


# --- Exercise 5b.1c · train_accumulated ------------------------------------------------------------------
# clause -> test
#   groups of accum_steps, last group shorter, accum_steps=1 .......... test_accumulate_values (+ count)
#   backpropagate loss / k (group mean) ................................. test_accumulate_values
#   no_sync around forward AND backward of all but the last ............ test_accumulate_one_allreduce
#   step, then zero_grad after each group; grads clear at the end ...... test_accumulate_values,
#                                                                          test_accumulate_one_allreduce
#   return one float per step: mean of unscaled micro-batch losses .... test_accumulate_values
#   on every rank (2 and 3 ranks, different batch sizes, momentum) ..... both

@judge.probe("test_accumulate_values")
def probe_accum_values(seed):
    runs = _j5_run_accum(_j5_accum_cases(seed), visible_case=(EX52C_MICRO, 2, 0.5, 0, 0.0))
    return {"visible": runs[0]["ranks"], "cases": runs[1:]}


def check_accum_values(g_ranks, r_ranks, label):
    for rank, (g, r) in enumerate(zip(g_ranks, r_ranks)):
        res = g["result"]
        C.check_type(res, list, f"train_accumulated(...) on rank {rank} ({label})", hint="return a list of Python floats")
        C.check_equal(len(res), len(r["result"]), f"number of group losses on rank {rank} ({label})",
                      hint="one loss per optimizer step: groups of accum_steps, the last one may be shorter")
        for i, (v, w) in enumerate(zip(res, r["result"])):
            C.check_float(v, w, f"group loss {i} on rank {rank} ({label})", rel=1e-9, abs_tol=1e-12,
                          hint="the mean of the group's unscaled micro-batch losses")
        for k, (p, q) in enumerate(zip(g["params"], r["params"])):
            C.check_close(p, q, f"parameter {k} on rank {rank} after training ({label})", rtol=1e-9, atol=1e-12,
                          hint="backpropagate loss / (size of this group); optimizer.step() and zero_grad() once per group")


@probe_accum_values.verdict
def _(got, ref):
    with visible():
        check_accum_values(got["visible"], ref["visible"], "visible example")
    for g, r in zip(got["cases"], ref["cases"]):
        check_accum_values(g["ranks"], r["ranks"], r["name"])


@judge.probe("test_accumulate_one_allreduce")
def probe_accum_allreduce(seed):
    cases = [c for c in _j5_accum_cases(seed + 1) if c[1] == 2]   # 2 ranks: one launch
    runs = _j5_run_accum(cases, visible_case=(EX52C_MICRO, 2, 0.5, 0, 0.0))
    return {"visible": runs[0]["ranks"], "cases": runs[1:]}


def check_accum_comm(g_ranks, r_ranks, label):
    for rank, (g, r) in enumerate(zip(g_ranks, r_ranks)):
        C.check_type(g["result"], list, f"train_accumulated(...) on rank {rank} ({label})")
        C.check_equal(len(g["result"]), len(r["result"]), f"number of group losses on rank {rank} ({label})",
                      hint="one optimizer step per group")
        for i, (v, w) in enumerate(zip(g["result"], r["result"])):
            C.check_float(v, w, f"group loss {i} on rank {rank} ({label})", rel=1e-9, abs_tol=1e-12)
        C.check_equal(g["calls"], r["calls"], f"gradient all-reduces on rank {rank} ({label})",
                      hint="one per group: forward and backward of all but the group's last micro-batch inside "
                           "model.no_sync() (the forward decides whether the backward syncs)")
        C.check_true(g["grads_cleared"] is True, f"gradients are not clear after train_accumulated on rank {rank} ({label})",
                     hint="optimizer.zero_grad() after every optimizer.step()")


@probe_accum_allreduce.verdict
def _(got, ref):
    with visible():
        check_accum_comm(got["visible"], ref["visible"], "visible example")
    for g, r in zip(got["cases"], ref["cases"]):
        check_accum_comm(g["ranks"], r["ranks"], r["name"])


WHY['train_accumulated'] = "Forward and backward of every micro-batch but a group's last run under model.no_sync(), so DDP all-reduces once per group, and dividing each loss by the group size makes the accumulated gradient the group mean. step() then zero_grad() after the last backward leaves the gradients clear."
