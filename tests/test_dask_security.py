"""Grading on Dask runs only the instructor's code (issue 26, item 4).

One TLS cluster on 127.0.0.1, made with the course's own commands
(``dask-certs``, ``dask-cluster``): one sandboxed worker, and one worker whose
sandbox is degraded (``COURSE_SANDBOX=none`` in its environment). On it:

* a small class is graded through ``grade-class --dask tls://...``: the honest
  student keeps full marks, the wrong answer loses its test, the degraded
  worker gets no submission, and ``--require-sandbox`` refuses the cluster;
* a plain ``tcp://`` client, a TLS client without a certificate, and a client
  and a worker with a student's own CA are refused by the scheduler;
* no process of the cluster listens beyond loopback (``/proc/net/tcp{,6}``).

A second cluster has one rogue worker (a preload replaces the task): its
pickled objects, a pickled exception, a ``warn`` event and malformed JSON
reach the grading client, and nothing is ever unpickled there.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

import toycourse
from course.grading.classroom import pools
from course.grading.classroom import dask_tls
from course.grading.authoring import trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.config import Limits
from course.grading.run.sandbox import detect

pytest.importorskip("distributed")
CH = toycourse.CHAPTER
SEED = 20261202
SANDBOXED = pytest.mark.skipif(detect().degraded, reason="no sandbox here")


def _course_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course.grading", *args], cwd=cwd, env=nbgrader_io.env(),
                          capture_output=True, text=True, timeout=timeout)


def _wait_address(scheduler_file: Path, proc: subprocess.Popen, seconds: float = 120) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            address = json.loads(scheduler_file.read_text()).get("address")
        except (OSError, ValueError):
            address = None
        if address:
            return address
        assert proc.poll() is None, f"the scheduler exited with {proc.returncode}"
        time.sleep(0.3)
    raise AssertionError("the scheduler did not start in time")


def _stop(procs: list[subprocess.Popen], sig=signal.SIGTERM) -> None:
    for p in procs[::-1]:
        try:
            os.killpg(p.pid, sig)
        except OSError:
            pass
    for p in procs[::-1]:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _workers(address: str, certs: Path, n: int, seconds: float = 120) -> list[str]:
    from distributed import Client
    with dask_tls.no_unpickling(), Client(address, security=dask_tls.security(certs), timeout=30,
                                          deserializers=["msgpack"]) as c:
        c.wait_for_workers(n, timeout=seconds)
        return sorted(c.scheduler_info(n_workers=-1)["workers"])


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """``dask-certs``, then ``dask-cluster`` (one sandboxed worker) and a degraded worker, all on 127.0.0.1."""
    d = tmp_path_factory.mktemp("dask-tls")
    certs = d / "certs"
    made = _course_cli("dask-certs", str(certs), cwd=d)
    assert made.returncode == 0, made.stderr
    sched_file = d / "scheduler.json"
    cluster = subprocess.Popen([sys.executable, "-m", "course.grading", "dask-cluster", "--certs", str(certs),
                                "--workers", "1", "--port", "0", "--scheduler-file", str(sched_file)],
                               cwd=d, env=nbgrader_io.env(), stdout=open(d / "cluster.log", "w"),
                               stderr=subprocess.STDOUT, start_new_session=True)
    procs = [cluster]
    try:
        address = _wait_address(sched_file, cluster)
        degraded = subprocess.Popen(dask_tls.worker_command(certs, address, name="degraded",
                                                            local_directory=d / "degraded"),
                                    env=nbgrader_io.env({"COURSE_SANDBOX": "none"}),
                                    stdout=open(d / "degraded.log", "w"), stderr=subprocess.STDOUT,
                                    start_new_session=True)
        procs.append(degraded)
        workers = _workers(address, certs, 2)
        yield {"dir": d, "certs": certs, "address": address, "cluster": cluster, "degraded": degraded,
               "workers": workers}
    finally:
        # SIGINT: dask-cluster stops its own scheduler and workers (its finally), then exits.
        _stop(procs[1:])
        _stop(procs[:1], signal.SIGINT)
        print((d / "cluster.log").read_text()[-3000:])


def test_certificates_are_private_and_never_overwritten(tls_cluster):
    certs = tls_cluster["certs"]
    assert oct(certs.stat().st_mode & 0o777) == "0o700"
    for role in (dask_tls.CA, dask_tls.NODE, dask_tls.INSTRUCTOR):
        cert, key = dask_tls.paths(certs, role)
        assert oct(key.stat().st_mode & 0o777) == "0o600", key
        assert b"BEGIN CERTIFICATE" in cert.read_bytes()
    again = _course_cli("dask-certs", str(certs), cwd=tls_cluster["dir"])
    assert again.returncode == 2 and "not empty" in again.stderr


def test_grade_class_refuses_plain_tcp_and_missing_certificates(tmp_path):
    plain = _course_cli("grade-class", CH, "--dask", "tcp://127.0.0.1:8786", cwd=tmp_path)
    assert plain.returncode == 2 and "only tls://" in plain.stderr, plain.stderr
    nocert = _course_cli("grade-class", CH, "--dask", "tls://127.0.0.1:8786", "--dask-certs",
                         str(tmp_path / "none"), cwd=tmp_path)
    assert nocert.returncode == 2 and "is missing" in nocert.stderr, nocert.stderr
    with pytest.raises(dask_tls.DaskSecurityError, match="only tls://"):
        pools.run_dask([], "tcp://127.0.0.1:8786")


def test_the_scheduler_refuses_clients_and_workers_without_the_course_certificate(tls_cluster, tmp_path):
    from distributed import Client

    address = tls_cluster["address"]
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    # plain TCP: no TLS handshake, no connection
    with pytest.raises((OSError, TimeoutError)):
        Client(f"tcp://{host}:{port}", timeout=5)
    # TLS with the course's CA but no client certificate: the scheduler ends the handshake
    ctx = ssl.create_default_context(cafile=str(dask_tls.paths(tls_cluster["certs"], dask_tls.CA)[0]))
    ctx.check_hostname = False
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"\0" * 8)
                assert tls.recv(1) != b"\0", "the scheduler answered a client without a certificate"
                raise ConnectionError("closed")
    # a student's own CA and certificates: a client, and a worker that tries to join
    student = tmp_path / "student-certs"
    dask_tls.make_certs(student)
    with pytest.raises((OSError, TimeoutError)):
        Client(address, security=dask_tls.security(student), timeout=5)
    rogue = subprocess.Popen(dask_tls.worker_command(student, address, name="student-worker",
                                                     local_directory=tmp_path / "w"),
                             env=nbgrader_io.env(), stdout=open(tmp_path / "student-worker.log", "w"),
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # it tried to join (however slowly a busy machine started it), was refused at the TLS handshake and gave up
        log, end = tmp_path / "student-worker.log", time.monotonic() + 120
        while rogue.poll() is None and time.monotonic() < end:
            time.sleep(0.5)
        text = log.read_text()
        assert rogue.poll() is not None and "TLS certificate does not match" in text, text[-2000:]
        assert "Registered to" not in text, text[-2000:]
        assert _workers(address, tls_cluster["certs"], 2) == tls_cluster["workers"]
    finally:
        _stop([rogue])


def test_nothing_of_the_cluster_listens_beyond_loopback(tls_cluster):
    sockets = dask_tls.listening([tls_cluster["cluster"].pid, tls_cluster["degraded"].pid])
    port = int(tls_cluster["address"].rsplit(":", 1)[1])
    assert ("127.0.0.1", port) in {(a, p) for a, p, _ in sockets}, sockets
    # the scheduler, two workers and their nannies (the dashboards are off)
    assert len(sockets) >= 5, sockets
    assert dask_tls.exposed(sockets) == [], sockets


def test_a_worker_without_the_sandbox_refuses_the_task():
    out = subprocess.run([sys.executable, "-c", "from course.grading.classroom.pools import work_on_dask; "
                          "print(work_on_dask({'not': 'even a task'}))"],
                         env=nbgrader_io.env({"COURSE_SANDBOX": "none"}), capture_output=True, text=True, timeout=120)
    r = dask_tls.parse_result(out.stdout.strip(), pools.DASK_RESULT)
    assert r["ok"] is False and "no sandbox there" in r["error"] and "COURSE_SANDBOX=none" in r["error"], r


@SANDBOXED
def test_a_tls_cluster_grades_a_class_on_sandboxed_workers_only(tls_cluster, tmp_path):
    course = toycourse.make(tmp_path / "course")
    rel = trial.generate(course, CH, course / "gradebook.db")
    subs = [trial.Submission("solution", {}),
            trial.Submission("mutants-1", {"scale": "def scale(x, k):\n    return x + k\n"},
                               must_fail={"test_scale"}, variants=["adds instead of multiplying"])]
    trial.write_submissions(course, CH, subs, rel)
    args = ["grade-class", CH, "--seed", str(SEED), "--dask", tls_cluster["address"], "--dask-certs",
            str(tls_cluster["certs"]), "--no-progress"]
    t0 = time.perf_counter()
    required = _course_cli(*args, "--require-sandbox", cwd=course, timeout=600)
    refused_s = time.perf_counter() - t0
    assert required.returncode == 2, required.stdout[-2000:] + required.stderr[-2000:]
    assert "without a sandbox (--require-sandbox)" in required.stderr and "COURSE_SANDBOX=none" in required.stderr
    assert not (course / ".judge" / "runs").exists(), "a submission ran although the cluster was refused"
    t0 = time.perf_counter()
    graded = _course_cli(*args, cwd=course, timeout=900)
    graded_s = time.perf_counter() - t0
    print(graded.stdout[-3000:], graded.stderr[-2000:], f"\n[dask tls] refused in {refused_s:.1f} s, "
          f"graded {len(subs)} in {graded_s:.1f} s")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert "sandbox: bubblewrap" in graded.stdout and "NO SANDBOX (COURSE_SANDBOX=none is set)" in graded.stdout
    reports = {p.stem: json.loads(p.read_text()) for p in (course / ".judge" / "reports" / CH).glob("*.json")}
    assert set(reports) == {"solution", "mutants-1"}
    for student, r in reports.items():
        assert not any("sandbox degraded" in f for f in r.get("flags", [])), (student, r.get("flags"))
    scores = trial.read_scores(course / "gradebook.db", CH, CH)
    assert all(s == m for s, m in scores["solution"].values()), scores["solution"]
    g = trial.Graded(course=course, scores=scores, seconds={}, submissions=subs, reports=reports)
    bad = trial.problems(g)
    assert not bad, "\n".join(bad)


ROGUE = '''
"""A rogue worker: the grading task is replaced by one that sends pickles and lies."""
import json
import os
import pickle

import course.grading.classroom.pools as pools

MARK = {mark!r}
CODE = ("open(%r + '/' + str(__import__('os').getpid()), 'w')"
        ".write(open('/proc/self/cmdline').read().replace(chr(0), ' '))" % MARK)


class Evil:
    def __reduce__(self):
        return (exec, (CODE,))


class EvilError(Exception):
    # Unpickles to a ValueError, so that Dask's own check on the worker (error_message) lets the bytes go.
    def __reduce__(self):
        return (eval, ("(%s, ValueError('rogue'))[1]" % CODE,))


class RoguePickle:
    """The worker's pickle module, except that a finished task's type is sent as Evil (key-in-memory)."""

    def __getattr__(self, name):
        return getattr(real_pickle, name)

    def dumps(self, obj, *args, **kwargs):
        return real_pickle.dumps(Evil() if isinstance(obj, type) else obj, *args, **kwargs)


import distributed.protocol.pickle as real_pickle
import distributed.worker_state_machine as wsm

wsm.pickle = RoguePickle()


def rogue(task, allow_degraded=False):
    kind = task["student"]
    if kind == "object":
        return Evil()
    if kind == "warn":
        from distributed import get_worker
        get_worker().log_event("warn", {{"message": pickle.dumps(Evil()), "category": pickle.dumps(Evil())}})
        return json.dumps({{"ok": True, "error": "", "seconds": 1.0}})
    if kind == "wrong-types":
        return json.dumps({{"ok": "yes", "error": "", "seconds": 1.0}})
    if kind == "huge":
        return json.dumps({{"ok": True, "error": "x" * 200000, "seconds": 1.0}})
    if kind == "raise":
        raise EvilError()
    return json.dumps({{"ok": True, "error": "", "seconds": 1.0}})


pools.work_on_dask = rogue
'''


def test_a_rogue_workers_pickles_never_run_in_the_grader(tls_cluster, tmp_path):
    certs, mark = tls_cluster["certs"], tmp_path / "mark"
    mark.mkdir()
    (tmp_path / "rogue.py").write_text(ROGUE.format(mark=str(mark)))
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen(dask_tls.scheduler_command(certs, port=0, scheduler_file=sched_file),
                              env=nbgrader_io.env(), stdout=open(tmp_path / "scheduler.log", "w"),
                              stderr=subprocess.STDOUT, start_new_session=True)]
    try:
        address = _wait_address(sched_file, procs[0])
        procs.append(subprocess.Popen(dask_tls.worker_command(certs, address, name="rogue",
                                                              local_directory=tmp_path / "w")
                                      + ["--preload", str(tmp_path / "rogue.py")],
                                      env=nbgrader_io.env(), stdout=open(tmp_path / "rogue.log", "w"),
                                      stderr=subprocess.STDOUT, start_new_session=True))
        _workers(address, certs, 1)
        limits = Limits().as_dict()
        task = {"chapter": CH, "limits": limits}
        t0 = time.perf_counter()
        failures = pools.run_dask([{**task, "student": s} for s in
                                        ("honest", "object", "warn", "wrong-types", "huge")], address,
                                       certs=certs, log=lambda *a: None)
        why = {s: w for _, s, w in failures}
        assert set(why) == {"object", "wrong-types", "huge"}, why  # "warn" returned valid JSON: its event is dropped
        assert "result was refused" in why["object"]
        assert "'ok'" in why["wrong-types"] and "characters" in why["huge"]
        # an exception is pickled by the worker: the stream that carries it is refused and the run ends
        failures = pools.run_dask([{**task, "student": "raise"}], address, certs=certs, log=lambda *a: None)
        seconds = time.perf_counter() - t0
        assert [s for _, s, _ in failures] == ["raise"], failures
        print(f"[rogue] {failures}; {seconds:.1f} s")
        # The rogue worker's own process unpickles its exception (Dask's error_message checks it can): that
        # is the rogue's code in the rogue's process. Nothing ran in the grader, or in the scheduler.
        ran = {int(p.name): p.read_text() for p in mark.iterdir()}
        print("[rogue] unpickled in:", ran)
        assert os.getpid() not in ran and procs[0].pid not in ran, ran
        tree, todo = set(), [procs[1].pid]
        while todo:
            tree.add(todo[-1])
            todo += [k for k in dask_tls._children(todo.pop()) if k not in tree]
        assert set(ran) <= tree, (ran, tree)
        import distributed.protocol.pickle
        assert distributed.protocol.pickle.loads(distributed.protocol.pickle.dumps(1)) == 1  # restored
    finally:
        _stop(procs)


def test_a_stopped_grading_takes_its_unstarted_submissions_off_the_cluster(monkeypatch):
    """Ctrl-C (or SIGTERM/SIGHUP, raised as SystemExit by the CLI) while waiting on the cluster: every future the
    grading submitted is cancelled before the stop goes on, so no worker starts a submission of a stopped run."""
    import distributed

    class FakeFuture:
        status = "pending"

    class FakeClient:
        def __init__(self):
            self.submitted, self.cancelled = [], []

        def run(self, fn, on_error="return"):
            return {"tls://127.0.0.1:1": ""}                   # one worker, with the sandbox

        def submit(self, fn, task, *args, **kwargs):
            self.submitted.append(FakeFuture())
            return self.submitted[-1]

        def cancel(self, futures):
            self.cancelled.extend(futures)

    def stopped(futures, timeout=None, return_when=None):
        raise SystemExit(143)                                  # what the CLI raises on SIGTERM

    monkeypatch.setattr(distributed, "wait", stopped)
    client = FakeClient()
    tasks = [{"chapter": "ch", "student": f"s{i}"} for i in range(5)]
    with pytest.raises(SystemExit):
        pools._run_on(client, tasks, False, False, 1, 60.0, log=lambda *a: None)
    assert len(client.submitted) == 5 and set(map(id, client.cancelled)) == set(map(id, client.submitted))

    def finishes(futures, timeout=None, return_when=None):     # an ordinary end cancels nothing
        for f in futures:
            f.status = "finished"
            f.result = lambda timeout=None: json.dumps({"ok": True, "error": "", "seconds": 0.1})
        return set(futures), set()

    monkeypatch.setattr(distributed, "wait", finishes)
    client = FakeClient()
    monkeypatch.setattr(dask_tls, "report_stream_broken", lambda c: False)
    assert pools._run_on(client, tasks, False, False, 1, 60.0, log=lambda *a: None) == []
    assert client.cancelled == []
