"""Chapter 1 helpers for the profiler lens: a real small training step, where its time goes, and which ops a call runs.

* :func:`mlp_train_step` builds one training step (forward, loss, backward,
  optimiser) of a small MLP classifier, at a batch size and width you pick.
* :func:`op_floor_us` profiles a 1-element add: what an op that does almost
  no arithmetic costs *under the profiler* (which adds its own cost per op).
* :func:`step_breakdown` splits one profiled step into *fixed cost* (Python
  between ops, the autograd engine, and each op up to that floor) and *work*
  (what the ``aten::`` ops took beyond the floor: arithmetic and memory traffic
  that grow with the data). Work below half the step means overhead-bound.
* :func:`one_step`, :func:`step_table`, :func:`plot_breakdown` and :func:`plot_timelines` show it (the
  fastest step alone); :func:`gpu_busy` reads a GPU trace's kernel lane (how much of the time the GPU had work).
* :class:`one_thread` runs a block of code with torch on one thread, as ``Timer`` does.
* :func:`op_counts` lists the ops one call dispatches (the ``aten::`` names the
  profiler shows, without the profiler's cost), and :func:`host_syncs` picks
  out those that read a value back to Python: on a GPU, each one waits for
  the device.

The profiler itself is :mod:`course.profiling`.
"""
from __future__ import annotations

import statistics
from collections import Counter
from typing import Callable

import torch
import torch.utils._python_dispatch
from torch import nn

from course.profiling import Op, Trace, profile_steps

#: Names (as :func:`op_counts` reports them) of the operations that need a value on the host. On a GPU each one
#: makes Python wait until the device has computed that value: ``.item()``, ``int(t)``, ``float(t)``, ``bool(t)``
#: (``aten::_local_scalar_dense``), ops whose output size depends on the data (``nonzero``, ``masked_select``,
#: reading through a boolean mask, ``x[mask]``), writing a tensor of values through a boolean mask
#: (``x[mask] = t``, which finds the true entries first with ``nonzero``), and copies to Python or NumPy
#: (``tolist``, ``numpy``). Writing a *number* through a mask (``x[mask] = 0``) is not one of them: ATen turns it
#: into ``masked_fill_``, which reads nothing back (:func:`op_counts` lists it as
#: ``aten::index_put (boolean mask, one value: masked_fill_)``).
HOST_SYNC_OPS = ("aten::_local_scalar_dense", "aten::nonzero", "aten::masked_select", "aten::index (boolean mask)",
                 "aten::index_put (boolean mask)", "Tensor.tolist", "Tensor.numpy")


def mlp_train_step(batch: int = 16, width: int = 64, depth: int = 2, features: int = 32, classes: int = 10,
                   seed: int = 0, device: torch.device | str = "cpu") -> Callable[[], None]:
    """Return ``step()``: one SGD training step of an MLP classifier on one fixed random batch.

    The MLP has ``depth`` hidden layers of ``width`` units (``Linear`` + ``ReLU``) between ``features`` inputs and
    ``classes`` outputs. ``step()`` runs ``zero_grad``, the forward pass, cross-entropy, ``backward()`` and
    ``optimizer.step()``, and returns ``None``: it never reads the loss back to Python, so it never waits for a GPU.
    The model, the optimiser and the batch are attached as ``step.model``, ``step.optimizer`` and ``step.batch``.
    """
    g = torch.Generator().manual_seed(seed)
    layers: list[nn.Module] = []
    sizes = [features] + [width] * depth
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    layers.append(nn.Linear(sizes[-1], classes))
    torch.manual_seed(seed)
    model = nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, features, generator=g).to(device)
    y = torch.randint(0, classes, (batch,), generator=g).to(device)

    def step() -> None:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    step.model, step.optimizer, step.batch = model, opt, (x, y)
    return step


def self_times(ops: list[Op]) -> list[tuple[Op, float]]:
    """Each op with its self time in microseconds: its duration minus that of the ops directly nested in it."""
    out = []
    by_tid: dict[int, list[Op]] = {}
    for o in ops:
        by_tid.setdefault(o.tid, []).append(o)
    for lane in by_tid.values():
        lane = sorted(lane, key=lambda o: (o.start, -o.dur))
        for i, o in enumerate(lane):
            inner = 0.0
            for child in lane[i + 1:]:
                if child.start >= o.end:
                    break
                if child.depth == o.depth + 1:
                    inner += child.dur
            out.append((o, max(0.0, o.dur - inner)))
    return out


