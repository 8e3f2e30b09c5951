"""One submission's grading process (phase 2 of :mod:`.pipeline`): nbgrader's sanitizing, the sandboxed run
(:mod:`course.grading.run.worker`), the saved run (:mod:`course.grading.run.saved`).

A :class:`Task` is plain data: it travels to a local grading process or a Dask worker (:mod:`.pools`), where
:func:`work` runs it under the judge's memory cap.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.grading.config import Limits
from course.grading.judge.verdicts import load
from course.grading.run import saved as runs
from course.grading.run.sandbox import cap_memory


@dataclass
class Task:
    """One submission's worker phase, as plain data (it travels to a pool process or a Dask worker)."""

    root: str
    chapter: str
    student: str
    staged: str
    notebook_file: str
    seed: int
    input_key: str
    db_url: str
    limits: dict
    threads: int | None = None

    @property
    def folder(self) -> Path:
        return runs.run_dir(Path(self.root), self.chapter, self.student)


def sanitize(nb, chapter: str, notebook: str, db_url: str):
    """What nbgrader does to a submission before executing it: its own sanitizing preprocessors, in its order."""
    from nbgrader.converters import Autograde
    from traitlets.utils.importstring import import_item

    resources = {"nbgrader": {"db_url": db_url, "assignment": chapter, "notebook": notebook}}
    for name in Autograde.class_traits()["sanitize_preprocessors"].default():
        pp = import_item(name) if isinstance(name, str) else name
        nb, resources = pp().preprocess(nb, resources)
    return nb


# --- phase 2: one submission in a grading process of its own ---------------------------------------------

def work(task: dict) -> dict:
    """One submission's worker phase: nbgrader's sanitizing, the sandboxed run, the saved run. Returns a summary.

    Runs in a fresh grading process (local) or on a Dask worker, under the judge's memory cap.
    """
    from course.grading.run.worker import run_submission

    t = Task(**task)
    limits = Limits.from_dict(t.limits)
    cap_memory(limits.judge_memory_bytes)
    t0 = time.perf_counter()
    staged = Path(t.staged)
    nb = nbformat.read(str(staged / t.notebook_file), as_version=4)
    nb = sanitize(nb, t.chapter, Path(t.notebook_file).stem, t.db_url)
    root = Path(t.root)
    judge = load(t.chapter, root)
    result = run_submission(nb, t.chapter, t.student, judge.codes(), t.seed, files=staged, limits=limits,
                            course_root=root, threads=t.threads)
    runs.save_run(t.folder, result, runs.notebook_key(nb), t.input_key, t.seed)
    return {"student": t.student, "chapter": t.chapter, "seconds": round(time.perf_counter() - t0, 2),
            "flags": result.flags, "judge_peak_mib": round(result.judge_peak_memory / 2 ** 20, 1)}


def references_task(root: Path, chapter: str, seeds: list[int], limits: Limits, file: Path,
                    threads: int | None = None) -> dict:
    """The reference run of ``chapter`` for every seed to be graded, as a task of the local pool (beside the
    students' runs: it takes one of their places, and their CPU threads, not the whole machine)."""
    return {"kind": "references", "root": str(root), "chapter": chapter, "student": "", "seeds": list(seeds),
            "limits": limits.as_dict(), "file": str(file), "threads": threads}


def references_work(task: dict) -> dict:
    """Run a :func:`references_task`: the reference's probe values saved to its ``file``; a reference that does not
    run cleanly (:class:`~course.grading.judge.verdicts.JudgeError`) leaves its message in ``file + ".error"``
    instead, and so does any other error of this process (with its traceback: nothing else would show it). No
    memory cap of the judge's: this process holds the values of every seed (as the grading command did when it
    ran the references itself)."""
    import traceback

    from course.grading.judge import references
    from course.grading.judge.verdicts import JudgeError

    t0 = time.perf_counter()
    try:
        records = references.compute(task["chapter"], Path(task["root"]), task["seeds"], Limits.from_dict(task["limits"]),
                                     threads=task.get("threads"))
        references.save(records, Path(task["file"]))
    except JudgeError as err:
        Path(task["file"] + ".error").write_text(str(err))
    except Exception as err:  # noqa: BLE001 - any failure of the reference stops the class; say which
        Path(task["file"] + ".error").write_text(f"the reference run of {task['chapter']} failed: "
                                                 f"{type(err).__name__}: {err}\n{traceback.format_exc()[-4000:]}")
    return {"chapter": task["chapter"], "references": len(task["seeds"]), "seconds": round(time.perf_counter() - t0, 2)}


def work_in_child(task: dict, out: str) -> None:
    summary = references_work(task) if task.get("kind") == "references" else work(task)
    Path(out).write_text(json.dumps(summary))
