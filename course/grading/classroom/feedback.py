"""Phase 4 of :mod:`.pipeline`, for students: one ``feedback/<student>/<chapter>/grader.md`` each, as safe markdown;
with ``--solutions``, the worked solution of each exercise they attempted, once the chapter's due date passed."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbgrader.utils import is_solution

from course.grading.intake import files as intake
from course.grading.judge.verdicts import load
from course.grading.records import ClassResult, grade_id
from course.grading.text import fenced


def due_date(db_url: str, chapter: str):
    """The chapter's last due date in the gradebook, extensions included (a naive UTC datetime, as nbgrader keeps
    them): the latest of the assignment's due date and each submission's due date plus its extension; None when
    the chapter has no due date."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        try:
            assignment = gb.find_assignment(chapter)
        except MissingEntry:
            return None
        if assignment.duedate is None:
            return None
        return max([assignment.duedate] + [s.duedate for s in assignment.submissions if s.duedate is not None])


def worked_solutions(root: Path, chapter: str, db_url: str | None, log=print) -> dict[str, tuple[str, str]] | None:
    """{exercise: (the reference solution's code, why it is right)} when solutions may be shown for ``chapter``:
    asked for (``db_url`` given), and the chapter has a due date that passed, extensions included; else None, and
    says why."""
    import datetime

    from course.grading.judge.references import reference_notebook

    if db_url is None:
        return None
    due = due_date(db_url, chapter)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    if due is None:
        log(f"{chapter}: worked solutions held back: the chapter has no due date in the gradebook (`nbgrader db "
            f"assignment add {chapter} --duedate=...`, in UTC)")
        return None
    if now < due:
        log(f"{chapter}: worked solutions held back until the last due date, extensions included: "
            f"{due:%Y-%m-%d %H:%M} UTC")
        return None
    why = load(chapter, root).why
    return {grade_id(c): (c.source.strip("\n"), why.get(grade_id(c), ""))
            for c in reference_notebook(chapter, root).cells if is_solution(c)}


def released_answers(root: Path, chapter: str) -> dict[str, str]:
    """{exercise: the release's solution cell, stripped}: what an exercise nobody attempted holds."""
    released = next((root / "release" / chapter).glob("*.ipynb"), None)
    if released is None:
        return {}
    return {grade_id(c): c.source.strip() for c in nbformat.read(str(released), 4).cells if is_solution(c)}


def attempted(root: Path, chapter: str, student: str, release: dict[str, str]) -> set[str]:
    """The exercises whose cell the student changed from the ``release``'s (:func:`released_answers`), read from
    the graded notebook."""
    graded = next((root / "autograded" / student / chapter).glob("*.ipynb"), None)
    if graded is None or not release:
        return set()
    try:
        nb = nbformat.read(str(graded), 4)
    except Exception:  # noqa: BLE001 - no graded notebook to compare: nothing counts as attempted
        return set()
    return {grade_id(c) for c in nb.cells if is_solution(c) and grade_id(c) in release
            and isinstance(c.source, str) and c.source.strip() != release[grade_id(c)]}


def write_feedback(root: Path, result: ClassResult, chapters: list[str], show_tests: bool = False,
                   db_url: str | None = None, log=print) -> None:
    """One ``grader.md`` per student and chapter: the judge's verdict and message per test, as safe markdown;
    with ``db_url`` (``--solutions``), the worked solution of each exercise the student attempted, once the
    chapter's due date has passed."""
    for chapter in chapters:
        judge = load(chapter, root) if show_tests else None
        solved = worked_solutions(root, chapter, db_url, log)
        release = released_answers(root, chapter) if solved else {}
        for student, r in result.reports.get(chapter, {}).items():
            if not intake.valid_student_id(student):
                continue
            d = root / "feedback" / student / chapter
            d.mkdir(parents=True, exist_ok=True)
            lines = [f"# {chapter}: {r.score:g} / {r.max_score:g} points", ""]
            notes = r.repair.get("repaired", []) + r.repair.get("damaged", [])
            if r.intake:
                notes += intake.IntakeReport.from_json(r.intake).flags()
            notes += [f for f in r.flags if f.startswith(("not graded", "output capped", "output refused"))]
            for note in notes:
                lines += ["Note on your submission:", "", fenced(note), ""]
            for cell, c in r.cells.items():
                mark = "passed" if c.judge == "pass" else "failed"
                lines += ["", f"## {cell}: {mark} ({c.points:g}/{c.max_points:g})"]
                if c.judge != "pass":
                    lines += ["", fenced(c.message)]
                    if judge is not None and cell in judge.probes:
                        lines += ["", "The hidden test's probe (shown at the instructor's request):", "",
                                  fenced(judge.probes[cell].source.rstrip(), "python")]
            if solved:
                tried = attempted(root, chapter, student, release)
                mine = [ex for ex in solved if ex in tried]
                if mine:
                    lines += ["", "# Worked solutions", "",
                              "The reference solution of each exercise you attempted, now that the chapter is closed."]
                for ex in mine:
                    code, why = solved[ex]
                    lines += ["", f"## {ex}", "", fenced(code, "python", limit=None)] + (["", f"Why it is right: {why}"] if why
                                                                                else [])
            (d / "grader.md").write_text("\n".join(lines) + "\n")
