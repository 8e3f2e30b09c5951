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


# --- Exercise 5b.2 · preflight -----------------------------------------------------------------------------
# clause -> test
#   bn_not_synced: distributed, a non-Sync BatchNorm at any depth ....... test_preflight_bn (+ clean)
#   ... BatchNorm1d, 2d or 3d (a tuple of the first two misses 3d) ........ test_preflight_bn
#   ... InstanceNorm1d/2d/3d (any affine/track_running_stats), GroupNorm,
#       LayerNorm never flagged (a test against _NormBase flags InstanceNorm) test_preflight_bn
#   sampler_not_distributed: distributed, map-style, not a DistributedSampler test_preflight_loader (+ clean)
#   ... an IterableDataset is not flagged ................................ test_preflight_loader
#   pin_memory_without_cuda ............................................... test_preflight_loader
#   unused_parameters (from no gradients; frozen ones do not count) ...... test_preflight_unused (+ clean)
#   each code at most once; [] for clean setups (num_workers=0 is fine) .. test_preflight_clean, all
#     (test_preflight_clean also checks one clean setup's dirty twin: reporting nothing is not clean)
#   model left exactly as found: params, buffers, grads, mode ........... test_preflight_unused

@judge.shared
def _j5_stream_loader(n=8):
    class _Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            g = torch.Generator().manual_seed(n)
            for _ in range(n):
                yield torch.randn(4, generator=g), int(torch.randint(0, 2, (1,), generator=g))

    return DataLoader(_Stream(), batch_size=4)


@judge.probe("test_preflight_clean")
def probe_preflight_clean(seed):
    torch.manual_seed(seed)
    clean = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    visible_rows = [preflight(clean, make_loader(distributed_rank=0), True), preflight(clean, make_loader(), False)]
    frozen = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    frozen[0].requires_grad_(False)
    setups = [
        ("BatchNorm, not distributed, 1 worker", nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 1)),
         make_loader(12, 1, seed=1), False),
        ("distributed with a DistributedSampler", nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 3)),
         make_loader(8, seed=2, distributed_rank=1), True),
        ("frozen first layer, distributed", frozen, make_loader(8, seed=3, distributed_rank=0), True),
        ("SyncBatchNorm, distributed", nn.SyncBatchNorm.convert_sync_batchnorm(
            nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2))), make_loader(8, seed=4, distributed_rank=0), True),
        ("an IterableDataset, distributed", nn.Linear(4, 2), _j5_stream_loader(), True),
    ]
    if torch.cuda.is_available():
        setups.append(("pin_memory with CUDA", nn.Linear(4, 2), make_loader(8, pin_memory=True, seed=5), False))
    # The twin of the first clean setup, one switch away from clean: it must not come back clean either
    # (an answer that reports nothing at all is not "free of false positives").
    setups.append(("the BatchNorm model of the first setup, now distributed (not clean)",
                   nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 1)),
                   make_loader(12, 1, seed=1, distributed_rank=0), True))
    rows = [(label, preflight(m, ld, dist_)) for label, m, ld, dist_ in setups]
    return {"visible": visible_rows, "rows": rows}


def codes(g, label):
    C.check_type(g, list, f"preflight(...) for {label}", hint="return a list of code strings")
    C.check_true(all(type(c) is str for c in g), f"preflight(...) for {label} returned {C.describe(g)}: not all strings")
    return sorted(g)


def check_code_rows(g_rows, r_rows, hint):
    for (label, g), (_, r) in zip(g_rows, r_rows):
        C.check_equal(codes(g, label), sorted(r), f"codes for {label} (sorted)", hint=hint)


@probe_preflight_clean.verdict
def _(got, ref):
    with visible():
        for g, r, label in zip(got["visible"], ref["visible"], ("a clean distributed setup", "a clean single-process setup")):
            C.check_equal(codes(g, label), sorted(r), f"codes for {label}",
                          hint="num_workers=0 is not flagged; the sampler only matters when distributed")
    check_code_rows(got["rows"], ref["rows"],
                    "frozen parameters (requires_grad=False) are not 'unused'; BatchNorm is fine when not distributed; "
                    "SyncBatchNorm is a subclass of _BatchNorm; an IterableDataset shards itself")


@judge.probe("test_preflight_loader")
def probe_preflight_loader(seed):
    lin = nn.Linear(4, 2)
    visible_rows = [preflight(lin, make_loader(), True), preflight(lin, make_loader(pin_memory=True), False)]
    rows = []
    for label, ld, dist_ in (("a plain loader, distributed", make_loader(8, seed=seed % 100), True),
                             ("a shuffling plain loader, distributed",
                              DataLoader(make_loader(8, seed=1).dataset, batch_size=4, shuffle=True), True),
                             ("a DistributedSampler loader, distributed", make_loader(8, seed=2, distributed_rank=1), True),
                             ("a plain loader, not distributed", make_loader(8, seed=3), False),
                             ("an IterableDataset, distributed", _j5_stream_loader(), True),
                             ("pin_memory=True, DistributedSampler, distributed",
                              make_loader(8, pin_memory=True, seed=4, distributed_rank=0), True),
                             ("pin_memory=True, plain loader, distributed", make_loader(8, pin_memory=True, seed=5), True),
                             ("pin_memory=True, 1 worker, not distributed", make_loader(8, 1, pin_memory=True, seed=6), False)):
        m = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
        rows.append((label, preflight(m, ld, dist_)))
    return {"visible": visible_rows, "rows": rows}


