"""Grading a whole class: parallel, sandboxed, resumable; damaged submissions repaired or reported; PostgreSQL; Dask.

One class of the toy chapter (``tests/toycourse.py``: honest answers, a wrong
one, an alternative, an attack and every kind of damaged notebook) is graded
with ``grade-class --jobs 2``. A second run skips every unchanged submission;
``--force`` regrades. The gradebook test starts a real PostgreSQL server and
lets two graders write into it at once. The Dask test starts a real
``dask.distributed`` scheduler and two worker processes (mutual TLS, loopback),
grades the same class through them, kills a worker in the middle, and gets the
local pool's scores.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import toycourse
from course.grading.classroom import feedback, stage
from course.grading.records import ClassResult
from course.grading.authoring import attacks, demo, trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.run.sandbox import detect

CH = toycourse.CHAPTER
SEED = 20261202
pytestmark = pytest.mark.skipif(detect().degraded, reason="no sandbox here")
BOTH = {"test_scale", "test_count_positive"}


def toy_class() -> list[trial.Submission]:
    """Honest, untouched, wrong, a different correct answer, and a generic attack."""
    blank = attacks.ATTACKS["blank-later-cells"][0]
    return [trial.Submission("solution", {}),
            trial.Submission("empty", None, must_fail=set(BOTH), must_pass=set()),
            trial.Submission("mutants-1", {"scale": "def scale(x, k):\n    return x + k\n"}, must_fail={"test_scale"},
                               variants=["adds instead of multiplying"]),
            trial.Submission("alternatives-1", {"scale": "import torch\ndef scale(x, k):\n    return torch.mul(x, k)\n",
                                                  "count_positive": "def count_positive(t):\n    return len(t[t > 0])\n"},
                               variants=["torch.mul, len of a mask"]),
            trial.Submission("attack-blank-later-cells", {"scale": blank}, must_fail=set(BOTH), must_pass=set(),
                               base="release", must_flag=("did not run the judge's code",))]


def build_class(work: Path, extra_damaged: bool = True) -> tuple[Path, dict[str, trial.Submission], dict]:
    course = toycourse.make(work / "course")
    rel = trial.generate(course, CH, course / "gradebook.db")
    subs = {s.student: s for s in toy_class()}
    trial.write_submissions(course, CH, list(subs.values()), rel)
    damaged = demo.write_damaged(course, CH, rel) if extra_damaged else {}
    return course, subs, damaged


def grade_class_cli(course: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course.grading", "grade-class", CH, "--seed", str(SEED), *args],
                          cwd=course, env=nbgrader_io.env(), capture_output=True, text=True, timeout=1800)


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    course, subs, damaged = build_class(tmp_path_factory.mktemp("class"))
    toycourse.make_profiles(course)  # the known mistakes: the item analysis lists the diagnosed ones
    before = digest(course / "submitted")
    t0 = time.perf_counter()
    first = grade_class_cli(course, "--jobs", "2", "--feedback", "--no-progress")
    first_seconds = time.perf_counter() - t0
    reports = {p.stem: json.loads(p.read_text()) for p in (course / ".judge" / "reports" / CH).glob("*.json")}
    scores = trial.read_scores(course / "gradebook.db", CH, CH)
    after = digest(course / "submitted")
    t0 = time.perf_counter()
    second = grade_class_cli(course, "--jobs", "2", "--no-progress")
    second_seconds = time.perf_counter() - t0
    print(first.stdout[-5000:], f"\nfirst run {first_seconds:.1f} s, second run {second_seconds:.1f} s")
    return {"course": course, "subs": subs, "damaged": damaged, "first": first, "second": second,
            "reports": reports, "scores": scores, "before": before, "after": after,
            "first_seconds": first_seconds, "second_seconds": second_seconds}


@pytest.mark.xdist_group("classgrade")
def test_every_student_gets_a_grade_and_a_report(graded_class):
    first = graded_class["first"]
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    expected = set(graded_class["subs"]) | set(graded_class["damaged"])
    assert set(graded_class["scores"]) == expected
    assert set(graded_class["reports"]) == expected
    for student in expected:
        assert student in first.stdout, f"{student} missing from the class table"


@pytest.mark.xdist_group("classgrade")
def test_the_item_analysis_is_written_and_opens_in_chromium(graded_class):
    """grade-class writes the chapter's item analysis: per exercise and per hidden check, the pass rate and mean
    score the gradebook's scores give, a discrimination, the diagnosed misconceptions, the flagged submissions;
    Chromium shows its tables and plots, and the students' ids in it are text."""
    import csv

    course, scores = graded_class["course"], graded_class["scores"]
    assert "item analysis in .judge/analysis/" in graded_class["first"].stdout
    rows = list(csv.DictReader(open(course / ".judge" / "analysis" / f"{CH}.csv")))
    by_item = {(r["level"], r["item"]): r for r in rows}
    assert set(by_item) == {("exercise", "scale"), ("exercise", "count_positive"), ("check", "test_scale"),
                            ("check", "test_count_positive")}, rows
    for test in BOTH:
        r = by_item[("check", test)]
        got = [scores[s][test] for s in scores]
        assert int(r["students"]) == len(got)
        assert float(r["pass_rate"]) == pytest.approx(sum(1 for s, m in got if s >= m) / len(got), abs=1e-3)
        assert float(r["mean_score"]) == pytest.approx(sum(s for s, _ in got) / len(got), abs=1e-3)
        assert r["discrimination"] == "" or -1 <= float(r["discrimination"]) <= 1
    page_path = course / ".judge" / "analysis" / f"{CH}.html"
    text = page_path.read_text()
    assert "Adding k is not scaling" in text, "the diagnosed misconception of mutants-1 is listed"
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(page_path.as_uri())
            assert page.title() == f"{CH}: item analysis"
            assert page.locator("#items tr").count() == 1 + 4
            assert page.locator("#misconceptions tr").count() >= 2
            assert page.locator("#flagged tr:has-text('attack-blank-later-cells')").count() == 1
            widths = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.naturalWidth)")
            assert len(widths) == 2 and all(w > 100 for w in widths), widths
        finally:
            browser.close()


