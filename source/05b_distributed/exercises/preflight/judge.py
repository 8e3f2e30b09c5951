"""Exercise 'preflight' of 05b_distributed: its hidden probes and verdicts (instructor side: never released).

Run by course.grading.judge.verdicts.load after ../../judge.py, in its namespace (the names defined there,
and in the exercises above this one, are in scope). Its mutants and alternatives are in the folders beside
this file.
"""

# --- this exercise's own helpers (only its probes and verdicts use them; a @judge.shared one ships with
# every probe of the chapter, as the chapter's own do) ------------------------------------------------

@judge.shared
def _j5_modes(model):
    return [(name, m.training) for name, m in model.named_modules()]


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


WHY['preflight'] = "Every BatchNorm (1d, 2d, 3d, SyncBatchNorm) is a _BatchNorm and InstanceNorm is not (it shares only _NormBase), so isinstance(m, _BatchNorm) is the BatchNorm test, and SyncBatchNorm is excluded explicitly. The unused-parameter probe runs on a deepcopy whose grads are None (a deep-copied Parameter has none on this torch; zero_grad makes sure), so a stale gradient cannot hide an unused parameter and the real model's values, buffers, grads and mode are never touched."
