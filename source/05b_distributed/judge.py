"""Hidden tests of Chapter 5b, judged outside the student's kernel (instructor side: never released).

Each grade cell of 05b_distributed.ipynb has one probe here (it runs with
the notebook's names, in the student's sandbox and in the reference worker)
and one verdict (it runs in the judge, on the plain data both sent back).
``got`` is the student's data, ``ref`` the reference solution's; every
expectation that does not come from the student's code is read from ``ref``.
Probes build their inputs from the seed before the first call into student
code; multi-rank probes use ``P.launch`` (forkserver on Linux, spawn elsewhere; the
student's function travels to the ranks by value, with cloudpickle), with the
smallest sizes that still show the mistake.
"""
import torch

from course import checks as C
from course.grading.judge import Judge, visible

judge = Judge()


# --- helpers shipped with every probe (they run in the notebook's namespace) -------------------------

@judge.shared
def _j5_shards(g, sizes, shape, dtype, offset, scale):
    """One shard per rank, (n_r, *shape), from generator ``g``; plus float64 statistics of their concatenation."""
    shards = [(torch.randn(n, *shape, generator=g, dtype=torch.float64) * scale + offset).to(dtype) for n in sizes]
    full = torch.cat(shards).double()
    dims = [0] + list(range(2, full.dim()))
    return shards, {"mean": full.mean(dim=dims), "var": full.var(dim=dims, unbiased=False),
                    "count": full.numel() // full.shape[1], "dtype": dtype}


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


@judge.shared
def _j5_modes(model):
    return [(name, m.training) for name, m in model.named_modules()]


# Each exercise's probes and verdicts, and WHY (why its reference is right), are in
# exercises/<grade id>/judge.py, beside its mutants and alternatives; course.grading.judge.verdicts.load runs
# them after this file, in the notebook's order, in this module's namespace.
WHY = {}