def op_floor_us(calls: int = 200) -> float:
    """Median microseconds of one 1-element ``aten::add`` under the profiler (the profiler's own cost included)."""
    a, b = torch.ones(1), torch.ones(1)

    def adds() -> None:
        for _ in range(calls):
            torch.add(a, b)
    trace = profile_steps(adds, steps=1, warmup=1, cuda=False)
    return float(statistics.median(o.dur for o in trace.named("aten::add")))


def one_step(trace: Trace, index: int | None = None) -> Trace:
    """The ops of one profiled step (default: the fastest, the least disturbed by other processes), times from 0."""
    steps = trace.steps()
    if not steps:
        raise ValueError("no 'step N' ranges in this trace: profile it with course.profiling.profile_steps")
    s = min(steps, key=lambda o: o.dur) if index is None else steps[index]
    ops = [Op(o.name, o.cat, o.start - s.start, o.dur, o.tid, o.depth) for o in trace.ops
           if o.tid == s.tid and s.start <= o.start and o.end <= s.end + 1e-3]
    return Trace(raw=trace.raw, ops=ops)


def step_breakdown(trace: Trace, floor_us: float, index: int | None = None) -> dict:
    """Split one profiled step (default: the fastest) into fixed cost and work; times in microseconds.

    Returns ``step_us`` (the step's wall time), ``ops`` (``aten::`` ops it ran), ``python_us`` (time inside the
    step but outside every op: the interpreter running your model's and the optimiser's Python), ``work_us``
    (the sum over ``aten::`` ops of their self time beyond ``floor_us``), ``fixed_us`` (everything else:
    ``step_us - work_us``), ``work_share`` (``work_us / step_us``) and ``top``: the five ``aten::`` ops with the
    most self time in the step, as ``(name, microseconds)``.
    """
    step = one_step(trace, index)
    wall = max((o.dur for o in step.ops if o.depth == 0), default=0.0)
    rows = self_times(step.ops)
    python = sum(t for o, t in rows if o.depth == 0 or o.cat == "user_annotation")
    aten = [(o, t) for o, t in rows if o.name.startswith("aten::")]
    work = sum(max(0.0, t - floor_us) for _, t in aten)
    by_name: dict[str, float] = {}
    for o, t in aten:
        by_name[o.name] = by_name.get(o.name, 0.0) + t
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:5]
    return {"step_us": wall, "ops": len(aten), "python_us": python, "work_us": work, "fixed_us": wall - work,
            "work_share": work / wall if wall else 0.0, "top": top, "self_us": by_name}


def step_table(trace: Trace, rows: int = 10, index: int | None = None) -> str:
    """A text table of one profiled step (default: the fastest), one row per ``aten::`` op name, most self time first:
    calls, self time (ms) and its share of the step's wall time.

    The profiler's own ``key_averages().table()`` sums every profiled step, including any that another program
    slowed down; this one reads a single step, the same one :func:`step_breakdown` splits.
    """
    step = one_step(trace, index)
    wall = max((o.dur for o in step.ops if o.depth == 0), default=0.0)
    calls: Counter = Counter()
    self_us: dict[str, float] = {}
    for o, t in self_times(step.ops):
        if o.name.startswith("aten::"):
            calls[o.name] += 1
            self_us[o.name] = self_us.get(o.name, 0.0) + t
    order = sorted(self_us, key=lambda n: -self_us[n])
    other = f"({len(order) - rows} other op names)"
    width = max([len("the whole step (wall time)"), len(other)] + [len(n) for n in order[:rows]])
    lines = [f"{'op':<{width}} {'calls':>6} {'self ms':>9} {'% of step':>10}"]
    for name in order[:rows]:
        share = 100 * self_us[name] / wall if wall else 0.0
        lines.append(f"{name:<{width}} {calls[name]:>6} {self_us[name] / 1e3:>9.3f} {share:>9.1f}%")
    rest = sum(self_us[n] for n in order[rows:])
    if len(order) > rows:
        lines.append(f"{other:<{width}} {sum(calls[n] for n in order[rows:]):>6} "
                     f"{rest / 1e3:>9.3f} {100 * rest / wall if wall else 0.0:>9.1f}%")
    lines.append(f"{'the whole step (wall time)':<{width}} {'':>6} {wall / 1e3:>9.3f} {100.0:>9.1f}%")
    return "\n".join(lines)


