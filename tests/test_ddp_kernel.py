"""Chapter 5b's launcher exercises in a real Jupyter kernel (its ``__main__`` has no file), under spawn and forkserver.

Each exercise's reference solution passes its visible test, and one mutant per exercise fails it, after a backward
in the kernel (what kills forked ranks on a machine that can see a GPU). The student's function reaches the ranks
inside ``args`` (``call_on_shards``, ``logged_train_worker``, ``accumulation_worker``), by value.
"""
from __future__ import annotations

import nbformat
import pytest

from conftest import REPO
from course.grading.judge import answers
from course.grading.authoring import notebooks
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.run.worker import strip_hidden_tests

CHAPTER = "05b_distributed"
# (data cell, solution cell, visible test cell, mutant that must fail that test)
EXERCISES = [("ex52_data", "sync_batch_stats", "test_sync_stats_mean_count", "sync_1_mean_of_means"),
             ("ex52b_data", "train_logged", "test_logged_values", "logged_3_mean_of_rank_means"),
             ("ex52c_data", "train_accumulated", "test_accumulate_values", "accum_3_no_scaling")]
CHECK_KERNEL = '''
import sys, __main__
from course import ddp as P
_w = torch.ones(3, requires_grad=True)
(_w * _w).sum().backward()                                 # a backward in the parent, before any launch
print("main file:", getattr(__main__, "__file__", None), "| method:", P.start_method())
'''


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_launcher_exercises_in_a_kernel(method, monkeypatch):
    from course.grading.run.worker import Client as NotebookClient

    src = notebooks.read(notebooks.notebook_path(CHAPTER))
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in src.cells if c.cell_type == "code"}
    mutants = {v.name: v for v in answers.load_variants(CHAPTER, "mutant")}
    cells = [by_id["setup"].source, CHECK_KERNEL]
    expect_error = [False, False]
    for data, solution, test, mutant in EXERCISES:
        assert mutants[mutant].cell == solution and test in mutants[mutant].fails
        visible = strip_hidden_tests(by_id[test].source)
        cells += [by_id[data].source, answers.strip_markers(by_id[solution].source), visible,
                  mutants[mutant].source, visible]
        expect_error += [False, False, False, False, True]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in cells]
    for key, value in nbgrader_io.env({"COURSE_DDP_START_METHOD": method}).items():
        monkeypatch.setenv(key, value)  # the kernel inherits this process's environment
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(REPO / "source" / CHAPTER)}}).execute()
    report = []
    for i, (cell, bad) in enumerate(zip(nb.cells, expect_error)):
        errors = [f"{o.ename}: {o.evalue[:300]}" for o in cell.outputs if o.output_type == "error"]
        report.append((i, bad, errors))
    text = "\n".join(o.get("text", "") for o in nb.cells[1].outputs if o.output_type == "stream")
    assert f"main file: None | method: {method}" in text, text
    for i, bad, errs in report:
        if errs:
            print(f"cell {i}: {errs[0][:200]}")
    assert all(errs[0].startswith("CheckFailed") for _, bad, errs in report if bad and errs), report
    wrong = [(i, bad, errs) for i, bad, errs in report if bool(errs) != bad]
    assert not wrong, wrong
