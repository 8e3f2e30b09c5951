import pytest
import torch
import torch.nn as nn

from course.memory import SavedTensorProbe, cuda_peak_bytes, graph_size, tensor_bytes


def test_tensor_bytes():
    assert tensor_bytes(torch.zeros(10, dtype=torch.float32)) == 40
    assert tensor_bytes(torch.zeros(3, dtype=torch.float64)) == 24


def test_probe_counts_live_and_peak_and_frees_after_backward():
    model = nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 1))
    x = torch.randn(8, 20)
    with SavedTensorProbe() as probe:
        loss = model(x).sum()
        live = probe.live
        assert live > 0 and probe.live_bytes > 0
        loss.backward()
    assert probe.live == 0 and probe.live_bytes == 0
    assert probe.peak == live and probe.packed >= live


def test_retain_graph_keeps_saved_tensors_until_released():
    w = torch.randn(50, 50, requires_grad=True)
    with SavedTensorProbe() as probe:
        y = torch.tanh(torch.randn(4, 50) @ w).sum()
        y.backward(retain_graph=True)
        assert probe.live > 0, "retain_graph keeps what the graph saved"
        del y
        assert probe.live == 0, "dropping the last reference frees it (no reference cycle)"
    probe.reset_peak()
    assert probe.peak == 0


def test_probe_does_not_change_gradients_even_double_backward():
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)

    def second_order():
        x.grad = None
        g, = torch.autograd.grad((torch.sin(x) * x).sum(), x, create_graph=True)
        (g ** 2).sum().backward()
        return x.grad.clone()

    plain = second_order()
    with SavedTensorProbe():
        probed = second_order()
    assert torch.equal(plain, probed)


def test_graph_size():
    assert graph_size(None) == 0
    leaf = torch.ones(2, requires_grad=True)
    assert graph_size(leaf) == 0
    y = leaf * 2
    z = (y + y).sum()   # a diamond: y feeds the add twice
    # SumBackward, AddBackward, MulBackward, AccumulateGrad
    assert graph_size(z) == 4


def test_cuda_peak_bytes_needs_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="CUDA"):
        cuda_peak_bytes(lambda: None)


def test_breakdown_counts_shared_storage_once_and_separates_resident_tensors():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
    x = torch.randn(5, 6)
    with SavedTensorProbe() as probe:
        loss = model(x).sum()
        parts = probe.breakdown(list(model.parameters()) + [x])
        plain = probe.breakdown()
    # Linear 1 saves x (resident; its weight is not needed: x needs no gradient); ReLU saves its output, which
    # Linear 2 saves again (twice), with Linear 2's weight (resident).
    assert parts["saved"] == probe.live_bytes and parts["saved"] > parts["distinct"]
    relu_out = 5 * 8 * 4
    weight2 = 8 * 4
    assert parts["activations"] == relu_out, parts
    assert parts["resident"] == tensor_bytes(x) + weight2
    assert plain["resident"] == 0 and plain["activations"] == plain["distinct"] == parts["distinct"]
    loss.backward()
    assert probe.breakdown()["distinct"] == 0


def test_training_state_bytes_adamw_is_16_bytes_a_parameter():
    from course.memory import training_state_bytes

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    opt = torch.optim.AdamW(model.parameters())
    n = sum(p.numel() for p in model.parameters())
    before = training_state_bytes(model, opt)
    assert before == {"parameters": 4 * n, "gradients": 0, "optimizer state": 0}
    model(torch.randn(5, 32)).sum().backward()
    opt.step()
    after = training_state_bytes(model, opt)
    steps = 4 * len(list(model.parameters()))  # one float32 step counter per parameter tensor
    assert after == {"parameters": 4 * n, "gradients": 4 * n, "optimizer state": 8 * n + steps}
    tied = torch.nn.Linear(4, 4)
    shared = torch.nn.Module()
    shared.a, shared.b = tied, tied
    assert training_state_bytes(shared)["parameters"] == 4 * (16 + 4)


def test_cpu_allocator_bytes_sees_what_the_graph_keeps():
    from course.memory import cpu_allocator_bytes

    lin = torch.nn.Linear(256, 256)
    x = torch.randn(64, 256)
    act = 64 * 256 * 4
    held, peak, out = cpu_allocator_bytes(lambda: torch.relu(lin(x)).sum())
    assert act <= held < 2 * act  # relu's output, saved for its backward; the linear's output is freed
    assert peak >= 2 * act  # both existed at once
    assert out.requires_grad
    with torch.no_grad():
        held0, peak0, _ = cpu_allocator_bytes(lambda: torch.relu(lin(x)).sum())
    assert held0 < act // 16 and peak0 >= 2 * act
