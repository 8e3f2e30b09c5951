"""Tests for course.fsdp: FSDP2 with a bfloat16 mixed-precision policy, reshard_after_forward, and a checkpoint of
the model and its AdamW state loaded into one unsharded process."""
from __future__ import annotations

import pytest
import torch

from course import ddp as P
from course import fsdp as FS


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for reshard in (True, False):
        ck = tmp_path_factory.mktemp(f"ck{int(reshard)}")
        out[reshard] = (P.launch(FS.practice_worker, world_size=2, args=(str(ck), reshard), timeout=240), ck)
    return out


def test_policy_computes_in_bf16_and_keeps_fp32_shards(runs):
    ranks, _ = runs[True]
    for r in ranks:
        assert set(r["computed"]) == {"0", "2", "4"}
        assert all(v == ("torch.bfloat16",) * 3 for v in r["computed"].values())
        for name, (cls, dtype, local) in r["grads"].items():
            assert (cls, dtype) == ("DTensor", "torch.float32"), name
            full = r["params"][name].shape
            assert local[0] * 2 == full[0] and tuple(local[1:]) == tuple(full[1:])


def test_reshard_after_forward_trades_memory_for_a_second_all_gather(runs):
    (on, _), (off, _) = runs[True], runs[False]
    assert on[0]["held"] == 0
    assert all(v[0] == "DTensor" and v[2] == "torch.float32" for v in on[0]["between"].values())
    n_params = sum(p.numel() for p in on[0]["params"].values())
    assert off[0]["held"] == 2 * n_params  # every parameter whole, in bfloat16, between forward and backward
    assert all(v[0] == "Parameter" and v[2] == "torch.bfloat16" for v in off[0]["between"].values())
    layers = 3
    assert on[0]["collectives"]["forward"] == off[0]["collectives"]["forward"] == {"_allgather_base": layers}
    assert on[0]["collectives"]["backward"] == {"_allgather_base": layers, "_reduce_scatter_base": layers}
    assert off[0]["collectives"]["backward"] == {"_reduce_scatter_base": layers}
    assert on[0]["loss"] == off[0]["loss"]  # the same step either way
    for n, p in on[0]["params"].items():
        assert torch.equal(p, off[0]["params"][n])


def test_checkpoint_of_model_and_optimizer_loads_unsharded(runs):
    ranks, ck = runs[True]
    names, moment_cls, param_cls = ranks[0]["state_keys"]
    assert names == list(ranks[0]["params"]) and moment_cls == param_cls == "DTensor"
    assert ranks[0]["files"] == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    model, opt = FS.load_unsharded(str(ck))
    for n, p in model.named_parameters():
        assert torch.equal(p.detach(), ranks[0]["params"][n]), n
        assert torch.equal(opt.state[p]["exp_avg"], ranks[0]["exp_avg"][n]), n
        assert float(opt.state[p]["step"]) == 1.0
    assert all(torch.equal(ranks[0]["params"][n], ranks[1]["params"][n]) for n in names)


def test_held_bytes_counts_whole_parameters_only():
    m = torch.nn.Linear(3, 2)
    assert FS.held_bytes(m) == (6 + 2) * 4
