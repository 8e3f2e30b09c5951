"""Tests for course.deploy (chapter 3 helpers)."""
from __future__ import annotations

import os
import warnings

import pytest
import torch

from course import deploy

os.environ.setdefault("HF_HUB_OFFLINE", "1")


class _Branchy(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            return self.lin(x)
        return -self.lin(x)


def _scripted() -> torch.jit.ScriptModule:
    with warnings.catch_warnings():
        deploy.filter_jit_deprecation()
        return torch.jit.script(_Branchy().eval())


def test_messages_match_real_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = torch.jit.script(_Branchy().eval())
        torch.jit.freeze(s)
        deploy.jit_roundtrip(s)
    future = [w for w in caught if w.category is FutureWarning]
    assert len(future) >= 4  # script, freeze, save, load
    assert all(deploy.is_jit_deprecation(str(w.message)) for w in future)
    assert deploy.is_jit_deprecation("`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.")
    assert not deploy.is_jit_deprecation("something else is deprecated")
    assert deploy.JIT_DEPRECATION_CATEGORY is FutureWarning


def test_filter_is_narrow():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entry = deploy.filter_jit_deprecation()
        deploy.filter_jit_deprecation()  # idempotent
        assert entry[0] == "ignore" and entry[2] is FutureWarning
        assert sum(1 for f in warnings.filters if f == entry) == 1
        torch.jit.script(_Branchy())
        warnings.warn("an unrelated future change", FutureWarning)
        warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.export`.", UserWarning)
    messages = [(w.category, str(w.message)) for w in caught]
    assert (FutureWarning, "an unrelated future change") in messages
    assert any(c is UserWarning for c, _ in messages)  # other categories with the same text still show
    assert not any(c is FutureWarning and deploy.is_jit_deprecation(m) for c, m in messages)


def test_jit_roundtrip_memory_and_file(tmp_path):
    s = _scripted()
    x = torch.randn(4, 3)
    with warnings.catch_warnings():
        deploy.filter_jit_deprecation()
        loaded, size = deploy.jit_roundtrip(s)
        assert isinstance(loaded, torch.jit.ScriptModule)
        assert size > 100
        torch.testing.assert_close(loaded(x), s(x))
        torch.testing.assert_close(loaded(-x.abs() - 1), s(-x.abs() - 1))  # both branches survive
        path = tmp_path / "m.pt"
        loaded2, size2 = deploy.jit_roundtrip(s, path)
        assert path.exists() and size2 == os.path.getsize(path)
        torch.testing.assert_close(loaded2(x), s(x))


def test_export_roundtrip(tmp_path):
    model = torch.nn.Linear(3, 2).eval()
    ep = torch.export.export(model, (torch.randn(2, 3),))
    x = torch.randn(2, 3)
    loaded, size = deploy.export_roundtrip(ep)
    assert isinstance(loaded, torch.export.ExportedProgram) and size > 100
    torch.testing.assert_close(loaded.module()(x), model(x))
    loaded2, size2 = deploy.export_roundtrip(ep, tmp_path / "m.pt2")
    assert size2 == os.path.getsize(tmp_path / "m.pt2")
    torch.testing.assert_close(loaded2.module()(x), model(x))


def test_timings_ms(monkeypatch):
    calls = []
    clock = iter([0.0, 0.002, 1.0, 1.010, 2.0, 2.004])
    monkeypatch.setattr(deploy.time, "perf_counter", lambda: next(clock))
    out = deploy.timings_ms(lambda: calls.append(1), repeats=3, warmup=2)
    assert len(calls) == 5  # warm-up calls are made but not timed
    assert out == pytest.approx([2.0, 10.0, 4.0])


def test_median_ms_is_median(monkeypatch):
    clock = iter([0.0, 0.001, 1.0, 1.100, 2.0, 2.003])
    monkeypatch.setattr(deploy.time, "perf_counter", lambda: next(clock))
    assert deploy.median_ms(lambda: None, repeats=3, warmup=0) == pytest.approx(3.0)


def test_timing_real_and_validation():
    t = deploy.median_ms(lambda: sum(range(1000)), repeats=5, warmup=1)
    assert isinstance(t, float) and 0 <= t < 1000
    with pytest.raises(ValueError):
        deploy.timings_ms(lambda: None, repeats=0)


def test_run_saved_torchscript_and_export(tmp_path):
    s = _scripted()
    x = torch.randn(5, 3)
    path = tmp_path / "branchy.pt"
    with warnings.catch_warnings():
        deploy.filter_jit_deprecation()
        torch.jit.save(s, str(path))
    run = deploy.run_saved(path, x)
    assert isinstance(run, deploy.SavedRun)
    torch.testing.assert_close(run.output, s(x))
    assert run.course_imported is False
    assert "_Branchy" not in run.main_names
    assert run.torch_version == torch.__version__
    assert run.seconds > 0 and run.load_ms > 0

    model = torch.nn.Linear(3, 2).eval()
    ep = torch.export.export(model, (x,))
    p2 = tmp_path / "lin.pt2"
    torch.export.save(ep, str(p2))
    run2 = deploy.run_saved(p2, x, kind="export")
    torch.testing.assert_close(run2.output, model(x).detach())


def test_run_saved_errors(tmp_path):
    with pytest.raises(ValueError):
        deploy.run_saved(tmp_path / "x.pt", torch.zeros(1), kind="onnx")
    bad = tmp_path / "not_a_model.pt"
    bad.write_bytes(b"garbage")
    with pytest.raises(RuntimeError, match="child process failed"):
        deploy.run_saved(bad, torch.zeros(1))


def test_quiet_logs_restores_and_keeps_warnings(caplog):
    import logging
    import sys
    log = logging.getLogger("course.test_deploy")
    stderr_before = sys.stderr
    with deploy.quiet_logs() as captured:
        log.warning("hidden")
        print("partial graph", file=sys.stderr)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.warn("still shown", UserWarning)
    assert captured.getvalue() == "partial graph\n"
    assert sys.stderr is stderr_before
    assert [str(w.message) for w in caught] == ["still shown"]
    log.warning("shown")
    messages = [r.getMessage() for r in caplog.records]
    assert "hidden" not in messages and "shown" in messages
    assert logging.root.manager.disable == logging.NOTSET


def test_quiet_logs_restores_after_error():
    import logging
    with pytest.raises(ZeroDivisionError):
        with deploy.quiet_logs():
            1 / 0
    assert logging.root.manager.disable == logging.NOTSET


def test_quiet_logs_hides_failed_export_graph():
    class IfOnTensor(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x
    with deploy.quiet_logs() as captured:
        with pytest.raises(Exception):
            torch.export.export(IfOnTensor(), (torch.ones(3),))
    assert "def forward" in captured.getvalue()  # the partial graph went to the buffer, not the screen


def test_compare_ms_interleaves(monkeypatch):
    order = []
    clock = iter(float(i) / 1000 for i in range(100))
    monkeypatch.setattr(deploy.time, "perf_counter", lambda: next(clock))
    out = deploy.compare_ms({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, repeats=3, warmup=1)
    assert order == ["a", "b"] * 4  # one warm-up round, then three timed rounds, alternating
    assert set(out) == {"a", "b"}
    assert out["a"]["median"] == pytest.approx(1.0) and out["a"]["min"] == pytest.approx(1.0)
    assert out["a"]["q1"] == pytest.approx(1.0) and out["a"]["q3"] == pytest.approx(1.0)
    assert out["a"]["n"] == 3 and out["a"]["samples"] == pytest.approx([1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        deploy.compare_ms({"a": lambda: None}, repeats=0)


def test_num_threads_sets_and_restores():
    before = torch.get_num_threads()
    with deploy.num_threads(1) as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with deploy.num_threads(None) as n:
        assert n == before
    with pytest.raises(ValueError):
        with deploy.num_threads(0):
            pass
    assert torch.get_num_threads() == before


def test_deprecation_messages_per_call():
    with warnings.catch_warnings():
        deploy.filter_jit_deprecation()   # the helper records even filtered messages: it sets "always" inside
        scripted = _scripted()
    out = deploy.deprecation_messages({
        "script": lambda: torch.jit.script(_Branchy()),
        "freeze": lambda: torch.jit.freeze(scripted),
        "other": lambda: warnings.warn("not a future warning", UserWarning),
    })
    assert out["script"] == ["`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`."]
    assert out["freeze"] == ["`torch.jit.freeze` is deprecated. Please use `torch.compile` instead."]
    assert out["other"] == []


def test_error_line():
    text = "The following operation failed.\nTraceback...\n  File x\nRuntimeError: mat1 and mat2 shapes\n"
    assert deploy.error_line(text) == "RuntimeError: mat1 and mat2 shapes"
    assert deploy.error_line("first line\nsecond") == "first line"
    assert deploy.error_line("") == ""


def test_loader_input_and_parse():
    x = deploy.loader_input(2, 3)
    assert x.shape == (2, 3) and x.dtype == torch.float32
    torch.testing.assert_close(x.flatten(), torch.arange(6, dtype=torch.float32).sin())
    parsed = deploy.parse_loader_output("torchscript ok 2 2 1 2 3 4.5\naoti error bad|shape\nnoise\n")
    torch.testing.assert_close(parsed["torchscript"], torch.tensor([[1.0, 2.0], [3.0, 4.5]]))
    assert parsed["aoti"] == "bad\nshape"


def test_toolchain_and_command(monkeypatch):
    tc = deploy.libtorch_toolchain()
    assert tc.library_dir.endswith("lib") and all(os.path.isdir(d) for d in tc.include_dirs)
    assert tc.usable == (tc.missing == "")
    fake = deploy.Toolchain(compiler="/usr/bin/c++", include_dirs=["/inc"], library_dir="/lib", missing="")
    cmd = deploy.cpp_command("a.cpp", "a", fake)
    assert cmd[:3] == ["/usr/bin/c++", "-std=c++20", "-O1"] and "-I/inc" in cmd and "-ltorch" in cmd
    assert "-Wl,-rpath,/lib" in cmd
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CXX", raising=False)
    none = deploy.libtorch_toolchain()
    assert none.compiler is None and "no C++ compiler" in none.missing and not none.usable
    with pytest.raises(RuntimeError):
        deploy.cpp_command("a.cpp", "a", none)
    with pytest.raises(RuntimeError, match="cannot build"):
        deploy.build_cpp("int main() { return 0; }", "/tmp/never", none)


def test_run_program_has_an_almost_empty_environment():
    out, seconds = deploy.run_program(["/usr/bin/env"], {"FOO": "1"})
    lines = sorted(out.split())
    assert lines == ["FOO=1", "PATH=/usr/bin:/bin"] and seconds >= 0
    with pytest.raises(RuntimeError, match="failed"):
        deploy.run_program(["/bin/sh", "-c", "echo oops >&2; exit 3"])


def test_linked_libraries():
    names = deploy.linked_libraries("/bin/sh")
    assert any(n.startswith("libc.so") for n in names)


_TOOLCHAIN = deploy.libtorch_toolchain()


@pytest.mark.skipif(not _TOOLCHAIN.usable, reason=f"no LibTorch toolchain: {_TOOLCHAIN.missing}")
def test_build_failure_reports_compiler_output(tmp_path):
    with pytest.raises(RuntimeError, match="C\\+\\+ build failed"):
        deploy.build_cpp("this is not C++;", tmp_path / "bad", _TOOLCHAIN)


@pytest.mark.skipif(not _TOOLCHAIN.usable, reason=f"no LibTorch toolchain: {_TOOLCHAIN.missing}")
def test_cpp_loader_runs_torchscript_and_aoti_without_python(tmp_path):
    """The chapter's C++ program: both runtimes, no Python in the process, AOTI input checks on request."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3)).eval()
    with warnings.catch_warnings():
        deploy.filter_jit_deprecation()
        torch.jit.save(torch.jit.script(model), str(tmp_path / "m.pt"))
    ep = torch.export.export(model, (torch.randn(4, 6),),
                             dynamic_shapes={"input": {0: torch.export.Dim("b", min=1, max=64)}})
    build = deploy.start_cpp_build(deploy.CPP_LOADER_SOURCE, tmp_path / "loader", _TOOLCHAIN)
    seconds = deploy.aoti_package(ep, tmp_path / "m_aoti.pt2")
    assert seconds > 0 and (tmp_path / "m_aoti.pt2").stat().st_size > 1000
    assert build.wait() > 0
    assert not any("python" in n for n in deploy.linked_libraries(tmp_path / "loader"))
    args = [tmp_path / "loader", tmp_path / "m.pt", tmp_path / "m_aoti.pt2"]
    out, _ = deploy.run_program(args + [5, 6])
    res = deploy.parse_loader_output(out)
    want = model(deploy.loader_input(5, 6)).detach()
    torch.testing.assert_close(res["torchscript"], want)
    torch.testing.assert_close(res["aoti"], want)
    out, _ = deploy.run_program(args + [5, 7], {"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    res = deploy.parse_loader_output(out)
    assert isinstance(res["aoti"], str) and "7" in res["aoti"]
    assert "mat1 and mat2" in deploy.error_line(res["torchscript"])
    compiled = torch._inductor.aoti_load_package(str(tmp_path / "m_aoti.pt2"))
    torch.testing.assert_close(compiled(deploy.loader_input(3, 6)), model(deploy.loader_input(3, 6)).detach())


def test_spread_and_paired_ratio():
    sp = deploy.spread([4.0, 1.0, 3.0, 2.0, 5.0])
    assert sp == {"median": 3.0, "q1": 2.0, "q3": 4.0, "min": 1.0, "max": 5.0, "n": 5}
    assert deploy.spread([7.0])["q1"] == 7.0 == deploy.spread([7.0])["q3"]
    with pytest.raises(ValueError):
        deploy.spread([])
    r = deploy.paired_ratio([2.0, 4.0, 9.0], [1.0, 2.0, 3.0])
    assert r["median"] == 2.0 and r["max"] == 3.0 and r["n"] == 3
    with pytest.raises(ValueError):
        deploy.paired_ratio([1.0], [1.0, 2.0])


def test_cpp_build_clock_stops_when_the_compiler_exits(tmp_path):
    """wait() called long after the compiler exited still reports the compiler's own time."""
    import subprocess
    import time as _time

    log = tmp_path / "log"
    log.write_text("")
    proc = subprocess.Popen(["sleep", "0.2"])
    build = deploy.CppBuild(process=proc, binary=tmp_path / "x", log=log, started=_time.perf_counter())
    _time.sleep(2.5)                      # other work (an AOTInductor compile) before wait() is called
    seconds = build.wait()
    assert 0.15 < seconds < 2.0, seconds  # the watcher thread's own wake-up may lag on a loaded machine
    assert build.seconds == pytest.approx(seconds)
    failing = deploy.CppBuild(process=subprocess.Popen(["false"]), binary=tmp_path / "y", log=log,
                              started=_time.perf_counter())
    with pytest.raises(RuntimeError, match="C\\+\\+ build failed"):
        failing.wait()


def test_shared_tensors_by_reference_and_snapshot():
    import copy

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).eval()
    ep = torch.export.export(model, (torch.randn(2, 3),))
    names = deploy.shared_tensors(ep, model)
    assert {"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var"} <= set(names)
    before = ep.module()(torch.ones(2, 3))
    with torch.no_grad():
        model[0].weight.add_(1.0)              # an in-place update of the live model reaches the program
    assert not torch.equal(ep.module()(torch.ones(2, 3)), before)
    snap = torch.export.export(copy.deepcopy(model), (torch.randn(2, 3),))
    assert deploy.shared_tensors(snap, model) == []


def test_graph_census_sees_what_freezing_removes():
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU()).eval()
    with warnings.catch_warnings():
        deploy.filter_jit_deprecation()
        scripted = torch.jit.script(net)
        frozen = torch.jit.freeze(torch.jit.script(net))
    a, b = deploy.graph_census(scripted), deploy.graph_census(frozen)
    assert a["aten::batch_norm"] == 1 and b["aten::batch_norm"] == 0
    assert a["prim::GetAttr"] > 0 and b["prim::GetAttr"] == 0
    assert a["total"] > b["total"] > 0


class _SliceBuffer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("pos", torch.arange(8.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pos[: x.shape[0]]      # only 8 positions: lengths above 8 cannot work


def test_draft_failures_names_the_user_frame():
    ep = torch.export.draft_export(_SliceBuffer(), (torch.randn(4),),
                                   dynamic_shapes=({0: torch.export.Dim("n", min=2, max=64)},))
    found = deploy.draft_failures(ep)
    assert found, "draft_export should report the guard n <= 8"
    assert any(f["file"] and f["file"].endswith("test_deploy.py") and "self.pos" in (f["code"] or "") for f in found)
    assert any("8" in f["expr"] for f in found)
    clean = torch.export.draft_export(torch.nn.Linear(2, 2), (torch.randn(3, 2),))
    assert deploy.draft_failures(clean) == []
    assert deploy.draft_failures(torch.export.export(torch.nn.Linear(2, 2), (torch.randn(3, 2),))) == []


def test_graph_tensor_bytes_counts_only_what_the_graph_reads():
    m = torch.nn.Module()
    m.used = torch.nn.Parameter(torch.zeros(4, 2))              # float32: 32 bytes
    m.small = torch.zeros(3, dtype=torch.int8)                  # 3 bytes
    m.unused = torch.nn.Parameter(torch.zeros(100))             # never read by the graph
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(torch.add, (x, g.get_attr("used")))
    g.output(g.call_function(torch.add, (y, g.get_attr("small"))))
    gm = torch.fx.GraphModule(m, g)
    assert deploy.graph_tensor_bytes(gm) == {"float32": 32, "int8": 3, "total": 35}
