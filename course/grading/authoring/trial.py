"""Known answers graded for real. :func:`plan` turns the known answers (:mod:`.answers`)
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

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.grading import paths
from course.grading.judge.answers import Variant, graded_cells, load_variants, solution_cells, strip_markers
from course.grading.authoring.attacks import ATTACKS, TAMPER_PRELUDE
from course.grading.authoring.notebooks import notebook_path, read, release
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.records import grade_id


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


def _groups(variants: list[Variant]) -> list[list[Variant]]:
    """Combine variants into groups with at most one variant per solution cell."""
    by_cell: dict[str, list[Variant]] = {}
    for v in variants:
        by_cell.setdefault(v.cell, []).append(v)
    depth = max((len(vs) for vs in by_cell.values()), default=0)
    return [[vs[i] for vs in by_cell.values() if i < len(vs)] for i in range(depth)]


def plan(assignment: str, root: Path = paths.REPO, tamper: bool = True, attacks: bool = False,
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


def make_course(dest: Path, assignments: list[str], root: Path = paths.REPO) -> Path:
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
          root: Path = paths.REPO, mode: str = "judge", seed: int | None = None, jobs: int = 1) -> Graded:
    """Generate the assignment in a scratch course, grade ``submissions``, return their scores.

    ``mode`` "judge" (the default) grades through the class pipeline (intake, sandboxed judge, one
    ``nbgrader autograde`` recording); "stock" runs plain ``nbgrader autograde`` with
    ``COURSE_GRADING=stock``, so the hidden tests run inside each student's kernel, as nbgrader does.
    ``seed`` fixes the key of the students' seeds.
    """
    from course.grading.classroom import pipeline

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
        result = pipeline.grade_class(course, [assignment], jobs=jobs, force=True, db_url=nbgrader_io.sqlite(db),
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
