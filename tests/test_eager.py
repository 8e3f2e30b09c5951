import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from course import eager, timing  # noqa: E402


def test_timer_seconds_measures_seconds():
    import time
    t = eager.timer_seconds(lambda: time.sleep(0.002), min_run_time=0.02)
    assert 0.0015 < t < 0.05


def test_timer_seconds_restores_thread_count():
    before = torch.get_num_threads()
    eager.timer_seconds(lambda: None, min_run_time=0.01, num_threads=1)
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("mode", eager.MODES)
def test_op_loop_runs_in_its_mode(mode, monkeypatch):
    seen = []
    real_mul = torch.mul

    def spy(a, b):
        out = real_mul(a, b)
        seen.append((out.requires_grad, torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
                     a.requires_grad))
        return out

    monkeypatch.setattr(torch, "mul", spy)
    run = eager.op_loop("mul", 3, mode, inner=4)
    assert run() is None
    assert len(seen) == 4
    requires_grad, grad_enabled, inference, input_rg = seen[0]
    assert input_rg is (mode != "plain")
    assert requires_grad is (mode == "requires_grad")
    assert grad_enabled is (mode in ("plain", "requires_grad"))
    assert inference is (mode == "inference_mode")
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled(), "the mode must not leak out"


def test_op_loop_rejects_unknown_mode_and_op():
    with pytest.raises(ValueError):
        eager.op_loop("mul", 1, "fast")
    with pytest.raises(KeyError):
        eager.op_loop("div", 1, "plain")


def test_op_costs_one_measurement_for_ladder_and_table():
    costs = eager.op_costs(rounds=3, target_s=2e-4)
    assert set(costs) == {"python", "into C++"} | {f"{op}, {mode}" for op in ("add", "mul") for mode in eager.MODES}
    # Each sample is one block of a fraction of a millisecond: a busy machine that preempts the block inflates that
    # one sample (a 100 ms wait makes it a millisecond an op), so the plausibility bound is on each key's median.
    assert all(len(v) == 3 and all(0 < s < 0.1 for s in v) and sorted(v)[1] < 1e-3 for v in costs.values()), costs
    ladder = eager.cost_ladder(costs)
    assert [name for name, _ in ladder] == [key for key, _ in eager.LADDER]
    # the ladder's rungs ARE the table's entries: the same samples, so the two decompositions cannot disagree
    assert dict(ladder)["mul, no_grad"] == timing.spread(costs["mul, no_grad"])
    secs = {name: s["median"] for name, s in ladder}
    assert secs["python"] < secs["mul, inference_mode"], "an empty Python call is cheaper than a torch op"


def test_layer_verdict_follows_the_spread():
    assert eager.layer_verdict([1e-6] * 4, [2e-6, 2.1e-6, 2.2e-6, 2e-6]).startswith("costs 1.0")
    assert eager.layer_verdict([1e-6, 3e-6, 2e-6], [2e-6, 2.5e-6, 1.5e-6]).startswith(eager.BELOW_NOISE)
    assert eager.layer_verdict([2e-6] * 3, [1e-6] * 3) == "cheaper than the row above by 1.000 us"


def test_ladder_and_table_lines():
    costs = {"python": [2e-8] * 3, "into C++": [4e-8, 4.1e-8, 4.2e-8], "mul, inference_mode": [1e-6, 1.2e-6, 1.1e-6],
             "mul, no_grad": [1.1e-6, 1.15e-6, 1.05e-6], "mul, requires_grad": [2e-6] * 3}
    lines = eager.ladder_lines(costs)
    assert len(lines) == 5 and "this layer" not in lines[0]
    assert "costs 0.021 us" in lines[1] and eager.BELOW_NOISE in lines[3] and "costs 0.900 us" in lines[4]
    table = eager.mode_table_lines(costs, ops=("mul",), modes=("no_grad", "requires_grad"))
    assert "1.100 [1.075, 1.125]" in table[1] and "requires_grad is slower" in table[2]
    assert timing.consistent(table[2])


def test_size_sweep_rows_and_shares():
    rows = eager.size_sweep([1, 100_000], rounds=3, target_s=2e-4)
    assert [r["numel"] for r in rows] == [1, 100_000]
    for r in rows:
        for mode in ("no_grad", "requires_grad"):
            assert r[f"{mode}_q1"] <= r[mode] <= r[f"{mode}_q3"] and len(r[f"{mode}_samples"]) == 3
            assert r[mode] > 0 and 0 < r[f"{mode}_fixed_share"] <= 1.0
    assert rows[0]["no_grad_fixed_share"] == 1.0
    assert rows[1]["no_grad"] > rows[0]["no_grad"], "a 100k-element mul costs more than a 1-element one"


