"""Helpers for chapter 6 (``torch.compile``): backends that show what Dynamo captured, timing, plots.

Everything here uses capture-only backends (the graph runs unchanged, as
eager PyTorch) unless a function says it uses inductor. Nothing here calls
``torch._dynamo.reset()`` behind your back, except :func:`compile_counts`,
which resets before each setting so the counts do not leak.

Exercise 6.2 uses :func:`legacy_score`, a function Dynamo cannot trace (it
runs a Python scalar function through ``np.vectorize``), and Exercise 6.5
:func:`legacy_peaks`, an untraceable function whose output *size* depends on
the data, so the student notebook and its tests use the same ones.

:func:`capture_logs` collects what ``TORCH_LOGS="graph_breaks,recompiles,..."``
would print, as strings a cell (or a test) can count and read, and
:func:`single_process_group` gives a one-rank gloo process group, enough to
see how ``torch.compile`` splits a ``DistributedDataParallel`` model's graph.
"""
from __future__ import annotations

import math
import statistics
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
import torch
import torch._dynamo

__all__ = [
    "legacy_score", "legacy_score_torch", "legacy_peaks", "graph_table", "PrintingBackend", "CompileCounter",
    "aot_printing_backend", "count_call_functions", "explain_text", "time_first_and_steady",
    "compare_eager_compiled", "capture_logs", "log_settings", "restore_log_settings", "failed_guards", "single_process_group",
    "compile_counts", "compile_counts_figure", "plot_compile_counts", "speedups_figure", "plot_speedups",
    "inductor_output_files",
]


# --- the provided untraceable functions (exercises 6.2 and 6.5) -------------

def _score_scalar(v: float) -> float:
    # A "legacy" per-element rule written for Python floats: square the
    # positives, halve the negatives. Branching on a Python float is why
    # np.vectorize is needed, and np.vectorize is what Dynamo cannot trace.
    return v * v if v > 0.0 else 0.5 * v


_vectorized_score = np.vectorize(_score_scalar, otypes=[np.float64])


def legacy_score(x: torch.Tensor) -> torch.Tensor:
    """Return ``x*x`` where ``x > 0`` and ``0.5*x`` elsewhere, computed by NumPy (untraceable).

    The result is a new, contiguous tensor with ``x``'s shape (0-d and empty
    inputs included), dtype and device, and no autograd history. It goes through ``x.numpy()`` and ``np.vectorize`` of a
    Python function, which ``torch._dynamo`` cannot trace: inside a compiled
    function it causes graph breaks (verified with ``torch._dynamo.explain``
    in ``tests/test_dynamo.py``).
    """
    a = x.detach().cpu().numpy()
    out = _vectorized_score(a).astype(a.dtype, copy=False)
    # ascontiguousarray turns a 0-d array into a 1-d one: reshape back to x's shape.
    return torch.from_numpy(np.ascontiguousarray(out).reshape(a.shape)).to(x.device)


def legacy_score_torch(x: torch.Tensor) -> torch.Tensor:
    """Return the same values as :func:`legacy_score`, written with torch ops only (traceable)."""
    return torch.where(x > 0, x * x, 0.5 * x)


def legacy_peaks(x: torch.Tensor) -> torch.Tensor:
    """Return the indices ``i`` (int64, increasing, 1-D) of the strict local maxima ``x[i-1] < x[i] > x[i+1]`` of 1-D ``x``.

    Endpoints are never peaks, so lengths 0, 1 and 2 give an empty result. The output is a new tensor on ``x``'s
    device; its *length* depends on the values (Exercise 6.5). It walks a Python list, which ``torch._dynamo``
    cannot trace (a graph break, verified in ``tests/test_dynamo.py``). Raises ``ValueError`` unless ``x`` is 1-D.
    """
    if x.dim() != 1:
        raise ValueError(f"legacy_peaks expects a 1-D signal, got shape {tuple(x.shape)}")
    v = x.detach().cpu().tolist()
    idx = [i for i in range(1, len(v) - 1) if v[i - 1] < v[i] > v[i + 1]]
    return torch.tensor(idx, dtype=torch.int64, device=x.device)


# --- looking at captured graphs ---------------------------------------------

