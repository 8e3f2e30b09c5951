"""Phase 3 of :mod:`.pipeline`: one ``nbgrader autograde`` per chapter, the gradebook's only writer.

nbgrader runs over the staged folder with the judge's preprocessors (:mod:`course.grading.nbgrader.execute`),
which read the saved runs and the references instead of executing anything.
"""
from __future__ import annotations

import json
from pathlib import Path

from course.grading import paths
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.run import saved as runs
from course.grading.text import one_line


class GradebookNotReady(RuntimeError):
    """The gradebook does not know a chapter yet (it was never generated with it)."""


def check_gradebook(db_url: str, chapters: list[str]) -> None:
    """Raise :class:`GradebookNotReady` unless the gradebook knows every chapter (checked before any staging)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        for chapter in chapters:
            try:
                gb.find_notebook(chapter, chapter)
            except MissingEntry:
                raise GradebookNotReady(
                    f"the gradebook ({one_line(db_url, 120)}) does not know {chapter} yet: `make gradebook` (every "
                    f"chapter), or `nbgrader generate_assignment {chapter} --force`, or Formgrader's Generate") from None


def record(root: Path, chapter: str, todo: list[str], ref_file: Path, db_url: str, key: int) -> list[tuple[str, str, str]]:
    """One ``nbgrader autograde`` of ``chapter`` for the students in ``todo`` (those whose run did not fail), over the
    staged folder, reading the saved runs and the references in ``ref_file``; returns whom nbgrader refused, as
    ``(chapter, student, why)``."""
    staged_root = paths.judge_dir(root) / "staged"
    for s in todo:  # a report from an earlier run must not stand for this one
        paths.report_path(root, chapter, s).unlink(missing_ok=True)
    if not todo:
        return []
    failures = []
    everyone = sorted({p.parent.name for p in staged_root.glob(f"*/{chapter}")})
    args = ["autograde", chapter, "--force", f"--CourseDirectory.submitted_directory={staged_root}",
            f"--JudgeExecute.precomputed={paths.judge_dir(root) / 'runs'}",
            f"--JudgeExecute.references_file={ref_file}"]
    if key:
        args.append(f"--JudgeExecute.seed={key}")
    exclude = [s for s in everyone if s not in todo]
    if exclude:
        args.append("--CourseDirectory.student_id_exclude=" + ",".join(exclude))
    proc = nbgrader_io.run(args, root, db_url, {"COURSE_GRADING": "judge"}, check=False)
    nbgrader_io.name_students(db_url, todo)
    for student in todo:
        graded = (root / "autograded" / student / chapter).is_dir() and \
            paths.report_path(root, chapter, student).is_file()
        if not graded:
            why = _nbgrader_error(proc, student)
            failures.append((chapter, student, f"nbgrader refused it: {why}"))
        meta_path = runs.run_dir(root, chapter, student) / "meta.json"
        try:
            meta = json.loads(meta_path.read_text())
            meta["graded"] = graded
            meta_path.write_text(json.dumps(meta))
        except (OSError, ValueError):
            pass
    return failures


def _nbgrader_error(proc, student: str) -> str:
    lines = [line for line in (proc.stderr or "").splitlines() if "[AutogradeApp | ERROR]" in line]
    mine = [line for line in lines if student in line] or lines
    text = mine[0].split("ERROR]", 1)[-1] if mine else f"nbgrader exited {proc.returncode}"
    return one_line(text, 300)