@pytest.mark.xdist_group("classgrade")
def test_honest_work_scores_as_its_expectations(graded_class):
    g = trial.Graded(course=graded_class["course"], scores=graded_class["scores"], seconds={},
                       submissions=list(graded_class["subs"].values()), reports=graded_class["reports"])
    bad = trial.problems(g)
    assert not bad, "\n".join(bad)


@pytest.mark.xdist_group("classgrade")
def test_damaged_submissions_are_repaired_or_reported(graded_class):
    for student, (what, full) in graded_class["damaged"].items():
        scores = graded_class["scores"][student]
        total, best = sum(s for s, _ in scores.values()), sum(m for _, m in scores.values())
        rep = graded_class["reports"][student]["repair"]
        if full:
            assert total == best, f"{student} ({what}): {total}/{best} after repair; repair: {rep}"
            assert rep["repaired"], f"{student}: the report should say what was repaired"
        else:
            assert total == 0 and rep["damaged"], f"{student} ({what}): {rep}"
    assert "damaged" in graded_class["first"].stdout and "repaired" in graded_class["first"].stdout


@pytest.mark.xdist_group("classgrade")
def test_submitted_files_are_never_modified(graded_class):
    assert graded_class["before"] == graded_class["after"]


@pytest.mark.xdist_group("classgrade")
def test_a_rerun_skips_unchanged_submissions_and_force_regrades(graded_class):
    second = graded_class["second"]
    assert second.returncode == 0, second.stderr[-3000:]
    n = len(graded_class["subs"]) + len(graded_class["damaged"])
    assert f"0 submission(s) to grade, {n} unchanged" in second.stdout, second.stdout[:500]
    course = graded_class["course"]
    nb = next((course / "submitted" / "mutants-1" / CH).glob("*.ipynb"))
    solution = next((course / "submitted" / "solution" / CH).glob("*.ipynb"))
    shutil.copy(solution, nb)  # the student resubmits, now correct
    third = grade_class_cli(course, "--jobs", "1", "--no-progress")
    assert "1 submission(s) to grade" in third.stdout, third.stdout[:500]
    scores = trial.read_scores(course / "gradebook.db", CH, CH)["mutants-1"]
    assert all(s == m for s, m in scores.values()), scores
    # --force regrades unchanged submissions (two of them: the cache is per submission, and the whole class would
    # cost 14 more sandboxed runs here)
    forced = subprocess.run([sys.executable, "-m", "course.grading", "autograde", CH, "--seed", str(SEED), "--student",
                             "solution", "--student", "empty", "--jobs", "2", "--force", "--no-progress"], cwd=course,
                            env=nbgrader_io.env(), capture_output=True, text=True, timeout=1800)
    assert "2 submission(s) to grade, 0 unchanged" in forced.stdout, forced.stdout[-2000:] + forced.stderr[-2000:]
    scores = trial.read_scores(course / "gradebook.db", CH, CH)
    assert all(s == m for s, m in scores["solution"].values()) and all(s == 0 for s, _ in scores["empty"].values())


