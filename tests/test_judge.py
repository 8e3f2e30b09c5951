"""The judge: hidden tests as probe + verdict, and a class of threatening submissions graded through it.

The class test grades Chapter 1 through ``python -m course.grading autograde``
(real nbgrader, the sandboxed worker, the judge) with one honest student and
one student per threat. Each threat must fail at what it tries, cost only its
own submission points (it loses Exercise 1.1, whose solution cell it
replaced), be reported with a clear reason, and leave the honest student's
full marks unchanged.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import REPO
from course.checks import CheckFailed
from course.grading import judge as J
from course.grading import planner
from course.grading.sandbox import detect

CHAPTER = "01_dynamic_graphs"


# --- the authoring API ---------------------------------------------------------------------------

def _toy_judge(tmp_path: Path, body: str) -> J.Judge:
    d = tmp_path / "source" / "00_toy"
    d.mkdir(parents=True)
    (d / "judge.py").write_text("from course import checks as C\nfrom course.grading.judge import Judge, visible\n"
                                "judge = Judge()\n" + body)
    return J.load("00_toy", tmp_path)


def test_probe_source_is_the_def_without_decorators(tmp_path):
    j = _toy_judge(tmp_path, '''
@judge.shared
def helper(n):
    return list(range(n))

@judge.probe("test_a")
def probe_a(seed):
    return helper(3)

@probe_a.verdict
def _(got, ref):
    C.check_equal(got, ref, "a")
''')
    code = j.code("test_a")
    assert code.name == "probe_a" and "@" not in code.source
    assert code.source.startswith("def helper(n):") and "def probe_a(seed):" in code.source
    ns: dict = {}
    exec(code.source, ns)
    assert ns["probe_a"](0) == [0, 1, 2]
    assert len(j.fingerprint()) == 16


def test_load_refuses_incomplete_judges(tmp_path):
    with pytest.raises(J.JudgeError, match="does not exist"):
        J.load("00_missing", tmp_path)
    with pytest.raises(J.JudgeError, match="without a verdict"):
        _toy_judge(tmp_path, '@judge.probe("t")\ndef p(seed):\n    return 1\n')


def test_probes_may_not_close_over_judge_variables(tmp_path):
    with pytest.raises(J.JudgeError, match="enclosing"):
        _toy_judge(tmp_path, '''
def make():
    k = 3
    @judge.probe("t")
    def p(seed):
        return k
    return p
make()
''')


def test_decide_covers_every_outcome(tmp_path):
    j = _toy_judge(tmp_path, '''
@judge.probe("t")
def p(seed):
    return 1

@p.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["v"], ref["v"], "visible example")
    C.check_equal(got["h"], ref["h"], "hidden case")
''')
    probe = j.probes["t"]
    ref = {"ok": True, "value": {"v": 1, "h": 2}}
    assert J.decide(probe, {"ok": True, "value": {"v": 1, "h": 2}}, ref).passed
    v = J.decide(probe, {"ok": True, "value": {"v": 0, "h": 2}}, ref)
    assert not v.passed and v.visible_failed and v.kind == "check" and "visible example" in v.message
    v = J.decide(probe, {"ok": True, "value": {"v": 1, "h": 3}}, ref)
    assert not v.passed and not v.visible_failed
    v = J.decide(probe, {"ok": False, "error": "TypeError: bad", "where": "your notebook, line 3"}, ref)
    assert not v.passed and v.kind == "probe" and "TypeError: bad" in v.message and "line 3" in v.message
    v = J.decide(probe, {"ok": True, "value": [1, 2]}, ref)
    assert not v.passed and v.kind == "form" and "form" in v.message
    assert J.decide(probe, None, ref).kind == "missing"
    with pytest.raises(J.JudgeError, match="reference solution fails"):
        J.decide(probe, {"ok": True, "value": 1}, {"ok": False, "error": "boom"})


def test_visible_tags_only_its_own_failures():
    with pytest.raises(CheckFailed) as err:
        with J.visible():
            raise CheckFailed("x")
    assert err.value.visible is True
    with pytest.raises(ValueError):
        with J.visible():
            raise ValueError("not a check")


def test_coverage_is_exact(tmp_path):
    j = _toy_judge(tmp_path, '@judge.probe("t")\ndef p(seed):\n    return 1\n@p.verdict\ndef _(g, r):\n    pass\n')
    J.check_coverage(j, ["t"], "toy")
    with pytest.raises(J.JudgeError, match="without a probe"):
        J.check_coverage(j, ["t", "u"], "toy")


# --- a class with one submission per threat, through the real grading command ----------------------

THREATS: dict[str, tuple[str, str]] = {
    # name: (code at the top of Exercise 1.1's solution cell, a phrase its report must contain)
    "read-source": ("print(open('../../../source/01_dynamic_graphs/01_dynamic_graphs.ipynb').read()[:80])\n"
                    "exec(open('../../../source/01_dynamic_graphs/01_dynamic_graphs.ipynb').read())\n",
                    "opened the instructor's files"),
    "read-gradebook": ("import sqlite3\nprint(sqlite3.connect('../../../gradebook.db').execute('select * from grade').fetchall())\n",
                       "opened the instructor's files"),
    "write-outside": ("open('../../../../escape-{token}.txt', 'w').write('x')\n", "only inside its own folder"),
    "tcp-localhost": ("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'leak')\n",
                      "without network"),
    "infinite-loop": ("while True:\n    pass\n", "timed out"),
    "memory-3x": ("import torch\nhog = torch.ones(3 * {cap} // 4, dtype=torch.float32)\n", "memory cap"),
    "fork-bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
                  "processes"),
    "os-exit": ("import os\nos._exit(0)\n", "exited with code 0"),
    "segfault": ("import ctypes\nctypes.string_at(0)\n", "SIGSEGV"),
}


@pytest.fixture(scope="module")
def threat_class(tmp_path_factory):
    if detect().degraded:
        pytest.skip(f"no sandbox here: {detect().why}")
    work = tmp_path_factory.mktemp("threats")
    course = planner.make_course(work / "course", [CHAPTER], REPO)
    db = course / "gradebook.db"
    release_dir = planner.generate(course, CHAPTER, db)
    token = os.urandom(4).hex()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    connections: list = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                connections.append(srv.accept())
            except OSError:
                continue
    threading.Thread(target=accept, daemon=True).start()
    cap = 3 * 2 ** 30  # 3 GiB memory cap for this class, so "3x the cap" is 9 GiB
    subs = [planner.Submission("honest", {})]
    first = next(iter(planner.solution_cells(planner.read(planner.notebook_path(CHAPTER, course)))))
    for name, (code, _) in THREATS.items():
        subs.append(planner.Submission(f"threat-{name}", {first: code.format(token=token, port=port, cap=cap)}))
    planner.write_submissions(course, CHAPTER, subs, release_dir)
    env = dict(os.environ, COURSE_JUDGE_SEED="20261202", PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, "-m", "course.grading", "autograde", CHAPTER, "--force",
                           "--db", str(db), "--timeout", "20", "--probe-seconds", "20", "--wall-seconds", "300",
                           "--memory-gib", "3"], cwd=course, env=env, capture_output=True, text=True, timeout=1800)
    stop.set()
    srv.close()
    reports = {p.stem: json.loads(p.read_text()) for p in (course / ".judge" / "reports" / CHAPTER).glob("*.json")}
    scores = planner.read_scores(db, CHAPTER, CHAPTER)
    print(proc.stdout[-6000:])
    return {"proc": proc, "reports": reports, "scores": scores, "connections": connections, "token": token,
            "work": work}


@pytest.mark.xdist_group("threats")
def test_the_class_run_goes_on_and_the_honest_student_keeps_full_marks(threat_class):
    proc = threat_class["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert set(threat_class["reports"]) == {"honest"} | {f"threat-{n}" for n in THREATS}
    honest = threat_class["scores"]["honest"]
    assert all(s == m for s, m in honest.values()), honest
    assert threat_class["reports"]["honest"]["flags"] == []
    assert "Grading through the judge" in proc.stdout


@pytest.mark.xdist_group("threats")
@pytest.mark.parametrize("name", list(THREATS))
def test_each_threat_fails_and_costs_only_its_own_points(threat_class, name):
    report = threat_class["reports"][f"threat-{name}"]
    scores = threat_class["scores"][f"threat-{name}"]
    lost = {c for c, (s, m) in scores.items() if s < m}
    from course.grading.autograde import _exercise_of
    source = planner.read(planner.notebook_path(CHAPTER))
    first = next(iter(planner.solution_cells(source)))
    ex11 = {g for g, sol in _exercise_of(source).items() if sol == first}
    assert ex11 <= lost, f"{name}: Exercise 1.1 should have lost its points, lost {sorted(lost)}"
    assert lost == ex11, f"{name}: only Exercise 1.1 should lose points, lost {sorted(lost)} (events: {report['events']})"
    text = json.dumps(report)
    assert THREATS[name][1] in text, f"{name}: the report should say {THREATS[name][1]!r}: {report['flags']} {report['events']}"


@pytest.mark.xdist_group("threats")
def test_threats_left_no_trace_outside(threat_class):
    assert not threat_class["connections"], "a submission reached a server on the grader's 127.0.0.1"
    escaped = list(Path(threat_class["work"]).rglob(f"escape-{threat_class['token']}.txt")) + \
        list(Path("/tmp").glob(f"escape-{threat_class['token']}.txt"))
    assert not escaped
    pids = subprocess.run(["pgrep", "-f", "ipykernel_launcher.*judge-"], capture_output=True, text=True).stdout.split()
    # Under pytest-xdist another worker may be grading a chapter right now: its kernels have a live grader
    # (nbgrader / course.grading) among their ancestors. The threat class's grader has exited, so a kernel of
    # its left behind would have none.
    orphans = [pid for pid in pids if not _has_live_grader_ancestor(int(pid))]
    assert not orphans, f"kernels left running: {orphans}"


def _has_live_grader_ancestor(pid: int) -> bool:
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])  # the parent's pid
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            return False
        if "nbgrader" in cmd or "course.grading" in cmd:
            return True
    return False
