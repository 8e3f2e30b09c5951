"""Tests for course.traces: phases, loader waits, collectives and graph growth read from real and hand-made traces."""
from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.profiler import record_function  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from course import ddp as P  # noqa: E402
from course import leaks as L  # noqa: E402
from course import traces as T  # noqa: E402
from course.profiling import Op, Trace, profile_steps  # noqa: E402


def _ev(name, ts, dur, tid=1, cat="cpu_op"):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "tid": tid, "pid": 1}


def _trace(events, memory=()):
    raw = {"traceEvents": list(events) + [
        {"ph": "i", "name": "[memory]", "ts": t, "tid": 1, "pid": 1, "args": {"Bytes": b, "Total Allocated": tot}}
        for t, b, tot in memory]}
    return Trace.from_chrome(raw)


def _handmade():
    """Two steps of 100 us: data 10, forward 30 holding a 5 us broadcast, backward 40 holding an all-reduce, SGD 10."""
    events = []
    for i, t0 in enumerate((0, 200)):
        events += [_ev(f"step {i}", t0, 100, cat="user_annotation"),
                   _ev("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0 + 1, 10),
                   _ev("DistributedDataParallel.forward", t0 + 12, 30),
                   _ev("c10d::broadcast_", t0 + 13, 5),
                   _ev("backward", t0 + 45, 40, cat="user_annotation"),
                   _ev("autograd::engine::evaluate_function: AddmmBackward0", t0 + 46, 10),
                   _ev("autograd::engine::evaluate_function: AccumulateGrad", t0 + 57, 8),
                   _ev("c10d::allreduce_", t0 + 58, 2),
                   _ev("Optimizer.step#SGD.step", t0 + 88, 10),
                   _ev("c10d::allreduce_", t0 + 99, 0.5),               # the logging collective: outside
                   _ev("gloo:all_reduce", t0 + 59, 20, tid=9)]          # gloo's own thread
    return _trace(events, memory=[(5, 100, 1100), (50, 400, 1500), (90, -300, 1200), (250, 200, 1400)])


def test_phase_of_names():
    assert T.phase_of(Op("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "", 0, 1, 1)) == "data"
    assert T.phase_of(Op("c10d::allreduce_", "", 0, 1, 1)) == "communication"
    assert T.phase_of(Op("gloo:all_reduce", "", 0, 1, 9)) == "communication"
    assert T.phase_of(Op("Optimizer.zero_grad#SGD.zero_grad", "", 0, 1, 1)) == "optimizer"
    assert T.phase_of(Op("autograd::engine::evaluate_function: MulBackward0", "", 0, 1, 1)) == "backward"
    assert T.phase_of(Op("forward", "user_annotation", 0, 1, 1)) == "forward"
    assert T.phase_of(Op("aten::addmm", "", 0, 1, 1)) is None


def test_step_phases_on_a_handmade_trace_add_up_and_never_count_twice():
    rows = T.step_phases(_handmade())
    assert len(rows) == 2
    r = rows[0]
    assert r["total"] == pytest.approx(0.1)
    assert r["data"] == pytest.approx(0.010)
    assert r["communication"] == pytest.approx(0.0075)          # 5 + 2 + 0.5 us on the loop's thread
    assert r["forward"] == pytest.approx(0.025)                 # 30 minus the broadcast inside it
    assert r["backward"] == pytest.approx(0.038)                # the "backward" range minus its all-reduce
    assert r["optimizer"] == pytest.approx(0.010)
    assert sum(r[p] for p in (*T.PHASES, "other")) == pytest.approx(r["total"])
    assert r["other"] == pytest.approx(0.1 - 0.0905)


def test_loader_waits_collectives_and_comm_in_flight():
    tr = _handmade()
    assert T.main_thread(tr) == 1
    assert T.loader_waits(tr) == [[pytest.approx(0.01)], [pytest.approx(0.01)]]
    colls = T.collectives(tr)
    assert colls[0]["forward"] == {"broadcast": 1}
    assert colls[0]["backward"] == {"allreduce": 1}
    assert colls[0]["outside"] == {"allreduce": 1}
    assert T.comm_in_flight(tr) == [pytest.approx(0.02), pytest.approx(0.02)]
    assert T.backward_nodes(tr) == [2, 2]


def test_step_memory_from_allocator_events():
    tr = _handmade()
    # before step 0 the allocator held 1000 bytes; it peaked at 1500 in step 0 and held 1200 at its end
    assert T.step_peak_bytes(tr) == [500, 200]
    assert T.step_held_bytes(tr) == [200, 400]
    no_memory = _trace([_ev("step 0", 0, 10, cat="user_annotation")])
    assert T.step_peak_bytes(no_memory) == [0] and T.step_held_bytes(no_memory) == [0]


def test_no_steps_is_an_error():
    with pytest.raises(ValueError, match="step N"):
        T.step_phases(_trace([_ev("aten::add", 0, 1)]))


def test_real_single_process_step_has_every_phase():
    torch.manual_seed(0)
    ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
    loader = iter(DataLoader(ds, batch_size=8))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step():
        x, y = next(loader)
        opt.zero_grad()
        with record_function("forward"):
            out = model(x)
        loss = F.cross_entropy(out, y)
        with record_function("backward"):
            loss.backward()
        opt.step()

    tr = profile_steps(step, steps=3, warmup=1)
    rows = T.step_phases(tr)
    assert len(rows) == 3
    for r in rows:
        assert r["data"] > 0 and r["forward"] > 0 and r["backward"] > 0 and r["optimizer"] > 0
        assert r["communication"] == 0
        assert sum(r[p] for p in (*T.PHASES, "other")) == pytest.approx(r["total"], rel=1e-6)
    assert [len(w) for w in T.loader_waits(tr)] == [1, 1, 1]
    assert len(set(T.backward_nodes(tr))) == 1 and T.backward_nodes(tr)[0] > 0
    assert T.comm_in_flight(tr) == [0.0, 0.0, 0.0]


def test_growing_graph_shows_in_backward_nodes_and_held_memory():
    torch.manual_seed(0)
    rnn = L.TinyRNN(n_in=3, n_hidden=8)
    seq = torch.randn(4 * 5 + 1, 2, 3)
    with T.quiet_stderr():
        grow = profile_steps(L.tbptt_stepper(rnn, seq, 4, detach=False), steps=4, warmup=0, memory=True)
        flat = profile_steps(L.tbptt_stepper(rnn, seq, 4, detach=True), steps=4, warmup=0, memory=True)
    g, f = T.backward_nodes(grow), T.backward_nodes(flat)
    assert g == sorted(g) and g[-1] > g[0] and len(set(f)) == 1
    held = T.step_held_bytes(grow)
    assert held == sorted(held) and held[-1] > held[0]


def test_phase_color_bars_and_table():
    tr = _handmade()
    assert T.phase_color(Op("c10d::allreduce_", "", 0, 1, 1)) == T.PHASE_COLORS["communication"]
    assert T.phase_color(Op("step 0", "user_annotation", 0, 1, 1)) == "whitesmoke"
    assert T.phase_color(Op("aten::mm", "", 0, 1, 1)) == "lightsteelblue"
    rows = T.step_phases(tr)
    fig = T.phase_bars(rows, title="two steps")
    assert len(fig.axes[0].patches) == 2 * (len(T.PHASES) + 1)
    ax = tr.timeline("t", max_depth=1, color=T.phase_color).axes[0]
    T.phase_legend(ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [*T.PHASES, "other ops"]
    text = T.phase_table(rows)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["step", "total", "data"] and lines[-1].startswith("   share")
    assert len(lines) == 4
    import matplotlib.pyplot as plt

    plt.close("all")


def test_quiet_stderr_silences_fd2_and_restores_it(capfd):
    with T.quiet_stderr():
        os.write(2, b"hidden\n")
    os.write(2, b"shown\n")
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_ddp_trace_collectives_and_synchronised_batchnorm(tmp_path):
    from course import data as D

    samples = D.make_jpeg_folder(tmp_path / "j", per_class=4, size=(16, 20))
    plain, synced = (P.launch(P.profiled_step_worker, world_size=2, args=(samples, 2, 2, sync), timeout=120)
                     for sync in (False, True))
    for run in (plain, synced):
        tr = Trace.from_chrome(run[0]["raw"])
        assert len(tr.steps()) == 2
        assert all(r["total"] > 0 for r in T.step_phases(tr))
    last_plain = T.collectives(Trace.from_chrome(plain[0]["raw"]))[-1]
    last_sync = T.collectives(Trace.from_chrome(synced[0]["raw"]))[-1]
    assert "allgather" not in last_plain["forward"] and last_plain["backward"]["allreduce"] >= 1
    assert last_sync["forward"]["allgather"] == 2                       # one per BatchNorm layer
    assert last_sync["backward"]["allreduce"] == last_plain["backward"]["allreduce"] + 2
    assert torch.equal(synced[0]["global_mean"], synced[1]["global_mean"])
