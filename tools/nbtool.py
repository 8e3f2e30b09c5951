"""Write chapter notebooks with clean nbgrader metadata (for authors, not students).

Usage from a build script::

    from tools.nbtool import md, code, setup, solution, tests, write
    write("source/01_x/01_x.ipynb", [md("# Title"), setup("import course"), ...])

Every cell gets a stable id; graded cells get the nbgrader metadata that
`generate_assignment` expects. Outputs and execution counts are empty, the
kernelspec is `python3`, as tests/test_hygiene.py requires.
"""
from __future__ import annotations

import re
import textwrap

import nbformat

SCHEMA = 3


def _src(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")[:60]


def _meta(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict:
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA,
         "solution": solution, "task": False}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def md(text: str, grade_id: str | None = None) -> nbformat.NotebookNode:
    """A markdown cell; with ``grade_id`` it is locked (students cannot edit it)."""
    cell = nbformat.v4.new_markdown_cell(_src(text))
    if grade_id:
        cell.metadata.update(_meta(grade_id, grade=False, solution=False, locked=True))
    return cell


def code(text: str) -> nbformat.NotebookNode:
    """A plain demonstration cell (not graded, editable)."""
    return nbformat.v4.new_code_cell(_src(text))


def locked(text: str, grade_id: str) -> nbformat.NotebookNode:
    """A read-only code cell: nbgrader restores it from the source when grading."""
    cell = nbformat.v4.new_code_cell(_src(text))
    cell.metadata.update(_meta(grade_id, grade=False, solution=False, locked=True))
    return cell


def setup(text: str, grade_id: str = "setup") -> nbformat.NotebookNode:
    """The locked setup cell: imports `course` before any student code runs."""
    return locked(text, grade_id)


def solution(text: str, grade_id: str) -> nbformat.NotebookNode:
    """A student answer cell; put the reference between ### BEGIN/END SOLUTION."""
    body = _src(text)
    if "### BEGIN SOLUTION" not in body:
        raise ValueError(f"solution cell {grade_id} has no ### BEGIN SOLUTION region")
    cell = nbformat.v4.new_code_cell(body)
    cell.metadata.update(_meta(grade_id, grade=False, solution=True, locked=False))
    return cell


def tests(text: str, grade_id: str, points: float) -> nbformat.NotebookNode:
    """A graded, locked test cell worth ``points``; hidden parts go between ### BEGIN/END HIDDEN TESTS."""
    body = _src(text)
    if not body.lstrip().startswith('"""'):
        raise ValueError(f"test cell {grade_id} must open with a one-line docstring")
    cell = nbformat.v4.new_code_cell(body)
    cell.metadata.update(_meta(grade_id, grade=True, solution=False, locked=True, points=points))
    return cell


def write(path: str, cells: list) -> None:
    """Write the notebook with stable cell ids, no outputs and the python3 kernelspec."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    seen: dict[str, int] = {}
    for i, cell in enumerate(cells):
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        base = gid or f"c{i:03d}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        cell["id"] = _slug(base if n == 0 else f"{base}-{n}")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.cells = cells
    nbformat.validate(nb)
    nbformat.write(nb, path)


HIDDEN_CALL = 'from course.grading.inkernel import hidden_test; hidden_test("{grade_id}")'


def judge_hidden_region(grade_id: str) -> str:
    """The hidden-test region of a test cell whose hidden test lives in the chapter's judge.py."""
    return "### BEGIN HIDDEN TESTS\n" + HIDDEN_CALL.format(grade_id=grade_id) + "\n### END HIDDEN TESTS"


def point_hidden_tests_at_judge(path: str) -> list[str]:
    """Replace every grade cell's hidden region with the one-line call into judge.py; return the grade_ids."""
    import re as _re

    nb = nbformat.read(path, as_version=4)
    done = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            body = _re.sub(r"\n?^\s*### BEGIN HIDDEN TESTS.*?^\s*### END HIDDEN TESTS\s*$", "", cell.source,
                           flags=_re.M | _re.S).rstrip()
            cell.source = body + "\n" + judge_hidden_region(meta["grade_id"])
            done.append(meta["grade_id"])
    nbformat.write(nb, path)
    return done


PROGRESS_SOURCE = ('# Your progress (locked): which visible tests pass, per exercise. Run it at any time.\n'
                   'from course.progress import summary\n'
                   'summary("{chapter}")')


def student_view(path: str) -> None:
    """Make a source notebook Run-All friendly: tag test cells ``raises-exception`` and end with the progress cell.

    A failing test cell then does not stop Run All (JupyterLab and nbclient honour the tag), and the
    last cell shows the student's progress. Idempotent.
    """
    from pathlib import Path as _Path

    nb = nbformat.read(path, as_version=4)
    chapter = _Path(path).parent.name
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
    if not any(c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "progress" for c in nb.cells):
        head = md("## Your progress\n\nRun the cell below at any time: it lists, per exercise, which visible tests "
                  "pass in this session. The grader adds hidden tests on inputs you have not seen.")
        head["id"] = "progress-heading"
        cell = locked(PROGRESS_SOURCE.format(chapter=chapter), "progress")
        cell["id"] = "progress"
        nb.cells += [head, cell]
    nbformat.write(nb, path)
