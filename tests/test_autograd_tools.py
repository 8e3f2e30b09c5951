"""Unit tests for course.autograd_tools."""
import pytest
import torch

from course import autograd_tools as AT


def test_small_cnn_shapes():
    torch.manual_seed(0)
    m = AT.small_cnn(channels=4, classes=5)
    assert m(torch.randn(2, 3, 16, 16)).shape == (2, 5)
    assert m(torch.randn(1, 3, 8, 8)).shape == (1, 5)


def test_blob_masks():
    g = torch.Generator().manual_seed(1)
    logits, target = AT.blob_masks(3, 12, generator=g)
    assert logits.shape == target.shape == (3, 12, 12)
    assert logits.dtype == target.dtype == torch.float32
    assert set(target.unique().tolist()) <= {0.0, 1.0}
    for b in range(3):
        assert 0 < target[b].sum() < 144
    l2, t2 = AT.blob_masks(3, 12, generator=torch.Generator().manual_seed(1))
    assert torch.equal(logits, l2) and torch.equal(target, t2)
    l64, _ = AT.blob_masks(2, 8, dtype=torch.float64)
    assert l64.dtype == torch.float64


def test_retain_graph_trace():
    torch.manual_seed(0)
    m = AT.small_cnn(channels=4)
    x = torch.randn(2, 3, 16, 16)
    free = AT.retain_graph_trace(m, x, retain_graph=False, steps=2)
    keep = AT.retain_graph_trace(m, x, retain_graph=True, steps=2)
    assert [p for p, _ in free.trace] == ["forward 1", "backward 1", "forward 2", "backward 2"]
    f = dict(free.trace)
    k = dict(keep.trace)
    assert f["forward 1"] > 0 and f["backward 1"] == 0 and f["backward 2"] == 0
    assert k["forward 1"] == f["forward 1"]
    assert k["backward 1"] == k["forward 1"]  # retained: nothing freed
    assert k["forward 2"] == 2 * f["forward 2"]  # two graphs alive at once
    assert free.peak_bytes == f["forward 1"]
    assert keep.peak_bytes == 2 * free.peak_bytes
    assert keep.retain_graph is True and free.retain_graph is False
    assert all(p.grad is None for p in m.parameters())


