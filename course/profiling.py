"""``torch.profiler`` as the chapters use it: profile a few steps, read the trace, draw it, export it.

The profiler is the tool practitioners reach for first. These helpers keep the
notebook cells short and the trace honest:

* :func:`profile_steps` runs a step function a few times under
  ``torch.profiler.profile`` (after warm-up calls outside it), one
  ``record_function("step N")`` range per call, and returns a :class:`Trace`.
* :class:`Trace` holds the events exactly as the profiler exported them (the
  Chrome/Perfetto trace format): ops with their start, duration, thread and
  nesting depth, and, with ``memory=True``, every allocation and free the
  CPU (or CUDA) allocator reported, with the running total it had allocated.
* :meth:`Trace.timeline` draws the ops as a Gantt chart (one lane per nesting
  depth, per thread), :meth:`Trace.memory_curve` the allocator's total over
  time, :meth:`Trace.export` writes the trace for ``chrome://tracing`` or
  https://ui.perfetto.dev, and :meth:`Trace.table` is the profiler's own
  ``key_averages()`` table.

Kineto (the profiler's C++ backend) writes a few lines to the process's
stderr when it starts and stops; those are silenced, nothing else is.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@contextlib.contextmanager
def _quiet_stderr():
    """Silence file descriptor 2 (Kineto's start/stop lines) for the duration of the block."""
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 (unusual embeddings): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


@dataclass
class Op:
    """One complete event of the trace (an op, an annotation, a kernel). Times in microseconds."""

    name: str
    cat: str
    start: float
    dur: float
    tid: int
    depth: int = 0

    @property
    def end(self) -> float:
        return self.start + self.dur


@dataclass
class Trace:
    """A finished profile: the raw Chrome-trace events plus parsed ops and allocator samples."""

    raw: dict
    ops: list[Op] = field(default_factory=list)
    memory: list[tuple[float, int, int]] = field(default_factory=list)  # (time us, bytes this event, total allocated)
    profiler: object | None = None

    # --- reading ---------------------------------------------------------------------------------
    @classmethod
    def from_chrome(cls, raw: dict, profiler=None) -> "Trace":
        """Parse a Chrome trace (what ``export_chrome_trace`` writes); times relative to its first event."""
        events = raw.get("traceEvents", [])
        # Complete events of real threads (the profiler's own "PyTorch Profiler" span has a text tid).
        complete = [e for e in events if e.get("ph") == "X" and "dur" in e and isinstance(e.get("tid"), int)]
        mem = [e for e in events if e.get("name") == "[memory]"]
        t0 = min([e["ts"] for e in complete + mem], default=0.0)
        ops = [Op(e.get("name", "?"), e.get("cat", ""), e["ts"] - t0, float(e["dur"]), int(e.get("tid", 0)))
               for e in complete]
        ops.sort(key=lambda o: (o.tid, o.start, -o.dur))
        # Nesting depth per thread: an op inside a still-open op is one level deeper.
        stacks: dict[int, list[Op]] = {}
        for o in ops:
            stack = stacks.setdefault(o.tid, [])
            while stack and stack[-1].end <= o.start:
                stack.pop()
            o.depth = len(stack)
            stack.append(o)
        memory = sorted((e["ts"] - t0, int(e["args"].get("Bytes", 0)), int(e["args"].get("Total Allocated", 0)))
                        for e in mem if isinstance(e.get("args"), dict))
        return cls(raw=raw, ops=ops, memory=memory, profiler=profiler)

    def steps(self) -> list[Op]:
        """The ``step N`` ranges that :func:`profile_steps` recorded, in order."""
        return sorted((o for o in self.ops if o.name.startswith("step ") and o.cat == "user_annotation"),
                      key=lambda o: o.start)

    def named(self, prefix: str) -> list[Op]:
        """Every op whose name starts with ``prefix`` (``"aten::"``, ``"autograd::engine"``, ``"cudaStream"`` …)."""
        return [o for o in self.ops if o.name.startswith(prefix)]

    def self_time(self, depth: int | None = None) -> dict[str, float]:
        """Microseconds per op name spent in the op itself, not in ops nested inside it (``depth``: only that level)."""
        out: dict[str, float] = {}
        by_tid: dict[int, list[Op]] = {}
        for o in self.ops:
            by_tid.setdefault(o.tid, []).append(o)
        for ops in by_tid.values():
            for i, o in enumerate(ops):
                inner = 0.0
                for child in ops[i + 1:]:
                    if child.start >= o.end:
                        break
                    if child.depth == o.depth + 1:
                        inner += child.dur
                if depth is None or o.depth == depth:
                    out[o.name] = out.get(o.name, 0.0) + max(0.0, o.dur - inner)
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def memory_curve(self) -> tuple[list[float], list[int]]:
        """(times in us, bytes the allocator had allocated after each event), from the profiler's memory events."""
        return [t for t, _, _ in self.memory], [total for _, _, total in self.memory]

    def peak_bytes(self, baseline: int | None = None) -> int:
        """The allocator's highest total during the profile, minus ``baseline`` (default: its total before the first
        event). Needs ``memory=True``."""
        if not self.memory:
            return 0
        if baseline is None:
            t, nbytes, total = self.memory[0]
            baseline = total - nbytes
        return max(total for _, _, total in self.memory) - baseline

    def table(self, sort_by: str = "self_cpu_time_total", rows: int = 12) -> str:
        """The profiler's own ``key_averages()`` table (needs the live profiler object)."""
        if self.profiler is None:
            raise ValueError("this trace was read from a file; the table needs the profiler object")
        return self.profiler.key_averages().table(sort_by=sort_by, row_limit=rows)

    # --- writing and drawing ---------------------------------------------------------------------
    def export(self, path: str | Path) -> Path:
        """Write the trace as Chrome-trace JSON (open it in https://ui.perfetto.dev or chrome://tracing)."""
        path = Path(path)
        path.write_text(json.dumps(self.raw))
        return path

    def timeline(self, title: str = "", max_depth: int = 3, ax=None, min_us: float = 0.0,
                 color: Callable[[Op], str] | None = None, label_us: float | None = None):
        """Draw the ops as a Gantt chart: x is time (ms), one lane per thread and nesting depth; return the figure.

        Ops shorter than ``min_us`` are left out; ops longer than ``label_us`` (default: 6 % of the span) are
        labelled with their name.
        """
        import matplotlib.pyplot as plt

        ops = [o for o in self.ops if o.depth <= max_depth and o.dur >= min_us]
        if not ops:
            raise ValueError("no ops to draw")
        color = color or default_color
        tids = sorted({o.tid for o in ops})
        lanes = {(tid, d): i for i, (tid, d) in enumerate((t, d) for t in tids for d in range(max_depth + 1))}
        span = max(o.end for o in ops) - min(o.start for o in ops)
        label_us = span * 0.06 if label_us is None else label_us
        if ax is None:
            fig, ax = plt.subplots(figsize=(10, 0.45 * len(lanes) + 1.2))
        else:
            fig = ax.figure
        for o in ops:
            lane = lanes[(o.tid, o.depth)]
            ax.barh(lane, o.dur / 1000, left=o.start / 1000, height=0.8, color=color(o), edgecolor="white",
                    linewidth=0.3)
            if o.dur >= label_us:
                ax.text((o.start + o.dur / 2) / 1000, lane, o.name.replace("aten::", "")[:28], ha="center",
                        va="center", fontsize=7, clip_on=True)
        ax.set_yticks(list(lanes.values()),
                      [f"thread {tid % 10000}, depth {d}" if len(tids) > 1 else f"depth {d}" for tid, d in lanes])
        ax.invert_yaxis()
        ax.set_xlabel("time since the first event (ms)")
        if title:
            ax.set_title(title)
        fig.tight_layout()
        return fig


def default_color(op: Op) -> str:
    """Colour by kind: step/user ranges grey, autograd (backward) orange, optimizer green, kernels red, ops blue."""
    name = op.name
    if op.cat in ("kernel", "gpu_memcpy", "gpu_memset"):
        return "tab:red"
    if name.startswith("step ") or op.cat == "user_annotation" and not name.startswith("Optimizer"):
        return "lightgrey"
    if name.startswith("Optimizer"):
        return "tab:green"
    if "Backward" in name or name.startswith("autograd::"):
        return "tab:orange"
    if name.startswith(("cuda", "cudaStream")):
        return "tab:purple"
    return "tab:blue"


def profile_steps(step: Callable[[], object], steps: int = 3, warmup: int = 1, memory: bool = False,
                  shapes: bool = False, stack: bool = False, cuda: bool | None = None,
                  settle: Callable[[], object] | None = None) -> Trace:
    """Call ``step()`` ``warmup`` times, then ``steps`` times under the profiler; return the :class:`Trace`.

    ``memory=True`` records every allocation (``profile_memory``); ``shapes`` and ``stack`` add input shapes
    and Python stacks to the events. ``cuda`` (default: whether CUDA is available) also records GPU kernels
    and synchronisations. ``settle`` is called once after the last step has returned, still under the
    profiler but outside every ``step N`` range, before the profiler stops: the distributed workers pass
    :func:`course.ddp.settle_collectives`, so no background thread is still recording an event while the
    profiler collects them (not called if a step raised). What ``settle`` did is cut from the raw Chrome
    events (its range, every event that began in it, and the profiler's "Record Window End" marker), so a
    rank's trace, which travels as those events, ends with its last step. The live profiler object behind
    :meth:`Trace.table` still counts the settle range.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(warmup):
        step()
    if cuda is None:
        cuda = torch.cuda.is_available()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    prof = profile(activities=activities, profile_memory=memory, record_shapes=shapes, with_stack=stack)
    with _quiet_stderr():
        prof.start()
    try:
        for i in range(steps):
            with record_function(f"step {i}"):
                step()
            if cuda:
                torch.cuda.synchronize()
        if settle is not None:
            with record_function(SETTLE_RANGE):
                settle()
    finally:
        with _quiet_stderr():
            prof.stop()
    with tempfile.TemporaryDirectory(prefix="trace-") as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        raw = json.loads(path.read_text())
    return Trace.from_chrome(_before_settle(raw), profiler=prof)


#: The range around ``settle`` in :func:`profile_steps`; it and every event that starts inside it are cut.
SETTLE_RANGE = "course: settle"


def _before_settle(raw: dict) -> dict:
    """The trace without the settle range and what began in it, on any thread (the steps are all before it)."""
    events = raw.get("traceEvents", [])
    cut = min((e["ts"] for e in events if e.get("name") == SETTLE_RANGE and "ts" in e), default=None)
    if cut is None:
        return raw
    return dict(raw, traceEvents=[e for e in events if not (isinstance(e.get("ts"), (int, float)) and e["ts"] >= cut)])


def load(path: str | Path) -> Trace:
    """Read a Chrome-trace JSON file written by :meth:`Trace.export` or ``export_chrome_trace``."""
    return Trace.from_chrome(json.loads(Path(path).read_text()))
