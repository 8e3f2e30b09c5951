"""tools/gpu_check.py (make gpu-check): its report, on a tiny generated notebook (not on whole chapters).

One kernel runs a notebook with a passing cell, a failing cell, a cell after the failure (errors are allowed, so
it runs) and a cell that imports torch and computes on the CPU. The report must name the failing cell with its
error's first line, count no CUDA cell on a machine where CUDA is never initialised, and time every cell.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools import gpu_check  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("gpucheck")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# tiny"),
        nbformat.v4.new_code_cell("x = 21 * 2\nprint(x)"),
        nbformat.v4.new_code_cell("raise ValueError('boom: the answer is wrong\\nsecond line')"),
        nbformat.v4.new_code_cell("y = x + 1"),
        nbformat.v4.new_code_cell("import torch\nz = torch.ones(3).sum()"),
    ]
    path = folder / "tiny.ipynb"
    nbformat.write(nb, str(path))
    return gpu_check.run_notebook(path, "00_tiny", timeout=120)


def test_failing_and_passing_cells(report):
    cells = {c["cell"]: c for c in report["cells"]}
    assert sorted(cells) == [1, 2, 3, 4], "one row per code cell, indexed among all cells"
    assert cells[2]["error"] == "ValueError: boom: the answer is wrong", "the error's first line"
    assert [cells[i]["error"] for i in (1, 3, 4)] == [None, None, None], "cells after the failure still ran"
    assert all(c["ran"] for c in cells.values())
    assert report["failing_cells"] == 1 and report["not_run"] == 0 and report["kernel_error"] is None
    assert report["recorded_cells"] == 4, "the CUDA recorder (an IPython startup file) saw every cell"


def test_cuda_cells_and_times(report):
    import torch

    if torch.cuda.is_available():
        pytest.skip("the CPU-only count: this machine has CUDA (cell 4 stays on the CPU, but the check is for 0)")
    assert report["cuda_cells"] == 0 and not any(c["cuda"] for c in report["cells"])
    assert all(c["seconds"] is not None and c["seconds"] >= 0 for c in report["cells"])
    assert report["seconds"] > 0


def test_outputs(report, tmp_path):
    full = {"date": "today", "python": sys.executable, "torch": {"torch": "x", "cuda_available": False},
            "chapters": [report]}
    gpu_check.write(full, tmp_path)
    assert json.loads((tmp_path / "report.json").read_text())["chapters"][0]["failing_cells"] == 1
    md = (tmp_path / "report.md").read_text()
    assert "| 00_tiny | 1 | 0 | 0 |" in md
    assert "| 2 |" in md and "ValueError: boom: the answer is wrong" in md
    assert gpu_check.summary_line(report).startswith("00_tiny: 1 failing cells, 0 CUDA cells, ")


def test_error_line_capped():
    assert len(gpu_check.first_line("E" * 1000)) == gpu_check.ERROR_CHARS
    assert gpu_check.first_line("\n\n  first\nsecond") == "first"


def test_requirements_keep_the_machines_torch():
    reqs = gpu_check.requirements()
    assert not any(r.lower().startswith(("torch==", "torchvision==", "triton")) for r in reqs)
    assert any(r.startswith("nbgrader==") for r in reqs) and any(r.startswith("nbclient==") for r in reqs)
