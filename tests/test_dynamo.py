"""Tests for course/dynamo.py (capture-only backends; no inductor, so they stay fast)."""
from __future__ import annotations

import os
import time

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch
import torch._dynamo

from course import dynamo as cd


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_legacy_score_values_shape_dtype(dtype):
    torch.manual_seed(0)
    x = torch.randn(3, 5, dtype=dtype)
    out = cd.legacy_score(x)
    assert out.dtype is dtype and out.shape == x.shape
    expected = torch.where(x > 0, x * x, 0.5 * x)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(cd.legacy_score_torch(x), expected)
    assert out.grad_fn is None
    assert out.data_ptr() != x.data_ptr()


@pytest.mark.parametrize("shape", [(), (0, 3), (1,)])
def test_legacy_score_keeps_odd_shapes(shape):
    x = torch.full(shape, -1.5)
    out = cd.legacy_score(x)
    assert out.shape == x.shape
    torch.testing.assert_close(out, torch.full(shape, -0.75))


def test_legacy_score_returns_contiguous_for_transposed_input():
    x = torch.randn(3, 4).t()
    out = cd.legacy_score(x)
    assert out.is_contiguous() and out.shape == (4, 3)
    torch.testing.assert_close(out, torch.where(x > 0, x * x, 0.5 * x))


def test_legacy_score_breaks_the_graph_and_torch_version_does_not():
    x = torch.randn(4, 3)
    broken = torch._dynamo.explain(lambda t: cd.legacy_score(t * 2) + 1)(x)
    assert broken.graph_break_count >= 1
    assert any("vectorize" in str(r.reason) for r in broken.break_reasons)
    clean = torch._dynamo.explain(lambda t: cd.legacy_score_torch(t * 2) + 1)(x)
    assert clean.graph_count == 1 and clean.graph_break_count == 0


def test_legacy_score_fullgraph_raises():
    compiled = torch.compile(lambda t: cd.legacy_score(t) + 1, backend="eager", fullgraph=True)
    with pytest.raises(Exception):
        compiled(torch.randn(3))


def _two_graphs(x):
    y = torch.sin(x) + 1
    print("break here")
    return torch.cos(y) * 2


def test_graph_table_lists_every_node():
    backend = cd.PrintingBackend(show=False)
    torch.compile(lambda t: torch.relu(t) + 1, backend=backend)(torch.randn(3))
    assert len(backend.graphs) == 1
    text = cd.graph_table(backend.graphs[0])
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["opcode", "name"]
    assert len(lines) == 2 + len(list(backend.graphs[0].graph.nodes))
    assert "placeholder" in text and "call_function" in text and "output" in text and "relu" in text


def test_printing_backend_prints_and_runs_unchanged(capsys):
    backend = cd.PrintingBackend()
    x = torch.randn(5)
    out = torch.compile(_two_graphs, backend=backend)(x)
    torch.testing.assert_close(out, torch.cos(torch.sin(x) + 1) * 2)
    printed = capsys.readouterr().out
    assert len(backend.graphs) == 2
    assert "--- graph 1" in printed and "--- graph 2" in printed and "Tensor(5,)" in printed


def test_count_call_functions_matches_explain():
    x = torch.randn(5)
    out = torch._dynamo.explain(_two_graphs)(x)
    counter = cd.CompileCounter()
    torch._dynamo.reset()
    torch.compile(_two_graphs, backend=counter)(x)
    assert [cd.count_call_functions(g) for g in counter.graphs] == [len(o) for o in out.ops_per_graph]
    assert counter.count == out.graph_count == 2


def test_compile_counter_counts_recompiles():
    counter = cd.CompileCounter()
    f = torch.compile(lambda t: t * 2, backend=counter, dynamic=False)
    f(torch.randn(3))
    f(torch.randn(3))
    assert counter.count == 1
    f(torch.randn(4))
    assert counter.count == 2


def test_aot_printing_backend_captures_forward_and_backward(capsys):
    backend, captured = cd.aot_printing_backend()
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    loss = torch.compile(lambda t: (t.sin() * 2).sum(), backend=backend)(x)
    loss.backward()
    torch.testing.assert_close(x.grad, 2 * torch.cos(x.detach()))
    assert len(captured["forward"]) == 1 and len(captured["backward"]) == 1
    printed = capsys.readouterr().out
    assert "=== forward graph" in printed and "=== backward graph" in printed and "aten.cos" in printed