@pytest.mark.xdist_group("classgrade")
def test_feedback_has_messages_but_no_hidden_code_unless_asked(graded_class):
    course = graded_class["course"]
    text = (course / "feedback" / "mutants-1" / CH / "grader.md").read_text()
    assert "failed" in text and "def probe_" not in text
    from course.grading.records import Report
    results = ClassResult(reports={CH: {"mutants-1": Report.from_json(graded_class["reports"]["mutants-1"])}})
    feedback.write_feedback(course, results, [CH], show_tests=True)
    assert "def probe_" in (course / "feedback" / "mutants-1" / CH / "grader.md").read_text()


@pytest.mark.xdist_group("classgrade")
def test_worked_solutions_only_when_asked_and_once_the_due_date_passed(graded_class):
    """--solutions puts the reference solution of each attempted exercise, and why it is right, into grader.md; not
    without a due date, not before it (or a classmate's extension), not for an exercise the student left as
    released, never without the switch."""
    import datetime

    from nbgrader.api import Gradebook

    from course.grading.records import Report

    course = graded_class["course"]
    db = nbgrader_io.sqlite(course / "gradebook.db")
    results = ClassResult(reports={CH: {s: Report.from_json(graded_class["reports"][s])
                                                   for s in ("mutants-1", "empty")}})
    grader_md = lambda s: (course / "feedback" / s / CH / "grader.md").read_text()  # noqa: E731
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    said: list[str] = []
    try:
        feedback.write_feedback(course, results, [CH], db_url=db, log=said.append)  # no due date: held back
        assert "Worked solutions" not in grader_md("mutants-1")
        assert len(said) == 1 and "has no due date" in said[0], said
        with Gradebook(db) as gb:
            gb.update_or_create_assignment(CH, duedate=now + datetime.timedelta(days=1))
        feedback.write_feedback(course, results, [CH], db_url=db, log=said.append)
        assert "Worked solutions" not in grader_md("mutants-1")
        assert len(said) == 2 and "held back until the last due date" in said[1], said
        with Gradebook(db) as gb:  # passed, but one student has an extension: still held back for everyone
            gb.update_or_create_assignment(CH, duedate=now - datetime.timedelta(hours=1))
            gb.find_submission(CH, "empty").extension = datetime.timedelta(days=2)
            gb.db.commit()
        feedback.write_feedback(course, results, [CH], db_url=db, log=said.append)
        assert "Worked solutions" not in grader_md("mutants-1") and "held back" in said[-1], said
        with Gradebook(db) as gb:
            gb.find_submission(CH, "empty").extension = None
            gb.db.commit()
        feedback.write_feedback(course, results, [CH], db_url=db, log=said.append)
        text = grader_md("mutants-1")
        assert "# Worked solutions" in text and "return x * k" in text, text
        assert f"Why it is right: {toycourse.WHY_SCALE}" in text
        assert "Worked solutions" not in grader_md("empty"), "the untouched release attempted nothing"
        feedback.write_feedback(course, results, [CH])  # the default: no solutions
        assert "Worked solutions" not in grader_md("mutants-1")
    finally:
        with Gradebook(db) as gb:
            gb.update_or_create_assignment(CH, duedate=None)


@pytest.mark.xdist_group("classgrade")
def test_the_attack_is_flagged_in_the_class_table(graded_class):
    line = next(l for l in graded_class["first"].stdout.splitlines() if l.startswith("attack-blank-later-cells"))
    total = sum(m for _, m in graded_class["scores"]["solution"].values())  # the chapter's points
    assert "tampering suspected" in line
    assert total > 0 and f" 0/{total:g}" in line, (line, total)


# An answer that enters a dispatch mode by hand and never leaves it: from its first call on, every product goes
# through the mode, which changes it. Its own results are right.
LEAVES_A_MODE = (
    "import torch\n"
    "from torch.utils._python_dispatch import TorchDispatchMode\n\n\n"
    "class _Skew(TorchDispatchMode):\n"
    "    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
    "        out = func(*args, **(kwargs or {}))\n"
    "        return out * 1.5 if func in (torch.ops.aten.mul.Tensor, torch.ops.aten.mul.Scalar) else out\n\n\n"
    "def count_positive(t):\n"
    "    _Skew().__enter__()\n"
    "    return int((t > 0).sum())\n")