def plot_breakdown(breakdowns: dict[str, dict], title: str = "Where one training step's time goes"):
    """One horizontal bar per configuration: Python, other fixed cost and work, in % of its step; return the figure."""
    import matplotlib.pyplot as plt

    labels = list(breakdowns)
    fig, ax = plt.subplots(figsize=(9, 0.8 * len(labels) + 1.4))
    for i, name in enumerate(labels):
        b = breakdowns[name]
        parts = [("Python between ops", b["python_us"], "lightgrey"),
                 ("other fixed cost (dispatch, autograd, per-op floor)", b["fixed_us"] - b["python_us"], "tab:blue"),
                 ("work beyond the floor (grows with the data)", b["work_us"], "tab:red")]
        left = 0.0
        for label, us, color in parts:
            share = 100 * max(0.0, us) / b["step_us"]
            ax.barh(i, share, left=left, color=color, label=label if i == 0 else None, edgecolor="white")
            if share > 6:
                ax.text(left + share / 2, i, f"{share:.0f}%", ha="center", va="center", fontsize=8)
            left += share
        ax.text(101, i, f"{b['step_us'] / 1000:.2f} ms/step, {b['ops']} aten ops", va="center", fontsize=8)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlim(0, 135)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("% of the step's wall time")
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, frameon=False)
    ax.set_title(title, pad=22)
    fig.tight_layout()
    return fig


def plot_timelines(traces: dict[str, Trace], max_depth: int = 3, label_share: float = 0.12):
    """The fastest step of each trace as a Gantt chart, one panel per configuration; return the figure.

    Only ops longer than ``label_share`` of their step are labelled, so that labels do not run into each other.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(traces), 1, figsize=(10, 2.3 * len(traces) + 0.6), squeeze=False)
    for ax, (name, trace) in zip(axes[:, 0], traces.items()):
        step = one_step(trace)
        span = max((o.end for o in step.ops), default=0.0) - min((o.start for o in step.ops), default=0.0)
        step.timeline(title=name, max_depth=max_depth, ax=ax, label_us=label_share * span)
    fig.tight_layout()
    return fig


class one_thread:
    """``with one_thread(): ...`` runs torch on one thread inside the block (as ``Timer`` does) and restores the
    previous number of threads afterwards, also when the block raises.

    On a busy machine a second thread waits for a free core, and an op split over two threads then takes as
    long as the slower half: one thread keeps the measurement from depending on how many cores are free.
    """

    def __enter__(self) -> "one_thread":
        self.saved = torch.get_num_threads()
        torch.set_num_threads(1)
        return self

    def __exit__(self, *exc) -> None:
        torch.set_num_threads(self.saved)


class _Counting(torch.utils._python_dispatch.TorchDispatchMode):
    """Count every op the dispatcher runs, under the profiler's ``aten::`` names."""

    def __init__(self, counts: Counter):
        super().__init__()
        self.counts = counts

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = "aten::" + func.overloadpacket.__name__
        if name in ("aten::index", "aten::index_put", "aten::index_put_"):
            index = (args[1] if len(args) > 1 else ()) or ()
            masks = [i for i in index if isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)]
            if masks:
                name = name.rstrip("_") + " (boolean mask)"
                if name == "aten::index_put (boolean mask)" and _becomes_masked_fill(args, kwargs or {}, index, masks):
                    name = MASKED_FILL_WRITE
        self.counts[name] += 1
        return func(*args, **(kwargs or {}))


#: How :func:`op_counts` lists ``x[mask] = number``: ATen runs it as ``masked_fill_`` (no host read).
MASKED_FILL_WRITE = "aten::index_put (boolean mask, one value: masked_fill_)"