def graph_table(gm: torch.fx.GraphModule) -> str:
    """Return the FX graph as a text table (opcode, name, target, args), like ``print_tabular``.

    ``Graph.print_tabular`` needs the ``tabulate`` package, which this course
    does not install; this does the same with plain string formatting.
    """
    rows = [("opcode", "name", "target", "args")]
    for node in gm.graph.nodes:
        target = node.target if isinstance(node.target, str) else getattr(
            node.target, "__name__", str(node.target))
        rows.append((node.op, node.name, str(target), str(node.args)[:60]))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def count_call_functions(gm: torch.fx.GraphModule) -> int:
    """Return the number of ``call_function`` nodes in ``gm`` (placeholders, outputs and methods not counted)."""
    return sum(1 for node in gm.graph.nodes if node.op == "call_function")


def _describe_input(t: Any) -> str:
    if isinstance(t, torch.Tensor):
        return f"Tensor{tuple(t.shape)} {t.dtype}"
    return repr(t)


class PrintingBackend:
    """A ``torch.compile`` backend that prints each captured FX graph and its example inputs.

    It returns ``gm.forward``, so the graph runs unchanged (eager speed). The
    captured graphs are kept in ``self.graphs`` (a list of ``GraphModule``).
    """

    def __init__(self, show: bool = True) -> None:
        self.show = show
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        self.graphs.append(gm)
        if self.show:
            print(f"--- graph {len(self.graphs)}: {count_call_functions(gm)} call_function nodes")
            print("example inputs:", [_describe_input(t) for t in example_inputs])
            print(graph_table(gm))
        return gm.forward


class CompileCounter:
    """A backend that counts how often Dynamo compiles (one call per captured graph) and runs graphs unchanged.

    ``count`` is the number of graphs compiled so far; ``graphs`` holds them.
    Pass an instance as ``torch.compile(..., backend=counter)``.
    """

    def __init__(self) -> None:
        self.count = 0
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        self.count += 1
        self.graphs.append(gm)
        return gm.forward


def aot_printing_backend(show: bool = True) -> tuple[Callable, dict[str, list[torch.fx.GraphModule]]]:
    """Return ``(backend, captured)``: an AOTAutograd backend that prints the forward and backward graphs.

    ``captured["forward"]`` and ``captured["backward"]`` collect the ATen-level
    graphs AOTAutograd produced; each is run unchanged (no codegen).
    """
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    captured: dict[str, list[torch.fx.GraphModule]] = {"forward": [], "backward": []}

    def make(kind: str) -> Callable:
        def compiler(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
            captured[kind].append(gm)
            if show:
                print(f"=== {kind} graph ({count_call_functions(gm)} ATen ops)")
                print(gm.code.strip())
            return make_boxed_func(gm.forward)
        return compiler

    return aot_autograd(fw_compiler=make("forward"), bw_compiler=make("backward")), captured


def explain_text(out: Any, max_reason_chars: int = 160) -> str:
    """Return a short text summary of an ``ExplainOutput``: graph and break counts, ops per graph, reasons."""
    lines = [f"graph_count={out.graph_count}  graph_break_count={out.graph_break_count}  "
             f"ops_per_graph={[len(ops) for ops in out.ops_per_graph]}  out_guards={len(out.out_guards)}"]
    for i, br in enumerate(out.break_reasons, 1):
        first = str(br.reason).strip().splitlines()
        text = " / ".join(s.strip() for s in first[:2])
        where = ""
        if br.user_stack:
            frame = br.user_stack[-1]
            where = f" (at {Path(frame.filename).name}:{frame.lineno}, `{(frame.line or '').strip()}`)"
        lines.append(f"  break {i}: {text[:max_reason_chars]}{where}")
    return "\n".join(lines)


# --- timing ------------------------------------------------------------------

def time_first_and_steady(fn: Callable, *args: Any, repeat: int = 20, warmup: int = 2) -> dict[str, float]:
    """Call ``fn(*args)`` once (compilation happens here), ``warmup`` more times untimed, then ``repeat`` timed times.

    Returns ``{"first_s": seconds of the first call, "steady_ms": median
    milliseconds of the timed calls, "best_ms": the fastest timed call in
    milliseconds}``. ``best_ms`` is the least disturbed by other processes on
    a shared machine. Runs under ``torch.no_grad()``; on a machine with CUDA
    it synchronizes after each call, so GPU time is counted.
    """
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    with torch.no_grad():
        t0 = time.perf_counter()
        fn(*args)
        sync()
        first = time.perf_counter() - t0
        for _ in range(max(0, warmup)):
            fn(*args)
        sync()
        times = []
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            fn(*args)
            sync()
            times.append(time.perf_counter() - t0)
    return {"first_s": first, "steady_ms": 1000.0 * statistics.median(times), "best_ms": 1000.0 * min(times)}


def compare_eager_compiled(eager_fn: Callable, compiled_fn: Callable, *args: Any, repeat: int = 20,
                           warmup: int = 2) -> dict[str, float]:
    """Time ``eager_fn(*args)`` against ``compiled_fn(*args)``, interleaving their calls.

    The first call of each is timed on its own (for ``compiled_fn`` it
    includes compilation). Then, after ``warmup`` untimed calls of each, the
    two are called alternately ``repeat`` times, so a burst of load from other
    processes hits both alike. Returns seconds for ``compile_s`` (first
    compiled call) and ``eager_first_s``, and milliseconds for
    ``eager_best_ms``, ``compiled_best_ms`` (fastest call) and
    ``eager_median_ms``, ``compiled_median_ms``; ``speedup`` is
    ``eager_best_ms / compiled_best_ms`` (above 1: compiled is faster).
    Runs under ``torch.no_grad()`` and synchronizes CUDA after each call.
    """
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)

    def timed(fn: Callable) -> float:
        t0 = time.perf_counter()
        fn(*args)
        sync()
        return time.perf_counter() - t0

    with torch.no_grad():
        eager_first = timed(eager_fn)
        compile_s = timed(compiled_fn)
        for _ in range(max(0, warmup)):
            eager_fn(*args)
            compiled_fn(*args)
        sync()
        eager_times, compiled_times = [], []
        for _ in range(max(1, repeat)):
            eager_times.append(timed(eager_fn))
            compiled_times.append(timed(compiled_fn))
    e_best, c_best = 1000.0 * min(eager_times), 1000.0 * min(compiled_times)
    return {"compile_s": compile_s, "eager_first_s": eager_first,
            "eager_best_ms": e_best, "compiled_best_ms": c_best,
            "eager_median_ms": 1000.0 * statistics.median(eager_times),
            "compiled_median_ms": 1000.0 * statistics.median(compiled_times),
            "speedup": e_best / c_best if c_best > 0 else math.nan}


