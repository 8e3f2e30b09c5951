"""Grade a class: ``python -m course.grading grade-class CHAPTER...`` (and ``autograde``, one chapter).

Four phases, per chapter, each in a module of its own, called in this order by :func:`grade_class`:

1. **Stage** (:mod:`.stage`) every ``submitted/<student>/<chapter>/`` into ``.judge/staged/``
   through the intake (:mod:`course.grading.intake.files`: no link followed, no
   special file opened, caps) and the repair of damaged notebooks
   (:mod:`course.grading.intake.repair`). The submitted files are never modified.
2. **Run** (:mod:`.task` for one submission, :mod:`.pools` for the class) the staged submissions, each in its own sandbox
   (:mod:`course.grading.run.worker`), each in a grading process of its own with
   a memory cap, so that one submission that kills its grading process costs
   only its own grade: locally, ``--jobs`` processes at a time (a forkserver
   that has imported the grading code once), whose first tasks are the
   reference runs (one per chapter, for every student's seed), so that they
   run beside the submissions instead of before them; or on a Dask cluster
   (``--dask SCHEDULER``), one task per submission, where a worker that dies
   mid-run costs a retry on another worker (the references then run first, on
   this machine: their values never travel). Each run is saved under
   ``.judge/runs/<chapter>/<student>/``: the executed notebook and the probes'
   raw results, read back later only through the wire's checks. A submission
   whose staged notebook, hidden tests, seed and course helpers are unchanged
   since its last graded run is skipped (``--force`` regrades it).
3. **Record** (:mod:`.gradebook`): one ``nbgrader autograde`` for the chapter, over the staged
   folder, with the judge's preprocessors reading those saved runs and the
   references. It is the only writer of the gradebook, and runs after every
   submission of the class has run (the grading processes read the gradebook).
4. **Report** (:mod:`.tables`, :mod:`.feedback`, :mod:`.analysis`): a per-student table (score per chapter; flags), always printed,
   also when nbgrader refused someone; with ``--feedback``, a
   ``feedback/<student>/<chapter>/grader.md`` per student.

Dask needs, on every worker node: this course's virtual environment at the
same path, bubblewrap, and a shared filesystem holding the course folder
(``.judge/staged`` is read, ``.judge/runs`` written). The sandbox maps onto the
node: each task builds its bubblewrap sandbox there, and a worker without it
refuses. Only ``tls://`` schedulers, with the course's certificates: see
:mod:`course.grading.classroom.dask_tls`.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import nbformat

from course.grading import paths
from course.grading.classroom import analysis, gradebook, pools, stage
from course.grading.classroom import feedback as student_feedback
from course.grading.classroom.task import Task, references_task
from course.grading.config import Limits
from course.grading.intake import files as intake
from course.grading.judge import references
from course.grading.judge.verdicts import JudgeError, load
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.records import ClassResult, Report, points
from course.grading.text import one_line


def grade_class(root: Path, chapters: list[str], jobs: int | None = None, force: bool = False,
                db_url: str | None = None, key: int = 0, limits: Limits | None = None, feedback: bool = False,
                show_tests: bool = False, progress: bool = True, dask: str | None = None,
                only: list[str] | None = None, log=print, dask_certs: Path | str | None = None,
                require_sandbox: bool = False, dask_allow_degraded: bool = False,
                solutions: bool = False) -> ClassResult:
    """Grade every submission of ``chapters`` (or only the students in ``only``); see the module docstring.

    ``key``: a fixed key for the students' seeds (tests); 0 uses the installation's secret. ``dask``: a
    ``tls://`` scheduler address, reached with the certificates in ``dask_certs`` (default ``.judge/dask``);
    ``require_sandbox`` then also applies to every worker, and ``dask_allow_degraded`` lets workers
    without the sandbox grade (:func:`.pools.run_dask`). ``feedback``: a ``grader.md`` per student;
    ``solutions`` (with it): the worked solutions of the attempted exercises, for chapters whose due date has
    passed (:func:`.feedback.worked_solutions`).
    """
    from course.grading.run.sandbox import detect
    from course.grading.run.scratch import private_tmpdir

    private_tmpdir()  # before the pool starts: every grading process inherits the one private folder
    root = Path(root).resolve()
    if dask:
        dask_certs = _check_cluster(root, dask, dask_certs, require_sandbox, dask_allow_degraded)
    jobs = jobs or os.cpu_count() or 1
    limits = limits or Limits()
    db_url = db_url or nbgrader_io.sqlite(root / "gradebook.db")
    out = ClassResult()
    t0 = time.perf_counter()
    gradebook.check_gradebook(db_url, chapters)
    # 1. Stage
    tasks = _stage_all(root, chapters, only, force, key, limits, db_url, threads=1 if (jobs > 1 or dask) else None,
                       out=out)
    out.timing["stage"] = time.perf_counter() - t0
    where = f"Dask at {dask}" if dask else f"{jobs} local process(es)"
    log(f"{len(tasks)} submission(s) to grade, {len(out.skipped)} unchanged and already graded (--force regrades "
        f"them); {where}; {'sandbox: bubblewrap' if not detect().degraded else 'WARNING: no sandbox: ' + detect().why}")
    # 2. Run: the references (trusted: once per chapter, every student's seed in one run) and the students'
    # submissions. Locally the references are the pool's first tasks, so they run beside the submissions instead
    # of before them; on Dask they run here first (their values stay on this machine).
    ref_dir = Path(tempfile.mkdtemp(prefix="judge-refs-"))
    os.chmod(ref_dir, 0o700)
    try:
        t1 = time.perf_counter()
        ref_tasks = _references(root, chapters, tasks, limits, ref_dir, run_here=bool(dask),
                                threads=1 if jobs > 1 else None)
        out.timing["references"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        out.failures += _run(tasks, jobs, dask, dask_certs, require_sandbox, dask_allow_degraded, progress, log,
                             ref_tasks, out.timing)
        out.timing["workers"] = time.perf_counter() - t2
        # 3. Record
        t3 = time.perf_counter()
        for chapter in chapters:
            failed = {s for ch, s, _ in out.failures if ch == chapter}
            todo = [t["student"] for t in tasks if t["chapter"] == chapter and t["student"] not in failed]
            if any(t["chapter"] == chapter for t in tasks):
                out.failures += gradebook.record(root, chapter, todo, Path(ref_tasks[chapter]["file"]), db_url, key)
        out.timing["record"] = time.perf_counter() - t3
    finally:
        shutil.rmtree(ref_dir, ignore_errors=True)  # the reference values leave nothing behind
    out.timing["total"] = time.perf_counter() - t0
    out.graded = [(t["chapter"], t["student"]) for t in tasks]
    # 4. Report
    for chapter in chapters:
        if reports := _reports(root, chapter, only, out):
            out.reports[chapter] = reports
    if feedback:
        student_feedback.write_feedback(root, out, chapters, show_tests, db_url=db_url if solutions else None, log=log)
    for chapter in chapters:
        _analysis(root, chapter, out, log)
    return out


def _check_cluster(root: Path, dask: str, dask_certs, require_sandbox: bool, allow_degraded: bool) -> Path:
    """Before any staging: the cluster answers, with our certificates, and has the workers we require."""
    from course.grading.classroom import dask_tls

    dask_tls.check_address(dask)
    dask_certs = Path(dask_certs) if dask_certs else root / dask_tls.DEFAULT_DIR
    dask_tls.check_certs(dask_certs, dask_tls.INSTRUCTOR)
    with dask_tls.no_unpickling():
        client = dask_tls.client(dask, dask_certs)
        try:
            pools.dask_workers(client, require_sandbox, allow_degraded, log=lambda *a: None)
        finally:
            dask_tls.close(client)
    return dask_certs


def _stage_all(root: Path, chapters: list[str], only, force: bool, key: int, limits: Limits, db_url: str,
               threads: int | None, out: ClassResult) -> list[dict]:
    """Stage every submission; return the tasks to run (those changed since their last grading, or all with
    ``force``). Refused folders go to ``out.failures``, unchanged submissions to ``out.skipped``."""
    tasks: list[dict] = []
    for chapter in chapters:
        release_nb = next((root / "release" / chapter).glob("*.ipynb"))
        course_key = references.cache_key(chapter, root, 0, load(chapter, root))
        students, refused = intake.students(root / "submitted", chapter)
        for name, why in refused.items():
            out.failures.append((chapter, name, f"not graded: {why}"))
        for student in students:
            if only and student not in only:
                continue
            staged, notes = stage.stage(root, chapter, student, limits)
            seed = references.seed_for(root, chapter, student, key or None)
            input_key = stage.input_key(staged / release_nb.name, notes, course_key, seed)
            task = Task(root=str(root), chapter=chapter, student=student, staged=str(staged),
                        notebook_file=release_nb.name, seed=seed, input_key=input_key, db_url=db_url,
                        limits=limits.as_dict(), threads=threads)
            if not force and stage.already_graded(root, db_url, chapter, student, input_key):
                out.skipped.append((chapter, student))
            else:
                tasks.append(asdict(task))
    return tasks


def _references(root: Path, chapters: list[str], tasks: list[dict], limits: Limits, ref_dir: Path,
                run_here: bool, threads: int | None) -> dict[str, dict]:
    """The reference run of each chapter with something to grade, for every seed to be graded, saved in ``ref_dir``:
    ``{chapter: task}`` (:func:`.task.references_task`; its ``file`` is what the gradebook phase reads). With
    ``run_here`` they run now, in this process (with every core); else they are tasks for the local pool
    (:func:`_run`), with the students' ``threads``."""
    ref_tasks = {}
    for chapter in chapters:
        seeds = sorted({t["seed"] for t in tasks if t["chapter"] == chapter})
        if seeds:
            ref_tasks[chapter] = references_task(root, chapter, seeds, limits, ref_dir / f"{chapter}.pt", threads)
            if run_here:
                references.save(references.compute(chapter, root, seeds, limits), ref_dir / f"{chapter}.pt")
    return ref_tasks


