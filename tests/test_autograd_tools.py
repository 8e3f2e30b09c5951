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
