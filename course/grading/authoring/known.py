"""Demo and known answers: build submissions from known answers and grade them with real nbgrader.

A chapter's known answers live in ``tests/mutants/<assignment>/*.py`` (wrong)
and ``tests/alternatives/<assignment>/*.py`` (different but correct). Each
file is a small Python module::

    '''Forgot optimizer.zero_grad(): gradients pile up across calls.'''
    CELL = "sgd_step"                 # grade_id of the solution cell it replaces
    FAILS = ["test_sgd_step_no_accumulation"]  # grade cells that must lose points
    SOURCE = '''
    def sgd_step(params, loss_fn, lr):
        ...
    '''

(``FAILS`` is empty, or absent, for alternatives.) A mutant that changes a few lines of the reference may say
only those, instead of ``SOURCE``::

    CHANGES = [(r'''
            optimizer.zero_grad()
    ''', '')]                         # (old, new): whole lines of the reference solution, old found exactly once

Each old text is whole lines of the reference's solution cell (markers removed, dedented), found there exactly once;
a leading newline of either text is dropped (so each can start on a line of its own). Blind answers (``blind_*.py``)
and alternatives stay whole, as they were written. :func:`plan` turns them
into submissions, combining one variant per exercise into each so that a
chapter is graded in a handful of notebooks; :func:`grade` copies the course
into a scratch folder, runs ``nbgrader generate_assignment``, grades every
submission through the same pipeline as a real class
(:func:`course.grading.classroom.pipeline.grade_class`: intake, sandboxed runs, one
``nbgrader autograde`` recording), and reads the gradebook. Nothing here
touches the instructor's own gradebook.

Command line (:mod:`course.grading.cli`): ``python -m course.grading check
01_dynamic_graphs`` grades one chapter's plan and prints a table;
``python -m course.grading demo`` is ``make grade``.
"""
from __future__ import annotations

import csv
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.grading.nbgrader import wrapper as nbgrader_io
from nbgrader.utils import is_grade, is_solution

from course.grading import paths
from course.grading.records import grade_id, points

REPO = paths.REPO

# Prepended to every solution cell of the tamper submission: what a student
# gaming the tests would try. The checks in course.checks must not be fooled.
TAMPER_PRELUDE = '''\
import builtins as _tamper_b, torch as _tamper_t, torch.testing  # names that no test uses
_tamper_t.allclose = lambda *a, **k: True
_tamper_t.equal = lambda *a, **k: True
_tamper_t.testing.assert_close = lambda *a, **k: None
_tamper_t.Tensor.__eq__ = lambda self, other: _tamper_t.ones((), dtype=_tamper_t.bool)
class _TamperFakeTensor:
    """Garbage that claims to be a tensor."""
    shape = dtype = device = None
    def __eq__(self, other): return True
    def __bool__(self): return True
if not hasattr(_tamper_b, "_real_isinstance"):
    _tamper_b._real_isinstance = _tamper_b.isinstance
# Lie only about _TamperFakeTensor, so that library code keeps working (a blanket
# lie makes torchvision loop forever, which tests nothing).
_tamper_b.isinstance = lambda o, c: True if type(o) is _TamperFakeTensor else _tamper_b._real_isinstance(o, c)
'''


