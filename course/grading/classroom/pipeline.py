"""Grade a class: ``python -m course.grading grade-class CHAPTER...`` (and ``autograde``, one chapter).

Four phases, per chapter:

1. **Stage** every ``submitted/<student>/<chapter>/`` into ``.judge/staged/``
   through the intake (:mod:`course.grading.intake.files`: no link followed, no
   special file opened, caps) and the repair of damaged notebooks
   (:mod:`course.grading.intake.repair`). The submitted files are never modified.
2. **Run** the staged submissions, each in its own sandbox
   (:mod:`course.grading.run.worker`), each in a grading process of its own with
   a memory cap, so that one submission that kills its grading process costs
   only its own grade: locally, ``--jobs`` processes at a time (a forkserver
   that has imported the grading code once); or on a Dask cluster
   (``--dask SCHEDULER``), one task per submission, where a worker that dies
   mid-run costs a retry on another worker. Each run is saved under
   ``.judge/runs/<chapter>/<student>/``: the executed notebook and the probes'
   raw results, read back later only through the wire's checks. A submission
   whose staged notebook, hidden tests, seed and course helpers are unchanged
   since its last graded run is skipped (``--force`` regrades it).
3. **Record**: one ``nbgrader autograde`` for the chapter, over the staged
   folder, with the judge's preprocessors reading those saved runs and the
   references (computed once per chapter, for every student's seed, in one
   reference run). It is the only writer of the gradebook.
4. **Report**: a per-student table (score per chapter; flags), always printed,
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

import contextlib
import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import is_solution

from course.grading import paths
from course.grading.intake import files as intake
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.judge import references
from course.grading.intake import repair
from course.grading.run import saved as runs
from course.grading.config import Limits
from course.grading.judge.verdicts import load
from course.grading.run.sandbox import cap_memory
from course.grading.records import Report, grade_id, points
from course.grading.text import fenced, one_line, printable


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


@dataclass
class ClassResult:
    """What a class run produced: a report per chapter and student, and what went wrong."""

    reports: dict[str, dict[str, Report]] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    graded: list[tuple[str, str]] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)
    analysis: dict[str, tuple[Path, Path]] = field(default_factory=dict)  # chapter -> (html, csv)



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


def _work_in_child(task: dict, out: str) -> None:
    summary = work(task)
    Path(out).write_text(json.dumps(summary))


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "did not finish"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")
    return f"exited with code {code}"


def run_local(tasks: list[dict], jobs: int, bar=None) -> list[tuple[str, str, str]]:
    """Run ``tasks`` ``jobs`` at a time, each in a process of its own; return the failures (chapter, student, why)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["course.grading.classroom.pipeline", "course.grading.run.worker", "torch"])
    failures = []
    pending = list(tasks)
    running: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="grade-class-"))
    try:
        while pending or running:
            while pending and len(running) < jobs:
                task = pending.pop(0)
                out = tmp / f"{len(pending)}-{task['student']}.json"
                proc = ctx.Process(target=_work_in_child, args=(task, str(out)), daemon=False)
                proc.start()
                deadline = time.monotonic() + Limits.from_dict(task["limits"]).wall_seconds + 600
                running[proc] = (task, out, deadline)
            time.sleep(0.1)
            for proc in list(running):
                task, out, deadline = running[proc]
                if proc.is_alive() and time.monotonic() < deadline:
                    continue
                if proc.is_alive():
                    proc.kill()
                proc.join()
                del running[proc]
                if not out.is_file():
                    failures.append((task["chapter"], task["student"],
                                     f"the grading process of this submission {_exit_reason(proc.exitcode)}"))
                if bar is not None:
                    bar.update(1)
    finally:
        for proc in running:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return failures


# --- phase 2 on Dask: the instructor's certificates, sandboxed workers only, plain data back --------------

DASK_RESULT = {"ok": bool, "error": str, "seconds": float}


def work_on_dask(task: dict, allow_degraded: bool = False) -> str:
    """The Dask task: :func:`work` on a worker that has the sandbox. Returns JSON (``DASK_RESULT``); never raises.

    A worker without bubblewrap refuses (student code there could read the worker's key and the course's
    files) unless ``allow_degraded``. An error becomes a message, because Dask would send an exception
    back as a pickle, which the grader does not read.
    """
    t0 = time.perf_counter()
    try:
        from course.grading.run.sandbox import detect

        m = detect()
        if m.degraded and not allow_degraded:
            return json.dumps({"ok": False, "seconds": 0.0,
                               "error": f"the Dask worker refused it: no sandbox there ({one_line(m.why, 200)})"})
        work(task)
        return json.dumps({"ok": True, "error": "", "seconds": round(time.perf_counter() - t0, 2)})
    except Exception as err:  # noqa: BLE001 - any failure is reported as text
        return json.dumps({"ok": False, "error": f"{type(err).__name__}: {one_line(err)}",
                           "seconds": round(time.perf_counter() - t0, 2)})


