"""Exercise 'train_accumulated' of 05b_distributed: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

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