# Generic attacks, each put alone in the first solution cell of the untouched release (the
# other exercises stay unsolved). Under stock nbgrader each of the first two scored full
# marks in every chapter; under the judge each must score 0 and be flagged. name ->
# (code, a phrase the report's flags must contain).
ATTACKS: dict[str, tuple[str, str]] = {
    "blank-later-cells": (
        "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
        "did not run the judge's code"),
    "swallow-exceptions": (
        "_ip = get_ipython()\n"
        "_ip.showtraceback = lambda *a, **k: None\n"
        "_ip._showtraceback = lambda *a, **k: None\n"
        "_orig_run_cell = _ip.run_cell\n"
        "def _quiet_run_cell(*a, **k):\n"
        "    r = _orig_run_cell(*a, **k)\n"
        "    r.error_in_exec = r.error_before_exec = None\n"
        "    return r\n"
        "_ip.run_cell = _quiet_run_cell\n"
        "_orig_run_cell_async = _ip.run_cell_async\n"
        "async def _quiet_run_cell_async(*a, **k):\n"
        "    r = await _orig_run_cell_async(*a, **k)\n"
        "    r.error_in_exec = r.error_before_exec = None\n"
        "    return r\n"
        "_ip.run_cell_async = _quiet_run_cell_async\n",
        "hides exceptions"),
    "patch-checks": (
        "import course.checks as _cc, types as _types\n"
        "_ok = lambda *a, **k: None\n"
        "for _name in [n for n in dir(_cc) if n.startswith('check_')]:\n"
        "    setattr(_cc, _name, _ok)\n"
        "C = _types.SimpleNamespace(**{n: _ok for n in dir(_cc) if n.startswith('check_')}, describe=repr,\n"
        "                           CheckFailed=AssertionError, to_float=float)\n",
        "possible tampering"),
    "read-answers": (
        "import json as _json, pathlib as _pl\n"
        "_chapter = _pl.Path.cwd().name\n"
        "for _up in ('..', '../..', '../../..', '../../../..'):\n"
        "    for _nb in sorted((_pl.Path(_up) / 'source' / _chapter).glob('*.ipynb')):\n"
        "        try:\n"
        "            for _c in _json.loads(_nb.read_text())['cells']:\n"
        "                if _c.get('metadata', {}).get('nbgrader', {}).get('solution'):\n"
        "                    exec(''.join(_c['source']).replace('### BEGIN SOLUTION', '').replace('### END SOLUTION', ''), globals())\n"
        "        except Exception as _e:\n"
        "            print('could not use', _nb, _e)\n"
        "    try:\n"
        "        print(len((_pl.Path(_up) / 'gradebook.db').read_bytes()), 'bytes of gradebook')\n"
        "    except Exception:\n"
        "        pass\n",
        "opened the instructor's files"),
}


@dataclass(frozen=True)
class Variant:
    """One known answer for one solution cell: wrong (``fails`` non-empty) or correct."""

    name: str
    kind: str  # "mutant" or "alternative"
    cell: str
    source: str
    fails: tuple[str, ...]
    description: str
    klass: str = ""  # the class of mistake (``KIND``); "do-nothing" ones must score 0 on their exercise
    note: str = ""  # what a student whose answer behaves like this mistake reads (``NOTE``, a mutant's)

    @property
    def blind(self) -> bool:
        """Written by an independent student from the release alone, then adopted (``blind_*.py``)."""
        return self.name.startswith("blind_")


@dataclass
class Submission:
    """One student's notebook: which solution cells are replaced, and the expected outcome."""

    student: str
    replacements: dict[str, str] | None  # None: the untouched release notebook
    must_fail: set[str] = field(default_factory=set)
    must_pass: set[str] | None = None  # None: every graded cell not in must_fail
    variants: list[str] = field(default_factory=list)
    base: str = "solution"  # cells not in replacements: "solution" (the reference) or "release" (the stub)
    must_flag: tuple[str, ...] = ()  # phrases the judge's report flags must contain


def chapters(root: Path = REPO) -> list[str]:
    """Return the assignment names (folders of ``source/``), sorted."""
    return sorted(p.name for p in (root / "source").iterdir() if p.is_dir() and not p.name.startswith("."))


def notebook_path(assignment: str, root: Path = REPO, folder: str = "source") -> Path:
    """Return the path of the chapter's notebook (one notebook per assignment)."""
    nbs = sorted((root / folder / assignment).glob("*.ipynb"))
    if len(nbs) != 1:
        raise ValueError(f"{folder}/{assignment} must hold exactly one notebook, found {len(nbs)}")
    return nbs[0]


def read(path: Path) -> nbformat.NotebookNode:
    """Read a notebook (nbformat v4)."""
    return nbformat.read(str(path), as_version=4)


