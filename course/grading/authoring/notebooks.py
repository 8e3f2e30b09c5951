"""The course's notebooks for its authors: where each lives, reading one, running one in a fresh kernel and its slowest cells, and regenerating release/."""
from __future__ import annotations

import time
from pathlib import Path

import nbformat
from nbgrader.utils import is_grade

from course.grading import paths
from course.grading.nbgrader import wrapper as nbgrader_io


def chapters(root: Path = paths.REPO) -> list[str]:
    """Return the assignment names (folders of ``source/``), sorted."""
    return sorted(p.name for p in (root / "source").iterdir() if p.is_dir() and not p.name.startswith("."))


def notebook_path(assignment: str, root: Path = paths.REPO, folder: str = "source") -> Path:
    """Return the path of the chapter's notebook (one notebook per assignment)."""
    nbs = sorted((root / folder / assignment).glob("*.ipynb"))
    if len(nbs) != 1:
        raise ValueError(f"{folder}/{assignment} must hold exactly one notebook, found {len(nbs)}")
    return nbs[0]


def read(path: Path) -> nbformat.NotebookNode:
    """Read a notebook (nbformat v4)."""
    return nbformat.read(str(path), as_version=4)


def execute(path: Path, grading: bool = False, timeout: int = 300,
            allow_errors: bool = False) -> tuple[float, nbformat.NotebookNode]:
    """Execute a notebook top to bottom on a fresh kernel in its own folder; return (seconds, executed notebook).

    Hidden-test regions are removed first, so a source notebook runs as a
    student's notebook with correct answers would. ``grading=True`` sets ``NBGRADER_EXECUTION=autograde`` in the
    kernel, as nbgrader does. Raises ``nbclient`` errors on the first failing cell, and ``RuntimeError`` if any
    code cell was left unexecuted. ``allow_errors=True`` runs every cell even after one fails (the errors stay in
    the cells' outputs: tools/gpu_check.py); an exception raised then (a dead kernel, a timeout) carries the
    partly executed notebook as ``partial_notebook``.
    """
    from nbgrader.utils import is_grade

    from course.grading.run.worker import Client as NotebookClient
    from course.grading.run.worker import strip_hidden_tests

    nb = read(path)
    for cell in nb.cells:  # what a student runs: the solutions, and the test cells without their hidden region
        if cell.cell_type == "code" and is_grade(cell):
            cell.source = strip_hidden_tests(cell.source)
    env = nbgrader_io.env({"NBGRADER_EXECUTION": "autograde"} if grading else {})
    if not grading:
        env.pop("NBGRADER_EXECUTION", None)
    # The kernel's whole environment is `env` (jupyter_client's start_kernel(env=...)), not this process's: a
    # variable env() removes (MPLBACKEND=Agg, set by a test module in this process) must not reach the kernel, or
    # every plt.show() draws nothing.
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    try:
        client.execute(env=env)
    except Exception as exc:
        exc.partial_notebook = nb
        raise
    elapsed = time.perf_counter() - t0
    missing = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()
               and c.get("execution_count") is None]
    if missing:
        raise RuntimeError(f"{path.name}: code cells {missing} were not executed")
    return elapsed, nb


def cell_times(nb: nbformat.NotebookNode) -> list[tuple[int, float, float]]:
    """(cell index, seconds it ran, seconds between the previous cell's reply and its start) per executed code
    cell of a notebook run by nbclient, from its execution timestamps (rounded to 10 ms)."""
    from datetime import datetime

    def stamp(text: str) -> float:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

    rows, prev_end = [], None
    for i, c in enumerate(nb.cells):
        meta = c.get("metadata", {}).get("execution", {}) if c.cell_type == "code" else {}
        if "shell.execute_reply" not in meta:
            continue
        start = stamp(meta.get("iopub.status.busy", meta.get("iopub.execute_input", meta["shell.execute_reply"])))
        end = stamp(meta["shell.execute_reply"])
        rows.append((i, round(end - start, 2), round(start - prev_end, 2) if prev_end is not None else 0.0))
        prev_end = end
    return rows


def slowest_cells(nb: nbformat.NotebookNode, n: int = 5) -> str:
    """The ``n`` code cells that took longest in an executed notebook (:func:`cell_times`), counting the wait before each.

    Each is "cell 24 4.1 s", with "+ 300.2 s before it" when the wait between the previous cell's reply and
    this cell's start (a stall outside any cell: benchmarks/stall.py) is over a second.
    """
    rows = sorted(((ran + max(gap, 0.0), i, ran, gap) for i, ran, gap in cell_times(nb)), reverse=True)[:n]
    return ", ".join(f"cell {i} {ran:.1f} s" + (f" + {gap:.1f} s before it" if gap > 1 else "") for _, i, ran, gap in rows)


def release(root: Path = paths.REPO, only: list[str] | None = None) -> list[Path]:
    """Regenerate ``release/<chapter>/`` from ``source/`` with ``nbgrader generate_assignment``; return the folders.

    Uses a throwaway gradebook (``.demo/release.db``); students' working copies (``my_work/``) are separate
    and never touched.
    """
    demo_dir = root / ".demo"
    demo_dir.mkdir(exist_ok=True)
    return nbgrader_io.release(root, only or chapters(root), nbgrader_io.sqlite(demo_dir / "release.db"))