def _reference_failed(task: dict, why: str) -> None:
    """Raise :class:`JudgeError` if the reference run ``task`` did not run cleanly (nobody is graded then)."""
    error = Path(task["file"] + ".error")
    if error.is_file():
        raise JudgeError(error.read_text())
    if why or not Path(task["file"]).is_file():
        raise JudgeError(f"the reference run of {task['chapter']} failed: {why or 'it saved nothing'}")


def _run(tasks: list[dict], jobs: int, dask: str | None, dask_certs, require_sandbox: bool, allow_degraded: bool,
         progress: bool, log, ref_tasks: dict[str, dict], timing: dict[str, float]) -> list[tuple[str, str, str]]:
    """Each task in a grading process of its own, locally (the references first, see :func:`_references`; the
    seconds until the last of them ended go to ``timing["references"]``) or on Dask; the failures. A reference
    that fails stops the run (:class:`JudgeError`) as soon as it ends."""
    from tqdm import tqdm

    if not tasks:
        return []
    bar = tqdm(total=len(tasks), desc="grading", unit="submission", disable=not progress, file=sys.stdout)
    t0 = time.perf_counter()
    with bar:
        if dask:
            return pools.run_dask(tasks, dask, bar, certs=dask_certs, require_sandbox=require_sandbox,
                                  allow_degraded=allow_degraded, log=log)

        def done(task: dict, why: str) -> None:
            if task.get("kind") == "references":
                _reference_failed(task, why)
                timing["references"] = time.perf_counter() - t0
            else:
                bar.update(1)

        failures = pools.run_local(list(ref_tasks.values()) + tasks, jobs, None, done)
    for task in ref_tasks.values():  # (a reference that ended last)
        _reference_failed(task, "")
    return failures


