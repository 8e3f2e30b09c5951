"""Reading a training step's profiler trace for Chapters 5 and 5b: phases, loader waits, collectives, graph size.

:mod:`course.profiling` (shared) records a few steps with ``torch.profiler``
and parses the Chrome trace into :class:`course.profiling.Op` events. This
module knows what the events of a *training step* are called on this stack
(torch 2.14, CPU, gloo), so that a notebook cell can ask where a step's time
went:

* ``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`` (or
  ``_MultiProcessingDataLoaderIter``): the loop waiting for its next batch;
* ``DistributedDataParallel.forward`` or a ``record_function("forward")``
  range: the forward pass (a plain ``nn.Module`` records no range of its own);
* ``autograd::engine::evaluate_function: ...``: one event per backward node
  that ran, or a ``record_function("backward")`` range around
  ``loss.backward()``;
* ``c10d::allreduce_``, ``c10d::broadcast_``, ``c10d::allgather_``,
  ``c10d::barrier`` ...: a collective issued by this thread (the data moves on
  gloo's own threads, as ``gloo:all_reduce`` and friends);
* ``Optimizer.step#SGD.step`` and ``Optimizer.zero_grad#SGD.zero_grad``.

Everything here works on :class:`course.profiling.Trace` objects and returns
plain numbers (milliseconds) and dicts, so a cell can print them and a plot
can draw them.
"""
from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from typing import Iterable, Iterator

from course.profiling import Op, Trace

__all__ = ["quiet_stderr", "PHASES", "PHASE_COLORS", "phase_of", "main_thread", "step_phases", "loader_waits",
           "collectives", "comm_in_flight", "backward_nodes", "step_peak_bytes", "step_held_bytes", "phase_color",
           "phase_bars", "phase_table", "phase_legend"]

#: The phases of a training step, in the order they are drawn; ``"other"`` is what none of them covers.
PHASES = ("data", "forward", "backward", "communication", "optimizer")
#: When two phases overlap on one thread, the time goes to the first of these (a collective issued inside
#: the forward is communication, not forward; a loader wait inside a user "forward" range is data).
_PRIORITY = ("communication", "data", "optimizer", "backward", "forward")
PHASE_COLORS = {"data": "tab:red", "forward": "tab:blue", "backward": "tab:orange",
                "communication": "tab:purple", "optimizer": "tab:green", "other": "lightgrey"}


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2 inside the block: the C++ warnings torch writes there while profiling.

    With ``profile_memory=True`` the allocator warns once per block it frees that was allocated before the
    profiler started ("Memory block of unknown size ..."), and gloo logs its own errors there; in a notebook
    those lines land in the cell's output. Python exceptions are not affected (they are raised, not printed).
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable fd 2: nothing to silence
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


def phase_of(op: Op) -> str | None:
    """The training-step phase an event belongs to (one of :data:`PHASES`), or ``None`` for anything else."""
    name = op.name
    if name.startswith("enumerate(DataLoader)#") or name == "data":
        return "data"
    if name.startswith(("c10d::", "gloo:", "nccl:")):
        return "communication"
    if name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")) or name == "optimizer":
        return "optimizer"
    if name.startswith("autograd::engine::evaluate_function") or name == "backward":
        return "backward"
    if name == "forward" or name == "DistributedDataParallel.forward":
        return "forward"
    return None


def main_thread(trace: Trace) -> int:
    """The thread id of the ``step N`` ranges (the training loop's thread)."""
    steps = trace.steps()
    if not steps:
        raise ValueError("the trace has no 'step N' ranges: record it with course.profiling.profile_steps")
    return steps[0].tid