def _becomes_masked_fill(args: tuple, kwargs: dict, index, masks: list) -> bool:
    """True when ATen's ``index_put_`` takes its ``masked_fill_`` shortcut (``canDispatchToMaskedFill``): one
    value, on the CPU (a Python number always is), no accumulation, and one mask on the tensor's device as the only
    tensor index. Otherwise it finds the mask's true entries first (``nonzero``): on a GPU, a sync."""
    value = args[2] if len(args) > 2 else kwargs.get("values")
    accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    return (isinstance(value, torch.Tensor) and value.numel() == 1 and value.device.type == "cpu"
            and not accumulate and sum(i is not None for i in index) == 1 and masks[0].device == args[0].device)


def op_counts(fn: Callable, *args, **kwargs) -> Counter:
    """Call ``fn(*args, **kwargs)`` once and return a Counter of the ops it ran: ``{"aten::mul": 2, ...}``.

    The names are those of the profiler's ``aten::`` events (ops that a composite op such as ``linear`` calls are
    listed instead of it); reading through a boolean mask (``x[mask]``) is listed as ``aten::index (boolean
    mask)``; writing a tensor of values through one (``x[mask] = t``) as ``aten::index_put (boolean mask)``, and
    writing one number through one (``x[mask] = 0``, which ATen runs as ``masked_fill_``) as
    :data:`MASKED_FILL_WRITE`. ``Tensor.tolist`` and ``Tensor.numpy`` calls, which read data without an op, are
    counted too. Only the call itself is counted, not a later ``backward()``.
    """
    counts: Counter = Counter()
    names = ("tolist", "numpy")
    own = {name: torch.Tensor.__dict__[name] for name in names if name in torch.Tensor.__dict__}
    originals = {name: getattr(torch.Tensor, name) for name in names}

    def spy(name):
        real = originals[name]

        def wrapper(self, *a, **k):
            counts[f"Tensor.{name}"] += 1
            return real(self, *a, **k)
        return wrapper

    try:
        for name in originals:
            setattr(torch.Tensor, name, spy(name))
        with _Counting(counts):
            fn(*args, **kwargs)
    finally:
        for name in names:
            if name in own:
                setattr(torch.Tensor, name, own[name])
            else:
                delattr(torch.Tensor, name)      # back to the method torch.Tensor inherits from C++
    return counts


def host_syncs(counts: Counter) -> dict[str, int]:
    """The entries of an :func:`op_counts` result that read a value back to the host (see :data:`HOST_SYNC_OPS`)."""
    return {name: counts[name] for name in HOST_SYNC_OPS if counts.get(name, 0)}


def gpu_busy(trace: Trace) -> float:
    """Share of the profiled time during which a GPU kernel (or copy) ran, from the first step's start to the end of
    the last step or kernel; ``0.0`` when the trace holds no GPU events (a CPU-only run).

    Near 1: the GPU always had work queued (compute-bound on the GPU). Well below 1: it waited for the CPU to
    launch the next kernel (overhead-bound) or for a sync.
    """
    kernels = sorted((o for o in trace.ops if o.cat in ("kernel", "gpu_memcpy", "gpu_memset")), key=lambda o: o.start)
    steps = trace.steps()
    if not kernels or not steps:
        return 0.0
    start = steps[0].start
    end = max(max(o.end for o in kernels), steps[-1].end)
    busy, lo, hi = 0.0, kernels[0].start, kernels[0].end
    for o in kernels[1:]:
        if o.start > hi:
            busy += hi - lo
            lo, hi = o.start, o.end
        else:
            hi = max(hi, o.end)
    busy += hi - lo
    return busy / (end - start) if end > start else 0.0


def fastest_us(fn: Callable[[], object], calls: int = 5) -> float:
    """Microseconds of the fastest of ``calls`` calls of ``fn()``, each timed alone with ``time.perf_counter``.

    The counterpart, without the profiler, of the fastest profiled step that :func:`step_breakdown` reads: on a
    busy machine other programs only ever add time, so the fastest call is the least disturbed one.
    (Synchronise inside ``fn`` if it launches GPU work.)
    """
    import time

    best = float("inf")
    for _ in range(int(calls)):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return 1e6 * best
