import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
import torch  # noqa: E402

from course import eager_profile as ep  # noqa: E402
from course.profiling import Op, Trace, profile_steps  # noqa: E402


def _trace(ops):
    return Trace(raw={"traceEvents": []}, ops=ops)


def test_mlp_train_step_learns_and_never_reads_back():
    step = ep.mlp_train_step(batch=8, width=16, depth=2, features=5, classes=3, seed=1)
    assert step() is None
    counts = ep.op_counts(step)
    assert counts["aten::addmm"] == 3, counts            # three Linear layers
    assert ep.host_syncs(counts) == {}, "the step must not read values back to Python"
    x, y = step.batch
    assert x.shape == (8, 5) and y.shape == (8,) and int(y.max()) < 3
    assert isinstance(step.optimizer, torch.optim.SGD)
    before = torch.nn.functional.cross_entropy(step.model(x), y).item()
    for _ in range(30):
        step()
    assert torch.nn.functional.cross_entropy(step.model(x), y).item() < before


def test_self_times_subtract_direct_children_only():
    ops = [Op("outer", "cpu_op", 0, 10, 1, 0), Op("mid", "cpu_op", 1, 6, 1, 1), Op("leaf", "cpu_op", 2, 3, 1, 2),
           Op("other", "cpu_op", 8, 1, 1, 1)]
    got = {o.name: t for o, t in ep.self_times(ops)}
    assert got == {"outer": 3.0, "mid": 3.0, "leaf": 3.0, "other": 1.0}


def test_op_floor_is_a_few_microseconds():
    floor = ep.op_floor_us(calls=50)
    assert 0.05 < floor < 200


def test_one_step_picks_the_fastest_and_shifts_times():
    ops = [Op("step 0", "user_annotation", 0, 100, 1, 0), Op("aten::mul", "cpu_op", 10, 50, 1, 1),
           Op("step 1", "user_annotation", 200, 40, 1, 0), Op("aten::mul", "cpu_op", 205, 20, 1, 1)]
    one = ep.one_step(_trace(ops))
    assert [(o.name, o.start, o.dur) for o in one.ops] == [("step 1", 0, 40), ("aten::mul", 5, 20)]
    assert [o.name for o in ep.one_step(_trace(ops), 0).ops] == ["step 0", "aten::mul"]
    with pytest.raises(ValueError):
        ep.one_step(_trace([Op("aten::mul", "cpu_op", 0, 1, 1, 0)]))


def test_step_breakdown_tells_overhead_from_compute_bound():
    # 20 ops at the floor, spread out with Python between them: overhead-bound
    tiny = [Op("step 0", "user_annotation", 0, 200, 1, 0)]
    tiny += [Op("aten::add", "cpu_op", 10 * i, 2, 1, 1) for i in range(20)]
    b = ep.step_breakdown(_trace(tiny), floor_us=2.0)
    assert b["step_us"] == 200 and b["ops"] == 20 and b["work_us"] == 0
    assert b["python_us"] == pytest.approx(160) and b["fixed_us"] == 200 and b["work_share"] == 0
    # one long matmul inside a wrapper: compute-bound
    big = [Op("step 0", "user_annotation", 0, 1000, 1, 0), Op("aten::linear", "cpu_op", 5, 990, 1, 1),
           Op("aten::addmm", "cpu_op", 8, 985, 1, 2)]
    b = ep.step_breakdown(_trace(big), floor_us=2.0)
    assert b["work_us"] == pytest.approx(983 + 3)          # addmm beyond the floor, and linear's 5 us self time
    assert b["work_share"] > 0.9 and b["top"][0] == ("aten::addmm", 985)
    assert b["fixed_us"] + b["work_us"] == pytest.approx(b["step_us"])


def test_breakdown_of_a_real_trace_adds_up():
    trace = profile_steps(ep.mlp_train_step(8, 16), steps=2, warmup=1)
    b = ep.step_breakdown(trace, floor_us=1.0)
    assert b["ops"] > 20 and 0 <= b["work_share"] <= 1
    assert 0 < b["python_us"] <= b["fixed_us"] <= b["step_us"]
    assert all(name.startswith("aten::") for name, _ in b["top"])


def test_plots_return_figures():
    trace = profile_steps(ep.mlp_train_step(8, 16), steps=2, warmup=1)
    b = ep.step_breakdown(trace, 1.0)
    fig = ep.plot_breakdown({"small": b, "again": b})
    assert len(fig.axes) == 1 and len(fig.axes[0].patches) == 6
    fig = ep.plot_timelines({"a": trace, "b": trace})
    assert len(fig.axes) == 2 and fig.axes[0].get_title() == "a"
    labels = len(fig.axes[0].texts)
    assert 0 < labels <= len(ep.plot_timelines({"a": trace}, label_share=0.01).axes[0].texts)
    assert b["self_us"]["aten::addmm"] > 0 and set(dict(b["top"])) <= set(b["self_us"])


