"""Small helpers for the autograd chapter: a tiny CNN, toy segmentation masks and losses, and memory probes.

What ``retain_graph=True`` costs is the memory held by the tensors the graph
saved for backward, kept alive until the last reference to the graph (the
``loss`` variable, usually) goes away. The allocator measures it:
:func:`allocator_trace` runs a step under ``torch.profiler`` with
``profile_memory=True`` (the CPU allocator's every allocation and free), and
:func:`training_loop` is the short loop the chapter measures;
:func:`cuda_retain_graph_peak` reads ``torch.cuda.max_memory_allocated``
(CUDA only). :func:`retain_graph_trace` is the teaching view: the bytes of
saved tensors the graph refers to, from :class:`course.memory.SavedTensorProbe`.
:class:`PackedBytesProbe` measures what the graph holds when saved tensors go
through your own ``saved_tensors_hooks`` (compression, offloading).
:func:`segmentation_loss_terms` is the multi-term loss of the chapter's
medical-imaging story, with one gradient cut hidden in it (Exercise 2.3).
"""
from __future__ import annotations

import contextlib
import os
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn.functional as F
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


# --- the multi-term segmentation loss of the chapter's story -----------------------------------------

def _foreground_mass(p: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
    # Per-sample predicted foreground, kept away from zero so the Dice ratio stays finite on empty
    # predictions. The clamp is computed on a detached copy "because it is only a normaliser": this is
    # the hidden cut (the Dice term's gradient then misses the denominator's dependence on p).
    return p.detach().sum(dims).clamp_min(1e-3)


def segmentation_loss_terms(target: torch.Tensor, eps: float = 1.0) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    """Return the four terms of a segmentation loss, ``{name: term(logits) -> 0-dim tensor}``, for a fixed 0/1 ``target``.

    ``logits`` and ``target`` are ``(B, ...)``; every term averages over the batch.

    * ``"bce"``: binary cross-entropy with logits;
    * ``"dice"``: 1 - (2 |P T| + eps) / (|P| + |T| + eps) per sample, P = sigmoid(logits);
    * ``"area"``: squared difference between predicted and true foreground fraction per sample;
    * ``"smooth"``: mean squared difference of neighbouring probabilities along the last dimension.

    The values are right. One term's gradient is not (a cut hidden in a helper), which is what
    Exercise 2.3 asks you to find without reading this code.
    """
    dims = tuple(range(1, target.dim()))

    def bce(logits: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, target)

    def dice(logits: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(logits)
        inter = (p * target).sum(dims)
        ratio = (2 * inter + eps) / (_foreground_mass(p, dims) + target.sum(dims) + eps)
        return (1 - ratio).mean()

    def area(logits: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(logits)
        return ((p.mean(dims) - target.mean(dims)) ** 2).mean()

    def smooth(logits: torch.Tensor) -> torch.Tensor:
        p = torch.sigmoid(logits)
        return (p[..., 1:] - p[..., :-1]).pow(2).mean()

    return {"bce": bce, "dice": dice, "area": area, "smooth": smooth}


# --- what the graph holds when saved tensors go through your own hooks -------------------------------

def _packed_bytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        try:
            return int(obj.untyped_storage().nbytes())
        except (RuntimeError, NotImplementedError):
            return int(obj.numel() * obj.element_size())
    if isinstance(obj, (tuple, list)):
        return sum(_packed_bytes(o) for o in obj)
    return 0


class _Held:
    """What the graph stores instead of a saved tensor: the user's packed object, watched until it dies."""

    __slots__ = ("packed", "__weakref__")

    def __init__(self, packed: Any) -> None:
        self.packed = packed


@dataclass
class PackedBytesProbe:
    """Count the bytes the graph holds when every saved tensor goes through ``pack`` / ``unpack`` hooks.

    A context manager, like :class:`course.memory.SavedTensorProbe`, but the
    tensors saved for backward are first passed to your ``pack(tensor)``; the
    probe counts the bytes of the tensors inside what ``pack`` returned (a
    tensor, or a tuple/list holding tensors), for as long as the graph keeps
    it, and hands it to your ``unpack`` in backward. ``live_bytes``: held now;
    ``peak_bytes``: the maximum since the probe started; ``packed``: how many
    tensors were saved. The defaults (identity hooks) measure the plain graph.
    Storage shared with tensors that are alive anyway (a layer's weight) is
    counted too, as SavedTensorProbe does.
    """

    pack: Callable[[torch.Tensor], Any] = lambda t: t
    unpack: Callable[[Any], torch.Tensor] = lambda p: p
    live_bytes: int = 0
    peak_bytes: int = 0
    packed: int = 0
    _ctx: object = field(default=None, repr=False)

    def _free(self, nbytes: int) -> None:
        self.live_bytes -= nbytes

    def _pack(self, tensor: torch.Tensor) -> _Held:
        inner = self.pack(tensor)
        if inner is tensor:  # identity: hold a detached alias (holding the tensor itself can make a cycle)
            inner = tensor.detach()
        held = _Held(inner)
        nbytes = _packed_bytes(inner)
        self.packed += 1
        self.live_bytes += nbytes
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        weakref.finalize(held, self._free, nbytes)
        return held

    def _unpack(self, held: _Held) -> torch.Tensor:
        return self.unpack(held.packed)

    def __enter__(self) -> "PackedBytesProbe":
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)
        self._ctx = None


# --- the CPU allocator, read through torch.profiler --------------------------------------------------

@contextlib.contextmanager
def quiet_native_stderr():
    """Silence writes to file descriptor 2 inside the block (the profiler's C++ start/stop log lines).

    Python's own ``sys.stderr`` is flushed first; the descriptor is restored afterwards, even on error.
    """
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no real descriptor 2: nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def allocator_trace(step: Callable[[], Any], warmup: int = 1):
    """Run ``step()`` ``warmup`` times, then once under ``torch.profiler`` with ``profile_memory=True``.

    Returns the :class:`course.profiling.Trace`: ``.peak_bytes()`` is the highest running total of the
    allocations and frees the profiler saw during the step (bytes), ``.memory_curve()`` that total after each
    one. A block allocated before recording began is not counted when the step frees it, so the total is only
    "above what was allocated when it started" for a step that frees nothing it did not allocate (clear
    gradients at the end of a step, not at its start). The profiler's C++ log lines (and its note about blocks
    allocated before it started) are silenced.
    """
    from course.profiling import profile_steps

    with quiet_native_stderr():
        return profile_steps(step, steps=1, warmup=warmup, memory=True)


def training_loop(model: nn.Module, x: torch.Tensor, optimizer: torch.optim.Optimizer, retain_graph: bool = False,
                  steps: int = 3) -> Callable[[], None]:
    """Return a function that runs ``steps`` ordinary training steps on one batch and keeps nothing afterwards.

    Each step is ``loss = model(x).square().mean(); loss.backward(retain_graph=...); optimizer.step();
    optimizer.zero_grad()``, written the usual way: ``loss`` is rebound only when the next forward pass has
    finished, so with ``retain_graph=True`` the previous step's graph is still alive while the next one is
    being built. Measure it with :func:`allocator_trace`.
    """
    def run() -> None:
        loss = None
        for _ in range(steps):
            loss = model(x).square().mean()
            loss.backward(retain_graph=retain_graph)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        del loss

    return run


# --- which ops really ran (for recomputation under checkpointing) -----------------------------------

def count_ops(fn: Callable[[], Any]) -> dict[str, int]:
    """Run ``fn()`` and return how many times each aten op was *computed* during it (``{"addmm": 6, ...}``).

    A ``TorchDispatchMode`` counts the ops that reach the kernels, backward included. Unlike the profiler,
    which records every call, it does not count an op whose result selective activation checkpointing hands
    back from its cache during recomputation: the count is the work that was done.
    """
    from collections import Counter

    from torch.utils._python_dispatch import TorchDispatchMode

    class _Count(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.counts: Counter = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.counts[func.overloadpacket.__name__] += 1
            return func(*args, **(kwargs or {}))

    with _Count() as mode:
        fn()
    return dict(mode.counts)
