"""The one layer between the course and nbgrader: its environment, its command line, its configuration hooks.

* :func:`env` is the only place that builds nbgrader's environment (the
  virtual environment's ``bin/`` first on ``PATH``, because nbgrader calls
  ``alembic``; offline; no ``MPLBACKEND`` leaking into kernels).
* :func:`run` is the only place that calls nbgrader's command line.
* :func:`install` is what ``nbgrader_config.py`` calls: the judge's
  preprocessors in nbgrader's autograde list, :class:`SafeNotebook` in every
  ``HTMLExporter`` (Formgrader's pages, ``generate_feedback``), the intake's
  :class:`~course.grading.nbgrader.collect.SafeCollect` for ``nbgrader collect``, and
  a guard that makes a plain ``nbgrader autograde`` (Formgrader's button)
  refuse a submission folder that holds links or special files before
  nbgrader copies anything from it (``grade-class`` stages such a folder
  through the intake instead, and grades what is safe).
* Gradebook helpers: :func:`read_scores`, :func:`name_students`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def env(extra: dict[str, str] | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for nbgrader and the kernels it starts."""
    out = dict(os.environ if base is None else base)
    out["PATH"] = f"{BIN}{os.pathsep}{out.get('PATH', '')}"
    out.setdefault("HF_HUB_OFFLINE", "1")
    # Kernels use Jupyter's inline backend, as students see it, so executed and autograded copies hold the
    # figures; a non-interactive MPLBACKEND (a test module's Agg) would drop them.
    out.pop("MPLBACKEND", None)
    out.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    out.update(extra or {})
    return out


def run(args: list[str], cwd: Path, db_url: str | None = None, extra_env: dict[str, str] | None = None,
        check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in ``cwd`` (against ``db_url`` if given); raise with its log if ``check`` and it fails."""
    cmd = [str(BIN / "nbgrader"), *args]
    if db_url:
        cmd.append(f"--CourseDirectory.db_url={db_url}")
    proc = subprocess.run(cmd, cwd=cwd, env=env(extra_env), capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    return proc


def sqlite(path: Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def make_course(dest: Path, assignments: list[str], root: Path) -> Path:
    """Copy ``nbgrader_config.py`` and the chapters' ``source/`` folders into ``dest`` (a scratch course)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "nbgrader_config.py", dest / "nbgrader_config.py")
    for a in assignments:
        shutil.copytree(root / "source" / a, dest / "source" / a,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return dest


def generate(course: Path, assignment: str, db_url: str) -> Path:
    """``nbgrader generate_assignment`` in ``course``; return the release folder."""
    run(["generate_assignment", assignment, "--force"], course, db_url)
    return course / "release" / assignment


def release(root: Path, chapters: list[str], db_url: str, log=print) -> list[Path]:
    """Regenerate ``release/<chapter>/`` from ``source/`` for each chapter; return the folders."""
    out = []
    for chapter in chapters:
        out.append(generate(root, chapter, db_url))
        log(f"regenerated release/{chapter}")
    return out


def read_scores(db_url: str, assignment: str, notebook: str) -> dict[str, dict[str, tuple[float, float]]]:
    """{student: {grade_id: (score, max_score)}} from an nbgrader gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, dict[str, tuple[float, float]]] = {}
    with Gradebook(db_url) as gb:
        for student in gb.students:
            try:
                snb = gb.find_submission_notebook(notebook, assignment, student.id)
            except MissingEntry:
                continue
            out[student.id] = {g.name: (float(g.score), float(g.max_score)) for g in snb.grades}
    return out


def name_students(db_url: str, students: list[str]) -> None:
    """Give students that nbgrader created without a name their id as a name (Formgrader shows "None, None")."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        for sid in students:
            try:
                s = gb.find_student(sid)
            except MissingEntry:
                continue
            if s.first_name is None and s.last_name is None:
                s.last_name, s.first_name = sid, ""
        gb.db.commit()


# --- nbgrader_config.py ------------------------------------------------------------------------------

AUTOGRADE_PREPROCESSORS = [
    "course.grading.nbgrader.execute.JudgeExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "course.grading.nbgrader.record.JudgeRecord",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
    "course.grading.nbgrader.render.SafeNotebook",
]


def install(c, judge: bool = True) -> None:
    """Configure nbgrader for the course (called from ``nbgrader_config.py``; ``judge=False``: stock grading)."""
    if judge:
        c.Autograde.autograde_preprocessors = list(AUTOGRADE_PREPROCESSORS)
    else:  # nbgrader's own list, plus the safe rendering at the end
        from nbgrader.converters import Autograde
        c.Autograde.autograde_preprocessors = [*Autograde.class_traits()["autograde_preprocessors"].default(),
                                               "course.grading.nbgrader.render.SafeNotebook"]
    c.HTMLExporter.preprocessors = ["course.grading.nbgrader.render.SafeNotebook"]
    c.ExchangeFactory.collect = "course.grading.nbgrader.collect.SafeCollect"
    guard_autograde()


def guard_autograde() -> None:
    """Make nbgrader's ``Autograde`` refuse a submission folder that the intake finds hostile, before copying it."""
    from nbgrader.converters.autograde import Autograde
    from nbgrader.converters.base import NbGraderException

    if getattr(Autograde.init_assignment, "_course_guard", False):
        return
    original = Autograde.init_assignment

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        from course.grading.intake import files as intake

        src = Path(self._format_source(assignment_id, student_id))
        report = intake.scan(src, notebook=f"{assignment_id}.ipynb")
        if not intake.valid_student_id(student_id) or not report.clean:
            why = "; ".join(report.flags()) or "the student id is not a plain name"
            msg = (f"refusing to grade {src}: {why}. `python -m course.grading autograde {assignment_id}` "
                   f"stages it through the intake and grades what is safe.")
            self.log.error(msg)
            raise NbGraderException(msg)
        original(self, assignment_id, student_id)

    init_assignment._course_guard = True
    Autograde.init_assignment = init_assignment
