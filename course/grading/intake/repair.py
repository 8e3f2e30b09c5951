"""Damaged submissions: find the student's answers in whatever came back, and rebuild a gradable notebook.

Students' notebooks come back renamed (``01_dynamic_graphs (1).ipynb``),
with cells deleted, duplicated, re-typed or moved, with nbgrader's metadata
stripped by another editor (VS Code, Colab), with huge outputs, or not even
valid JSON. :func:`stage` never modifies the submitted file: it writes a
staged copy that nbgrader can grade, and returns a :class:`Repair` saying
what it found and did.

The rule: the release decides the notebook's structure. Every nbgrader cell
of the release is put back in its place (nbgrader restores locked and test
cells from the gradebook anyway); each solution cell gets the student's code,
found by its grade_id, else by its cell id, else by its ``def``/``class``
signature; the student's own extra cells stay after the cell they followed.
An answer that cannot be found is graded as unanswered, and the report says
so. A file that is not a notebook at all is graded as the untouched release
(zero), and the report says that too; the original stays in ``submitted/``.
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HUGE_BYTES = 50 * 2 ** 20
MAX_DEPTH = 64  # JSON nesting of a notebook (nbformat's own notebooks are about 6 deep; widget state a few more)


@dataclass
class Repair:
    """What :func:`stage` found in one submission."""

    student: str
    chapter: str
    damaged: list[str] = field(default_factory=list)   # unrecoverable problems (graded as unanswered/empty)
    repaired: list[str] = field(default_factory=list)  # problems fixed from the release
    source_file: str = ""

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.repaired


def _meta(cell) -> dict:
    """The cell's nbgrader metadata, or ``{}`` when the cell, its metadata or the nbgrader entry is not a dict."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    return nbg if isinstance(nbg, dict) else {}


def _gid(cell) -> str | None:
    """The cell's grade_id if it is a string (a list or a number there is damage, not an id)."""
    gid = _meta(cell).get("grade_id")
    return gid if isinstance(gid, str) and gid else None


def _depth(obj, limit: int) -> int:
    """The nesting depth of a loaded JSON value, without recursion, stopping past ``limit``."""
    deepest, todo = 0, [(obj, 1)]
    while todo:
        x, d = todo.pop()
        if d > limit:
            return d
        deepest = max(deepest, d)
        if isinstance(x, dict):
            todo.extend((v, d + 1) for v in x.values())
        elif isinstance(x, list):
            todo.extend((v, d + 1) for v in x)
    return deepest


def _text(cell) -> str:
    src = cell.get("source", "")
    return "".join(x if isinstance(x, str) else str(x) for x in src) if isinstance(src, list) else str(src)


def _signature(source: str) -> str | None:
    """The first ``def name(`` or ``class Name`` of a solution cell (how an answer is recognised without metadata)."""
    m = re.search(r"^(def|class)\s+([A-Za-z_]\w*)", source, re.M)
    return f"{m.group(1)} {m.group(2)}" if m else None


def _load(path: Path, report: Repair) -> dict | None:
    size = path.stat().st_size
    try:
        raw = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except RecursionError:
        report.damaged.append(f"{path.name} is JSON nested too deeply to read: graded as the untouched release")
        return None
    except (ValueError, UnicodeDecodeError) as err:
        report.damaged.append(f"{path.name} is not valid JSON ({str(err)[:80]}): graded as the untouched release")
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        report.damaged.append(f"{path.name} is JSON but not a notebook: graded as the untouched release")
        return None
    if _depth(raw, MAX_DEPTH) > MAX_DEPTH:
        report.damaged.append(f"{path.name} is nested more than {MAX_DEPTH} levels deep (not a notebook an editor "
                              "writes): graded as the untouched release")
        return None
    if size > HUGE_BYTES:
        report.repaired.append(f"{path.name} is {size / 2**20:.0f} MiB (outputs): outputs dropped before grading")
    for c in raw["cells"]:
        if isinstance(c, dict) and c.get("cell_type") == "code":
            c["outputs"], c["execution_count"] = [], None
    return raw


def find_notebook(folder: Path, expected: str, release_nb: dict, report: Repair) -> Path | None:
    """The submitted notebook: ``expected`` if present, else the one notebook that looks most like the release."""
    exact = folder / expected
    if exact.is_file() and not exact.is_symlink():
        return exact
    candidates = sorted(p for p in folder.glob("*.ipynb")
                        if not p.name.startswith(".") and p.is_file() and not p.is_symlink())
    if not candidates:
        report.damaged.append(f"no notebook in the submission (expected {expected}): graded as unanswered")
        return None
    ids = {_gid(c) for c in release_nb["cells"]} - {None}

    def score(p: Path) -> int:
        try:
            cells = json.loads(p.read_text(errors="replace")).get("cells", [])
            return sum(1 for c in cells if _gid(c) in ids) if isinstance(cells, list) else -1
        except Exception:  # noqa: BLE001 - any damage (bad JSON, nesting, odd types) ranks it last
            return -1
    best = max(candidates, key=score)
    report.repaired.append(f"the notebook was renamed: graded {best.name} as {expected}")
    return best


