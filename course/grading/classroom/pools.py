"""Phase 2 of :mod:`.pipeline`: run the tasks (:mod:`.task`), each submission in a grading process of its own.

Locally (:func:`run_local`), ``--jobs`` processes at a time, from a forkserver that has imported the grading code
once; or on a Dask cluster (:func:`run_dask`), one task per submission, on workers that have the sandbox, with the
instructor's certificates, and nothing the cluster sends unpickled (:mod:`.dask_tls`). Both return the failures as
``(chapter, student, why)``.
"""
from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from course.grading.classroom.task import work, work_in_child
from course.grading.config import Limits
from course.grading.text import one_line


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


def run_local(tasks: list[dict], jobs: int, bar=None, done=None) -> list[tuple[str, str, str]]:
    """Run ``tasks`` ``jobs`` at a time, in their order, each in a process of its own; return the failures (chapter,
    student, why). ``done(task, why)``, if given, is called as each one ends (``why`` empty when it did not fail)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["course.grading.classroom.task", "course.grading.run.worker", "torch"])
    failures = []
    pending = list(tasks)
    running: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="grade-class-"))
    try:
        while pending or running:
            while pending and len(running) < jobs:
                task = pending.pop(0)
                out = tmp / f"{len(pending)}-{task['student']}.json"
                proc = ctx.Process(target=work_in_child, args=(task, str(out)), daemon=False)
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
                why = "" if out.is_file() else f"the grading process of this submission {_exit_reason(proc.exitcode)}"
                if why:
                    failures.append((task["chapter"], task["student"], why))
                if bar is not None:
                    bar.update(1)
                if done is not None:
                    done(task, why)
    finally:
        for proc in running:
            proc.kill()
        for proc in running:
            proc.join(10)
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
    try:
        return _collect(client, futures, pending, submit, good, require_sandbox, allow_degraded, deadline, bar, log)
    except BaseException:
        # Ctrl-C, or SIGTERM/SIGHUP (course.grading.cli): the submissions not started yet are taken off the
        # cluster. One already running on a worker runs to its end there, in its sandbox; its result is not read.
        with contextlib.suppress(Exception):
            client.cancel(list(futures))
        raise


def _collect(client, futures: dict, pending: set, submit, good, require_sandbox: bool, allow_degraded: bool,
             deadline: float, bar, log) -> list[tuple[str, str, str]]:
    """Wait for the ``pending`` futures of :func:`_run_on`, re-pinning them if their workers are gone."""
    from distributed import wait

    from course.grading.classroom import dask_tls

    failures: list[tuple[str, str, str]] = []
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