def worker_sandbox() -> str:
    """Run on each Dask worker: ``""`` where bubblewrap works there, else why it does not."""
    from course.grading.run.sandbox import detect

    m = detect()
    return (m.why or "no sandbox") if m.degraded else ""


def dask_workers(client, require_sandbox: bool = False, allow_degraded: bool = False, log=print) -> list[str]:
    """Ask every worker of ``client``'s cluster for its sandbox; print one line each; return those that may grade.

    Workers without the sandbox get no task (unless ``allow_degraded``); with ``require_sandbox`` a single
    one stops the grading (:class:`~course.grading.classroom.dask_tls.DaskSecurityError`), as does a cluster with no
    sandboxed worker.
    """
    from course.grading.classroom.dask_tls import DaskSecurityError

    try:
        answers = client.run(worker_sandbox, on_error="return")
    except Exception as err:  # noqa: BLE001 - e.g. an error that came back as a pickle, refused
        raise DaskSecurityError(f"could not ask the Dask workers whether they have the sandbox: "
                                f"{type(err).__name__}: {one_line(err)}") from None
    good, bad = [], {}
    for address, why in sorted(answers.items()):
        if not isinstance(address, str):
            continue
        if not isinstance(why, str):
            why = "its answer was not plain text"
        if why:
            bad[address] = one_line(why, 200)
            log(f"Dask worker {one_line(address, 80)}: NO SANDBOX ({bad[address]})"
                + ("; allowed (--dask-allow-no-sandbox)" if allow_degraded else "; it gets no submission"))
        else:
            good.append(address)
            log(f"Dask worker {one_line(address, 80)}: sandbox: bubblewrap")
    if bad and require_sandbox:
        raise DaskSecurityError(f"refusing to grade: {len(bad)} Dask worker(s) without a sandbox (--require-sandbox): "
                                + "; ".join(f"{a}: {w}" for a, w in bad.items()))
    if allow_degraded:
        return good + list(bad)
    if not good:
        raise DaskSecurityError("no worker of the Dask cluster has the sandbox" + (
            ": " + "; ".join(f"{a}: {w}" for a, w in bad.items()) if bad else " (no worker at all)"))
    return good


def _dask_error(exc: BaseException | None) -> str:
    """What a failed Dask future says, without unpickling it: Dask sends errors as pickles, kept as bytes here."""
    text = exc.args[0] if exc is not None and exc.args else exc
    if isinstance(text, (bytes, bytearray)):
        if b"KilledWorker" in text:
            return "KilledWorker: the workers running it died too many times (see the workers' logs)"
        return "the task failed on the cluster; its error came as a pickle and was not read (see the workers' logs)"
    return f"{type(exc).__name__}: {one_line(exc)}"