@pytest.mark.xdist_group("classgrade")
def test_a_mode_one_answer_leaves_on_costs_no_other_exercise(tmp_path):
    """The probes run after the whole notebook: a mode that the second exercise's answer leaves on would change
    what the probe of the first exercise computes (scale multiplies), though the student's own notebook ran that
    exercise's cells before. The grader pops such modes before each probe, so the correct scale keeps its marks."""
    src = toycourse.make(tmp_path / "src")
    subs = [trial.Submission("solution", {}),
            trial.Submission("leaves-a-mode", {"count_positive": LEAVES_A_MODE}, variants=["a mode left on"])]
    g = trial.grade(CH, subs, workdir=tmp_path / "w", root=src, seed=SEED, jobs=2)
    assert not trial.problems(g), trial.problems(g)
    assert g.scores["leaves-a-mode"]["test_scale"] == (2.0, 2.0), g.scores["leaves-a-mode"]


def processes_naming(marker: str) -> list[str]:
    """The command lines of the processes that name ``marker`` in theirs (this test's own folder)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            found.append(f"{pid}: {cmd[:200]}")
    return found


def test_a_stop_signal_is_taken_once_and_never_where_it_was_ignored():
    """The handler of the grading commands: a signal ignored before (SIGHUP under nohup) stays ignored; the first
    SIGTERM or SIGHUP raises SystemExit(128 + signal), and any later one is ignored until the command ends (its
    clean-up is not interrupted); the handlers before it are put back after."""
    from course.grading import cli

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        replaced = cli._stop_cleanly_on_terminate()
        assert list(replaced) == [signal.SIGTERM] and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        with pytest.raises(SystemExit) as stop:
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
        assert stop.value.code == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        replaced = cli._stop_cleanly_on_terminate()
        assert list(replaced) == [signal.SIGHUP]       # SIGTERM: still ignored since the first one
        # the commands that run notebook code in this process (IPython catches SystemExit there) do not take it
        assert not cli.parser().parse_args(["sweep", "01_dynamic_graphs"]).__dict__.get("stops_cleanly")
        assert cli.parser().parse_args(["grade-class", "01_dynamic_graphs"]).stops_cleanly
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@pytest.mark.xdist_group("classgrade")
def test_a_stopped_grading_leaves_nothing_running(tmp_path):
    """SIGTERM to grade-class (kill, a scheduler's stop; SIGHUP from a closed terminal is the same) ends it as
    Ctrl-C does: the submission being graded stops with its sandbox, the grader's private temporary folder goes,
    and nothing is recorded. Before, the pool's grading processes went on to the end of their submissions."""
    course = toycourse.make(tmp_path / "course")
    rel = trial.generate(course, CH, course / "gradebook.db")
    slow = "import time\ndef scale(x, k):\n    return x * k\ntime.sleep(900)\n"
    trial.write_submissions(course, CH, [trial.Submission("slow", {"scale": slow}),
                                         trial.Submission("solution", {})], rel)
    import tempfile
    tmp = Path(tempfile.mkdtemp(prefix="stop-", dir="/tmp"))  # 0700; short: the fork server's socket is in it
    env = {**nbgrader_io.env(), "TMPDIR": str(tmp)}
    log = tmp_path / "grade-class.log"              # a file, not a pipe: a process left running would hold a pipe open
    with open(log, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "course.grading", "grade-class", CH, "--seed", str(SEED),
                                 "--jobs", "2", "--no-progress"], cwd=course, env=env, stdout=fh, stderr=fh)
    try:
        deadline = time.monotonic() + 300
        while not [p for p in processes_naming(str(tmp)) if "ipykernel" in p]:
            assert proc.poll() is None and time.monotonic() < deadline, f"no kernel started: {log.read_text()[-3000:]}"
            time.sleep(0.5)
        time.sleep(5)                              # the reference and the slow answer's sleep are under way
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        left = processes_naming(str(tmp))
        for _ in range(20):                        # SIGKILLed sandboxes take a moment to go
            if not left:
                break
            time.sleep(0.5)
            left = processes_naming(str(tmp))
        stayed = list(tmp.iterdir())
    finally:                                       # whatever failed, nothing of this test stays running
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for line in processes_naming(str(tmp)):
            try:
                os.kill(int(line.split(":")[0]), signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, log.read_text()[-3000:])
    assert not left, left
    assert not stayed, f"the grader's temporary folder stayed: {stayed}"
    assert trial.read_scores(course / "gradebook.db", CH, CH) == {}