def rebuild(student_nb: dict, release_nb: dict, report: Repair) -> nbformat.NotebookNode:
    """The release's structure with the student's answers and extra cells (see the module docstring)."""
    release_cells = release_nb["cells"]
    by_gid: dict[str, list[int]] = {}
    by_id: dict[str, int] = {}
    by_sig: dict[str, list[int]] = {}
    by_text: dict[str, list[int]] = {}
    cells = [c for c in student_nb.get("cells", []) if isinstance(c, dict)]
    for i, c in enumerate(cells):
        by_text.setdefault(_text(c).strip(), []).append(i)
        gid = _gid(c)
        if gid:
            by_gid.setdefault(gid, []).append(i)
        if isinstance(c.get("id"), str):
            by_id.setdefault(c["id"], i)
        sig = _signature(_text(c))
        if sig:
            by_sig.setdefault(sig, []).append(i)
    release_ids = {rc.get("id") for rc in release_cells}
    release_sources = {_text(rc).strip() for rc in release_cells}
    used: set[int] = set()
    placed: list[tuple[int, int]] = []  # (release index, student index) for matched cells
    answers: dict[int, str] = {}
    fixes = {"metadata": 0, "retyped": 0, "duplicates": 0, "missing": 0}
    for r_i, rc in enumerate(release_cells):
        m = _meta(rc)
        gid = _gid(rc)
        match = None
        if gid and by_gid.get(gid):
            match = by_gid[gid][0]
            if len(by_gid[gid]) > 1:  # copies stay as plain cells after it, as nbgrader's DeduplicateIds leaves them
                fixes["duplicates"] += len(by_gid[gid]) - 1
        elif rc.get("id") in by_id and by_id[rc["id"]] not in used:
            match = by_id[rc["id"]]
            if gid:
                fixes["metadata"] += 1
        elif m.get("solution"):
            sig = _signature(_text(rc))
            options = [i for i in by_sig.get(sig, []) if i not in used] if sig else []
            if options:
                match = options[-1]  # the last definition wins, as it would when the notebook runs
                fixes["metadata"] += 1
        elif gid:
            options = [i for i in by_text.get(_text(rc).strip(), []) if i not in used]
            if options:  # a locked or test cell whose metadata was stripped, recognised by its text
                match = options[0]
                fixes["metadata"] += 1
        if match is not None and match not in used:
            used.add(match)
            placed.append((r_i, match))
            if m.get("solution"):
                if cells[match].get("cell_type") != rc.get("cell_type"):
                    fixes["retyped"] += 1
                answers[r_i] = _text(cells[match])
        elif gid:
            if m.get("solution"):
                report.damaged.append(f"could not find your answer to {gid}: graded as unanswered")
            else:
                fixes["missing"] += 1
    # Extra cells (the student's own): keep them after the matched cell they followed.
    after: dict[int, list[int]] = {}
    anchor = -1
    student_to_release = {s: r for r, s in placed}
    for i, c in enumerate(cells):
        if i in student_to_release:
            anchor = student_to_release[i]
        elif i not in used and c.get("cell_type") in ("code", "markdown", "raw"):
            text = _text(c).strip()
            if (isinstance(c.get("id"), str) and c["id"] in release_ids) or text in release_sources:
                continue  # a copy of a release cell whose metadata was lost: the release's own is used
            after.setdefault(anchor, []).append(i)
    order_student = [s for _, s in sorted(placed)]
    if order_student != sorted(order_student):
        report.repaired.append("cells were moved: put back in the release's order")
    out = nbformat.v4.new_notebook()
    out.metadata = json.loads(json.dumps(release_nb.get("metadata", {})))

    def extra(i: int):
        c = cells[i]
        kind = c.get("cell_type")
        text = _text(c)
        new = nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text) \
            if kind == "markdown" else nbformat.v4.new_raw_cell(text)
        meta = c.get("metadata")
        new.metadata = {k: v for k, v in meta.items() if k != "nbgrader"} if isinstance(meta, dict) else {}
        return new

    for i in after.get(-1, []):
        out.cells.append(extra(i))
    for r_i, rc in enumerate(release_cells):
        new = nbformat.from_dict(json.loads(json.dumps(rc)))
        if r_i in answers:
            new.source = answers[r_i]
        out.cells.append(new)
        for i in after.get(r_i, []):
            out.cells.append(extra(i))
    for kind, n in fixes.items():
        if n:
            report.repaired.append({"metadata": f"nbgrader metadata restored on {n} cell(s) (recognised by id, signature or text)",
                                    "retyped": f"{n} answer cell(s) had been turned into markdown/raw: made code again",
                                    "duplicates": f"{n} duplicated nbgrader cell(s): the first copy graded, the others kept as plain cells",
                                    "missing": f"{n} deleted locked or test cell(s) restored from the release"}[kind])
    return out