def solution_cells(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Return {grade_id: source} of the solution cells."""
    return {grade_id(c): c.source for c in nb.cells
            if is_solution(c)}


def graded_cells(nb: nbformat.NotebookNode) -> dict[str, float]:
    """Return {grade_id: points} of the graded (test) cells."""
    out = {}
    for c in nb.cells:
        if is_grade(c):
            out[grade_id(c)] = points(c)
    return out


_MARKER = re.compile(r"^\s*###\s*(BEGIN|END)\s+SOLUTION\s*$")


def strip_markers(source: str) -> str:
    """Return a solution cell's text without its ``### BEGIN/END SOLUTION`` lines (what a student would submit)."""
    return "\n".join(line for line in source.splitlines() if not _MARKER.match(line))


def load_variants(assignment: str, kind: str, root: Path = REPO) -> list[Variant]:
    """Load ``tests/mutants/<assignment>/*.py`` (kind="mutant") or ``tests/alternatives/...`` (kind="alternative")."""
    folder = root / "tests" / ("mutants" if kind == "mutant" else "alternatives") / assignment
    out = []
    reference = None
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"_variant_{assignment}_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fails = tuple(getattr(mod, "FAILS", ()))
        if hasattr(mod, "CHANGES"):
            if kind != "mutant" or path.stem.startswith("blind_") or hasattr(mod, "SOURCE"):
                raise ValueError(f"{path}: CHANGES is for authored mutants only, instead of SOURCE (blind answers and "
                                 "alternatives stay whole)")
            if reference is None:  # the source notebook, read once per call, only where a mutant needs it
                reference = solution_cells(read(notebook_path(assignment, root)))
            source = apply_changes(reference_solution(reference, mod.CELL, str(path)), mod.CHANGES, str(path))
        else:
            source = textwrap_dedent(mod.SOURCE)
        if kind == "mutant" and not fails:
            raise ValueError(f"{path}: a mutant must list the grade cells it FAILS")
        if kind == "alternative" and fails:
            raise ValueError(f"{path}: an alternative must not FAIL anything")
        out.append(Variant(name=path.stem, kind=kind, cell=mod.CELL,
                           source=source, fails=fails, klass=getattr(mod, "KIND", ""),
                           note=getattr(mod, "NOTE", ""),
                           description=(mod.__doc__ or "").strip().splitlines()[0] if mod.__doc__ else path.stem))
    return out


def reference_solution(solutions: dict[str, str], cell: str, where: str = "") -> str:
    """The reference's solution cell ``cell`` (from :func:`solution_cells`) as a variant's SOURCE would hold it:
    markers removed, dedented."""
    if cell not in solutions:
        raise ValueError(f"{where}: no solution cell {cell!r} in the reference")
    return textwrap_dedent(strip_markers(solutions[cell]))


def apply_changes(base: str, changes, where: str = "CHANGES") -> str:
    """``base`` with each ``(old, new)`` of ``changes`` applied in turn; ``old`` must be whole lines of the text so far,
    found there exactly once (a leading newline of ``old`` or ``new`` is dropped)."""
    text = base
    for i, pair in enumerate(changes):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, str) for t in pair)):
            raise ValueError(f"{where}: change {i} must be a pair of strings (old, new)")
        old, new = (t[1:] if t.startswith("\n") else t for t in pair)
        if not old:
            raise ValueError(f"{where}: change {i} has no old text")
        at = text.find(old)
        if at < 0:
            raise ValueError(f"{where}: change {i}: its old text is not in the reference: {old[:80]!r}")
        if text.find(old, at + 1) >= 0:
            raise ValueError(f"{where}: change {i}: its old text is in the reference more than once: {old[:80]!r}")
        if (at and text[at - 1] != "\n") or not (old.endswith("\n") or at + len(old) == len(text)):
            raise ValueError(f"{where}: change {i}: its old text is not whole lines: {old[:80]!r}")
        if new and not new.endswith("\n") and at + len(old) < len(text):
            new += "\n"
        text = text[:at] + new + text[at + len(old):]
    return textwrap_dedent(text)