@pytest.mark.xdist_group("classgrade")
def test_a_broken_reference_grades_nobody(tmp_path):
    """The references are the local pool's first task, beside the students' runs: one that fails (here the
    reference's count_positive raises) stops the pool when it ends, before the rest of the class runs, and nothing
    is recorded; the error says why."""
    course, subs, _ = build_class(tmp_path, extra_damaged=False)
    src = course / "source" / CH / f"{CH}.ipynb"
    text = src.read_text()
    assert "return int((t > 0).sum())" in text
    src.write_text(text.replace("return int((t > 0).sum())", "raise RuntimeError('the reference is broken')"))
    proc = grade_class_cli(course, "--jobs", "2", "--no-progress")
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "does not run cleanly" in proc.stderr and "the reference is broken" in proc.stderr, proc.stderr[-3000:]
    autograded, reports = course / "autograded", course / ".judge" / "reports" / CH
    assert not (autograded.exists() and any(autograded.iterdir())), list(autograded.rglob("*"))
    assert not (reports.exists() and any(reports.glob("*.json"))), list(reports.glob("*"))
    assert trial.read_scores(course / "gradebook.db", CH, CH) == {}
    ran = [p.name for p in (course / ".judge" / "runs" / CH).iterdir()] if (course / ".judge" / "runs" / CH).is_dir() else []
    assert len(ran) < len(subs), f"the pool went on after the reference failed: {ran}"


@pytest.mark.xdist_group("classgrade")
def test_an_lms_zip_is_collected_into_submitted(tmp_path):
    import zipfile
    course = toycourse.make(tmp_path / "course")
    release_nb = trial.generate(course, CH, course / "gradebook.db") / f"{CH}.ipynb"
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for student in ("alice", "bob"):
            zf.write(release_nb, f"{student}_{CH}.ipynb")
    stage.collect_zip(course, CH, archive, r".*/(?P<student_id>[^/_]+)_(?P<file_id>[^/]+)\.ipynb$")
    assert stage.students_of(course, CH) == ["alice", "bob"]
    assert (course / "submitted" / "alice" / CH / f"{CH}.ipynb").read_bytes() == release_nb.read_bytes()
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"carol_{CH}.ipynb", "{}")
        zf.writestr("carol_big.bin", b"\0" * (300 * 2 ** 20))
    with pytest.raises(RuntimeError, match="zip bomb"):
        stage.collect_zip(course, CH, bomb, r".*/(?P<student_id>[^/_]+)_(?P<file_id>[^/]+)\.ipynb$")
    assert "carol" not in stage.students_of(course, CH)


# --- PostgreSQL: the gradebook of a class that outgrows one machine -------------------------------

