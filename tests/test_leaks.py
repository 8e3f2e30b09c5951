"""Tests for course.leaks: the graph probe, the leaky loops and the TBPTT growth measurement."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from course import leaks as L
from course.leaks import GraphProbe


def _mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _clean_train(model, loader, opt):
    out = []
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def test_reachable_nodes_counts_shared_graphs_once():
    x = torch.randn(3, requires_grad=True)
    y = (x * 2).sum()
    z = (x * 3).sum()
    assert L.reachable_nodes([y]) == L.graph_size(y) == 3  # Sum, Mul, AccumulateGrad
    assert L.reachable_nodes([y, y]) == 3
    assert L.reachable_nodes([y, z]) == 5  # the AccumulateGrad of x is shared
    assert L.reachable_nodes([x.detach(), None, 1.0]) == 0


def test_graph_probe_tracks_only_live_tensors():
    x = torch.randn(4, requires_grad=True)
    with L.GraphProbe() as probe:
        a = (x * 2).sum()
        assert probe.sample() == 3
        del a
        assert probe.sample() == 0
        keep = x.exp()
    assert probe.samples == [3, 0] and probe.peak == 3
    assert probe.final == 2 and keep.grad_fn is not None
    assert L.GraphProbe().peak == 0


def test_graph_probe_ignores_no_grad_and_does_not_change_results():
    m = _mlp()
    x = torch.randn(5, 6)
    want = m(x)
    with L.GraphProbe() as probe:
        got = m(x)
        with torch.no_grad():
            m(x)
    assert torch.equal(got, want) and probe.final > 0
    assert all(t.grad_fn is not None for t in probe.live_tensors())


def test_clean_loop_is_flat_and_leaky_loop_grows():
    for n in (3, 12):
        m = _mlp()
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        run = L.run_probed(_clean_train, m, L.make_batches(n), opt, optimizer=opt)
        assert len(run["nodes"]) == n and len(set(run["nodes"])) == 1 and run["final_nodes"] == 0
        assert all(type(v) is float for v in run["result"])
    m = _mlp()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    run = L.run_probed(L.leaky_train_epoch, m, L.make_batches(12), opt, optimizer=opt)
    assert run["nodes"] == sorted(run["nodes"]) and run["nodes"][-1] > 5 * run["nodes"][0]
    assert run["final_nodes"] > 0 and all(type(v) is torch.Tensor for v in run["result"])


def test_leaky_train_epoch_values_match_a_clean_loop():
    a, b = _mlp(1), _mlp(1)
    batches = L.make_batches(4, seed=3)
    leaky = L.leaky_train_epoch(a, batches, torch.optim.SGD(a.parameters(), lr=0.1))
    clean = _clean_train(b, batches, torch.optim.SGD(b.parameters(), lr=0.1))
    assert [v.item() for v in leaky] == pytest.approx(clean)


def test_leaky_evaluate_keeps_activations_and_no_grad_keeps_none():
    m = _mlp()
    batches = L.make_batches(6, batch_size=4)
    run = L.run_probed(L.leaky_evaluate, m, batches, model=m)
    with torch.no_grad():
        want = F.cross_entropy(m(torch.cat([x for x, _ in batches])), torch.cat([y for _, y in batches]))
    assert type(run["result"]) is torch.Tensor and run["result"].grad_fn is not None
    assert run["result"].item() == pytest.approx(want.item(), rel=1e-5)
    per_forward = run["saved_bytes_per_forward"]
    assert len(per_forward) == 6 and per_forward[0] == 0 and per_forward == sorted(per_forward) and per_forward[-1] > 0
    assert run["saved_peak"] == run["saved_packed"] > 0 and run["saved_peak_bytes"] > 0

    def clean(model, loader):
        with torch.no_grad():
            return sum(F.cross_entropy(model(x), y, reduction="sum").item() for x, y in loader)

    run = L.run_probed(clean, m, batches, model=m)
    assert run["saved_packed"] == 0 and run["nodes"] == [0] * 6 and run["final_nodes"] == 0


def test_run_probed_removes_its_hooks():
    m = _mlp()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    L.run_probed(_clean_train, m, L.make_batches(2), opt, optimizer=opt, model=m)
    assert len(m._forward_pre_hooks) == 0
    assert len(opt._optimizer_step_post_hooks) == 0


def test_tiny_rnn_shapes():
    rnn = L.TinyRNN(n_in=3, n_hidden=5)
    h = rnn.init_hidden(2)
    assert h.shape == (2, 5) and h.grad_fn is None
    y, h2 = rnn(torch.randn(2, 3), h)
    assert y.shape == (2, 3) and h2.shape == (2, 5)
    assert rnn.init_hidden(1, torch.float64).dtype == torch.float64


def test_make_batches_is_deterministic():
    a, b = L.make_batches(3, seed=5), L.make_batches(3, seed=5)
    assert all(torch.equal(x1, x2) and torch.equal(y1, y2) for (x1, y1), (x2, y2) in zip(a, b))
    assert a[0][0].shape == (8, 6) and a[0][1].dtype == torch.int64
    assert L.make_batches(1, dtype=torch.float64)[0][0].dtype == torch.float64


def test_leaky_tbptt_fails_on_the_second_chunk():
    torch.manual_seed(0)
    rnn = L.TinyRNN(3, 4)
    with pytest.raises(RuntimeError, match="backward through the graph a second time|modified by an inplace"):
        L.leaky_tbptt_train(rnn, torch.randn(9, 2, 3), 4, torch.optim.SGD(rnn.parameters(), lr=0.1))


def test_tbptt_growth_grows_only_without_detach():
    torch.manual_seed(0)
    rnn = L.TinyRNN(3, 4)
    seq = torch.randn(4 * 5 + 1, 2, 3)
    flat = L.tbptt_growth(rnn, seq, 4, detach=True)
    grow = L.tbptt_growth(rnn, seq, 4, detach=False)
    assert len(flat) == len(grow) == 5
    assert len({r["nodes"] for r in flat}) == 1
    nodes = [r["nodes"] for r in grow]
    assert nodes[0] == flat[0]["nodes"] and nodes == sorted(nodes) and nodes[-1] > 3 * nodes[0]
    assert all(r["backward_ms"] >= 0 for r in grow)
    assert all(p.grad is None for p in rnn.parameters())


def test_tiny_lstm_state_is_a_tuple_and_init_state_matches():
    torch.manual_seed(0)
    lstm = L.TinyLSTM(n_in=3, n_hidden=5)
    h, c = lstm.init_state(2)
    assert h.shape == c.shape == (2, 5) and h.dtype == torch.float32 and not h.requires_grad
    y, (h1, c1) = lstm(torch.randn(2, 3), (h, c))
    assert y.shape == (2, 3) and h1.shape == c1.shape == (2, 5) and c1.grad_fn is not None
    h64, _ = lstm.double().init_state(4)
    assert h64.dtype == torch.float64 and lstm.init_state(1, torch.float32)[0].dtype == torch.float32
    rnn = L.TinyRNN(n_in=3, n_hidden=4)
    assert torch.equal(rnn.init_state(2), rnn.init_hidden(2)) and rnn.init_state(2, torch.float64).dtype == torch.float64


def test_tbptt_stepper_one_chunk_per_call_and_growth_only_without_detach():
    torch.manual_seed(0)
    rnn = L.TinyRNN(n_in=3, n_hidden=5)
    seq = torch.randn(3 * 4 + 1, 2, 3)
    step = L.tbptt_stepper(rnn, seq, 4, detach=True)
    losses = [step() for _ in range(4)]             # the 4th call starts the sequence again
    assert all(isinstance(v, float) for v in losses) and losses[3] == pytest.approx(losses[0])
    rows = L.tbptt_growth(copy.deepcopy(rnn), seq, 4, detach=True)
    assert len(rows) == 3
    grow = L.tbptt_stepper(rnn, seq, 4, detach=False)
    nodes = []
    with GraphProbe() as probe:
        for _ in range(3):
            grow()
            nodes.append(probe.sample())
    assert nodes == sorted(nodes) and nodes[-1] > nodes[0]


def test_time_chunks_and_run_chunk_give_the_per_step_mean_mse():
    torch.manual_seed(0)
    rnn = L.TinyRNN(n_in=3, n_hidden=4)
    seq = torch.randn(10 + 1, 2, 3)
    chunks = L.time_chunks(seq, 4)
    assert [len(x) for x, _ in chunks] == [4, 4, 2]
    assert all(torch.equal(t, seq[1 + 4 * i:1 + 4 * i + len(t)]) for i, (_, t) in enumerate(chunks))
    h = rnn.init_state(2)
    loss, h_end = L.run_chunk(rnn, *chunks[0], h)
    want, g = 0.0, rnn.init_state(2)
    for t in range(4):
        y, g = rnn(seq[t], g)
        want = want + F.mse_loss(y, seq[t + 1])
    assert loss.item() == pytest.approx(want.item() / 4, rel=1e-6) and torch.allclose(h_end, g)
    assert loss.grad_fn is not None