def _union_ms(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _subtract(intervals: list[tuple[float, float]], taken: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for a, b in intervals:
        pieces = [(a, b)]
        for c, d in taken:
            nxt = []
            for x, y in pieces:
                if d <= x or c >= y:
                    nxt.append((x, y))
                    continue
                if c > x:
                    nxt.append((x, c))
                if d < y:
                    nxt.append((d, y))
            pieces = nxt
        out.extend(pieces)
    return out


def _in_step(ops: Iterable[Op], step: Op, tid: int) -> list[Op]:
    return [o for o in ops if o.tid == tid and o.start >= step.start and o.end <= step.end and o is not step]


def step_phases(trace: Trace) -> list[dict[str, float]]:
    """Split each ``step N`` range of the loop's thread into phases; return one dict per step, in milliseconds.

    Keys: ``"step"`` (its index), ``"total"`` (the step's duration), one key per phase of :data:`PHASES`
    (time of that thread covered by the phase's events, overlaps resolved as :data:`_PRIORITY` says, so the
    phases never count the same microsecond twice) and ``"other"`` (the rest: Python between the events,
    the loss, ...). The phases plus ``"other"`` add up to ``"total"``.
    """
    tid = main_thread(trace)
    rows = []
    for i, step in enumerate(trace.steps()):
        inside = _in_step(trace.ops, step, tid)
        taken: list[tuple[float, float]] = []
        row: dict[str, float] = {"step": i, "total": step.dur / 1000}
        for phase in _PRIORITY:
            spans = _union_ms([(o.start, o.end) for o in inside if phase_of(o) == phase])
            mine = _subtract(spans, taken)
            row[phase] = sum(b - a for a, b in mine) / 1000
            taken = _union_ms(taken + mine)
        row["other"] = max(0.0, row["total"] - sum(row[p] for p in PHASES))
        rows.append({k: row[k] for k in ("step", "total", *PHASES, "other")})
    return rows


def loader_waits(trace: Trace) -> list[list[float]]:
    """For each step, the durations (ms) of the loop's ``DataLoader.__next__`` calls: one per batch fetched."""
    tid = main_thread(trace)
    return [[o.dur / 1000 for o in _in_step(trace.ops, step, tid) if o.name.startswith("enumerate(DataLoader)#")]
            for step in trace.steps()]


def collectives(trace: Trace) -> list[dict[str, Counter]]:
    """For each step, the collectives the loop's thread issued, counted by name and by the phase around them.

    Returns one dict per step: ``{"forward": Counter({"broadcast": 1}), "backward": Counter({"allreduce": 2}),
    "outside": Counter(...)}`` ("outside": issued neither inside a forward nor inside a backward range, e.g. by
    your own logging code). Names drop the ``c10d::`` prefix and trailing underscore (``allreduce``,
    ``broadcast``, ``allgather``, ``barrier``, ``scatter``, ``reduce_scatter_tensor`` ...). A collective issued
    inside another collective (a differentiable all-gather's backward) is counted once, at the outer level.
    """
    tid = main_thread(trace)
    out = []
    for step in trace.steps():
        inside = _in_step(trace.ops, step, tid)
        colls = [o for o in inside if o.name.startswith("c10d::")]
        fwd = [o for o in inside if phase_of(o) == "forward"]
        bwd = [o for o in inside if phase_of(o) == "backward"]
        row: dict[str, Counter] = {"forward": Counter(), "backward": Counter(), "outside": Counter()}
        for c in colls:
            if any(o.start <= c.start and c.end <= o.end for o in colls if o is not c and o.dur > c.dur):
                continue  # nested inside an outer collective
            name = c.name[len("c10d::"):].rstrip("_")
            where = ("forward" if any(o.start <= c.start and c.end <= o.end for o in fwd) else
                     "backward" if any(o.start <= c.start and c.end <= o.end for o in bwd) else "outside")
            row[where][name] += 1
        out.append(row)
    return out


def comm_in_flight(trace: Trace) -> list[float]:
    """For each step, milliseconds during which some gloo/nccl thread was moving data (overlaps merged).

    That time runs *beside* the loop's thread (DDP overlaps its all-reduce with the rest of the backward), so
    it is not part of :func:`step_phases`' sum.
    """
    out = []
    for step in trace.steps():
        spans = _union_ms([(max(o.start, step.start), min(o.end, step.end)) for o in trace.ops
                           if o.name.startswith(("gloo:", "nccl:")) and o.end > step.start and o.start < step.end])
        out.append(sum(b - a for a, b in spans) / 1000)
    return out


def backward_nodes(trace: Trace) -> list[int]:
    """For each step, how many backward nodes ran (``autograd::engine::evaluate_function`` events)."""
    tid = main_thread(trace)
    return [sum(1 for o in _in_step(trace.ops, step, tid)
                if o.name.startswith("autograd::engine::evaluate_function"))
            for step in trace.steps()]


def step_peak_bytes(trace: Trace) -> list[int]:
    """For each step, the allocator's highest total during the step minus its total when the step began.

    Needs a trace recorded with ``memory=True`` (``profile_memory``); 0 for a step without memory events.
    """
    out = []
    for step in trace.steps():
        before = [total for t, _, total in trace.memory if t < step.start]
        base = before[-1] if before else (trace.memory[0][2] - trace.memory[0][1] if trace.memory else 0)
        during = [total for t, _, total in trace.memory if step.start <= t <= step.end]
        out.append(max(during, default=base) - base)
    return out


def step_held_bytes(trace: Trace) -> list[int]:
    """For each step, the bytes the allocator still held when the step ended, over what it held when the first
    step began: what each step left behind (a retained graph, a list of tensors). Needs ``memory=True``."""
    steps = trace.steps()
    if not steps or not trace.memory:
        return [0] * len(steps)
    before = [total for t, _, total in trace.memory if t < steps[0].start]
    base = before[-1] if before else trace.memory[0][2] - trace.memory[0][1]
    out = []
    for step in steps:
        upto = [total for t, _, total in trace.memory if t <= step.end]
        out.append((upto[-1] if upto else base) - base)
    return out


def phase_color(op: Op) -> str:
    """A timeline colour by phase (:data:`PHASE_COLORS`); step ranges and unclassified ops light grey/blue."""
    phase = phase_of(op)
    if phase is not None:
        return PHASE_COLORS[phase]
    if op.name.startswith("step "):
        return "whitesmoke"
    return "lightsteelblue"


def phase_legend(ax, loc: str = "upper right") -> None:
    """Add a legend of the phase colours (:data:`PHASE_COLORS`) to a timeline's axes."""
    from matplotlib.patches import Patch

    handles = [Patch(color=PHASE_COLORS[p], label=p) for p in (*PHASES, "other")]
    handles[-1] = Patch(color="lightsteelblue", label="other ops")
    ax.legend(handles=handles, fontsize=7, ncol=6, loc=loc, framealpha=0.9)


def phase_bars(rows: list[dict[str, float]], title: str = "", ax=None, label: str = "step"):
    """Draw :func:`step_phases` rows as horizontal stacked bars (one per step, ms); return the figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.3))
    else:
        fig = ax.figure
    for i, row in enumerate(rows):
        left = 0.0
        for phase in (*PHASES, "other"):
            width = row[phase]
            ax.barh(i, width, left=left, color=PHASE_COLORS[phase], edgecolor="white", linewidth=0.5,
                    label=phase if i == 0 else None)
            left += width
    ax.set_yticks(range(len(rows)), [f"{label} {row.get('step', i)}" for i, row in enumerate(rows)])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds")
    ax.legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(rows) < 4 else -0.15),
              frameon=False)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def phase_table(rows: list[dict[str, float]], label: str = "step") -> str:
    """:func:`step_phases` rows as a text table (ms), with each phase's share of the total in the last line."""
    cols = ("total", *PHASES, "other")
    lines = [f"{label:>8}" + "".join(f"{c:>14}" for c in cols)]
    for row in rows:
        lines.append(f"{row.get('step', ''):>8}" + "".join(f"{row[c]:>14.2f}" for c in cols))
    total = sum(r["total"] for r in rows) or 1.0
    lines.append(f"{'share':>8}" + f"{'':>14}" + "".join(f"{100 * sum(r[c] for r in rows) / total:>13.0f}%"
                                                       for c in cols[1:]))
    return "\n".join(lines)