# --- logs ----------------------------------------------------------------------

def _torch_log_sinks() -> list:
    """The torch loggers that stop propagation and print (each torch log record reaches exactly one)."""
    import logging

    names = ["torch"] + [n for n in logging.root.manager.loggerDict if n.startswith("torch.")]
    sinks = []
    for name in names:
        logger = logging.getLogger(name)
        if logger.handlers and not logger.propagate:
            sinks.append(logger)
    return sinks


@contextmanager
def _log_settings_applied() -> Iterator[None]:
    """Apply the current ``log_state`` without letting ``TORCH_LOGS`` in the environment replace it."""
    import torch._logging._internal as internal

    original = internal._update_log_state_from_env
    internal._update_log_state_from_env = lambda: None
    try:
        with _one_level_cache_clear():
            yield
    finally:
        internal._update_log_state_from_env = original


@contextmanager
def _one_level_cache_clear() -> Iterator[None]:
    """Inside the block, ``Logger.setLevel`` leaves the loggers' level caches for one clear at the end.

    Each ``setLevel`` empties the cache of every logger of the process, and torch's ``_init_logs`` sets the level
    of each of its loggers: some hundreds of loggers, times some hundreds, at every :func:`capture_logs`. The
    levels set are the same; what a logger answers after the block is the same."""
    import logging

    manager = logging.Logger.manager
    own = vars(manager).get("_clear_cache")        # a replacement someone else installed, kept as it was
    real = manager._clear_cache
    manager._clear_cache = lambda: None
    try:
        yield
    finally:
        if own is None:
            del manager._clear_cache
        else:
            manager._clear_cache = own
        real()


def log_settings() -> tuple[dict[str, int], frozenset[str]]:
    """Return torch's current log settings: ``({logger name: level}, {enabled artifacts})``.

    What ``torch._logging.set_logs(...)`` or ``TORCH_LOGS`` last set; :func:`capture_logs` saves this on entry
    and puts it back on exit.
    """
    import torch._logging._internal as internal

    state = internal.log_state
    return dict(state.log_qname_to_level), frozenset(state.artifact_names)


def restore_log_settings(settings: tuple[dict[str, int], frozenset[str]]) -> None:
    """Put back log settings returned by :func:`log_settings` (levels, artifacts, and the handlers they need)."""
    import torch._logging._internal as internal

    levels, artifacts = settings
    state = internal.log_state
    state.clear()
    state.log_qname_to_level.update(levels)
    state.artifact_names.update(artifacts)
    with _log_settings_applied():
        internal._init_logs()