@probe_preflight_loader.verdict
def _(got, ref):
    with visible():
        C.check_equal(codes(got["visible"][0], "a plain loader"), sorted(ref["visible"][0]),
                      "codes for a plain loader under distributed training",
                      hint="each rank would iterate over the whole dataset: look at loader.sampler")
        C.check_equal(codes(got["visible"][1], "pin_memory=True"), sorted(ref["visible"][1]), "codes for pin_memory=True")
    check_code_rows(got["rows"], ref["rows"],
                    "sampler_not_distributed only when distributed and the dataset is map-style; "
                    "pin_memory only matters without CUDA; each code at most once")


@judge.probe("test_preflight_bn")
def probe_preflight_bn(seed):
    bn = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    visible_row = preflight(bn, make_loader(distributed_rank=1), True)
    nested = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU(), nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))))

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2))])
            self.head = nn.Linear(2, 2)

        def forward(self, x):
            h = x.view(-1, 1, 2, 2)
            for b in self.blocks:
                h = b(h)
            return self.head(h.mean((2, 3)))

    class Norms(nn.Module):
        """Linear(4, 4), then the normalisation layer `norm` on the features viewed as (B, *shape); out (B, 4)."""

        def __init__(self, norm, shape):
            super().__init__()
            self.inp, self.norm, self.shape = nn.Linear(4, 4), norm, shape

        def forward(self, x):
            return self.norm(self.inp(x).view(-1, *self.shape)).reshape(len(x), 4)

    two_bn = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    bn3d = nn.Sequential(nn.Linear(4, 4), nn.Sequential(Norms(nn.BatchNorm3d(1), (1, 1, 2, 2))), nn.Linear(4, 2))
    inst1d = nn.Sequential(Norms(nn.InstanceNorm1d(2), (2, 2)), nn.ReLU(),
                           nn.Sequential(Norms(nn.InstanceNorm1d(2, affine=True, track_running_stats=True), (2, 2))),
                           nn.Linear(4, 2))
    inst2d = nn.Sequential(Norms(nn.InstanceNorm2d(1, affine=True), (1, 2, 2)),
                           Norms(nn.InstanceNorm2d(1, track_running_stats=True), (1, 2, 2)), nn.Linear(4, 2))
    inst3d_group_layer = nn.Sequential(Norms(nn.InstanceNorm3d(1, affine=True, track_running_stats=True), (1, 1, 2, 2)),
                                       Norms(nn.GroupNorm(2, 4), (4,)), Norms(nn.LayerNorm(4), (4,)), nn.Linear(4, 2))
    inst_and_bn = nn.Sequential(Norms(nn.InstanceNorm1d(2, affine=True), (2, 2)), nn.BatchNorm1d(4), nn.Linear(4, 2))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2)))
    rows = []
    for label, m, dist_ in (("a nested BatchNorm1d, distributed", nested, True),
                            ("a BatchNorm2d inside a ModuleList, distributed", Conv(), True),
                            ("two BatchNorm layers, distributed (one code)", two_bn, True),
                            ("SyncBatchNorm, distributed", conv, True),
                            ("a nested BatchNorm3d, distributed", bn3d, True),
                            ("InstanceNorm1d layers (one affine with running stats), distributed (not BatchNorm)",
                             inst1d, True),
                            ("InstanceNorm2d layers (affine; track_running_stats), distributed (not BatchNorm)",
                             inst2d, True),
                            ("InstanceNorm3d, GroupNorm and LayerNorm, distributed (not BatchNorm)", inst3d_group_layer, True),
                            ("an InstanceNorm1d and a BatchNorm1d, distributed", inst_and_bn, True),
                            ("a nested BatchNorm1d, not distributed", nested, False)):
        rows.append((label, preflight(m, make_loader(8, seed=5 + seed % 50, distributed_rank=0), dist_)))
    return {"visible": visible_row, "rows": rows}


@probe_preflight_bn.verdict
def _(got, ref):
    with visible():
        C.check_equal(codes(got["visible"], "BatchNorm + distributed"), sorted(ref["visible"]),
                      "codes for BatchNorm + distributed")
    check_code_rows(got["rows"], ref["rows"],
                    "look at model.modules() (any depth); every BatchNorm (1d, 2d, 3d) but SyncBatchNorm, and no "
                    "other normalisation layer (InstanceNorm, GroupNorm, LayerNorm use per-sample statistics); only "
                    "when distributed; each code once")