def test_explain_text_summarises():
    out = torch._dynamo.explain(_two_graphs)(torch.randn(3))
    text = cd.explain_text(out)
    assert text.startswith("graph_count=2  graph_break_count=1")
    assert "break 1:" in text and "print" in text


def test_time_first_and_steady_units():
    calls = []

    def slow_first(t):
        if not calls:
            time.sleep(0.05)
        calls.append(1)
        return t + 1

    r = cd.time_first_and_steady(slow_first, torch.ones(2), repeat=3, warmup=2)
    assert set(r) == {"first_s", "steady_ms", "best_ms"}
    assert r["first_s"] >= 0.05 and 0 <= r["best_ms"] <= r["steady_ms"] < 50
    assert len(calls) == 6


def test_compare_eager_compiled_interleaves_and_reports_units():
    order = []

    def slow(t):
        order.append("e")
        time.sleep(0.004)
        return t + 1

    def fast(t):
        order.append("c")
        if order.count("c") == 1:
            time.sleep(0.03)   # the "compile"
        return t + 1

    r = cd.compare_eager_compiled(slow, fast, torch.ones(2), repeat=3, warmup=1)
    assert set(r) == {"compile_s", "eager_first_s", "eager_best_ms", "compiled_best_ms",
                      "eager_median_ms", "compiled_median_ms", "speedup"}
    assert r["compile_s"] >= 0.03
    assert r["eager_best_ms"] >= 4.0 and r["compiled_best_ms"] < r["eager_best_ms"]
    assert r["speedup"] == pytest.approx(r["eager_best_ms"] / r["compiled_best_ms"])
    assert order == ["e", "c", "e", "c"] + ["e", "c"] * 3


def test_compile_counts_settings():
    counts = cd.compile_counts(lambda: torch.nn.Linear(8, 8), [3, 4, 5, 6])
    assert counts == {"default (automatic dynamic)": [1, 2, 2, 2], "dynamic=True": [1, 1, 1, 1],
                      "dynamic=False": [1, 2, 3, 4], "mark_dynamic": [1, 1, 1, 1],
                      "maybe_mark_dynamic": [1, 1, 1, 1]}
    with pytest.raises(ValueError):
        cd.compile_counts(lambda: torch.nn.Linear(8, 8), [3], settings=["nope"])


