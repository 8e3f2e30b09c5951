import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from course import eager  # noqa: E402


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


def test_grad_mode_costs_shape():
    costs = eager.grad_mode_costs(1, ops=("add", "mul"), rounds=1, min_run_time=0.01)
    assert set(costs) == {"add", "mul"}
    for row in costs.values():
        assert list(row) == list(eager.MODES)
        assert all(0 < s < 1e-3 for s in row.values()), row    # a 1-element op takes microseconds, not ms


def test_cost_ladder_layers():
    ladder = eager.cost_ladder(rounds=1, min_run_time=0.01)
    assert [name for name, _ in ladder] == ["python", "into C++", "op, inference_mode", "op, no_grad",
                                          "op, requires_grad"]
    secs = dict(ladder)
    assert all(s > 0 for s in secs.values())
    assert secs["python"] < secs["op, inference_mode"], "an empty Python call is cheaper than a torch op"


def test_size_sweep_rows_and_shares():
    rows = eager.size_sweep([1, 100_000], rounds=1, min_run_time=0.01)
    assert [r["numel"] for r in rows] == [1, 100_000]
    for r in rows:
        for mode in ("no_grad", "requires_grad"):
            assert r[mode] > 0 and 0 < r[f"{mode}_fixed_share"] <= 1.0
    assert rows[0]["no_grad_fixed_share"] == 1.0
    assert rows[1]["no_grad"] > rows[0]["no_grad"], "a 100k-element mul costs more than a 1-element one"


def test_launch_vs_finish_on_cpu():
    before = torch.get_num_threads()
    t = eager.launch_vs_finish(64, repeats=3)
    assert set(t) == {"no_sync", "sync", "timer"}
    assert all(0 < v < 1.0 for v in t.values())
    assert torch.get_num_threads() == before


def test_plot_costs_returns_figure():
    ladder = [("python", 2e-8), ("into C++", 4e-8), ("op, inference_mode", 7e-7), ("op, no_grad", 8e-7),
              ("op, requires_grad", 1.5e-6)]
    rows = [{"numel": 1, "no_grad": 8e-7, "requires_grad": 1.5e-6},
            {"numel": 1000, "no_grad": 9e-7, "requires_grad": 1.6e-6}]
    fig = eager.plot_costs(ladder, rows)
    assert len(fig.axes) == 2


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
    ladder = [("python", 2e-8), ("op, requires_grad", 1.5e-6)]
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
