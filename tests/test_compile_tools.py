"""Tests for course/compile_tools.py: the structured-trace reader, tlparse, the cache timer, profile sorting."""
from __future__ import annotations

import json
import os

import pytest
import torch
import torch._dynamo

from course import compile_tools as ct

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _record(meta: dict, payload: str | None = None, when: str = "V1203 15:51:05.651000 31589 torch/x.py:1]") -> str:
    line = f"{when} {json.dumps(meta)}"
    if payload is not None:
        line += "".join(f"\n\t{p}" for p in payload.split("\n"))
    return line


SYNTHETIC = "\n".join([
    _record({"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}),
    _record({"dynamo_output_graph": {"sizes": {}}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0,
             "has_payload": "x"}, "class GraphModule(torch.nn.Module):\n    def forward(self, L_x_):\n        return (L_x_,)"),
    _record({"dynamo_cpp_guards_str": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "y"},
            "TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- TENSOR_MATCH: check_tensor(L['x'])\n| +- EQUALS_MATCH: L['s'] == 2.0"),
    _record({"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}, "frame_id": 0,
             "frame_compile_id": 0, "attempt": 0, "has_payload": "z"}, "Graph break in user code\n  Explanation: print"),
    _record({"compilation_metrics": {"compile_id": "0/0", "co_name": "f", "graph_op_count": 2}, "frame_id": 0,
             "frame_compile_id": 0, "attempt": 1}),
    "some unrelated line that is not a record",
    _record({"artifact": {"name": "recompile_reasons", "encoding": "json"}, "frame_id": 0, "frame_compile_id": 1,
             "attempt": 0, "has_payload": "w"}, '[\n"0/0: L[\'s\'] == 2.0  # y = x * s"\n]'),
    _record({"compilation_metrics": {"compile_id": "0/1", "co_name": "f", "graph_op_count": 3}, "frame_id": 0,
             "frame_compile_id": 1, "attempt": 0}),
    _record({"str": ["/tmp/x.py", 1]}),
])


def test_read_trace_parses_records_and_payloads(tmp_path):
    (tmp_path / "dedicated_log_torch_trace_x.log").write_text(SYNTHETIC + "\n")
    events = ct.read_trace(tmp_path)
    kinds = [e.kind for e in events]
    assert kinds == ["dynamo_start", "dynamo_output_graph", "dynamo_cpp_guards_str", "dynamo_graph_break_reason",
                     "compilation_metrics", "recompile_reasons", "compilation_metrics", "str"]
    assert events[1].compile_id == "0/0" and "def forward" in events[1].payload
    assert events[-1].compile_id is None and events[-1].payload is None
    assert ct.read_trace(tmp_path / "dedicated_log_torch_trace_x.log")[0].kind == "dynamo_start"


def test_compile_records_and_table(tmp_path):
    path = tmp_path / "t.log"
    path.write_text(SYNTHETIC)
    records = ct.compile_records(ct.read_trace(path))
    assert [r.compile_id for r in records] == ["0/0", "0/1"]
    first, second = records
    assert first.frame == "f" and first.op_count == 2 and "def forward" in first.graph
    assert first.break_reasons == ["Graph break in user code\n  Explanation: print"]
    assert "EQUALS_MATCH" in first.guards and first.recompile_reasons == []
    assert second.recompile_reasons == ["0/0: L['s'] == 2.0  # y = x * s"] and second.graph is None
    table = ct.trace_table(records).splitlines()
    assert table[0].split()[:2] == ["id", "frame"]
    assert table[1].split()[:5] == ["0/0", "f", "2", "2", "1"]           # 2 ops, 2 guards, 1 break
    assert table[2].split()[:5] == ["0/1", "f", "3", "0", "0"] and "L['s'] == 2.0" in table[2]


PROGRAM = """
import torch

def scaled(x, scale):
    y = torch.sin(x) * scale
    print("break")
    return y.cos() + 1

f = torch.compile(scaled, backend="eager")
f(torch.randn(4), 2.0)
f(torch.randn(4), 3.0)
"""


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory):
    trace_dir = tmp_path_factory.mktemp("trace")
    done = ct.run_traced(PROGRAM, trace_dir)
    assert done.returncode == 0, done.stderr[-2000:]
    return trace_dir


def test_run_traced_writes_a_trace_that_read_trace_understands(real_trace):
    records = ct.compile_records(ct.read_trace(real_trace))
    ids = [r.compile_id for r in records]
    assert ids[:2] == ["0/0", "0/1"] and any(i.startswith("1/") for i in ids)
    first = records[0]
    assert first.frame == "scaled" and "torch.sin" in first.graph and "L['scale'] == 2.0" in first.guards
    assert any("print" in reason for reason in first.break_reasons)
    assert any("scale == 2.0" in why for why in records[1].recompile_reasons)


def test_run_tlparse(real_trace, tmp_path, monkeypatch):
    if ct.tlparse_path() is not None:
        index = ct.run_tlparse(real_trace, tmp_path / "out")
        assert index.name == "index.html" and index.is_file()
        assert any(p.name.startswith("dynamo_output_graph") for p in index.parent.rglob("*"))
        with pytest.raises(RuntimeError):
            ct.run_tlparse(tmp_path / "empty_dir_without_logs", tmp_path / "out2")
    monkeypatch.setattr(ct, "tlparse_path", lambda: None)
    assert ct.run_tlparse(real_trace, tmp_path / "out3") is None


def test_timed_compile_reads_the_cache_counters():
    from torch._dynamo.utils import counters

    counters["inductor"]["fxgraph_cache_miss"] += 5          # left over from earlier compiles: cleared first

    def pretend_hit(x):
        counters["inductor"]["fxgraph_cache_hit"] += 1
        return x + 1

    r = ct.timed_compile(pretend_hit, torch.ones(2))
    assert r["fxgraph_cache_hit"] == 1 and r["fxgraph_cache_miss"] == 0 and r["seconds"] >= 0
    torch._dynamo.reset()
    r = ct.timed_compile(torch.compile(lambda t: t * 2, backend="eager"), torch.ones(2))
    assert (r["fxgraph_cache_hit"], r["fxgraph_cache_miss"]) == (0, 0)


def test_compiled_events_sorts_a_profile():
    from course.profiling import Trace

    def ev(name, ts, dur, cat="cpu_op"):
        return {"ph": "X", "name": name, "ts": ts, "dur": dur, "tid": 1, "cat": cat}

    raw = {"traceEvents": [
        ev("step 0", 0, 100, "user_annotation"),
        ev("aten::addmm", 1, 5),                                    # outside the compiled region
        ev("Torch-Compiled Region: 0/0", 10, 80, "user_annotation"),
        ev("## Call CompiledFxGraph abc ##", 12, 70, "user_annotation"),
        ev("aten::mm", 13, 20),
        ev("graph_0_cpp_fused_relu_0", 40, 10),
        ev("aten::mm", 55, 10),
    ]}
    out = ct.compiled_events(Trace.from_chrome(raw))
    assert out == {"regions": ["Torch-Compiled Region: 0/0"], "graphs": ["## Call CompiledFxGraph abc ##"],
                   "kernels": ["graph_0_cpp_fused_relu_0"], "aten": ["aten::mm"]}


def test_fastest_step_and_colours():
    from course.profiling import Trace

    def ev(name, ts, dur, cat="cpu_op"):
        return {"ph": "X", "name": name, "ts": ts, "dur": dur, "tid": 1, "cat": cat}

    raw = {"traceEvents": [
        ev("step 0", 0, 500, "user_annotation"), ev("aten::mm", 10, 400),
        ev("step 1", 600, 50, "user_annotation"), ev("Torch-Compiled Region: 0/0", 605, 40, "user_annotation"),
        ev("graph_0_cpp_fused_relu_0", 610, 10),
    ]}
    one = ct.fastest_step(Trace.from_chrome(raw))
    assert [o.name for o in sorted(one.ops, key=lambda o: o.start)] == ["step 1", "Torch-Compiled Region: 0/0",
                                                                        "graph_0_cpp_fused_relu_0"]
    assert min(o.start for o in one.ops) == 0
    colours = {o.name: ct.compiled_color(o) for o in one.ops}
    assert colours == {"step 1": "lightgrey", "Torch-Compiled Region: 0/0": "tab:purple",
                       "graph_0_cpp_fused_relu_0": "tab:red"}
    with pytest.raises(ValueError):
        ct.fastest_step(Trace.from_chrome({"traceEvents": [ev("aten::mm", 0, 5)]}))
