"""Hidden tests of Chapter 4, judged outside the student's kernel (instructor side: never released).

Each grade cell of 04_ecosystem.ipynb has one probe here (it runs with the notebook's names, in the
student's sandbox and in the reference worker) and one verdict (it runs in the judge, on the plain data
both sent back). ``got`` is the student's data, ``ref`` the reference solution's; every expectation
that does not come from the student's own objects is read from ``ref``. Models the probes compare by
value are built (and seeded) by the probe itself before the first call into student code, or receive
weights the probe made, so that the student's and the reference run hold the same numbers.
"""
from contextlib import nullcontext

import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


@judge.shared
def judge_state_digest(module):
    """{key: (shape, dtype, sum, sum of squares, weighted sum)} of a module's state_dict, in float64."""
    out = {}
    for key, value in module.state_dict().items():
        v = value.detach().double().flatten().cpu()
        w = torch.linspace(-1.0, 2.0, max(v.numel(), 1), dtype=torch.float64)[: v.numel()]
        out[str(key)] = (tuple(value.shape), str(value.dtype), float(v.sum()), float((v * v).sum()), float((v * w).sum()))
    return out


@judge.shared
def judge_opt_table(opt, model):
    """{parameter name: (weight_decay, lr, number of groups holding it)} for an optimizer, plus its type."""
    if not isinstance(opt, torch.optim.Optimizer):
        return {"type": type(opt).__module__ + "." + type(opt).__name__, "table": None}
    where = {}
    for g in opt.param_groups:
        for p in g["params"]:
            where.setdefault(id(p), []).append((float(g.get("weight_decay", 0.0)), float(g["lr"])))
    table = {}
    for n, p in model.named_parameters():
        rows = where.get(id(p), [])
        table[n] = (rows[0][0] if rows else None, rows[0][1] if rows else None, len(rows))
    return {"type": type(opt).__module__ + "." + type(opt).__name__, "is_adamw": type(opt) is torch.optim.AdamW,
            "table": table, "n_in_groups": sum(len(g["params"]) for g in opt.param_groups)}


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
