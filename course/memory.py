"""Deterministic probes of live autograd state (works on the CPU; no allocator needed).

The CUDA allocator has ``torch.cuda.max_memory_allocated``; the CPU has no
such counter. What autograd keeps alive between forward and backward is the
tensors its nodes saved for backward, so :class:`SavedTensorProbe` counts
them through ``torch.autograd.graph.saved_tensors_hooks``: how many are live
now, the peak, and their bytes. :func:`graph_size` counts the backward nodes
reachable from a tensor.

The probe is a *teaching view* of what the graph refers to, not a memory
measurement: a tensor saved by two nodes counts twice, and saved weights and
inputs count although they are in memory anyway. :meth:`SavedTensorProbe.breakdown`
separates those; the allocator's own view is ``torch.profiler`` with
``profile_memory=True`` (see :mod:`course.profiling`), or
``torch.cuda.max_memory_allocated`` (:func:`cuda_peak_bytes`).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import torch

from course.graphs import backward_graph  # one graph walker for the course: keyed on the nodes, not on id()


def tensor_bytes(t: torch.Tensor) -> int:
    """Return the bytes of ``t``'s storage (shared storage counted once per tensor)."""
    try:
        return int(t.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):  # e.g. sparse or meta tensors
        return int(t.numel() * t.element_size())


class _Handle:
    """A saved tensor's stand-in: holds the tensor and tells the probe when it dies."""

    __slots__ = ("tensor", "nbytes", "probe", "__weakref__")

    def storage_key(self) -> int:
        """An identifier of the storage this saved tensor lives in (tensors sharing storage share it)."""
        try:
            return int(self.tensor.untyped_storage().data_ptr())
        except (RuntimeError, NotImplementedError):
            return id(self)

    def __init__(self, tensor: torch.Tensor, probe: "SavedTensorProbe") -> None:
        # Keep a detached alias (same storage): holding the tensor itself would
        # make a cycle output -> grad_fn -> saved variable -> handle -> output
        # that Python's GC cannot see through, and the graph would never die.
        # Autograd restores the autograd metadata when it unpacks.
        self.tensor = tensor.detach()
        self.nbytes = tensor_bytes(tensor)
        self.probe = probe
        probe._on_pack(self)
        probe._handles.add(self)
        weakref.finalize(self, probe._on_free, self.nbytes)


@dataclass
class SavedTensorProbe:
    """Count tensors saved for backward while the ``with`` block is active.

    ``live`` / ``live_bytes``: saved tensors still referenced by some graph.
    ``peak`` / ``peak_bytes``: the maximum of those since the probe started.
    ``packed``: how many tensors were saved in total. Freed graphs (after
    ``backward()`` without ``retain_graph``, or when the last reference to
    the output is dropped) lower ``live``.

    Example::

        with SavedTensorProbe() as probe:
            loss = model(x).sum()
        print(probe.live_bytes)   # what the graph holds until backward
    """

    live: int = 0
    live_bytes: int = 0
    peak: int = 0
    peak_bytes: int = 0
    packed: int = 0
    _ctx: object = field(default=None, repr=False)
    _handles: weakref.WeakSet = field(default_factory=weakref.WeakSet, repr=False)

    def breakdown(self, resident: "list[torch.Tensor] | tuple[torch.Tensor, ...]" = ()) -> dict[str, int]:
        """Split what the live saved tensors refer to, in bytes.

        ``saved``: every save counted (``live_bytes``); ``distinct``: each storage once (a tensor saved by two
        nodes, a view and its base, count once); ``resident``: the distinct storages that belong to
        ``resident`` tensors (weights, the input batch: in memory whether or not a graph exists);
        ``activations``: ``distinct - resident``, what the graph alone keeps alive. The last is what an
        allocator sees still allocated after a forward pass.
        """
        storages: dict[int, int] = {}
        for handle in list(self._handles):
            storages[handle.storage_key()] = handle.nbytes
        keys = set()
        for t in resident:
            try:
                keys.add(int(t.untyped_storage().data_ptr()))
            except (RuntimeError, NotImplementedError):
                continue
        distinct = sum(storages.values())
        kept = sum(b for k, b in storages.items() if k in keys)
        return {"saved": self.live_bytes, "distinct": distinct, "resident": kept, "activations": distinct - kept}

    def _on_pack(self, handle: _Handle) -> None:
        self.packed += 1
        self.live += 1
        self.live_bytes += handle.nbytes
        self.peak = max(self.peak, self.live)
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)

    def _on_free(self, nbytes: int) -> None:
        self.live -= 1
        self.live_bytes -= nbytes

    def reset_peak(self) -> None:
        """Set the peaks to the current live values (to measure one phase)."""
        self.peak, self.peak_bytes = self.live, self.live_bytes

    def __enter__(self) -> "SavedTensorProbe":
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)
        self._ctx = None

    def _pack(self, tensor: torch.Tensor) -> _Handle:
        return _Handle(tensor, self)

    @staticmethod
    def _unpack(handle: _Handle) -> torch.Tensor:
        return handle.tensor


