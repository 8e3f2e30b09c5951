"""Exercise 'sync_batch_stats' of 05b_distributed: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

@judge.shared
def _j5_shards(g, sizes, shape, dtype, offset, scale):
    """One shard per rank, (n_r, *shape), from generator ``g``; plus float64 statistics of their concatenation."""
    shards = [(torch.randn(n, *shape, generator=g, dtype=torch.float64) * scale + offset).to(dtype) for n in sizes]
    full = torch.cat(shards).double()
    dims = [0] + list(range(2, full.dim()))
    return shards, {"mean": full.mean(dim=dims), "var": full.var(dim=dims, unbiased=False),
                    "count": full.numel() // full.shape[1], "dtype": dtype}


# --- Exercise 5b.1a · sync_batch_stats -----------------------------------------------------------------
# clause -> test
#   mean (C,), dtype of x, global (count-weighted), on every rank ..... test_sync_stats_mean_count
#   count: values per channel over all ranks, a Python int ............ test_sync_stats_mean_count
#   biased var (C,), dtype of x, global ............................... test_sync_stats_var
#   shards of different sizes; an empty shard ......................... both (cases with n_r = 0)
#   (N, C, *): 2-D, 3-D, 4-D shards ................................... both
#   accurate in float32 with |mean| >> spread (no E[x^2] - E[x]^2) .... test_sync_stats_var (mean: mean_count)
#   any number of ranks ................................................ mean_count on 3 ranks, var on 2

@judge.shared
def _j5_sync_cases(seed, world_size):
    """Shards for ``world_size`` ranks (one list per rank) and the float64 truth of each case."""
    g = torch.Generator().manual_seed(seed)
    specs = {2: [((2, 9), (3, 2, 2), torch.float64, 3.0, 2.0),
                 ((11, 4), (5,), torch.float64, -1.0, 1.0),
                 ((0, 6), (2, 3), torch.float64, 1.0, 1.0),
                 ((5, 13), (3, 4, 4), torch.float32, 500.0, 0.1),
                 ((7, 1), (4,), torch.float32, 0.0, 1.0)],
             3: [((4, 0, 7), (3, 5), torch.float64, 2.0, 0.5),
                 ((3, 6, 2), (2, 3, 3), torch.float32, 200.0, 0.05),
                 ((1, 5, 9), (4,), torch.float32, 500.0, 0.1),
                 ((0, 3, 0), (2, 2, 2), torch.float64, -3.0, 2.0)]}[world_size]
    cases, truth = [], []
    for sizes, shape, dtype, off, scale in specs:
        shards, stats = _j5_shards(g, sizes, shape, dtype, off, scale)
        cases.append(shards)
        truth.append(stats)
    return [[c[r] for c in cases] for r in range(world_size)], truth


# The two grade cells run one launch each (starting the ranks is the cost of these probes): the mean and
# count on 3 ranks, the variance (and the visible example) on 2 ranks.

def sync_cases(got, ref, first=0):
    """Yield (label, (mean, var, count) from the student, truth) for every rank of every case."""
    ws = len(got["results"])
    for r in range(ws):
        for j, truth in enumerate(ref["truth"]):
            res = got["results"][r][first + j]
            label = f"rank {r} of {ws}, case {j} ({str(truth['dtype']).replace('torch.', '')})"
            yield label, res, truth


def check_triple(res, label):
    C.check_type(res, (tuple, list), f"sync_batch_stats(x) on {label}", hint="return (mean, var, count)")
    C.check_equal(len(res), 3, f"len(sync_batch_stats(x)) on {label}", hint="return (mean, var, count)")


def tolerances(dtype, what):
    if dtype is torch.float64:
        return 1e-9, 1e-9
    return (1e-5, 1e-5) if what == "mean" else (2e-3, 1e-7)


@judge.probe("test_sync_stats_mean_count")
def probe_sync_mean(seed):
    per_rank, truth = _j5_sync_cases(seed, 3)
    return {"results": P.launch(P.call_on_shards, world_size=3, args=(sync_batch_stats, per_rank), timeout=60),
            "truth": truth}


@probe_sync_mean.verdict
def _(got, ref):
    for label, res, truth in sync_cases(got, ref):
        check_triple(res, label)
        mean, _, count = res
        C.check_true(type(count) is int, f"count on {label} is {C.describe(count)}, expected a Python int",
                     hint="int(...) of the summed counts")
        C.check_equal(count, truth["count"], f"count on {label}",
                      hint="values per channel: x.numel() // x.shape[1] (0 for an empty shard), summed over ranks")
        C.check_tensor(mean, f"mean on {label}", shape=tuple(truth["mean"].shape), dtype=truth["dtype"],
                       hint="one value per channel (dimension 1), in the dtype of x")
        rtol, atol = tolerances(truth["dtype"], "mean")
        C.check_close(mean.double(), truth["mean"], f"mean on {label}", rtol=rtol, atol=atol,
                      hint="weight by shard size; an empty shard contributes nothing (its own mean is NaN)")


@judge.probe("test_sync_stats_var")
def probe_sync_var(seed):
    per_rank, truth = _j5_sync_cases(seed, 2)
    shards = [EX52_SHARDS[r] + per_rank[r] for r in range(2)]   # case 0: the visible example
    return {"results": P.launch(P.call_on_shards, world_size=2, args=(sync_batch_stats, shards), timeout=60),
            "truth": truth, "visible_truth": {"mean": EX52_MEAN, "var": EX52_VAR, "count": 10}}


@probe_sync_var.verdict
def _(got, ref):
    with visible():
        for r in range(2):
            res = got["results"][r][0]
            check_triple(res, f"rank {r} (visible)")
            C.check_close(res[1], ref["visible_truth"]["var"], f"var on rank {r} (visible)",
                          hint="biased variance of the whole batch")
    for label, res, truth in sync_cases(got, ref, first=1):
        check_triple(res, label)
        var = res[1]
        C.check_tensor(var, f"var on {label}", shape=tuple(truth["var"].shape), dtype=truth["dtype"],
                       hint="one value per channel (dimension 1), in the dtype of x")
        rtol, atol = tolerances(truth["dtype"], "var")
        hint = ("in float32, E[x^2] - E[x]^2 cancels when the mean is large: combine per-rank means and variances "
                "(within-shard variance + spread of the shard means), or subtract the global mean first"
                if truth["dtype"] is torch.float32 else
                "divide by the global count (biased), include the spread of the shard means, skip empty shards")
        C.check_close(var.double(), truth["var"], f"var on {label}", rtol=rtol, atol=atol, hint=hint)


WHY['sync_batch_stats'] = "Each rank shares only its per-channel mean, biased variance and count (an empty shard sends zeros with count 0, weight 0, never NaN). After all_gather, the law of total variance weighted by counts combines them, avoiding the float32 cancellation of E[x^2] - E[x]^2."