_ROLE = ("grade", "solution", "locked", "task", "points", "grade_id")


def _role(cell: dict) -> tuple:
    m = _meta(cell)
    return (cell.get("cell_type"), *(json.dumps(m.get(k), sort_keys=True) for k in _ROLE))


def intact(student_nb: dict, release_nb: dict) -> bool:
    """Whether the student's nbgrader cells are exactly the release's, once each, in order, with the same type and
    the same nbgrader roles (grade, solution, locked, task, points), and no other cell claims a role: nothing to
    repair. Forged metadata (a duplicated grade id, ``grade: true`` on a solution cell, a graded markdown cell, a
    test cell retyped) is not intact, and the rebuild puts the release's cells back."""
    def claims(c) -> bool:
        return isinstance(c, dict) and any(_meta(c).get(k) for k in _ROLE)
    want = [_role(c) for c in release_nb["cells"] if claims(c)]
    got = [_role(c) for c in student_nb.get("cells", []) if claims(c)]
    return got == want


def stage(submitted: Path, staged: Path, chapter: str, release_nb_path: Path, student: str,
          limits=None) -> tuple[Repair, "IntakeReport"]:
    """Write a gradable copy of ``submitted`` (one student's chapter folder) into ``staged``.

    The files come through the intake (:func:`course.grading.intake.files.copy_submission`: no link followed,
    no special file opened, caps); then the notebook is found, repaired if needed, and written under its
    expected name. Returns the repair report and the intake report.
    """
    from course.grading.intake.files import copy_submission

    report = Repair(student=student, chapter=chapter)
    release_nb = json.loads(release_nb_path.read_text())
    expected = release_nb_path.name
    taken = copy_submission(submitted, staged, limits, notebook=expected)
    try:
        nb = _staged_notebook(staged, expected, release_nb, taken, report)
    except Exception as err:  # noqa: BLE001 - damage nobody foresaw costs this student's answers, never the class
        report.damaged.append(f"the notebook could not be read or repaired ({type(err).__name__}): "
                              "graded as the untouched release")
        nb = _fresh(release_nb)
    _remove_notebooks(staged)
    try:
        nbformat.write(nb, str(staged / expected))
    except Exception as err:  # noqa: BLE001
        report.damaged.append(f"the repaired notebook could not be written ({type(err).__name__}): "
                              "graded as the untouched release")
        _remove_notebooks(staged)
        nbformat.write(_fresh(release_nb), str(staged / expected))
    return report, taken


def _fresh(release_nb: dict) -> nbformat.NotebookNode:
    return nbformat.from_dict(json.loads(json.dumps(release_nb)))


def _remove_notebooks(staged: Path) -> None:
    """Only the rebuilt notebook is graded: every other ``*.ipynb`` (file or folder) goes (they stay in submitted/)."""
    for p in staged.glob("*.ipynb"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def _staged_notebook(staged: Path, expected: str, release_nb: dict, taken, report: Repair) -> nbformat.NotebookNode:
    """The notebook to grade: the student's if intact, else rebuilt on the release, else the release itself."""
    path = None if taken.refused else find_notebook(staged, expected, release_nb, report)
    student_nb = _load(path, report) if path is not None else None
    if taken.refused:
        report.damaged.append(f"{taken.refused}; graded as unanswered")
    if path is not None:
        report.source_file = path.name
    if student_nb is None:
        nb = _fresh(release_nb)
    elif intact(student_nb, release_nb):
        nb = nbformat.from_dict(student_nb)
        minor = nb.get("nbformat_minor")
        nb.nbformat, nb.nbformat_minor = 4, max(5, minor if type(minor) is int else 5)
    else:
        before = len(report.repaired) + len(report.damaged)
        nb = rebuild(student_nb, release_nb, report)
        if len(report.repaired) + len(report.damaged) == before:
            report.repaired.append("nbgrader metadata differed from the release's: the release's cells put back")
    for c in nb.cells:  # ids must be valid and unique for nbformat 4.5
        if not isinstance(c.get("id"), str) or not re.fullmatch(r"[a-zA-Z0-9-_]{1,64}", c.get("id", "")):
            c["id"] = None
    seen = set()
    for i, c in enumerate(nb.cells):
        if c.get("id") is None or c["id"] in seen:
            c["id"] = f"cell-{i}"
        seen.add(c["id"])
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as err:
        report.repaired.append(f"notebook format problems fixed ({str(err).splitlines()[0][:80]})")
        nb = rebuild(json.loads(json.dumps(nb)), release_nb, report)
        try:
            nbformat.validate(nb)
        except nbformat.ValidationError:  # the student's own cells carry metadata nbformat refuses: dropped
            for c in nb.cells:
                if not _meta(c):
                    c.metadata = nbformat.NotebookNode()
            nbformat.validate(nb)  # still invalid: the caller grades the untouched release, and says so
    return nb