def textwrap_dedent(text: str) -> str:
    """Return a variant's SOURCE dedented, with exactly one trailing newline."""
    return textwrap.dedent(text).strip("\n") + "\n"


def _groups(variants: list[Variant]) -> list[list[Variant]]:
    """Combine variants into groups with at most one variant per solution cell."""
    by_cell: dict[str, list[Variant]] = {}
    for v in variants:
        by_cell.setdefault(v.cell, []).append(v)
    depth = max((len(vs) for vs in by_cell.values()), default=0)
    return [[vs[i] for vs in by_cell.values() if i < len(vs)] for i in range(depth)]


def plan(assignment: str, root: Path = REPO, tamper: bool = True, attacks: bool = False,
         depth: int | None = None) -> list[Submission]:
    """Return the submissions that prove a chapter's grading.

    ``solution`` (full marks), ``empty`` (the release as is: zero), one
    ``mutants-N`` per depth of the mutant lists (each graded cell named in a
    mutant's FAILS must lose its points, every other graded cell keeps them),
    ``alternatives-N`` (full marks) and ``tamper`` (the first mutant of each
    exercise behind :data:`TAMPER_PRELUDE`: its FAILS cells must still fail).
    ``depth`` keeps only the first ``depth`` groups of mutants and of
    alternatives (the test suite grades one group end to end and checks every
    variant in one process: ``python -m course.grading variants``).
    """
    source = read(notebook_path(assignment, root))
    sols = solution_cells(source)
    graded = set(graded_cells(source))
    subs = [Submission("solution", {}), Submission("empty", None, must_fail=set(graded), must_pass=set())]
    mutants = load_variants(assignment, "mutant", root)
    alternatives = load_variants(assignment, "alternative", root)
    for v in mutants + alternatives:
        if v.cell not in sols:
            raise ValueError(f"{v.kind} {v.name}: no solution cell {v.cell!r} in {assignment}")
        unknown = set(v.fails) - graded
        if unknown:
            raise ValueError(f"{v.kind} {v.name}: FAILS names unknown grade cells {sorted(unknown)}")
    for i, group in enumerate(_groups(mutants)[:depth], 1):
        subs.append(Submission(f"mutants-{i}", {v.cell: v.source for v in group},
                               must_fail={c for v in group for c in v.fails},
                               variants=[v.name for v in group]))
    for i, group in enumerate(_groups(alternatives)[:depth], 1):
        subs.append(Submission(f"alternatives-{i}", {v.cell: v.source for v in group},
                               variants=[v.name for v in group]))
    if tamper and mutants:
        first = _groups(mutants)[0]
        subs.append(Submission("tamper", {v.cell: TAMPER_PRELUDE + v.source for v in first},
                               must_fail={c for v in first for c in v.fails}, must_pass=set(),
                               variants=[f"tamper+{v.name}" for v in first]))
    if attacks:
        first_cell = next(iter(sols))
        for name, (code, flag) in ATTACKS.items():
            subs.append(Submission(f"attack-{name}", {first_cell: code}, must_fail=set(graded), must_pass=set(),
                                   variants=[name], base="release", must_flag=(flag,)))
    return subs


def build_notebook(release: nbformat.NotebookNode, source: nbformat.NotebookNode,
                   replacements: dict[str, str] | None, base: str = "solution") -> nbformat.NotebookNode:
    """Return a student submission: the release notebook with every solution cell answered.

    Cells named in ``replacements`` get that text; the others get the source's
    solution (markers removed), or keep the release's stub if ``base`` is
    "release". ``None`` returns the release unchanged.
    """
    nb = nbformat.from_dict(release)
    if replacements is None:
        return nb
    sols = solution_cells(source)
    for cell in nb.cells:
        gid = grade_id(cell)
        if gid in sols:
            if gid in replacements:
                cell.source = replacements[gid]
            elif base == "solution":
                cell.source = strip_markers(sols[gid])
    return nb