def graph_size(t: torch.Tensor | None) -> int:
    """Return the number of distinct backward nodes reachable from ``t.grad_fn`` (0 for a leaf or ``None``)."""
    return len(backward_graph(getattr(t, "grad_fn", None))[0])


def cuda_peak_bytes(fn, device: torch.device | str = "cuda") -> int:
    """Run ``fn()`` and return ``torch.cuda.max_memory_allocated`` during it, in bytes (CUDA only)."""
    if not torch.cuda.is_available():
        raise RuntimeError("cuda_peak_bytes needs a CUDA device; on the CPU use SavedTensorProbe")
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    base = torch.cuda.memory_allocated(device)
    fn()
    torch.cuda.synchronize(device)
    return int(torch.cuda.max_memory_allocated(device) - base)


def training_state_bytes(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None) -> dict[str, int]:
    """Bytes of what a training run keeps between steps: ``parameters``, ``gradients`` (those that exist now) and
    ``optimizer state`` (every tensor in ``optimizer.state``: AdamW's two moments and its step counters).

    Each storage counts once (tied weights, a gradient that shares its storage).
    """
    def total(tensors) -> int:
        seen: dict[int, int] = {}
        for t in tensors:
            try:
                seen[int(t.untyped_storage().data_ptr())] = tensor_bytes(t)
            except (RuntimeError, NotImplementedError):
                seen[id(t)] = tensor_bytes(t)
        return sum(seen.values())

    params = list(model.parameters())
    state = [] if optimizer is None else [v for s in optimizer.state.values() for v in s.values()
                                           if isinstance(v, torch.Tensor)]
    return {"parameters": total(params), "gradients": total(p.grad for p in params if p.grad is not None),
            "optimizer state": total(state)}


def cpu_allocator_bytes(fn) -> tuple[int, int, object]:
    """Run ``fn()`` under ``torch.profiler`` with ``profile_memory=True``; return ``(held, peak, result)`` in bytes.

    Read from the profiler's allocation events (one per allocation and free, with its size) on the CPU:
    ``held`` is what is still allocated when ``fn`` returns, over what was allocated when it began (what
    ``result`` keeps alive: after a forward pass, the activations its graph saved); ``peak`` is the highest
    running total during ``fn``, over the same start. This is the CPU allocator's own view, not an estimate;
    on a GPU, :func:`cuda_peak_bytes` is the device's.
    """
    from course.profiling import profile_steps

    box: list = []
    trace = profile_steps(lambda: box.append(fn()), steps=1, warmup=0, memory=True, cuda=False)
    running, peak = 0, 0
    for _, nbytes, _ in trace.memory:
        running += nbytes
        peak = max(peak, running)
    return running, peak, box[0]