@contextmanager
def capture_logs(*artifacts: str, echo: bool = False) -> Iterator[dict[str, list[str]]]:
    """Turn on torch log artifacts (what ``TORCH_LOGS="a,b"`` does) and collect their messages.

    ``with capture_logs("recompiles", "guards") as logs: ...`` yields a dict
    ``{artifact: [message, ...]}`` that fills while the block runs: one string
    per log record (a record can span several lines), in the order torch
    logged them. Records of other loggers (warnings, errors) and of artifacts
    that were already on and are not captured are left alone. With
    ``echo=False`` (the default) the captured records are not also printed on
    stderr. The settings in force before the block (from
    ``torch._logging.set_logs`` or ``TORCH_LOGS``) stay on inside it, and on
    exit they are restored exactly, whatever happened in the block: an
    artifact that was on stays on, one that was off is off again. Valid
    artifact names are those of ``torch._logging.set_logs`` (for example
    ``"graph_breaks"``, ``"recompiles"``, ``"guards"``, ``"output_code"``).
    """
    import logging

    import torch._logging._internal as internal

    unknown = [a for a in artifacts if not internal.log_registry.is_artifact(a)]
    if unknown:
        raise ValueError(f"unknown torch log artifact(s) {unknown}; see torch._logging.set_logs for the names")
    found: dict[str, list[str]] = {a: [] for a in artifacts}
    suffixes = {f".__{a}": a for a in artifacts}

    def artifact_of(record: logging.LogRecord) -> str | None:
        for suffix, name in suffixes.items():
            if record.name.endswith(suffix):
                return name
        return None

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            name = artifact_of(record)
            if name is not None:
                found[name].append(record.getMessage())

    class _Mute(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return artifact_of(record) is None

    before = log_settings()
    restore_log_settings((before[0], before[1] | set(artifacts)))
    collect, mute = _Collect(level=logging.DEBUG), _Mute()
    attached = []
    try:
        for logger in _torch_log_sinks():
            logger.addHandler(collect)
            muted = []
            if not echo:
                for h in logger.handlers:
                    if h is not collect:
                        h.addFilter(mute)
                        muted.append(h)
            attached.append((logger, muted))
        yield found
    finally:
        for logger, muted in attached:
            logger.removeHandler(collect)
            for h in muted:
                h.removeFilter(mute)
        restore_log_settings(before)


def failed_guards(record: str) -> list[str]:
    """Return the failed guards listed in one ``recompiles`` log record, e.g. ``["0/0: temperature == 1.0"]``.

    A record reads "Recompiling function f ... triggered by the following guard
    failure(s): - 0/0: <guard>  # <source line> ...": one ``- <frame>/<entry>:``
    line per cached entry that was tried. The source comment after the guard
    and the user stack trace lines are dropped.
    """
    import re

    found = []
    for line in record.splitlines():
        m = re.match(r"\s*-\s+(\d+/\d+:.*)$", line)
        if m:
            found.append(m.group(1).split("  #")[0].strip())
    return found


@contextmanager
def single_process_group(backend: str = "gloo") -> Iterator[bool]:
    """Run the block inside a one-rank ``torch.distributed`` process group (in-memory store, no ports).

    Yields ``True`` if this call created the group (and destroys it on exit),
    ``False`` if a group already existed (it is left as it was). One rank is
    enough to wrap a model in ``DistributedDataParallel`` and look at what
    ``torch.compile`` does with it; it is not enough to see gradients synced.
    """
    import torch.distributed as dist

    if dist.is_initialized():
        yield False
        return
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield True
    finally:
        dist.destroy_process_group()


# --- recompilation -------------------------------------------------------------

SETTINGS = ("default (automatic dynamic)", "dynamic=True", "dynamic=False", "mark_dynamic", "maybe_mark_dynamic")


def compile_counts(make_model: Callable[[], torch.nn.Module], lengths: Sequence[int],
                   features: int = 8, settings: Iterable[str] = SETTINGS) -> dict[str, list[int]]:
    """Return, per setting, the cumulative number of compiled graphs after each call.

    For each setting (see :data:`SETTINGS`) a fresh model from ``make_model()``
    is compiled with a :class:`CompileCounter` backend (after
    ``torch._dynamo.reset()``), then called on ``torch.randn(2, L, features)``
    for each ``L`` in ``lengths``. ``result[setting][i]`` is the count after
    the ``i``-th call.
    """
    result: dict[str, list[int]] = {}
    for setting in settings:
        torch._dynamo.reset()
        counter = CompileCounter()
        kwargs: dict[str, Any] = {}
        if setting == "dynamic=True":
            kwargs["dynamic"] = True
        elif setting == "dynamic=False":
            kwargs["dynamic"] = False
        elif setting not in SETTINGS:
            raise ValueError(f"unknown setting {setting!r}; pick from {SETTINGS}")
        compiled = torch.compile(make_model(), backend=counter, **kwargs)
        counts = []
        with torch.no_grad():
            for length in lengths:
                x = torch.randn(2, length, features)
                if setting == "mark_dynamic":
                    torch._dynamo.mark_dynamic(x, 1)
                elif setting == "maybe_mark_dynamic":
                    torch._dynamo.maybe_mark_dynamic(x, 1)
                compiled(x)
                counts.append(counter.count)
        result[setting] = counts
    torch._dynamo.reset()
    return result


def compile_counts_figure(counts: dict[str, list[int]], lengths: Sequence[int]):
    """Return a figure of compile count vs distinct sequence lengths seen, one line per setting (not shown).

    The figure is closed before it is returned, so a notebook draws it only if you display it (it is the
    value of a cell, or ``display(fig)``) or save it (``fig.savefig``).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    xs = list(range(1, len(lengths) + 1))
    markers = "osd^v"
    for i, (setting, ys) in enumerate(counts.items()):
        ax.plot(xs, ys, marker=markers[i % len(markers)], label=setting)
    ax.set_xlabel("distinct sequence lengths seen")
    ax.set_ylabel("graphs compiled (cumulative)")
    ax.set_title("Recompilation vs shapes")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.close(fig)
    return fig


def _show(fig) -> None:
    """Show a figure once: as a notebook output in IPython, with ``plt.show()`` elsewhere."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython ships with the course
        shell = None
    if shell is not None:
        from IPython.display import display
        display(fig)
    else:
        import matplotlib.pyplot as plt
        plt.show()


def plot_compile_counts(counts: dict[str, list[int]], lengths: Sequence[int]) -> None:
    """Draw compile count vs number of distinct sequence lengths seen, one line per setting: one figure.

    Returns ``None``, so the figure is drawn once even when the call is the last line of a cell (a returned
    figure would be drawn a second time). Use :func:`compile_counts_figure` to get the figure itself.
    """
    _show(compile_counts_figure(counts, lengths))


def speedups_figure(labels: Sequence[str], eager_ms: Sequence[float], compiled_ms: Sequence[float],
                    title: str = "inductor vs eager"):
    """Return a figure of speed-up (eager time / compiled time) per case, with a line at 1.0 (closed, not shown).

    Bars above 1 mean the compiled version was faster on this machine.
    """
    import matplotlib.pyplot as plt

    speedups = [e / c if c > 0 else math.nan for e, c in zip(eager_ms, compiled_ms)]
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(labels)), 3))
    bars = ax.bar(list(labels), speedups, color=["tab:green" if s >= 1 else "tab:red" for s in speedups])
    for bar, s in zip(bars, speedups):
        ax.annotate(f"{s:.2f}x", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_ylabel("speed-up (eager / compiled)")
    ax.set_title(title)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_speedups(labels: Sequence[str], eager_ms: Sequence[float], compiled_ms: Sequence[float],
                  title: str = "inductor vs eager") -> None:
    """Draw :func:`speedups_figure` once (returns ``None``, so a cell's last line does not draw it twice)."""
    _show(speedups_figure(labels, eager_ms, compiled_ms, title))


# --- inductor's generated code --------------------------------------------------

def inductor_output_files(since: float) -> list[Path]:
    """Return inductor's generated Python wrapper files written after ``since`` (a ``time.time()`` stamp), newest first.

    They live in inductor's cache directory (``/tmp/torchinductor_<user>``
    unless ``TORCHINDUCTOR_CACHE_DIR`` says otherwise). The modules inductor
    loaded in this process (``PyCodeCache.modules``) are included even when
    they came from the cache, so a warm cache still shows its code.
    """
    found: dict[Path, float] = {}
    try:
        from torch._inductor.codecache import PyCodeCache
        for mod in list(getattr(PyCodeCache, "modules", [])):
            path = getattr(mod, "__file__", None)
            if path and Path(path).exists():
                found[Path(path)] = Path(path).stat().st_mtime
    except Exception:  # inductor internals move between releases; the cache scan below still works
        pass
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        root = Path(cache_dir())
        if root.exists():
            for path in root.rglob("*.py"):
                mtime = path.stat().st_mtime
                if mtime >= since:
                    found[path] = mtime
    except Exception:
        pass
    return sorted(found, key=lambda p: found[p], reverse=True)