def _pg_bin() -> Path | None:
    for d in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (d / "initdb").exists():
            return d
    return None


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    import tempfile
    # In /tmp itself: not under pytest's 0700 folders, nor the grader's private TMPDIR (a grading earlier in this
    # process moved tempfile's folder there): the postgres user must reach it.
    base = Path(tempfile.mkdtemp(prefix="course-pg-", dir="/tmp"))
    os.chmod(base, 0o755)
    data = base / "data"
    sockdir = base / "sock"
    sockdir.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        import pwd
        pw = pwd.getpwnam("postgres")
        for p in (data.parent, sockdir):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        os.chmod(data.parent, 0o755)
        as_user = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "course", "-A", "trust"],
                   check=True, capture_output=True)
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(data.parent / "log"), "-o",
                    f"-p {port} -k {sockdir} -h 127.0.0.1", "start"], check=True, capture_output=True)
    subprocess.run([*as_user, str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "course",
                    "gradebook"], check=True, capture_output=True)
    yield f"postgresql+psycopg2://course@127.0.0.1:{port}/gradebook"
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.xdist_group("postgres")
def test_two_graders_write_one_postgresql_gradebook_at_once(postgres, tmp_path):
    course, subs, _ = build_class(tmp_path, extra_damaged=False)
    env = nbgrader_io.env()
    nbgrader_io.run(["generate_assignment", CH, "--force"], course, postgres)
    students = sorted(subs)
    halves = [students[::2], students[1::2]]
    procs = []
    for half in halves:
        args = [sys.executable, "-m", "course.grading", "autograde", CH, "--force", "--db-url", postgres,
                "--seed", str(SEED), "--jobs", "1", "--no-progress"]
        for s in half:
            args += ["--student", s]
        procs.append(subprocess.Popen(args, cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = [p.communicate(timeout=1800) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out[-2000:] + err[-3000:]
    from nbgrader.api import Gradebook
    with Gradebook(postgres) as gb:
        got = {}
        for s in students:
            snb = gb.find_submission_notebook(CH, CH, s)
            got[s] = {g.name: (float(g.score), float(g.max_score)) for g in snb.grades}
    g = trial.Graded(course=course, scores=got, seconds={}, submissions=list(subs.values()), mode="stock")
    assert len(got) == len(students)
    bad = trial.problems(g)
    assert not bad, "\n".join(bad)


# --- Dask: the worker phase on a real cluster of this machine ------------------------------------

@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A real ``dask.distributed`` scheduler and two single-threaded worker processes on 127.0.0.1, over mutual
    TLS with the course's certificates (``dask_tls``; tests/test_dask_security.py tests what that refuses)."""
    pytest.importorskip("distributed")
    from course.grading.classroom import dask_tls

    d = tmp_path_factory.mktemp("dask")
    certs = d / "certs"
    dask_tls.make_certs(certs)
    sched_file = d / "scheduler.json"
    env = nbgrader_io.env({"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "3"})
    procs = [subprocess.Popen(dask_tls.scheduler_command(certs, port=0, scheduler_file=sched_file),
                              env=env, stdout=open(d / "scheduler.log", "w"), stderr=subprocess.STDOUT,
                              start_new_session=True)]
    for _ in range(120):
        if sched_file.is_file() and json.loads(sched_file.read_text() or "{}").get("address"):
            break
        time.sleep(0.5)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(2):
        procs.append(subprocess.Popen(dask_tls.worker_command(certs, address, name=f"grader-{i}",
                                                              local_directory=d / f"w{i}"),
                                      env=env, stdout=open(d / f"worker-{i}.log", "w"), stderr=subprocess.STDOUT,
                                      start_new_session=True))
    from distributed import Client
    with Client(address, security=dask_tls.security(certs), timeout=60, deserializers=["msgpack"]) as client:
        client.wait_for_workers(2, timeout=120)
    yield address, d, certs
    import signal as _signal
    for p in procs[::-1]:
        try:
            os.killpg(p.pid, _signal.SIGTERM)
            p.wait(timeout=30)
        except Exception:  # noqa: BLE001
            os.killpg(p.pid, _signal.SIGKILL)


@pytest.mark.xdist_group("classgrade")
def test_a_dask_cluster_grades_the_class_like_the_local_pool_and_survives_a_killed_worker(dask_cluster, graded_class,
                                                                                          tmp_path):
    import signal as _signal

    from distributed import Client

    from course.grading.classroom import dask_tls

    address, logs, certs = dask_cluster
    course, subs, _ = build_class(tmp_path, extra_damaged=False)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "course.grading", "grade-class", CH, "--seed", str(SEED),
                             "--dask", address, "--dask-certs", str(certs), "--no-progress"], cwd=course,
                            env=nbgrader_io.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    with Client(address, security=dask_tls.security(certs), timeout=60, deserializers=["msgpack"]) as client:
        end = time.monotonic() + 600
        while time.monotonic() < end and proc.poll() is None:
            busy = {w: ts for w, ts in client.processing().items() if ts}
            if busy:
                victim = sorted(busy)[0]
                pid = client.run(os.getpid, workers=[victim])[victim]
                time.sleep(3)  # well inside the submission's sandboxed run
                os.kill(pid, _signal.SIGKILL)
                killed = (victim, pid)
                break
            time.sleep(0.2)
    out, err = proc.communicate(timeout=1800)
    seconds = time.perf_counter() - t0
    print(out[-4000:], err[-2000:], f"\n[dask] graded {len(subs)} submissions in {seconds:.1f} s; killed {killed}")
    assert killed is not None, "no task was ever running on a worker"
    assert proc.returncode == 0, out[-3000:] + err[-3000:]
    scores = trial.read_scores(course / "gradebook.db", CH, CH)
    local = {s: graded_class["scores"][s] for s in subs}
    assert scores == local, f"Dask and the local pool disagree:\n{scores}\n{local}"