def make_course(dest: Path, assignments: list[str], root: Path = REPO) -> Path:
    """Copy ``nbgrader_config.py`` and the chapters' ``source/`` folders into ``dest``; return it."""
    return nbgrader_io.make_course(dest, assignments, root)


def generate(course: Path, assignment: str, db: Path) -> Path:
    """Run ``nbgrader generate_assignment`` in ``course``; return the release folder."""
    return nbgrader_io.generate(course, assignment, nbgrader_io.sqlite(db))


@dataclass
class Graded:
    """Result of grading a plan: per-student per-cell scores, timings and (judge mode) the judge's reports."""

    course: Path
    scores: dict[str, dict[str, tuple[float, float]]]
    seconds: dict[str, float]
    submissions: list[Submission]
    reports: dict[str, dict] = field(default_factory=dict)
    mode: str = "judge"
    wall_seconds: float = 0.0
    timing: dict = field(default_factory=dict)  # the class pipeline's phases (judge mode)


def read_scores(db: Path, assignment: str, notebook: str) -> dict[str, dict[str, tuple[float, float]]]:
    """Return {student: {grade_id: (score, max_score)}} from an nbgrader gradebook file."""
    return nbgrader_io.read_scores(nbgrader_io.sqlite(db), assignment, notebook)


def write_submissions(course: Path, assignment: str, submissions: list[Submission],
                      release_dir: Path) -> None:
    """Write each submission as ``submitted/<student>/<assignment>/<notebook>`` in ``course``."""
    source_nb_path = notebook_path(assignment, course)
    source = read(source_nb_path)
    release = read(release_dir / source_nb_path.name)
    for sub in submissions:
        dest = course / "submitted" / sub.student / assignment
        dest.mkdir(parents=True, exist_ok=True)
        for extra in release_dir.iterdir():  # supporting files the release ships
            if extra.name != source_nb_path.name and extra.is_file():
                shutil.copy2(extra, dest / extra.name)
        nbformat.write(build_notebook(release, source, sub.replacements, sub.base), str(dest / source_nb_path.name))


def grade(assignment: str, submissions: list[Submission], workdir: Path | None = None,
          root: Path = REPO, mode: str = "judge", seed: int | None = None, jobs: int = 1) -> Graded:
    """Generate the assignment in a scratch course, grade ``submissions``, return their scores.

    ``mode`` "judge" (the default) grades through the class pipeline (intake, sandboxed judge, one
    ``nbgrader autograde`` recording); "stock" runs plain ``nbgrader autograde`` with
    ``COURSE_GRADING=stock``, so the hidden tests run inside each student's kernel, as nbgrader does.
    ``seed`` fixes the key of the students' seeds.
    """
    from course.grading.classroom import pipeline as classgrade

    workdir = Path(tempfile.mkdtemp(prefix=f"grade-{assignment}-")) if workdir is None else workdir
    course = make_course(workdir / "course", [assignment], root)
    db = workdir / "gradebook.db"
    release_dir = generate(course, assignment, db)
    write_submissions(course, assignment, submissions, release_dir)
    t0 = time.perf_counter()
    reports, timing = {}, {}
    if mode == "stock":
        extra = {"COURSE_GRADING": "stock", **({"COURSE_JUDGE_SEED": str(seed)} if seed else {})}
        nbgrader_io.run(["autograde", assignment, "--force"], course, nbgrader_io.sqlite(db), extra)
    else:
        result = classgrade.grade_class(course, [assignment], jobs=jobs, force=True, db_url=nbgrader_io.sqlite(db),
                                        key=seed or 0, progress=False, log=lambda *_: None)
        reports = {s: r.to_json() for s, r in result.reports.get(assignment, {}).items()}
        timing = result.timing
        for ch, student, why in result.failures:
            flags = reports.setdefault(student, {}).setdefault("flags", [])
            if not any(why in f for f in flags):
                flags.append(f"not graded: {why}")
    elapsed = time.perf_counter() - t0
    scores = read_scores(db, assignment, notebook_path(assignment, course).stem)
    seconds = {s.student: reports.get(s.student, {}).get("seconds", elapsed / max(1, len(submissions)))
               for s in submissions}
    return Graded(course=course, scores=scores, seconds=seconds, submissions=submissions, reports=reports,
                  mode=mode, wall_seconds=elapsed, timing=timing)