def test_fresh_vs_preallocated_and_its_lines():
    res = eager.fresh_vs_preallocated(1000, rounds=3)
    assert len(res["new output"]) == 3 and len(res["out="]) == 3
    lines = eager.fresh_memory_lines(res, 1000)
    assert timing.consistent(lines[0])
    slow = {"new output": [5e-3, 5.1e-3, 5.2e-3], "out=": [1e-3] * 3, "faults": {"new output": 9766, "out=": 0}}
    lines = eager.fresh_memory_lines(slow, 1_000_000)
    assert "new output is slower" in lines[0] and "page faults" in lines[-1] and "9,766" in lines[1]
    same = {"new output": [1e-3, 2e-3, 3e-3], "out=": [2e-3] * 3, "faults": {"new output": None}}
    lines = eager.fresh_memory_lines(same, 1_000_000)
    assert len(lines) == 2 and timing.INCONCLUSIVE in lines[-1] and "page faults" not in lines[-1]


def test_launch_vs_finish_on_cpu():
    before = torch.get_num_threads()
    t = eager.launch_vs_finish(64, repeats=3)
    assert set(t) == {"no_sync", "sync", "timer"}
    assert all(0 < v < 1.0 for v in t.values())
    assert torch.get_num_threads() == before


def test_plot_costs_returns_figure():
    ladder = [("python", 2e-8), ("into C++", 4e-8), ("mul, inference_mode", 7e-7), ("mul, no_grad", 8e-7),
              ("mul, requires_grad", 1.5e-6)]
    rows = [{"numel": 1, "no_grad": 8e-7, "requires_grad": 1.5e-6},
            {"numel": 1000, "no_grad": 9e-7, "requires_grad": 1.6e-6}]
    fig = eager.plot_costs(ladder, rows)
    assert len(fig.axes) == 2


def test_plot_costs_draws_the_printed_medians_and_spreads():
    costs = {"python": [1e-8, 2e-8, 3e-8], "into C++": [4e-8] * 3, "mul, inference_mode": [7e-7, 8e-7, 9e-7],
             "mul, no_grad": [8e-7] * 3, "mul, requires_grad": [1.4e-6, 1.5e-6, 1.7e-6]}
    rows = [{"numel": n, "no_grad": 1e-6 * n, "no_grad_q1": 0.9e-6 * n, "no_grad_q3": 1.2e-6 * n} for n in (1, 10)]
    fig = eager.plot_costs(eager.cost_ladder(costs), rows, preallocated=(10, [5e-6, 6e-6, 7e-6]))
    bars = fig.axes[0].patches
    widths = sorted(round(b.get_width(), 6) for b in bars)
    assert widths == sorted(round(1e6 * timing.spread(v)["median"], 6) for v in costs.values())
    assert "out=" in [t.get_text() for t in fig.axes[1].get_legend().get_texts()][-1]


def test_sample_image_and_three_kinds():
    arr = eager.sample_image(20, 30, seed=3)
    assert arr.shape == (20, 30, 3) and arr.dtype == np.uint8
    assert np.array_equal(arr, eager.sample_image(20, 30, seed=3))
    assert not np.array_equal(arr, eager.sample_image(20, 30, seed=4))
    pil, npy, t = eager.as_three_kinds(arr)
    assert isinstance(pil, Image.Image) and pil.size == (30, 20)
    assert t.shape == (3, 20, 30) and t.dtype == torch.uint8
    assert torch.equal(t.permute(1, 2, 0), torch.from_numpy(npy))
    fig = eager.show_images([pil, npy, t, t.float()], ["a", "b", "c", "d"], rows=2)
    assert len(fig.axes) == 4


def test_cache_sizes_are_positive_byte_counts():
    caches = eager.cache_sizes()
    assert isinstance(caches, dict)
    for level, size in caches.items():
        assert level[:1] == "L" and isinstance(size, int) and size >= 1024
    if caches.get("L2") and caches.get("L3"):
        assert caches["L3"] >= caches["L2"]


def test_plot_costs_marks_where_the_caches_fill():
    ladder = [("python", 2e-8), ("mul, requires_grad", 1.5e-6)]
    rows = [{"numel": n, "no_grad": 1e-6 + n * 1e-9} for n in (1, 1_000, 1_000_000)]
    fig = eager.plot_costs(ladder, rows, caches={"L2": 512 * 1024, "L9": 10**12})   # L9 is off the chart
    ax = fig.axes[1]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "nanoseconds per element"
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and dashed[0].get_xdata()[0] == pytest.approx(512 * 1024 / 12)
    assert ax.get_lines()[0].get_ydata()[0] == pytest.approx(1e9 * (1e-6 + 1e-9))


def test_hook_every_node_sees_pruning():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    out = (x.sin() + w.cos()).sum()
    recorded, ran = eager.hook_every_node(out)
    assert sorted(recorded) == sorted(["SumBackward0", "AddBackward0", "SinBackward0", "CosBackward0",
                                       "AccumulateGrad", "AccumulateGrad"])
    assert ran == []
    torch.autograd.grad(out, x)
    assert "SinBackward0" in ran and "CosBackward0" not in ran