def _reports(root: Path, chapter: str, only, out: ClassResult) -> dict[str, Report]:
    """Every student's report of ``chapter``: the judge's, or a not-graded one saying why."""
    release_nb = next((root / "release" / chapter).glob("*.ipynb"))
    max_score = sum(points(c) for c in nbformat.read(str(release_nb), 4).cells)
    reports = {}
    for student in stage.students_of(root, chapter):
        if only and student not in only:
            continue
        r = Report.load(paths.report_path(root, chapter, student))
        why = next((w for ch, s, w in out.failures if ch == chapter and s == student), "")
        if r is None or (chapter, student) in out.graded and why:
            r = Report.not_graded(chapter, student, why or "no report was written", max_score)
        reports[student] = r
    for name, why in intake.students(root / "submitted", chapter)[1].items():
        reports[name] = Report.not_graded(chapter, name, why, max_score)
    return reports


def _analysis(root: Path, chapter: str, out: ClassResult, log) -> None:
    """The chapter's item analysis, over the whole class (also when only some students were graded now)."""
    everyone = {p.stem: r for p in sorted((paths.judge_dir(root) / "reports" / chapter).glob("*.json"))
                if (r := Report.load(p)) is not None}
    everyone.update(out.reports.get(chapter, {}))
    if not everyone:
        return
    try:
        out.analysis[chapter] = analysis.write(root, chapter, everyone)
    except Exception as err:  # noqa: BLE001 - the grades are recorded; the analysis must not stop the run
        log(f"{chapter}: the item analysis was not written: {type(err).__name__}: {one_line(str(err), 200)}")