def problems(graded: Graded, submissions: list[Submission] | None = None) -> list[str]:
    """Return human-readable violations of each submission's expected outcome (empty list: all as expected)."""
    out = []
    for sub in submissions or graded.submissions:
        got = graded.scores.get(sub.student)
        if got is None:
            out.append(f"{sub.student}: no grades recorded (autograde did not grade it)")
            continue
        must_pass = set(got) - sub.must_fail if sub.must_pass is None else sub.must_pass
        for cell in sorted(sub.must_fail):
            score, maximum = got.get(cell, (0.0, 0.0))
            if score >= maximum:
                out.append(f"{sub.student} ({', '.join(sub.variants) or 'release'}): {cell} kept its "
                           f"{score:g}/{maximum:g} points but should have lost them")
        for cell in sorted(must_pass):
            score, maximum = got.get(cell, (0.0, 0.0))
            if score < maximum:
                out.append(f"{sub.student} ({', '.join(sub.variants) or 'solution'}): {cell} got "
                           f"{score:g}/{maximum:g} but should have full marks")
        if graded.mode == "judge" and sub.must_flag:
            flags = " | ".join(graded.reports.get(sub.student, {}).get("flags", []))
            for phrase in sub.must_flag:
                if phrase not in flags:
                    out.append(f"{sub.student}: the report should flag {phrase!r}, flags were: {flags or 'none'}")
    return out


def table(graded: Graded) -> str:
    """Return a per-student, per-grade-cell table of points, with totals."""
    students = [s.student for s in graded.submissions if s.student in graded.scores]
    cells = sorted({c for s in students for c in graded.scores[s]})
    width = max([len(c) for c in cells] + [10])
    head = f"{'grade cell':<{width}} " + " ".join(f"{s[:14]:>14}" for s in students)
    lines = [head, "-" * len(head)]
    for c in cells:
        row = []
        for s in students:
            score, maximum = graded.scores[s].get(c, (0.0, 0.0))
            row.append(f"{score:g}/{maximum:g}".rjust(14))
        lines.append(f"{c:<{width}} " + " ".join(row))
    totals = []
    for s in students:
        got = sum(v[0] for v in graded.scores[s].values())
        maximum = sum(v[1] for v in graded.scores[s].values())
        totals.append(f"{got:g}/{maximum:g}".rjust(14))
    lines.append("-" * len(head))
    lines.append(f"{'TOTAL':<{width}} " + " ".join(totals))
    return "\n".join(lines)


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


def release(root: Path = REPO, only: list[str] | None = None) -> list[Path]:
    """Regenerate ``release/<chapter>/`` from ``source/`` with ``nbgrader generate_assignment``; return the folders.

    Uses a throwaway gradebook (``.demo/release.db``); students' working copies (``my_work/``) are separate
    and never touched.
    """
    demo_dir = root / ".demo"
    demo_dir.mkdir(exist_ok=True)
    return nbgrader_io.release(root, only or chapters(root), nbgrader_io.sqlite(demo_dir / "release.db"))


DEMO_DB = Path(".demo") / "gradebook.db"


DEMO_WRONG = 3  # students with wrong answers per chapter in the demo class (each holds one mutant per exercise)


