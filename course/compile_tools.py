"""Debugging ``torch.compile`` the way practitioners do: read the structured trace, time the caches, profile.

Chapter 6's debugging workflow is *explain, then trace, then profile*:

* ``torch._dynamo.explain`` (and :func:`course.dynamo.capture_logs`) for one
  call you choose;
* the **structured trace** that ``TORCH_TRACE=<dir> python train.py`` writes for
  a whole program, read with ``tlparse`` (``pip install tlparse``, a separate
  Rust tool) or with :func:`read_trace` here, which parses the same file:
  every compiled frame with its FX graph, its guards, the graph-break reasons
  and the reasons it was recompiled;
* ``torch.profiler`` on the compiled code, where Inductor's regions and
  generated kernels appear by name (:func:`compiled_events`).

:func:`timed_compile` times one ``torch.compile`` call and says whether
Inductor's FX graph cache hit or missed, so a cell can measure a first
compile, a cache miss and a cache hit separately.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

__all__ = ["TraceEvent", "CompileRecord", "read_trace", "compile_records", "trace_table", "run_traced",
           "tlparse_path", "run_tlparse", "timed_compile", "compiled_events", "fastest_step", "compiled_color"]


# --- the structured trace (TORCH_TRACE) ---------------------------------------------------------------

# One record: a glog-style prefix, "] ", a JSON object; then, if the JSON says "has_payload", payload lines
# that each start with a tab.
_HEADER = re.compile(r"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] (\{.*\})\s*$")
_ID_KEYS = {"frame_id", "frame_compile_id", "attempt", "has_payload", "rank", "compiled_autograd_id"}


@dataclass
class TraceEvent:
    """One record of a structured trace: its kind, the compile id it belongs to, its JSON and its payload.

    ``kind`` is the record's main key (``"dynamo_output_graph"``, ``"compilation_metrics"`` ...); for an
    ``artifact`` record it is the artifact's name (``"recompile_reasons"``, ``"dynamo_graph_break_reason"``).
    ``compile_id`` is ``"frame/compile"`` as tlparse and the logs write it (``"0/1"``: frame 0, its second
    compilation), or ``None`` for records outside a compilation.
    """

    kind: str
    compile_id: str | None
    meta: dict
    payload: str | None = None


def _event(meta: dict, payload: list[str] | None) -> TraceEvent:
    keys = [k for k in meta if k not in _ID_KEYS]
    kind = keys[0] if keys else "?"
    if kind == "artifact" and isinstance(meta.get("artifact"), dict):
        kind = str(meta["artifact"].get("name", "artifact"))
    cid = None
    if "frame_id" in meta and "frame_compile_id" in meta:
        cid = f"{meta['frame_id']}/{meta['frame_compile_id']}"
    elif isinstance(meta.get(kind), dict) and isinstance(meta[kind].get("compile_id"), str):
        cid = meta[kind]["compile_id"]
    text = "\n".join(payload) if payload is not None else None
    return TraceEvent(kind=kind, compile_id=cid, meta=meta, payload=text)


def read_trace(path: str | Path) -> list[TraceEvent]:
    """Parse a structured trace: a ``.log`` file, or a ``TORCH_TRACE`` directory (all its ``*.log`` files).

    Returns the records in file order. Lines that are not part of a record are skipped.
    """
    path = Path(path)
    files = sorted(path.glob("*.log")) if path.is_dir() else [path]
    events: list[TraceEvent] = []
    for file in files:
        meta: dict | None = None
        payload: list[str] | None = None
        for line in file.read_text(errors="replace").splitlines():
            if line.startswith("\t") and meta is not None:
                if payload is None:
                    payload = []
                payload.append(line[1:])
                continue
            m = _HEADER.match(line)
            if not m:
                continue
            if meta is not None:
                events.append(_event(meta, payload))
            try:
                meta, payload = json.loads(m.group(1)), None
            except json.JSONDecodeError:
                meta, payload = None, None
        if meta is not None:
            events.append(_event(meta, payload))
    return events


@dataclass
class CompileRecord:
    """Everything the trace says about one compilation (one compile id)."""

    compile_id: str
    frame: str = ""                                   # the compiled function's name (co_name)
    graph: str | None = None                          # the FX graph Dynamo produced (readable Python), if any
    guards: str | None = None                         # the guard tree checked before reusing it
    break_reasons: list[str] = field(default_factory=list)     # one text per graph break
    recompile_reasons: list[str] = field(default_factory=list) # the failed guards that caused this compile
    metrics: dict = field(default_factory=dict)       # compilation_metrics: times, op counts, fail_type ...

    @property
    def op_count(self) -> int | None:
        """The number of ops in the captured graph, from the compilation metrics."""
        return self.metrics.get("graph_op_count")


def _reasons(payload: str | None) -> list[str]:
    if not payload:
        return []
    try:
        value = json.loads(payload)
    except json.JSONDecodeError:
        return [payload.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    return [str(value).strip()]


def _id_key(cid: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[/_]", cid))


def compile_records(events: Iterable[TraceEvent]) -> list[CompileRecord]:
    """Group the trace's records by compile id, in order: frame, graph, guards, break and recompile reasons."""
    records: dict[str, CompileRecord] = {}

    def rec(cid: str) -> CompileRecord:
        return records.setdefault(cid, CompileRecord(compile_id=cid))

    for e in events:
        if e.compile_id is None:
            continue
        if e.kind == "dynamo_output_graph":
            rec(e.compile_id).graph = e.payload
        elif e.kind == "dynamo_cpp_guards_str":
            rec(e.compile_id).guards = e.payload
        elif e.kind == "dynamo_graph_break_reason":
            rec(e.compile_id).break_reasons.append((e.payload or "").strip())
        elif e.kind == "recompile_reasons":
            rec(e.compile_id).recompile_reasons.extend(_reasons(e.payload))
        elif e.kind == "compilation_metrics":
            m = e.meta.get("compilation_metrics", {})
            r = rec(e.compile_id)
            r.metrics = m
            r.frame = str(m.get("co_name") or r.frame)
        elif e.kind == "dynamo_start":
            rec(e.compile_id)
    return sorted(records.values(), key=lambda r: _id_key(r.compile_id))