def test_retain_graph_false_second_backward_fails():
    # the reason retain_graph exists: a freed graph cannot be walked twice
    m = AT.small_cnn(channels=2)
    loss = m(torch.randn(1, 3, 8, 8)).sum()
    loss.backward()
    with pytest.raises(RuntimeError):
        loss.backward()


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests the CPU error path")
def test_cuda_retain_graph_peak_needs_cuda():
    with pytest.raises(RuntimeError):
        AT.cuda_retain_graph_peak(AT.small_cnn(2), torch.randn(1, 3, 8, 8), retain_graph=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_retain_graph_peak_cuda():
    m = AT.small_cnn(4).cuda()
    x = torch.randn(4, 3, 32, 32, device="cuda")
    assert AT.cuda_retain_graph_peak(m, x, True) > AT.cuda_retain_graph_peak(m, x, False) > 0


def _terms_and_inputs():
    g = torch.Generator().manual_seed(3)
    logits, target = AT.blob_masks(2, 6, generator=g, dtype=torch.float64)
    return AT.segmentation_loss_terms(target), logits, target


def test_segmentation_loss_terms_values():
    terms, logits, target = _terms_and_inputs()
    assert list(terms) == ["bce", "dice", "area", "smooth"]
    p = torch.sigmoid(logits)
    dims = (1, 2)
    expected = {
        "bce": torch.nn.functional.binary_cross_entropy_with_logits(logits, target),
        "dice": (1 - (2 * (p * target).sum(dims) + 1) / (p.sum(dims) + target.sum(dims) + 1)).mean(),
        "area": ((p.mean(dims) - target.mean(dims)) ** 2).mean(),
        "smooth": (p[..., 1:] - p[..., :-1]).pow(2).mean(),
    }
    for name, term in terms.items():
        value = term(logits)
        assert value.dim() == 0
        assert torch.allclose(value, expected[name]), name


def test_segmentation_loss_terms_hide_one_cut():
    terms, logits, target = _terms_and_inputs()
    for name, term in terms.items():
        x = logits.clone().requires_grad_(True)
        assert torch.autograd.gradcheck(term, (x,), raise_exception=False) is (name != "dice"), name
        x = logits.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(term(x), x)
        assert g.abs().sum() > 0, name                      # the cut is partial: the gradient is not zero


def test_packed_bytes_probe_matches_saved_tensor_probe_and_frees():
    from course.memory import SavedTensorProbe

    torch.manual_seed(0)
    m = AT.small_cnn(channels=2)
    x = torch.randn(2, 3, 8, 8)
    with SavedTensorProbe() as plain:
        loss = m(x).sum()
        expected = plain.live_bytes
    del loss
    with AT.PackedBytesProbe() as probe:
        loss = m(x).sum()
        assert probe.live_bytes == expected and probe.peak_bytes == expected and probe.packed > 0
        loss.backward()
        assert probe.live_bytes == 0
    grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad(set_to_none=True)
    m(x).sum().backward()
    assert all(torch.equal(a, p.grad) for a, p in zip(grads, m.parameters()))


def test_packed_bytes_probe_counts_what_pack_returns():
    w = torch.randn(64, 64, requires_grad=True)
    x = torch.randn(32, 64)

    def pack(t):
        return (t.dtype, t.to(torch.bfloat16))

    def unpack(packed):
        dtype, t = packed
        return t.to(dtype)

    with AT.PackedBytesProbe() as full:
        y = (x @ w).tanh().sum()
        full_bytes = full.live_bytes
    del y
    with AT.PackedBytesProbe(pack, unpack) as half:
        y = (x @ w).tanh().sum()
        assert half.live_bytes * 2 == full_bytes
        y.backward()
    assert w.grad is not None and half.live_bytes == 0


def test_quiet_native_stderr_restores_descriptor():
    import os

    before = os.fstat(2)
    with AT.quiet_native_stderr():
        os.write(2, b"this goes nowhere\n")
    after = os.fstat(2)
    assert (before.st_ino, before.st_dev) == (after.st_ino, after.st_dev)
    with pytest.raises(ValueError):
        with AT.quiet_native_stderr():
            raise ValueError("propagates")
    assert os.fstat(2).st_ino == before.st_ino


def test_allocator_trace_sees_allocations_and_their_peak():
    a = torch.randn(256, 256)
    kept = []
    trace = AT.allocator_trace(lambda: kept.append(a @ a), warmup=0)
    assert trace.peak_bytes() >= 256 * 256 * 4
    assert trace.named("aten::mm")
    times, totals = trace.memory_curve()
    assert len(times) == len(totals) > 0
    net = lambda tr: sum(nbytes for _, nbytes, _ in tr.memory)      # allocated minus freed during the step
    assert net(trace) >= 256 * 256 * 4                  # the product is still referenced
    freed = AT.allocator_trace(lambda: (a @ a).sum(), warmup=0)
    assert net(freed) < 256 * 256 * 4                   # made and freed inside the step
    assert freed.peak_bytes() >= 256 * 256 * 4
    calls = []
    AT.allocator_trace(lambda: calls.append(1), warmup=2)
    assert len(calls) == 3


def test_training_loop_retain_graph_raises_the_allocator_peak():
    torch.manual_seed(0)
    m = AT.small_cnn(channels=4)
    x = torch.randn(4, 3, 16, 16)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    before = [p.detach().clone() for p in m.parameters()]
    peaks = {flag: AT.allocator_trace(AT.training_loop(m, x, opt, retain_graph=flag, steps=3)).peak_bytes()
             for flag in (False, True)}
    assert peaks[True] > peaks[False] > 0
    assert all(p.grad is None for p in m.parameters())   # zero_grad(set_to_none=True) after every step
    assert any(not torch.equal(b, p) for b, p in zip(before, m.parameters()))   # the optimiser stepped
    # the retained graph costs at most one forward's activations more than the plain loop
    from course.memory import SavedTensorProbe
    with SavedTensorProbe() as probe:
        loss = m(x).square().mean()
        activations = probe.breakdown(list(m.parameters()) + [x])["activations"]
    del loss
    assert peaks[True] - peaks[False] <= activations


def test_count_ops_counts_computed_ops_and_checkpoint_recomputation():
    import functools

    from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

    torch.manual_seed(0)
    blk = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 4))
    x = torch.randn(3, 4, requires_grad=True)
    assert AT.count_ops(lambda: x.exp().sin())["exp"] == 1
    plain = AT.count_ops(lambda: blk(x).sum().backward())
    full = AT.count_ops(lambda: checkpoint(blk, x, use_reentrant=False).sum().backward())
    policy = functools.partial(create_selective_checkpoint_contexts,
                               lambda ctx, op, *a, **k: CheckpointPolicy.MUST_SAVE if op is torch.ops.aten.addmm.default
                               else CheckpointPolicy.PREFER_RECOMPUTE)
    sac = AT.count_ops(lambda: checkpoint(blk, x, use_reentrant=False, context_fn=policy).sum().backward())
    assert plain["gelu"] == 1 and full["gelu"] == 2 and sac["gelu"] == 2      # GELU recomputed by both
    assert plain["addmm"] == 2 and full["addmm"] > 2 and sac["addmm"] == 2    # matmuls: only full recomputes