def test_op_counts_names_ops_and_host_reads():
    x, lengths = torch.randn(3, 4), torch.tensor([1, 2, 3])
    assert ep.op_counts(lambda: x * 2) == {"aten::mul": 1}
    counts = ep.op_counts(lambda: (int(lengths[0]), lengths.tolist(), x.numpy(), x[lengths > 1],
                                   torch.nonzero(lengths)))
    assert ep.host_syncs(counts) == {"aten::_local_scalar_dense": 1, "aten::nonzero": 1,
                                     "aten::index (boolean mask)": 1, "Tensor.tolist": 1, "Tensor.numpy": 1}
    assert ep.host_syncs(ep.op_counts(lambda: x[torch.tensor([0, 2])])) == {}   # integer indexing does not sync
    assert "tolist" not in torch.Tensor.__dict__ and lengths.tolist() == [1, 2, 3]


def test_op_counts_restores_tensor_methods_after_an_exception():
    def boom():
        raise ValueError("x")
    with pytest.raises(ValueError):
        ep.op_counts(boom)
    assert "tolist" not in torch.Tensor.__dict__ and "numpy" not in torch.Tensor.__dict__
    assert ep.op_counts(lambda: torch.ones(2).sum()).keys() >= {"aten::sum"}


def test_op_counts_constant_for_a_batched_function_and_growing_for_a_loop():
    w = torch.randn(4)

    def loop(x):
        return torch.stack([row @ w for row in x])

    def batched(x):
        return x @ w
    small, large = torch.randn(2, 4), torch.randn(9, 4)
    assert sum(ep.op_counts(batched, small).values()) == sum(ep.op_counts(batched, large).values())
    assert sum(ep.op_counts(loop, large).values()) > sum(ep.op_counts(loop, small).values())


def test_gpu_busy_reads_the_kernel_lane():
    ops = [Op("step 0", "user_annotation", 0, 50, 1, 0), Op("k1", "kernel", 10, 20, 7, 0),
           Op("k2", "kernel", 25, 15, 7, 0), Op("k3", "kernel", 60, 40, 7, 0)]
    assert ep.gpu_busy(_trace(ops)) == pytest.approx((30 + 40) / 100)
    assert ep.gpu_busy(_trace(ops[:1])) == 0.0


def test_op_counts_tells_a_masked_number_from_a_masked_tensor():
    x, keep = torch.randn(3, 4), torch.tensor([True, False, True])

    def zero_masked(t):
        t = t.clone()
        t[~keep] = 0                   # one number: ATen runs masked_fill_, nothing is read back
        return t.add_(1)
    counts = ep.op_counts(zero_masked, x)
    assert counts["aten::add_"] == 1 and counts[ep.MASKED_FILL_WRITE] == 1 and ep.host_syncs(counts) == {}

    def write_rows(t):
        t = t.clone()
        t[keep] = torch.zeros(2, 4)    # a tensor of values: the true entries are found first (nonzero)
        return t
    assert ep.host_syncs(ep.op_counts(write_rows, x)) == {"aten::index_put (boolean mask)": 1}

    def accumulate(t):
        t = t.clone()
        t.index_put_((keep,), torch.tensor(1.0), accumulate=True)    # accumulate takes the general path
        return t
    assert ep.host_syncs(ep.op_counts(accumulate, x)) == {"aten::index_put (boolean mask)": 1}
    assert ep.host_syncs(ep.op_counts(lambda: x.masked_fill(~keep[:, None], 0))) == {}


def test_masked_number_write_runs_masked_fill_without_nonzero():
    """What op_counts claims, checked in the profiler: masked_fill_ and no nonzero for a number, nonzero for rows."""
    x, keep = torch.randn(3, 4), torch.tensor([True, False, True])

    def names(fn):
        with torch.profiler.profile() as prof:
            fn()
        return {e.name for e in prof.events()}
    number = names(lambda: x.clone().__setitem__(~keep, 0))
    rows = names(lambda: x.clone().__setitem__(keep, torch.zeros(2, 4)))
    assert "aten::masked_fill_" in number and "aten::nonzero" not in number
    assert "aten::nonzero" in rows


def test_one_thread_sets_and_restores_the_thread_count():
    before = torch.get_num_threads()
    with ep.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError):
        with ep.one_thread():
            raise ValueError("x")
    assert torch.get_num_threads() == before


def test_step_table_reads_the_fastest_step_only():
    ops = [Op("step 0", "user_annotation", 0, 100, 1, 0), Op("aten::mm", "cpu_op", 10, 80, 1, 1),
           Op("step 1", "user_annotation", 200, 40, 1, 0), Op("aten::mm", "cpu_op", 205, 20, 1, 1),
           Op("aten::add", "cpu_op", 226, 4, 1, 1), Op("aten::add", "cpu_op", 231, 4, 1, 1)]
    table = ep.step_table(_trace(ops), rows=1).splitlines()
    assert table[1].split() == ["aten::mm", "1", "0.020", "50.0%"]           # step 1 (40 us), not step 0
    assert table[2].split()[-3:] == ["2", "0.008", "20.0%"]                    # the other op name: two adds
    assert table[-1].split()[-2:] == ["0.040", "100.0%"]
    trace = profile_steps(ep.mlp_train_step(8, 16), steps=2, warmup=1)
    assert "aten::addmm" in ep.step_table(trace, rows=20)


def test_fastest_us_keeps_the_fastest_call():
    import time
    delays = iter([0.2, 0.02, 0.1])  # long enough that a late wake-up on a busy machine cannot reorder them
    got = ep.fastest_us(lambda: time.sleep(next(delays)), calls=3)
    assert 15_000 < got < 90_000