def test_inductor_output_files_finds_new_wrappers(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    stamp = time.time() - 1
    (tmp_path / "ab").mkdir()
    new = tmp_path / "ab" / "cabc.py"
    new.write_text("def call(args):\n    pass\n")
    found = cd.inductor_output_files(stamp)
    assert new in found
    assert all(p.suffix == ".py" for p in found)
    assert new not in cd.inductor_output_files(time.time() + 3600)


def _leading_print(x):
    print("leading")
    return torch.sin(x) + 1


def test_capture_logs_sees_a_leading_break_that_explain_misses(capsys):
    out = torch._dynamo.explain(_leading_print)(torch.randn(3))
    assert (out.graph_count, out.graph_break_count, len(out.break_reasons)) == (1, 0, 0)
    torch._dynamo.reset()
    with cd.capture_logs("graph_breaks") as logs:
        torch.compile(_leading_print, backend="eager")(torch.randn(3))
    assert list(logs) == ["graph_breaks"] and len(logs["graph_breaks"]) == 1
    assert "print" in logs["graph_breaks"][0] and "Explanation" in logs["graph_breaks"][0]
    assert "__graph_breaks" not in capsys.readouterr().err      # not echoed by default


def test_capture_logs_restores_settings_and_collects_recompiles():
    import torch._logging._internal as internal

    counter = cd.CompileCounter()
    f = torch.compile(lambda t: t * 2, backend=counter)
    with cd.capture_logs("recompiles", "guards") as logs:
        f(torch.randn(3))
        f(torch.randn(3, dtype=torch.float64))
    assert counter.count == 2
    assert len(logs["recompiles"]) == 1 and "dtype mismatch" in logs["recompiles"][0]
    assert any("TREE_GUARD_MANAGER" in r for r in logs["guards"])
    assert not internal.log_state.is_artifact_enabled("recompiles")
    assert not internal.log_state.is_artifact_enabled("guards")
    with cd.capture_logs("recompiles") as later:
        pass
    assert later == {"recompiles": []}


def test_capture_logs_leaves_every_loggers_level_answer_right():
    """capture_logs has torch set its loggers' levels with one clear of logging's level caches at the end, not one
    per setLevel: inside and after the block, every logger answers isEnabledFor from the levels then set, and
    logging's own cache clearing is the class's again."""
    import logging

    torch.compile(lambda t: t + 1, backend="eager")(torch.randn(2))   # Dynamo's artifact loggers exist
    names = [n for n in logging.root.manager.loggerDict if n.startswith("torch.") and n.endswith(".__recompiles")]
    assert names
    loggers = [logging.getLogger(n) for n in names]
    assert not any(lg.isEnabledFor(logging.DEBUG) for lg in loggers)   # off, and the answer now cached
    with cd.capture_logs("recompiles"):
        assert all(lg.isEnabledFor(logging.DEBUG) for lg in loggers)   # turned on: no stale cached answer
    assert not any(lg.isEnabledFor(logging.DEBUG) for lg in loggers)   # off again
    assert "_clear_cache" not in vars(logging.Logger.manager)
    other = logging.getLogger("course-test-cache")
    other.setLevel(logging.WARNING)
    assert not other.isEnabledFor(logging.INFO)
    other.setLevel(logging.DEBUG)                        # setLevel clears the caches again, as logging does
    assert other.isEnabledFor(logging.INFO)


def test_capture_logs_echo(capsys):
    with cd.capture_logs("graph_breaks", echo=True) as logs:
        torch.compile(_leading_print, backend="eager")(torch.randn(3))
    assert len(logs["graph_breaks"]) == 1
    assert "Graph break" in capsys.readouterr().err


def test_failed_guards_parses_a_recompile_record():
    record = ("Recompiling function f in /tmp/x.py:10\n    triggered by the following guard failure(s):\n"
              "    - 0/1: tensor 'x' dtype mismatch. expected Float, actual Double\n"
              "    - 0/0: temperature == 1.0                          # return x / temperature  # x.py:2 in f\n"
              "    - User stack trace:\n    -   File \"/tmp/x.py\", line 2, in f")
    assert cd.failed_guards(record) == ["0/1: tensor 'x' dtype mismatch. expected Float, actual Double",
                                        "0/0: temperature == 1.0"]
    assert cd.failed_guards("no guards here") == []


def test_single_process_group_creates_and_destroys():
    import torch.distributed as dist

    assert not dist.is_initialized()
    with cd.single_process_group() as created:
        assert created is True and dist.is_initialized() and dist.get_world_size() == 1
        with cd.single_process_group() as nested:
            assert nested is False
        assert dist.is_initialized()
        t = torch.ones(3)
        dist.all_reduce(t)
        torch.testing.assert_close(t, torch.ones(3))
    assert not dist.is_initialized()


# --- legacy_peaks (Exercise 6.5) ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_legacy_peaks_values(dtype):
    x = torch.tensor([0.0, 2.0, 1.0, 3.0, 0.5, 0.2, 4.0, -1.0], dtype=dtype)
    out = cd.legacy_peaks(x)
    assert out.dtype is torch.int64 and out.dim() == 1
    assert out.tolist() == [1, 3, 6]
    assert cd.legacy_peaks(torch.tensor([1.0, 1.0, 0.0], dtype=dtype)).tolist() == []      # strict: a plateau is no peak
    assert cd.legacy_peaks(torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0], dtype=dtype)).tolist() == [1, 3]


@pytest.mark.parametrize("n", [0, 1, 2])
def test_legacy_peaks_short_signals_have_none(n):
    out = cd.legacy_peaks(torch.ones(n))
    assert out.shape == (0,) and out.dtype is torch.int64


def test_legacy_peaks_rejects_other_ranks():
    with pytest.raises(ValueError, match="1-D"):
        cd.legacy_peaks(torch.zeros(2, 3))


def test_legacy_peaks_breaks_the_graph():
    out = torch._dynamo.explain(lambda t: t[cd.legacy_peaks(t)] * 2)(torch.randn(9))
    assert out.graph_break_count >= 1


# --- capture_logs keeps the caller's settings (Exercise 6.1's "as you found them") ---------------------------

