"""Leaky training loops for the chapter 5 demos, and a probe of the autograd graph they keep alive.

:class:`course.memory.SavedTensorProbe` counts tensors saved for backward.
That sees a leak in *evaluation* without ``no_grad`` (no backward ever frees
the activations), but not ``total_loss += loss`` in a *training* loop:
``backward()`` frees the saved tensors of each step, and what the leak keeps
is the chain of graph nodes. :class:`GraphProbe` sees that: it records (by
weak reference) every tensor with autograd history created inside its
``with`` block, and :meth:`GraphProbe.sample` counts the distinct graph
nodes still reachable from those that are alive.
"""
from __future__ import annotations

import time
import weakref
from typing import Any, Iterable

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from course.memory import SavedTensorProbe, graph_size

__all__ = ["GraphProbe", "reachable_nodes", "TinyRNN", "TinyLSTM", "make_batches", "leaky_train_epoch",
           "leaky_evaluate", "leaky_tbptt_train", "run_probed", "tbptt_growth", "tbptt_stepper",
           "SavedTensorProbe", "graph_size"]


def reachable_nodes(tensors: Iterable[Any]) -> int:
    """Return the number of distinct backward nodes reachable from the ``grad_fn`` of ``tensors``.

    Unlike summing :func:`course.memory.graph_size`, shared parts of graphs
    are counted once. The node objects are held during the walk, so their
    ``id`` values cannot be reused.
    """
    seen: dict[int, Any] = {}
    stack = []
    for t in tensors:
        fn = getattr(t, "grad_fn", None)
        if fn is not None:
            stack.append(fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return len(seen)


class _TrackMode(TorchFunctionMode):
    def __init__(self, probe: "GraphProbe") -> None:
        super().__init__()
        self.probe = probe

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.probe._record(out)
        return out


class GraphProbe:
    """Track the autograd graph kept alive by tensors created inside the ``with`` block.

    ``samples``: node counts from each :meth:`sample` call (e.g. one per
    optimizer step with :meth:`attach`); ``peak``: their maximum. ``final``
    (set on exit): nodes still reachable from live tensors created inside
    the block (e.g. held by a returned list).

    Example::

        with GraphProbe() as probe:
            probe.attach(optimizer)          # sample after every optimizer.step()
            losses = train_epoch(model, loader, optimizer)
        probe.samples   # [nodes alive after step 1, after step 2, ...]
    """

    def __init__(self) -> None:
        self._refs: list[weakref.ref] = []
        self.samples: list[int] = []
        self.final: int = 0
        self._mode: _TrackMode | None = None
        self._hooks: list[Any] = []

    def _record(self, out: Any) -> None:
        if type(out) in (tuple, list):
            for o in out:
                self._record(o)
        elif isinstance(out, torch.Tensor) and out.grad_fn is not None:
            self._refs.append(weakref.ref(out))

    def live_tensors(self) -> list[torch.Tensor]:
        """Return the tracked tensors that are still alive (and drop the dead references)."""
        alive, refs = [], []
        for r in self._refs:
            t = r()
            if t is not None:
                alive.append(t)
                refs.append(r)
        self._refs = refs
        return alive

    def sample(self) -> int:
        """Record and return the number of graph nodes reachable from live tracked tensors."""
        # Walking the graph inside the mode would route every attribute access through it:
        # step out of the mode for the walk (private API, hence the fallback).
        pop = getattr(torch.overrides, "_pop_mode_temporarily", None)
        if self._mode is not None and pop is not None:
            with pop():
                n = reachable_nodes(self.live_tensors())
        else:
            n = reachable_nodes(self.live_tensors())
        self.samples.append(n)
        return n

    @property
    def peak(self) -> int:
        """The largest sample so far (0 before any sample)."""
        return max(self.samples, default=0)

    def attach(self, optimizer: torch.optim.Optimizer) -> None:
        """Call :meth:`sample` after every ``optimizer.step()`` while the block is active."""
        def hook(opt: Any, args: Any, kwargs: Any) -> None:
            self.sample()

        self._hooks.append(optimizer.register_step_post_hook(hook))

    def attach_model(self, model: nn.Module) -> None:
        """Call :meth:`sample` before every forward of ``model`` while the block is active."""
        def hook(module: nn.Module, inputs: Any) -> None:  # must return None: a value would replace the input
            self.sample()

        self._hooks.append(model.register_forward_pre_hook(hook))

    def __enter__(self) -> "GraphProbe":
        self._mode = _TrackMode(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._mode.__exit__(*exc)
        self._mode = None
        self.final = reachable_nodes(self.live_tensors())


class TinyRNN(nn.Module):
    """An Elman RNN cell with a linear read-out: ``forward(x_t, h) -> (y_t, h_next)``.

    ``x_t``: (batch, n_in); ``h``: (batch, n_hidden); ``y_t``: (batch, n_in),
    a prediction of the next input.
    """

    def __init__(self, n_in: int = 4, n_hidden: int = 16) -> None:
        super().__init__()
        self.n_hidden = n_hidden
        self.cell = nn.RNNCell(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, n_in)

    def init_hidden(self, batch: int, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Return a zero hidden state of shape (batch, n_hidden) (no autograd history)."""
        return torch.zeros(batch, self.n_hidden, dtype=dtype or self.out.weight.dtype)

    def init_state(self, batch: int, dtype: torch.dtype | None = None) -> torch.Tensor:
        """The zero state, under the name every model of this module shares (here a single tensor)."""
        return self.init_hidden(batch, dtype)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.cell(x, h)
        return self.out(h), h


class TinyLSTM(nn.Module):
    """An LSTM cell with a linear read-out: ``forward(x_t, (h, c)) -> (y_t, (h_next, c_next))``.

    The state is a *tuple* of two tensors, each (batch, n_hidden);
    ``y_t`` is (batch, n_in), a prediction of the next input.
    """

    def __init__(self, n_in: int = 4, n_hidden: int = 16) -> None:
        super().__init__()
        self.n_hidden = n_hidden
        self.cell = nn.LSTMCell(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, n_in)

    def init_state(self, batch: int, dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the zero state ``(h, c)``, each of shape (batch, n_hidden) (no autograd history)."""
        dtype = dtype or self.out.weight.dtype
        return (torch.zeros(batch, self.n_hidden, dtype=dtype), torch.zeros(batch, self.n_hidden, dtype=dtype))

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
                ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        h, c = self.cell(x, state)
        return self.out(h), (h, c)


def make_batches(n_batches: int, batch_size: int = 8, n_in: int = 6, n_classes: int = 3,
                 seed: int = 0, dtype: torch.dtype = torch.float32) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Return ``n_batches`` random classification batches ``(x, y)``: x (batch_size, n_in), y int64 labels."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch_size, n_in, generator=g, dtype=dtype),
             torch.randint(0, n_classes, (batch_size,), generator=g)) for _ in range(n_batches)]


def leaky_train_epoch(model: nn.Module, loader, optimizer: torch.optim.Optimizer) -> list:
    """One epoch of cross-entropy training, written with both classic leaks.

    Returns the per-batch losses as *tensors* (each holding its graph), and
    keeps ``running = running + loss``, which chains every step's graph.
    """
    losses = []
    running = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running = running + loss      # leak: e.g. for a progress bar; chains every step's graph
        losses.append(loss)           # leak: every loss keeps its graph alive
    return losses


def leaky_evaluate(model: nn.Module, loader) -> torch.Tensor:
    """Mean per-sample cross-entropy over ``loader``, leaky: no ``no_grad``, and the batches' loss tensors kept.

    Returns a 0-d tensor built from every batch's summed loss: it holds the
    graph (and the saved activations) of every batch.
    """
    batch_sums, seen = [], 0
    for inputs, targets in loader:
        batch_sums.append(F.cross_entropy(model(inputs), targets, reduction="sum"))  # leak: keeps the batch's graph
        seen += len(targets)
    return torch.stack(batch_sums).sum() / seen


def time_chunks(sequence: torch.Tensor, chunk_len: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Split ``sequence`` (T + 1, batch, n_in) into truncated-BPTT chunks along time.

    Returns a list of ``(inputs, targets)`` pairs, views of ``sequence``: the inputs are steps ``0 .. T-1``,
    the targets the same steps shifted by one, both split into pieces of ``chunk_len`` steps (the last one
    may be shorter).
    """
    return list(zip(sequence[:-1].split(chunk_len), sequence[1:].split(chunk_len)))


def run_chunk(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor,
              h: Any) -> tuple[torch.Tensor, Any]:
    """Run ``model`` step by step over one chunk from state ``h``; return ``(loss, last state)``.

    The loss is the MSE between the stacked outputs and ``targets`` (the mean over the chunk's steps of
    each step's MSE, since every step has the same shape); its graph reaches back through ``h``.
    """
    outputs = []
    for x in inputs:
        out, h = model(x, h)
        outputs.append(out)
    return F.mse_loss(torch.stack(outputs), targets), h


def leaky_tbptt_train(model: TinyRNN, sequence: torch.Tensor, chunk_len: int,
                      optimizer: torch.optim.Optimizer) -> list[float]:
    """Truncated BPTT that forgets to detach the hidden state: fails on the second chunk.

    ``sequence``: (T + 1, batch, n_in); raises the RuntimeError "Trying to
    backward through the graph a second time" (or an in-place modification
    error) when the second chunk's backward reaches into the first chunk.
    """
    h = model.init_hidden(sequence.shape[1], sequence.dtype)
    history = []
    for inputs, targets in time_chunks(sequence, chunk_len):
        optimizer.zero_grad()
        chunk_loss, h = run_chunk(model, inputs, targets, h)    # h still points into this chunk's graph
        chunk_loss.backward()
        optimizer.step()
        history.append(chunk_loss.item())
    return history


def tbptt_growth(model: TinyRNN, sequence: torch.Tensor, chunk_len: int,
                 detach: bool) -> list[dict[str, float]]:
    """Accumulate gradients chunk by chunk (no optimizer step), with or without detaching ``h``.

    Without detaching, each chunk's backward has to run through every
    earlier chunk (``retain_graph=True`` is needed to do it at all), so the
    graph and the backward time grow. Returns one dict per chunk:
    ``nodes`` (graph nodes reachable from the chunk loss) and
    ``backward_ms`` (backward wall time in milliseconds).
    """
    h = model.init_hidden(sequence.shape[1], sequence.dtype)
    rows = []
    model.zero_grad(set_to_none=True)
    for inputs, targets in time_chunks(sequence, chunk_len):
        chunk_loss, h = run_chunk(model, inputs, targets, h.detach() if detach else h)
        nodes = graph_size(chunk_loss)
        t0 = time.perf_counter()
        chunk_loss.backward(retain_graph=not detach)
        rows.append({"nodes": float(nodes), "backward_ms": 1000 * (time.perf_counter() - t0)})
    model.zero_grad(set_to_none=True)
    return rows


def tbptt_stepper(model: TinyRNN, sequence: torch.Tensor, chunk_len: int, detach: bool):
    """Return a function that trains on the next chunk of ``sequence`` each time it is called (for profiling).

    Like :func:`tbptt_growth`, one chunk per call, gradients accumulated (no optimizer): with
    ``detach=False`` the hidden state keeps the earlier chunks' graph and ``backward(retain_graph=True)``
    runs through all of it; with ``detach=True`` each chunk's graph starts fresh. After the last chunk it
    starts the sequence again. The function returns the chunk's loss as a float.
    """
    chunks = time_chunks(sequence, chunk_len)
    carry = {"h": model.init_hidden(sequence.shape[1], sequence.dtype), "next": 0}

    def step() -> float:
        if carry["next"] == len(chunks):
            carry["h"], carry["next"] = model.init_hidden(sequence.shape[1], sequence.dtype), 0
        inputs, targets = chunks[carry["next"]]
        chunk_loss, carry["h"] = run_chunk(model, inputs, targets,
                                           carry["h"].detach() if detach else carry["h"])
        chunk_loss.backward(retain_graph=not detach)
        carry["next"] += 1
        return float(chunk_loss.detach())

    return step


def run_probed(fn, *args: Any, optimizer: torch.optim.Optimizer | None = None,
               model: nn.Module | None = None) -> dict[str, Any]:
    """Run ``fn(*args)`` under a :class:`GraphProbe` and a ``SavedTensorProbe``; return what they saw.

    Samples the graph after each ``optimizer.step()`` (if ``optimizer``) or
    before each forward of ``model`` (if ``model``). Returns a dict:
    ``result`` (what ``fn`` returned), ``nodes`` (list of samples, graph
    nodes), ``final_nodes`` (nodes still reachable after ``fn`` returned,
    e.g. from its result), ``saved_peak`` / ``saved_peak_bytes`` (peak live
    saved tensors, count and bytes) and ``saved_packed`` (tensors saved in
    total).
    """
    saved_bytes: list[int] = []
    with SavedTensorProbe() as saved, GraphProbe() as graph:
        if optimizer is not None:
            graph.attach(optimizer)
        if model is not None:
            graph.attach_model(model)
            def record(module: nn.Module, inputs: Any) -> None:
                saved_bytes.append(saved.live_bytes)

            pre_hook = model.register_forward_pre_hook(record)
        try:
            result = fn(*args)
        finally:
            if model is not None:
                pre_hook.remove()
    return {"result": result, "nodes": list(graph.samples), "final_nodes": graph.final,
            "saved_peak": saved.peak, "saved_peak_bytes": saved.peak_bytes,
            "saved_packed": saved.packed, "saved_bytes_per_forward": saved_bytes}