def trace_table(records: list[CompileRecord], width: int = 70) -> str:
    """A text table, one row per compile id: frame, ops in the graph, guards, breaks, and why it recompiled."""
    lines = [f"{'id':<6} {'frame':<32} {'ops':>4} {'guards':>6} {'breaks':>6}  recompiled because"]
    for r in records:
        guards = sum(1 for line in (r.guards or "").splitlines() if re.search(r"\+- [A-Z_]+:", line))
        why = "; ".join(line.split("  #")[0].strip() for line in r.recompile_reasons)[:width] or "-"
        ops = "-" if r.op_count is None else str(r.op_count)
        lines.append(f"{r.compile_id:<6} {r.frame[:32]:<32} {ops:>4} {guards:>6} {len(r.break_reasons):>6}  {why}")
    return "\n".join(lines)


def run_traced(code: str, trace_dir: str | Path, timeout: float = 300.0,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh ``python`` process with ``TORCH_TRACE=trace_dir``; return the finished process.

    This is how a real program is traced (``TORCH_TRACE=./trace python train.py``): the trace covers every
    compilation of that process. stdout and stderr are captured as text. ``env`` adds variables.
    """
    trace_dir = Path(trace_dir)
    trace_dir.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["TORCH_TRACE"] = str(trace_dir)
    full_env.pop("TORCH_LOGS", None)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def tlparse_path() -> str | None:
    """The ``tlparse`` executable (next to this Python, or on ``PATH``), or ``None`` if it is not installed."""
    beside = Path(sys.executable).parent / "tlparse"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("tlparse")


def run_tlparse(trace: str | Path, out_dir: str | Path, timeout: float = 120.0) -> Path | None:
    """Run ``tlparse`` on a trace file (or the newest ``*.log`` of a trace directory); return its ``index.html``.

    Returns ``None`` when ``tlparse`` is not installed. Raises ``RuntimeError`` with tlparse's message if it
    fails.
    """
    exe = tlparse_path()
    if exe is None:
        return None
    trace = Path(trace)
    if trace.is_dir():
        logs = sorted(trace.glob("*.log"), key=lambda p: p.stat().st_mtime)
        if not logs:
            raise RuntimeError(f"no *.log trace in {trace}")
        trace = logs[-1]
    done = subprocess.run([exe, str(trace), "-o", str(out_dir), "--overwrite", "--no-browser", "--plain-text"],
                          capture_output=True, text=True, timeout=timeout)
    index = Path(out_dir) / "index.html"
    if done.returncode != 0 or not index.is_file():
        raise RuntimeError(f"tlparse failed ({done.returncode}): {(done.stderr or done.stdout).strip()[:300]}")
    return index


# --- caches --------------------------------------------------------------------------------------------

def timed_compile(fn: Callable, *args: Any) -> dict[str, Any]:
    """Call ``fn(*args)`` once (a compiled function: its first call compiles) and time it.

    Returns ``{"seconds": wall time of the call, "fxgraph_cache_hit": int, "fxgraph_cache_miss": int}``: how
    often Inductor's FX graph cache hit or missed during that call (from ``torch._dynamo.utils.counters``,
    which are cleared first). Both are 0 for a backend that is not Inductor.
    """
    from torch._dynamo.utils import counters

    counters["inductor"].clear()
    t0 = time.perf_counter()
    fn(*args)
    seconds = time.perf_counter() - t0
    inductor = counters["inductor"]
    return {"seconds": seconds, "fxgraph_cache_hit": int(inductor.get("fxgraph_cache_hit", 0)),
            "fxgraph_cache_miss": int(inductor.get("fxgraph_cache_miss", 0))}


# --- profiling compiled code ------------------------------------------------------------------------------

def compiled_events(trace: Any) -> dict[str, list[str]]:
    """Sort the op names of a :class:`course.profiling.Trace` of compiled code into what compile added.

    Returns ``{"regions": ["Torch-Compiled Region: 0/0", ...], "graphs": ["## Call CompiledFxGraph f... ##",
    ...], "kernels": [Inductor's generated kernels: "graph_0_cpp_fused_...", "triton_..."], "aten": [ATen ops
    still called from the compiled code, e.g. "aten::mm"]}``, each name once, in order of first appearance.
    Inductor's C++ kernels appear only with ``torch._inductor.config.cpp.enable_kernel_profile = True``.
    """
    out: dict[str, list[str]] = {"regions": [], "graphs": [], "kernels": [], "aten": []}
    regions = [o for o in trace.ops if o.name.startswith("Torch-Compiled Region")]

    def inside(o) -> bool:
        return any(r.tid == o.tid and r.start <= o.start and o.end <= r.end + 1e-3 for r in regions)

    for o in sorted(trace.ops, key=lambda o: o.start):
        name = o.name
        if name.startswith("Torch-Compiled Region"):
            key = "regions"
        elif name.startswith("## Call CompiledFxGraph"):
            key = "graphs"
        elif "cpp_fused" in name or name.startswith(("triton_", "graph_")) or "cpp_kernel" in name:
            key = "kernels"
        elif name.startswith("aten::") and inside(o):
            key = "aten"
        else:
            continue
        if name not in out[key]:
            out[key].append(name)
    return out


def fastest_step(trace: Any) -> Any:
    """The part of a :class:`course.profiling.Trace` inside its fastest ``step N`` range, as a new ``Trace``.

    On a busy machine one profiled step can be stalled by other processes; its fastest step shows the structure
    without the stall. Times in the new trace start at that step. Raises ``ValueError`` if the trace has no steps.
    """
    from course.profiling import Trace

    steps = trace.steps()
    if not steps:
        raise ValueError("the trace has no 'step N' ranges (profile it with course.profiling.profile_steps)")
    best = min(steps, key=lambda o: o.dur)
    events = trace.raw.get("traceEvents", [])
    complete = [e for e in events if e.get("ph") == "X" and "dur" in e and isinstance(e.get("tid"), int)]
    t0 = min(e["ts"] for e in complete)
    lo, hi = t0 + best.start, t0 + best.end
    kept = [e for e in complete if e["ts"] >= lo - 1e-3 and e["ts"] + e["dur"] <= hi + 1e-3]
    return Trace.from_chrome({"traceEvents": kept})


def compiled_color(op: Any) -> str:
    """A timeline colour for compiled code: the step grey, Dynamo's region purple, the compiled graph blue, Inductor's
    kernels red, ATen ops orange, anything else light blue."""
    name = op.name
    if name.startswith("step "):
        return "lightgrey"
    if name.startswith("Torch-Compiled Region") or name.startswith("TorchDynamo"):
        return "tab:purple"
    if name.startswith("## Call CompiledFxGraph"):
        return "tab:blue"
    if "cpp_fused" in name or name.startswith(("triton_", "graph_")):
        return "tab:red"
    if name.startswith("aten::"):
        return "tab:orange"
    return "lightsteelblue"
