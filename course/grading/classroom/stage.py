"""Phase 1 of :mod:`.pipeline`: the class's submissions, staged through the intake and the repair.

An LMS download is checked and unpacked (:func:`collect_zip`); each ``submitted/<student>/<chapter>/`` is staged
into ``.judge/staged/`` (:func:`stage`: no link followed, no special file opened, caps, damaged notebooks
repaired; the submitted files are never modified); :func:`input_key` names what its grade depends on, and
:func:`already_graded` says whether that was graded before.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from course.grading import paths
from course.grading.config import Limits
from course.grading.intake import files as intake
from course.grading.intake import repair
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.run import saved as runs


def collect_zip(root: Path, chapter: str, archive: Path, regexp: str) -> None:
    """Check an LMS download with the intake, then unpack it with ``nbgrader zip_collect`` into ``submitted/``."""
    problems = intake.check_zip(archive)
    if problems:
        raise RuntimeError("refusing to unpack the archive: " + "; ".join(problems))
    dest = root / "downloaded" / chapter / "archive"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(archive, dest / archive.name)
    nbgrader_io.run(["zip_collect", chapter, "--force", f"--FileNameCollectorPlugin.named_regexp={regexp}"], root)


def students_of(root: Path, chapter: str) -> list[str]:
    """The students with a submission of ``chapter`` (plain ids, real folders: see :func:`intake.students`)."""
    return intake.students(Path(root) / "submitted", chapter)[0]


def stage(root: Path, chapter: str, student: str, limits: Limits) -> tuple[Path, dict]:
    """Stage one submission through the intake and the repair; return the staged folder and its notes."""
    release_nb = next((root / "release" / chapter).glob("*.ipynb"))
    staged = paths.judge_dir(root) / "staged" / student / chapter
    rep, report = repair.stage(root / "submitted" / student / chapter, staged, chapter, release_nb, student, limits)
    collected = intake.read_intake_log(root, chapter, student)
    if collected is not None:
        report.merge(collected)
    notes = {"intake": report.to_json() if not report.clean else {},
             "repair": {"damaged": rep.damaged, "repaired": rep.repaired, "file": rep.source_file},
             "flags": report.flags()}
    runs.notes_path(root, chapter, student).write_text(json.dumps(notes))
    return staged, notes


def input_key(staged_notebook: Path, notes: dict, course_key: str, seed: int) -> str:
    """What a submission's grade depends on: its staged notebook, the intake's and the repair's notes, the
    course's hidden tests and helpers (``course_key``) and its seed."""
    return hashlib.sha256(Path(staged_notebook).read_bytes() + json.dumps(notes).encode()
                          + f"{course_key}|{seed}".encode()).hexdigest()[:24]


def already_graded(root: Path, db_url: str, chapter: str, student: str, input_key: str) -> bool:
    try:
        meta = json.loads((runs.run_dir(root, chapter, student) / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    if meta.get("input_key") != input_key or not meta.get("graded"):
        return False
    from nbgrader.api import Gradebook, MissingEntry
    try:
        with Gradebook(db_url) as gb:
            gb.find_submission(chapter, student)
    except MissingEntry:
        return False
    return (root / "autograded" / student / chapter).is_dir()