def _run_on(client, tasks: list[dict], require_sandbox: bool, allow_degraded: bool, retries: int, per_task: float,
            bar=None, log=print) -> list[tuple[str, str, str]]:
    """Submit ``tasks`` to the workers that have the sandbox and collect what each one says (see :func:`run_dask`)."""
    from distributed import wait

    from course.grading.classroom import dask_tls

    failures: list[tuple[str, str, str]] = []
    good = dask_workers(client, require_sandbox, allow_degraded, log)
    deadline = time.monotonic() + per_task * (len(tasks) // len(good) + 1)
    futures: dict = {}

    def submit(todo: list[dict]) -> set:
        new = {client.submit(work_on_dask, task, allow_degraded, pure=False, retries=retries, workers=good,
                             allow_other_workers=False,
                             key=f"grade-{task['chapter']}-{task['student']}-{os.urandom(4).hex()}"): task
               for task in todo}
        futures.update(new)
        return set(new)

    pending = submit(tasks)
    checked = time.monotonic()
    while pending:
        if time.monotonic() - checked > 10:
            # Tasks are pinned to the workers checked above: if every one of them is gone (a restarted worker
            # comes back under a new address), check the cluster again and pin the rest there.
            checked = time.monotonic()
            alive = set(client.scheduler_info(n_workers=-1).get("workers", {}))
            if not alive & set(good):
                try:
                    good = dask_workers(client, require_sandbox, allow_degraded, log)
                except dask_tls.DaskSecurityError as err:
                    failures += [(futures[f]["chapter"], futures[f]["student"], str(err)) for f in pending]
                    break
                client.cancel(list(pending))
                pending = submit([futures[f] for f in pending])
        try:
            done, left = wait(list(pending), timeout=2, return_when="FIRST_COMPLETED")
            pending = set(left)
        except TimeoutError:
            done = set()
        for fut in done:
            task = futures[fut]
            if fut.status == "finished":
                try:
                    r = dask_tls.parse_result(fut.result(timeout=60), DASK_RESULT)
                    why = "" if r["ok"] else r["error"] or "the worker reported a failure"
                except Exception as err:  # noqa: BLE001 - not plain data, or not readable
                    why = f"the worker's result was refused: {one_line(err)}"
            else:
                why = _dask_error(fut.exception(timeout=60))
            if why:
                failures.append((task["chapter"], task["student"], why))
            if bar is not None:
                bar.update(1)
        broken = dask_tls.report_stream_broken(client)
        if pending and (broken or time.monotonic() > deadline):
            why = ("the Dask scheduler sent data that is not plain (an error travels as a pickle: a task failed "
                   "outside the grading code, e.g. a worker that cannot import `course`, or a rogue worker); "
                   "the grader refused it and stopped: see the workers' logs" if broken
                   else "the Dask cluster did not finish it in time")
            failures += [(futures[f]["chapter"], futures[f]["student"], why) for f in pending]
            with contextlib.suppress(Exception):
                client.cancel(list(pending))
            break
    return failures


def run_dask(tasks: list[dict], address: str, bar=None, retries: int = 1, certs: Path | str | None = None,
             require_sandbox: bool = False, allow_degraded: bool = False, log=print) -> list[tuple[str, str, str]]:
    """Run ``tasks`` on the Dask cluster at ``address`` (``tls://`` only; one task per submission); return the failures.

    ``certs``: the folder of :func:`course.grading.classroom.dask_tls.make_certs` (the instructor's client certificate).
    Each task runs :func:`work_on_dask` on a worker that said it has the sandbox (:func:`dask_workers`) and
    returns JSON, checked here; nothing the cluster sends is unpickled
    (:func:`course.grading.classroom.dask_tls.no_unpickling`). A worker that dies mid-task makes the scheduler run
    the task again elsewhere (``allowed-failures``). If the scheduler's stream breaks (it sent something
    that is not plain data), or the time runs out, every unfinished task is a failure.
    """
    from course.grading.classroom import dask_tls

    dask_tls.check_address(address)
    certs = Path(certs) if certs is not None else dask_tls.DEFAULT_DIR
    per_task = max([Limits.from_dict(t["limits"]).wall_seconds for t in tasks] + [60]) + 600
    with dask_tls.no_unpickling() as refused:
        client = dask_tls.client(address, certs)
        try:
            failures = _run_on(client, tasks, require_sandbox, allow_degraded, retries, per_task, bar, log)
        finally:
            dask_tls.close(client)
        if refused:
            log(f"WARNING: the Dask cluster sent {len(refused)} pickle(s); none was read")
    return failures


# --- the whole class -----------------------------------------------------------------------------------

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


def _already_graded(root: Path, db_url: str, chapter: str, student: str, input_key: str) -> bool:
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
    without the sandbox grade (:func:`run_dask`). ``solutions`` (with ``feedback``): the worked solutions of the
    attempted exercises in ``grader.md``, for chapters whose due date has passed (:func:`worked_solutions`).
    """
    from tqdm import tqdm

    from course.grading.run.sandbox import detect

    root = Path(root).resolve()
    if dask:
        from course.grading.classroom import dask_tls

        dask_tls.check_address(dask)
        dask_certs = Path(dask_certs) if dask_certs else root / dask_tls.DEFAULT_DIR
        dask_tls.check_certs(dask_certs, dask_tls.INSTRUCTOR)
        # Before any staging: the cluster answers, with our certificates, and has the workers we require.
        with dask_tls.no_unpickling():
            client = dask_tls.client(dask, dask_certs)
            try:
                dask_workers(client, require_sandbox, dask_allow_degraded, log=lambda *a: None)
            finally:
                dask_tls.close(client)
    jobs = jobs or os.cpu_count() or 1
    limits = limits or Limits()
    db_url = db_url or nbgrader_io.sqlite(root / "gradebook.db")
    out = ClassResult()
    tasks: list[dict] = []
    t0 = time.perf_counter()
    _check_gradebook(db_url, chapters)
    for chapter in chapters:
        release_nb = next((root / "release" / chapter).glob("*.ipynb"))
        course_key = references.cache_key(chapter, root, 0, load(chapter, root))
        students, refused = intake.students(root / "submitted", chapter)
        for name, why in refused.items():
            out.failures.append((chapter, name, f"not graded: {why}"))
        for student in students:
            if only and student not in only:
                continue
            staged, notes = stage(root, chapter, student, limits)
            seed = references.seed_for(root, chapter, student, key or None)
            input_key = hashlib.sha256((staged / release_nb.name).read_bytes() + json.dumps(notes).encode()
                                       + f"{course_key}|{seed}".encode()).hexdigest()[:24]
            task = Task(root=str(root), chapter=chapter, student=student, staged=str(staged),
                        notebook_file=release_nb.name, seed=seed, input_key=input_key, db_url=db_url,
                        limits=limits.as_dict(), threads=1 if (jobs > 1 or dask) else None)
            if not force and _already_graded(root, db_url, chapter, student, input_key):
                out.skipped.append((chapter, student))
            else:
                tasks.append(asdict(task))
    out.timing["stage"] = time.perf_counter() - t0
    where = f"Dask at {dask}" if dask else f"{jobs} local process(es)"
    log(f"{len(tasks)} submission(s) to grade, {len(out.skipped)} unchanged and already graded (--force regrades "
        f"them); {where}; {'sandbox: bubblewrap' if not detect().degraded else 'WARNING: no sandbox: ' + detect().why}")
    # References first (trusted, once per chapter, every student's seed in one run), then the students.
    t1 = time.perf_counter()
    ref_dir = Path(tempfile.mkdtemp(prefix="judge-refs-"))
    os.chmod(ref_dir, 0o700)
    ref_files = {}
    for chapter in chapters:
        seeds = sorted({t["seed"] for t in tasks if t["chapter"] == chapter})
        if seeds:
            ref_files[chapter] = ref_dir / f"{chapter}.pt"
            references.save(references.compute(chapter, root, seeds, limits), ref_files[chapter])
    out.timing["references"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    if tasks:
        bar = tqdm(total=len(tasks), desc="grading", unit="submission", disable=not progress, file=sys.stdout)
        try:
            out.failures += (run_dask(tasks, dask, bar, certs=dask_certs, require_sandbox=require_sandbox,
                                      allow_degraded=dask_allow_degraded, log=log) if dask
                             else run_local(tasks, jobs, bar))
        except BaseException:
            shutil.rmtree(ref_dir, ignore_errors=True)  # the reference values leave nothing behind
            raise
        bar.close()
    out.timing["workers"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    for chapter in chapters:
        todo = [t["student"] for t in tasks if t["chapter"] == chapter]
        if todo:
            _record(root, chapter, todo, ref_files[chapter], db_url, key, out)
    shutil.rmtree(ref_dir, ignore_errors=True)
    out.timing["record"] = time.perf_counter() - t3
    out.timing["total"] = time.perf_counter() - t0
    out.graded = [(t["chapter"], t["student"]) for t in tasks]
    for chapter in chapters:
        release_nb = next((root / "release" / chapter).glob("*.ipynb"))
        max_score = sum(points(c) for c in nbformat.read(str(release_nb), 4).cells)
        for student in students_of(root, chapter):
            if only and student not in only:
                continue
            r = Report.load(paths.judge_dir(root) / "reports" / chapter / f"{student}.json")
            why = next((w for ch, s, w in out.failures if ch == chapter and s == student), "")
            if r is None or (chapter, student) in out.graded and why:
                r = Report.not_graded(chapter, student, why or "no report was written", max_score)
            out.reports.setdefault(chapter, {})[student] = r
        for name, why in intake.students(root / "submitted", chapter)[1].items():
            out.reports.setdefault(chapter, {})[name] = Report.not_graded(chapter, name, why, max_score)
    if feedback:
        write_feedback(root, out, chapters, show_tests, db_url=db_url if solutions else None, log=log)
    from course.grading.classroom import analysis

    for chapter in chapters:  # the whole class, also when only some students were graded now
        everyone = {p.stem: r for p in sorted((paths.judge_dir(root) / "reports" / chapter).glob("*.json"))
                    if (r := Report.load(p)) is not None}
        everyone.update(out.reports.get(chapter, {}))
        if everyone:
            try:
                out.analysis[chapter] = analysis.write(root, chapter, everyone)
            except Exception as err:  # noqa: BLE001 - the grades are recorded; the analysis must not stop the run
                log(f"{chapter}: the item analysis was not written: {type(err).__name__}: {one_line(str(err), 200)}")
    return out


class GradebookNotReady(RuntimeError):
    """The gradebook does not know a chapter yet (it was never generated with it)."""


def _check_gradebook(db_url: str, chapters: list[str]) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        for chapter in chapters:
            try:
                gb.find_notebook(chapter, chapter)
            except MissingEntry:
                raise GradebookNotReady(
                    f"the gradebook ({one_line(db_url, 120)}) does not know {chapter} yet: `make gradebook` (every "
                    f"chapter), or `nbgrader generate_assignment {chapter} --force`, or Formgrader's Generate") from None


def _record(root: Path, chapter: str, students: list[str], ref_file: Path, db_url: str, key: int,
            out: ClassResult) -> None:
    """Phase 3: one ``nbgrader autograde`` over the staged folder, reading the saved runs (the gradebook's writer)."""
    staged_root = paths.judge_dir(root) / "staged"
    failed = {s for ch, s, _ in out.failures if ch == chapter}
    todo = [s for s in students if s not in failed]
    for s in todo:  # a report from an earlier run must not stand for this one
        (paths.judge_dir(root) / "reports" / chapter / f"{s}.json").unlink(missing_ok=True)
    if not todo:
        return
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
            (paths.judge_dir(root) / "reports" / chapter / f"{student}.json").is_file()
        if not graded:
            why = _nbgrader_error(proc, student)
            out.failures.append((chapter, student, f"nbgrader refused it: {why}"))
        meta_path = runs.run_dir(root, chapter, student) / "meta.json"
        try:
            meta = json.loads(meta_path.read_text())
            meta["graded"] = graded
            meta_path.write_text(json.dumps(meta))
        except (OSError, ValueError):
            pass


def _nbgrader_error(proc, student: str) -> str:
    lines = [line for line in (proc.stderr or "").splitlines() if "[AutogradeApp | ERROR]" in line]
    mine = [line for line in lines if student in line] or lines
    text = mine[0].split("ERROR]", 1)[-1] if mine else f"nbgrader exited {proc.returncode}"
    return one_line(text, 300)


def class_table(result: ClassResult, chapters: list[str]) -> str:
    """Per student: score per chapter, total, flags (printable: student ids and flags are the students')."""
    students = sorted({s for ch in chapters for s in result.reports.get(ch, {})})
    width = max([len(one_line(s, 40)) for s in students] + [8]) + 2
    head = f"{'student':<{width}}" + "".join(f"{ch[:16]:>18}" for ch in chapters) + f"{'total':>12}  flags"
    lines = [head, "-" * len(head)]
    for s in students:
        row, got, best, flags = f"{one_line(s, 40):<{width}}", 0.0, 0.0, []
        for ch in chapters:
            r = result.reports.get(ch, {}).get(s)
            if r is None:
                row += f"{'-':>18}"
                continue
            row += f"{r.score:>12g}/{r.max_score:<5g}"
            got += r.score
            best += r.max_score
            flags += [f"{ch[:2]}: {w}" for w in r.words()]
        lines.append(row + f"{got:>7g}/{best:<4g}  " + (one_line("; ".join(flags), 400) or "-"))
    return "\n".join(lines)


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


def summary_line(result: ClassResult) -> str:
    t = result.timing
    return (f"staging {t.get('stage', 0):.1f} s, references {t.get('references', 0):.1f} s, submissions "
            f"{t.get('workers', 0):.1f} s, gradebook {t.get('record', 0):.1f} s, total {t.get('total', 0):.1f} s; "
            f"reports in .judge/reports/, item analysis in .judge/analysis/, scores in the gradebook, "
            f"graded notebooks in autograded/")


def problems_text(result: ClassResult) -> list[str]:
    return [f"PROBLEM: {one_line(ch, 40)}/{one_line(s, 64)}: {printable(why, 600)}" for ch, s, why in result.failures]