def demo_class(root: Path, assignment: str, wrong: int = DEMO_WRONG) -> list[Submission]:
    """The demo class of one chapter: the reference, the untouched release, and ``wrong`` students with wrong
    answers (the first mutant groups; ``python -m course.grading check`` grades them all)."""
    subs = [s for s in plan(assignment, root, tamper=False, depth=wrong) if not s.student.startswith("alternatives")]
    names = {"solution": "demo-full-marks", "empty": "demo-empty"}
    for sub in subs:
        sub.student = names.get(sub.student, "demo-" + sub.student.replace("mutants", "wrong"))
    return subs


def demo(root: Path = REPO, only: list[str] | None = None, jobs: int = 0, log=print, wrong: int = DEMO_WRONG) -> int:
    """``make grade``: regenerate release/, grade a demo class in submitted/ with ``grade-class``, write grades.csv.

    Uses its own gradebook (``.demo/gradebook.db``, git-ignored), so the instructor's ``gradebook.db`` is never
    touched; ``nbgrader_config.py`` points nbgrader at it while ``COURSE_GRADEBOOK_URL`` says so (``make instructor
    GRADEBOOK=.demo/gradebook.db`` shows it in Formgrader; ``make feedback-demo`` writes its feedback).
    Every chapter is generated; ``only`` limits which chapters get a graded demo class. Says what it will cost
    before it starts, and shows progress.
    """
    from course.grading.classroom import pipeline as classgrade

    root = Path(root).resolve()
    (root / ".demo").mkdir(exist_ok=True)
    db = root / DEMO_DB
    if db.exists():
        db.unlink()
    db_url = nbgrader_io.sqlite(db)
    todo = only or chapters(root)
    classes = {a: demo_class(root, a, wrong) for a in todo}
    n = sum(len(v) for v in classes.values())
    jobs = jobs or os.cpu_count() or 1
    log(f"make grade: {n} demo submissions over {len(todo)} chapter(s), graded through the judge with {jobs} "
        f"process(es). Expect about {max(1, round(n * 25 / jobs / 60))} to {max(2, round(n * 60 / jobs / 60))} "
        f"minutes on 2 cores (each submission runs in its own sandbox: 10 to 60 s of CPU).", flush=True)
    for assignment in chapters(root):
        nbgrader_io.generate(root, assignment, db_url)
    status = 0
    rows = []
    for assignment in todo:
        t0 = time.perf_counter()
        source_nb = notebook_path(assignment, root)
        source, release_nb = read(source_nb), read(root / "release" / assignment / source_nb.name)
        subs = classes[assignment]
        for sub in subs:
            dest = root / "submitted" / sub.student / assignment
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            nbformat.write(build_notebook(release_nb, source, sub.replacements, sub.base), str(dest / source_nb.name))
        log(f"\n== {assignment}: {len(subs)} submissions", flush=True)
        result = classgrade.grade_class(root, [assignment], jobs=jobs, force=True, db_url=db_url, progress=True,
                                        only=[s.student for s in subs], log=lambda *a, **k: None)
        graded = Graded(course=root, scores=read_scores(db, assignment, source_nb.stem), seconds={}, submissions=subs)
        log(f"== {assignment} ({time.perf_counter() - t0:.0f} s)")
        for s in subs:
            log(f"   {s.student:<18} {', '.join(s.variants) or ('the reference solutions' if s.replacements == {} else 'the untouched release')}")
        log(table(graded))
        bad = problems(graded)
        for line in bad:
            log("   PROBLEM:", line)
        status |= bool(bad)
        for student, cells in graded.scores.items():
            for cell, (score, maximum) in sorted(cells.items()):
                rows.append({"assignment": assignment, "student": student, "grade_cell": cell,
                             "score": score, "max_score": maximum})
    with open(root / "grades.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["assignment", "student", "grade_cell", "score", "max_score"])
        writer.writeheader()
        writer.writerows(rows)
    log(f"\nwrote {root / 'grades.csv'} ({len(rows)} rows) and autograded/; gradebook: {db}\n"
        f"Feedback for the demo class: COURSE_GRADEBOOK_URL={db_url} nbgrader generate_feedback CHAPTER "
        f"(or `make feedback-demo`)")
    return status


# --- damaged submissions (what comes back from real students' editors) ----------------------------

def _solution_nb(course: Path, assignment: str, release_dir: Path) -> dict:
    import json
    sub = Submission("x", {})
    nb = build_notebook(read(release_dir / notebook_path(assignment, course).name),
                        read(notebook_path(assignment, course)), sub.replacements)
    return json.loads(nbformat.writes(nb))


def write_damaged(course: Path, assignment: str, release_dir: Path) -> dict[str, tuple[str, bool]]:
    """Write one damaged copy of the reference solutions per kind of damage into ``submitted/damaged-<kind>/``.

    Returns ``{student: (what was done, whether full marks are expected after repair)}``.
    """
    import json
    import random as _random

    name = notebook_path(assignment, course).name
    base = _solution_nb(course, assignment, release_dir)
    cells = base["cells"]
    sol_idx = [i for i, c in enumerate(cells) if is_solution(nbformat.from_dict(c))]
    test_idx = [i for i, c in enumerate(cells) if is_grade(nbformat.from_dict(c))]
    out: dict[str, tuple[str, bool]] = {}

    def put(student: str, nb_or_text, what: str, full: bool, filename: str = name) -> None:
        d = course / "submitted" / student / assignment
        d.mkdir(parents=True, exist_ok=True)
        text = nb_or_text if isinstance(nb_or_text, str) else json.dumps(nb_or_text, indent=1)
        (d / filename).write_text(text)
        out[student] = (what, full)

    def copy():
        return json.loads(json.dumps(base))

    put("damaged-invalid-json", json.dumps(base)[: len(json.dumps(base)) // 2], "truncated JSON", False)
    put("damaged-renamed", copy(), "saved as 'name (1).ipynb'", True, filename=name.replace(".ipynb", " (1).ipynb"))
    nb = copy()
    del nb["cells"][test_idx[0]]
    put("damaged-deleted-cells", nb, "a test cell deleted", True)
    nb = copy()
    nb["cells"].insert(sol_idx[0] + 1, json.loads(json.dumps(nb["cells"][sol_idx[0]])))
    nb["cells"].insert(test_idx[-1] + 2, json.loads(json.dumps(nb["cells"][test_idx[-1] + 1])))
    put("damaged-duplicated-cells", nb, "a solution cell and a test cell duplicated", True)
    nb = copy()
    c = nb["cells"][sol_idx[0]]
    c["cell_type"] = "markdown"
    c.pop("outputs", None)
    c.pop("execution_count", None)
    put("damaged-retyped-cell", nb, "a solution cell turned into markdown", True)
    nb = copy()
    first_md = max(i for i in range(sol_idx[0]) if nb["cells"][i]["cell_type"] == "markdown")
    block = nb["cells"][first_md:sol_idx[1]] if len(sol_idx) > 1 else []
    if block:
        rest = nb["cells"][:first_md] + nb["cells"][sol_idx[1]:]
        nb["cells"] = rest[:-2] + block + rest[-2:]
    put("damaged-reordered-cells", nb, "the first exercise moved to the end", True)
    nb = copy()
    for i in sol_idx:
        nb["cells"][i]["metadata"]["nbgrader"]["grade_id"] += "-renamed"
    put("damaged-changed-grade-ids", nb, "every solution cell's grade_id changed", True)
    nb = copy()
    for c in nb["cells"]:
        c["metadata"] = {}
        c.pop("id", None)
    nb["nbformat_minor"] = 4
    put("damaged-stripped-metadata", nb, "all cell metadata and ids stripped (as some editors do)", True)
    nb = copy()
    rng = _random.Random(0)
    blob = "".join(rng.choice("abcdef0123456789") for _ in range(1024)) * (60 * 1024)
    nb["cells"][sol_idx[0] - 1 if cells[sol_idx[0] - 1]["cell_type"] == "code" else sol_idx[0]]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": blob}]
    put("damaged-huge-outputs", nb, "60 MiB of output saved in the notebook", True)
    return out
