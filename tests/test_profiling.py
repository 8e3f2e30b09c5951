import json

import matplotlib
import pytest

matplotlib.use("Agg")
import torch  # noqa: E402
from torch import nn  # noqa: E402

from course import profiling  # noqa: E402


def _step():
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def test_profile_steps_records_each_step_and_nesting(tmp_path):
    trace = profiling.profile_steps(_step(), steps=3, memory=True)
    steps = trace.steps()
    assert [s.name for s in steps] == ["step 0", "step 1", "step 2"]
    assert all(s.depth == 0 for s in steps)
    linear = trace.named("aten::linear")
    assert len(linear) == 6 and all(o.depth >= 1 for o in linear)
    assert trace.named("autograd::engine"), "backward runs through the autograd engine"
    # each op lies inside one step
    assert all(any(s.start <= o.start and o.end <= s.end + 1 for s in steps) for o in linear)
    self_us = trace.self_time()
    assert self_us and all(v >= 0 for v in self_us.values())
    assert "aten::addmm" in self_us
    times, totals = trace.memory_curve()
    assert len(times) == len(totals) > 0 and times == sorted(times)
    assert trace.peak_bytes() > 0
    assert "aten::" in trace.table()
    path = trace.export(tmp_path / "t.json")
    again = profiling.load(path)
    assert len(again.ops) == len(trace.ops) and json.loads(path.read_text())["traceEvents"]


def test_timeline_draws_lanes():
    trace = profiling.profile_steps(_step(), steps=2)
    fig = trace.timeline(title="two steps", max_depth=2)
    ax = fig.axes[0]
    assert ax.get_title() == "two steps" and len(ax.patches) > 10
    assert "ms" in ax.get_xlabel()
    assert profiling.default_color(profiling.Op("MmBackward0", "cpu_op", 0, 1, 1)) == "tab:orange"


def test_peak_bytes_sees_a_large_temporary():
    big = profiling.profile_steps(lambda: torch.ones(1_000_000).sum(), steps=1, warmup=0, memory=True)
    assert big.peak_bytes() >= 4_000_000


def test_settle_runs_after_the_steps_and_is_cut_from_the_trace():
    calls = []

    def settle():
        calls.append(len(calls))
        torch.ones(64).cumsum(0)  # an op recorded while settling: not in the trace
    trace = profiling.profile_steps(_step(), steps=2, settle=settle)
    assert calls == [0]
    names = {o.name for o in trace.ops} | {e.get("name") for e in trace.raw["traceEvents"]}
    assert "aten::cumsum" not in names and profiling.SETTLE_RANGE not in names
    assert [s.name for s in trace.steps()] == ["step 0", "step 1"] and len(trace.named("aten::linear")) == 4

    def boom():
        raise RuntimeError("a step failed")
    with pytest.raises(RuntimeError, match="a step failed"):
        profiling.profile_steps(boom, steps=1, warmup=0, settle=settle)
    assert calls == [0], "settle is not called after a step raised"