def test_capture_logs_keeps_settings_that_were_on():
    import torch._logging._internal as internal

    torch._logging.set_logs(recompiles=True)
    try:
        before = cd.log_settings()
        assert before[1] == frozenset({"recompiles"})
        with cd.capture_logs("graph_breaks") as logs:
            inside = cd.log_settings()
            torch.compile(_leading_print, backend="eager")(torch.randn(3))
        assert inside[1] == frozenset({"recompiles", "graph_breaks"})
        assert len(logs["graph_breaks"]) == 1
        assert cd.log_settings() == before
        assert internal.log_state.is_artifact_enabled("recompiles")
        assert not internal.log_state.is_artifact_enabled("graph_breaks")
    finally:
        torch._logging.set_logs()
    assert cd.log_settings() == ({}, frozenset())


def test_capture_logs_restores_levels_and_after_an_exception():
    import logging

    torch._logging.set_logs(dynamo=logging.INFO, guards=True)
    try:
        before = cd.log_settings()
        with pytest.raises(RuntimeError):
            with cd.capture_logs("recompiles", "graph_breaks"):
                raise RuntimeError("inside the block")
        assert cd.log_settings() == before
        assert logging.getLogger("torch._dynamo").level == logging.INFO
    finally:
        torch._logging.set_logs()


def test_capture_logs_keeps_torch_logs_from_the_environment():
    import subprocess
    import sys

    code = ("import torch\nfrom course import dynamo as cd\nbefore = cd.log_settings()\n"
            "with cd.capture_logs('graph_breaks') as logs:\n"
            "    def f(x):\n        print('p')\n        return x.cos()\n"
            "    torch.compile(f, backend='eager')(torch.randn(2))\n"
            "print(len(logs['graph_breaks']), sorted(before[1]), sorted(cd.log_settings()[1]))\n")
    env = dict(os.environ, TORCH_LOGS="recompiles")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "1 ['recompiles'] ['recompiles']"


def test_capture_logs_rejects_unknown_artifacts():
    with pytest.raises(ValueError, match="unknown torch log artifact"):
        with cd.capture_logs("graph_brakes"):
            pass


def test_restore_log_settings_round_trip():
    import logging

    saved = cd.log_settings()
    cd.restore_log_settings(({"torch._dynamo": logging.DEBUG}, frozenset({"recompiles"})))
    try:
        assert cd.log_settings() == ({"torch._dynamo": logging.DEBUG}, frozenset({"recompiles"}))
        assert logging.getLogger("torch._dynamo").level == logging.DEBUG
    finally:
        cd.restore_log_settings(saved)
    assert cd.log_settings() == saved


# --- figures: drawn once -------------------------------------------------------------------------------------

def test_figure_builders_return_closed_figures():
    import matplotlib.pyplot as plt

    fig = cd.compile_counts_figure({"a": [1, 2, 2], "b": [1, 1, 1]}, [3, 4, 5])
    assert [list(line.get_ydata()) for line in fig.axes[0].lines] == [[1, 2, 2], [1, 1, 1]]
    assert fig.number not in plt.get_fignums()          # closed: drawn only when displayed
    fig2 = cd.speedups_figure(["s", "m"], [2.0, 1.0], [1.0, 2.0])
    assert sorted(b.get_height() for b in fig2.axes[0].patches) == pytest.approx([0.5, 2.0])
    assert fig2.number not in plt.get_fignums()
    assert cd.plot_compile_counts({"a": [1, 2]}, [3, 4]) is None
    assert cd.plot_speedups(["s"], [1.0], [1.0]) is None


def test_plot_helpers_draw_one_figure_in_a_notebook():
    """Issue 22: plot_compile_counts drew its figure twice when it was a cell's last line (show + the returned figure)."""
    import nbformat
    from course.grading.run.worker import Client as NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from course import dynamo as cd"),
                nbformat.v4.new_code_cell("cd.plot_compile_counts({'a': [1, 2], 'b': [1, 1]}, [3, 4])"),
                nbformat.v4.new_code_cell("cd.plot_speedups(['s', 'm'], [2.0, 1.0], [1.0, 2.0])")]
    env_backend = os.environ.pop("MPLBACKEND", None)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    for cell in nb.cells[1:]:
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(images) == 1, (cell.source, [o.output_type for o in cell.outputs])
