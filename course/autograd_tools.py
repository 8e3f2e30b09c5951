"""Small helpers for the autograd chapter: a tiny CNN, toy segmentation masks, and the cost of ``retain_graph=True``.

What ``retain_graph=True`` costs is the memory held by the tensors the graph
saved for backward, kept alive until the last reference to the graph (the
``loss`` variable, usually) goes away. :func:`retain_graph_trace` measures
exactly that on any device with :class:`course.memory.SavedTensorProbe`
(bytes of saved tensors); :func:`cuda_retain_graph_peak` measures the
allocator's peak with ``torch.cuda.max_memory_allocated`` (CUDA only).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from course.memory import SavedTensorProbe, cuda_peak_bytes


def small_cnn(channels: int = 8, classes: int = 10) -> nn.Module:
    """Return a 3-conv CNN for 3-channel images (any size >= 8x8) that outputs ``(B, classes)`` logits."""
    c = channels
    return nn.Sequential(
        nn.Conv2d(3, c, 3, padding=1), nn.ReLU(),
        nn.Conv2d(c, 2 * c, 3, padding=1, stride=2), nn.ReLU(),
        nn.Conv2d(2 * c, 2 * c, 3, padding=1, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * c, classes),
    )


def blob_masks(batch: int, size: int, generator: torch.Generator | None = None,
               dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(logits, target)``, both ``(batch, size, size)``: random logits and 0/1 disc-shaped target masks.

    Every mask has at least one foreground and one background pixel (a disc of
    radius between 0.15 and 0.35 of ``size`` around a random centre).
    """
    g = generator
    ys, xs = torch.meshgrid(torch.arange(size, dtype=dtype), torch.arange(size, dtype=dtype), indexing="ij")
    centre = torch.rand(batch, 2, generator=g, dtype=dtype) * (0.5 * size) + 0.25 * size
    radius = (torch.rand(batch, generator=g, dtype=dtype) * 0.2 + 0.15) * size
    d2 = (ys[None] - centre[:, 0, None, None]) ** 2 + (xs[None] - centre[:, 1, None, None]) ** 2
    target = (d2 <= radius[:, None, None] ** 2).to(dtype)
    target[:, size // 2 - 1: size // 2 + 1, size // 2 - 1: size // 2 + 1] = 1.0  # a foreground pixel for sure
    target[:, 0, 0] = 0.0  # a background pixel for sure
    logits = torch.randn(batch, size, size, generator=g, dtype=dtype)
    return logits, target


@dataclass
class RetainGraphTrace:
    """Saved-tensor bytes during a short training loop.

    ``trace``: ``(phase, live_bytes)`` at the end of each forward (before the
    previous step's ``loss`` is dropped) and after each backward, in bytes of
    tensors saved for backward that are still alive.
    ``peak_bytes``: the largest live value seen at any moment (bytes).
    """

    retain_graph: bool
    trace: list[tuple[str, int]]
    peak_bytes: int


def retain_graph_trace(model: nn.Module, x: torch.Tensor, retain_graph: bool, steps: int = 2) -> RetainGraphTrace:
    """Run ``steps`` iterations of ``loss = model(x).square().mean(); loss.backward(retain_graph=...)`` and trace saved-tensor bytes.

    The loop is written the usual way (``loss`` is reassigned each step), so
    with ``retain_graph=True`` the previous step's graph stays alive while the
    next forward runs: that is where the extra memory comes from.
    """
    trace: list[tuple[str, int]] = []
    with SavedTensorProbe() as probe:
        loss = None
        for step in range(1, steps + 1):
            new_loss = model(x).square().mean()
            # measured before `loss` is rebound, i.e. while the previous graph is still referenced
            trace.append((f"forward {step}", probe.live_bytes))
            loss = new_loss
            del new_loss
            loss.backward(retain_graph=retain_graph)
            trace.append((f"backward {step}", probe.live_bytes))
            model.zero_grad(set_to_none=True)
        peak = probe.peak_bytes
        del loss
    return RetainGraphTrace(retain_graph=retain_graph, trace=trace, peak_bytes=peak)


def cuda_retain_graph_peak(model: nn.Module, x: torch.Tensor, retain_graph: bool, steps: int = 2) -> int:
    """Return the CUDA allocator's peak during the same loop as :func:`retain_graph_trace`, in bytes above what was allocated before (CUDA only; raises RuntimeError on the CPU)."""
    def loop() -> None:
        loss = None
        for _ in range(steps):
            loss = model(x).square().mean()
            loss.backward(retain_graph=retain_graph)
            model.zero_grad(set_to_none=True)
        del loss

    return cuda_peak_bytes(loop, device=x.device)