@judge.probe("test_preflight_unused")
def probe_preflight_unused(seed):
    import copy as _copy

    def snapshot(m):
        return {"state": {k: v.clone() for k, v in m.state_dict().items()},
                "grads": [None if p.grad is None else p.grad.clone() for p in m.parameters()],
                "modes": _j5_modes(m)}

    m = TwoHeads(use_bn=True)
    vis_before = snapshot(m)
    vis_codes = preflight(m, make_loader(), False)
    vis_after = snapshot(m)
    torch.manual_seed(seed % 10000 + 62)
    g = torch.Generator().manual_seed(seed)
    cases = []
    stale = TwoHeads(use_bn=True)
    for p in stale.parameters():
        p.grad = torch.randn(p.shape, generator=g)
    frozen = TwoHeads()
    frozen.aux.requires_grad_(False)
    evalm = TwoHeads(use_bn=True).eval()
    for label, m, ld, dist_ in (("TwoHeads(use_bn=True) with stale gradients", stale, make_loader(8, seed=8), False),
                                ("TwoHeads with the unused head frozen", frozen, make_loader(8, seed=9), False),
                                ("TwoHeads(), plain loader", TwoHeads(), make_loader(8, seed=10), False),
                                ("TwoHeads(use_bn=True) in eval mode", evalm, make_loader(8, seed=11), False)):
        before = snapshot(m)
        found = preflight(m, ld, dist_)
        cases.append({"label": label, "codes": found, "before": before, "after": snapshot(m)})
    return {"visible": {"codes": vis_codes, "before": vis_before, "after": vis_after}, "cases": cases}


def check_untouched(g_after, r_before, label, modes=True):
    for k, v in r_before["state"].items():
        C.check_true(k in g_after["state"], f"model.state_dict() lost {k!r} ({label})")
        C.check_close(g_after["state"][k], v, f"model.state_dict()['{k}'] after preflight ({label})",
                      hint="a training-mode forward updates BatchNorm's running statistics: probe a copy of the model")
    for i, (g, r) in enumerate(zip(g_after["grads"], r_before["grads"])):
        if r is None:
            C.check_true(g is None, f"preflight left a gradient on parameter {i} ({label})",
                         hint="run the test backward on a copy of the model (copy.deepcopy)")
        else:
            C.check_true(g is not None, f"preflight cleared the existing gradient of parameter {i} ({label})",
                         hint="the model's gradients must survive: probe a copy instead of calling zero_grad on it")
            C.check_close(g, r, f"gradient of parameter {i} after preflight ({label})",
                          hint="the model's gradients must be left as they were")
    if modes:
        C.check_equal(g_after["modes"], r_before["modes"], f"the modules' training flags after preflight ({label})",
                      hint="do not call model.train() or model.eval() on the model itself")


@probe_preflight_unused.verdict
def _(got, ref):
    with visible():
        C.check_equal(codes(got["visible"]["codes"], "TwoHeads(use_bn=True)"), sorted(ref["visible"]["codes"]),
                      "codes for TwoHeads(use_bn=True)")
        check_untouched(got["visible"]["after"], ref["visible"]["before"], "visible TwoHeads(use_bn=True)", modes=False)
    for g, r in zip(got["cases"], ref["cases"]):
        C.check_equal(codes(g["codes"], r["label"]), sorted(r["codes"]), f"codes for {r['label']} (sorted)",
                      hint="start the test backward from no gradients (stale ones hide an unused head); frozen "
                           "parameters do not count")
        check_untouched(g["after"], r["before"], r["label"])


#: Why each reference solution is right: one line shown under the worked solution in a student's feedback once the
#: instructor releases solutions (grade-class --solutions), never before.
WHY = {
    "sync_batch_stats": "Each rank shares only its per-channel mean, biased variance and count (an empty shard sends zeros with count 0, weight 0, never NaN). After all_gather, the law of total variance weighted by counts combines them, avoiding the float32 cancellation of E[x^2] - E[x]^2.",
    "train_logged": "The sample-weighted sum loss.item() * len(y) and the sample count accumulate locally in one two-element float64 tensor, with no collective; at the end of each interval one all_reduce of that tensor gives the global sum and count (the tensor is then zeroed for the next interval), whose ratio weighs every sample on every rank equally.",
    "train_accumulated": "Forward and backward of every micro-batch but a group's last run under model.no_sync(), so DDP all-reduces once per group, and dividing each loss by the group size makes the accumulated gradient the group mean. step() then zero_grad() after the last backward leaves the gradients clear.",
    "preflight": "Every BatchNorm (1d, 2d, 3d, SyncBatchNorm) is a _BatchNorm and InstanceNorm is not (it shares only _NormBase), so isinstance(m, _BatchNorm) is the BatchNorm test, and SyncBatchNorm is excluded explicitly. The unused-parameter probe runs on a deepcopy whose grads are None (a deep-copied Parameter has none on this torch; zero_grad makes sure), so a stale gradient cannot hide an unused parameter and the real model's values, buffers, grads and mode are never touched.",
}
