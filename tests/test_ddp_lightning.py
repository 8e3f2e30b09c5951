"""course.lightning_ddp: Chapter 4's Lightning DDP run, two spawned CPU ranks, as a script."""
from __future__ import annotations

import pytest
import torch

from course import ecosystem as E
from course import lightning_ddp as LD


def test_run_trains_on_two_spawned_ranks_after_a_backward_here():
    x = torch.ones(2, requires_grad=True)
    (x * x).sum().backward()  # what made the forked ranks of `ddp_notebook` die on a GPU machine
    X, y = E.make_separable(64, seed=0)
    out = LD.run(X, y, batch_size=8, timeout=600)
    assert out["strategy"] == "DDPStrategy" and out["start_method"] == "spawn" and out["world_size"] == 2
    m = out["metrics"]
    assert m["rank, plain"] == 0.0                    # what rank 0 logged
    assert m["rank, sync_dist=True"] == 0.5           # the mean over ranks 0 and 1
    assert m["backend is gloo"] == 1.0
    assert m["batches seen"] == 4.0                   # 8 batches, half on each rank (DistributedSampler)


def test_run_reports_the_scripts_error():
    with pytest.raises(RuntimeError, match="the Lightning DDP script failed"):
        LD.run(torch.zeros(0, 8), torch.zeros(0, dtype=torch.long), timeout=300)


def test_spawn_strategy_never_forks():
    s = LD.spawn_strategy(30)
    assert s._start_method == "spawn"
    assert s._timeout.total_seconds() == 30


def test_rank_logger_is_found_by_reference():
    import pickle

    assert pickle.loads(pickle.dumps(LD.RankLogger)) is LD.RankLogger
    assert issubclass(LD.RankLogger, E.LitMLP)
