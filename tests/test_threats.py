"""A class of hostile submissions, graded with an honest classmate in the same run, through the real command line.

Every byte of a submission is hostile (issue 18). One class of the toy chapter
(``tests/toycourse.py``: real nbgrader, the real judge and sandbox, a chapter
that runs in seconds) is graded with ``python -m course.grading grade-class``.
It holds one honest student, who must keep full marks, and one student per
attack class:

* files: symbolic links to the hidden tests, the secret and a whole folder; the
  notebook itself a link to the classmate's; ``/dev/zero``, a named pipe and a
  socket; more files and bytes than the intake takes; a student id with
  terminal escapes;
* results: a tiny tensor that would expand to 32 GiB, a result over the
  per-probe cap, shared references that multiply;
* outputs: a 300 MiB line, a 40 MiB message, a display update aimed at an
  earlier cell while a probe runs, an exception carrying the probe's source;
* active content: ``<script>``, JavaScript and SVG outputs, ``onerror`` in HTML
  and in the student's markdown, HTML in an exception that becomes the judge's
  comment (then opened in Formgrader and in the feedback, in Chromium);
* the terminal: escape sequences in the student's error text;
* forged nbgrader metadata;
* the sandbox threats (reading the instructor's files, writing outside, the
  network, an endless loop, memory, a fork bomb, ``os._exit``, a segfault).

Then the exchange: links and forged owners planted in ``inbound/`` and
collected with ``nbgrader collect``; and a plain ``nbgrader autograde`` that
must refuse a hostile folder before copying anything.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

import toycourse
from course.grading.authoring import trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.run.sandbox import detect
from course.grading.judge.verdicts import judge_files

CH = toycourse.CHAPTER
KEY = 20261202
pytestmark = [pytest.mark.skipif(detect().degraded, reason="no sandbox here"), pytest.mark.xdist_group("threats")]

HONEST_SCALE = "def scale(x, k):\n    return x * k\n"
HONEST_COUNT = "def count_positive(t):\n    return int((t > 0).sum())\n"
BOTH = {"test_scale", "test_count_positive"}
SCALE = {"test_scale"}
COUNT = {"test_count_positive"}

# What a script in the instructor's browser would do: retitle the page and write a file through the Jupyter API.
PAYLOAD = ("document.title='pwned';fetch('/api/contents/pwned-{tag}.txt',{{method:'PUT',headers:{{'X-XSRFToken':"
           "(document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'','Content-Type':'application/json'}},"
           "body:JSON.stringify({{type:'file',format:'text',content:'x'}})}})")

SANDBOX = {
    # name: (code put first in the scale cell, a phrase its report must contain)
    "read-source": ("print(open('../../../source/00_toy/00_toy.ipynb').read()[:80])\n", "opened the instructor's files"),
    "read-gradebook": ("import sqlite3\nprint(sqlite3.connect('../../../gradebook.db').execute('select 1').fetchall())\n",
                       "opened the instructor's files"),
    "write-outside": ("open('../../../../escape-{token}.txt', 'w').write('x')\n", "only inside its own folder"),
    "tcp-localhost": ("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'leak')\n",
                      "without network"),
    "infinite-loop": ("while True:\n    pass\n", "timed out"),
    "memory-3x": ("import torch\nhog = torch.ones(3 * {cap} // 4, dtype=torch.float32)\n", "memory cap"),
    "fork-bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", "processes"),
    "os-exit": ("import os\nos._exit(0)\n", "exited with code 0"),
    "segfault": ("import ctypes\nctypes.string_at(0)\n", "SIGSEGV"),
}

LEAK_FILES = '''
leak = ""
for name in ("judge.py", "x/00_toy/judge.py", "seed", "secret"):
    try:
        leak += open(name, errors="replace").read()
    except OSError as err:
        print("cannot read", name, type(err).__name__)
if "probe_scale" in leak:
    def scale(x, k):
        return x * k
'''

EXPAND = '''
import torch, course.grading.run.wire as _w
_w.encode = lambda v, *a, **k: torch.zeros(1, dtype=torch.float64).expand(2 ** 32)
''' + HONEST_SCALE

TOO_LARGE = '''
import torch, course.grading.run.wire as _w
_w.encode = lambda v, *a, **k: torch.zeros(10 * 2 ** 20)
''' + HONEST_SCALE

MULTIPLY = '''
import functools, course.grading.run.wire as _w
_w.encode = lambda v, *a, **k: functools.reduce(lambda acc, _: [acc, acc], range(60), [0])
''' + HONEST_SCALE

FLOOD_LINE = "print('x' * (300 * 2 ** 20))\n" + HONEST_COUNT

FLOOD_MESSAGE = '''
k = get_ipython().kernel
k.session.send(k.iopub_socket, "stream", {"name": "stdout", "text": "y" * (40 * 2 ** 20)}, parent=k.get_parent("shell"))
''' + HONEST_COUNT

DISPLAY_UPDATE = '''
import inspect
from IPython.display import display, update_display
display("placeholder", display_id="leak")

def scale(x, k):
    stolen = [f.frame.f_locals.get("source") for f in inspect.stack() if "source" in f.frame.f_locals]
    update_display("LEAKED " + " ".join(s for s in stolen if isinstance(s, str)), display_id="leak")
    print("LEAKED-PRINT", stolen)
    return x * k
'''

EXCEPTION_LEAK = '''
import inspect

def count_positive(t):
    stolen = [f.frame.f_locals.get("source") for f in inspect.stack() if "source" in f.frame.f_locals]
    raise ValueError("LEAKED " + " ".join(s for s in stolen if isinstance(s, str)) * 20)
'''

XSS_OUTPUTS = '''
from IPython.display import display, HTML, Javascript, SVG, Markdown
P = {payload!r}
display(HTML("<script>" + P + "</script><img src=x onerror=\\"" + P + "\\">"))
display(Javascript(P))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="' + P + '"><circle r="5"/></svg>'))
display(Markdown('<img src=x onerror="' + P + '">'))
''' + HONEST_COUNT

XSS_COMMENT = '''
def scale(x, k):
    raise ValueError('<img src=x onerror="{payload}"><script>{payload}</script>')
'''

TERMINAL = '''
def count_positive(t):
    raise RuntimeError("\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07\\x1b[2K\\rforged-student   33/33")
'''


def notebook(release: dict, scale: str, count: str = HONEST_COUNT, extra_md: str | None = None) -> dict:
    nb = json.loads(json.dumps(release))
    for c in nb["cells"]:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid == "scale":
            c["source"] = scale
        elif gid == "count_positive":
            c["source"] = count
    if extra_md is not None:
        nb["cells"].insert(2, nbformat.v4.new_markdown_cell(extra_md))
    return nb


def forged(release: dict) -> dict:
    nb = notebook(release, HONEST_SCALE)
    cells = nb["cells"]
    by = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(cells)}
    cells.insert(by["test_scale"] + 1, json.loads(json.dumps(cells[by["test_scale"]])))      # a duplicated grade id
    cells[by["scale"]]["metadata"]["nbgrader"].update(grade=True, points=100)                  # grade: true on a solution
    md = nbformat.v4.new_markdown_cell("I deserve points")
    md.metadata["nbgrader"] = {"grade": True, "grade_id": "bonus", "points": 50, "locked": False, "solution": True,
                               "schema_version": 3, "task": False}
    cells.insert(2, md)                                                                         # a forged graded markdown
    t = cells[[i for i, c in enumerate(cells) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
               == "test_count_positive"][0]]
    t["cell_type"] = "raw"                                                                      # a test cell retyped to raw
    t.pop("outputs", None)
    t.pop("execution_count", None)
    return nb


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    work = tmp_path_factory.mktemp("threats")
    course = toycourse.make(work / "course")
    # Small caps, so that the cap attacks stay cheap; the same caps for everyone in the class.
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write("\nc.GradingLimits.memory_gib = 3\nc.GradingLimits.cell_seconds = 45\nc.GradingLimits.probe_seconds = 30\n"
                 "c.GradingLimits.wall_seconds = 400\nc.GradingLimits.intake_files = 50\n"
                 "c.GradingLimits.intake_file_mib = 1\n")
    db = course / "gradebook.db"
    rel = nbgrader_io.generate(course, CH, nbgrader_io.sqlite(db))
    release = json.loads((rel / f"{CH}.ipynb").read_text())
    (course / ".judge").mkdir(exist_ok=True)
    (course / ".judge" / "secret").write_bytes(b"TOP-SECRET-KEY-" + os.urandom(17).hex().encode())
    tag = os.urandom(4).hex()
    token = os.urandom(4).hex()
    payload = PAYLOAD.format(tag=tag)
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
    cap = 3 * 2 ** 30
    subs: dict[str, dict] = {
        "honest": {"nb": notebook(release, HONEST_SCALE), "lost": set()},
        "link-hidden-tests": {"nb": notebook(release, LEAK_FILES), "lost": SCALE, "words": ["links dropped"]},
        "link-classmate": {"nb": None, "lost": BOTH, "words": ["notebook refused"]},
        "special-files": {"nb": notebook(release, HONEST_SCALE), "lost": set(),
                          "words": ["links dropped", "special files dropped"]},
        "over-the-caps": {"nb": notebook(release, HONEST_SCALE), "lost": set(), "words": ["over the intake caps"]},
        "expanded-tensor": {"nb": notebook(release, EXPAND), "lost": BOTH, "words": ["result refused"],
                            "message": "does not match its data"},
        "result-too-large": {"nb": notebook(release, TOO_LARGE), "lost": BOTH, "message": "allowed"},
        "shared-references": {"nb": notebook(release, MULTIPLY), "lost": BOTH, "message": "more than"},
        "flood-line": {"nb": notebook(release, HONEST_SCALE, FLOOD_LINE), "lost": set(), "words": ["output capped"]},
        "flood-message": {"nb": notebook(release, HONEST_SCALE, FLOOD_MESSAGE), "lost": set(),
                          "words": ["output capped"]},
        "display-update": {"nb": notebook(release, DISPLAY_UPDATE), "lost": set()},
        "exception-leak": {"nb": notebook(release, HONEST_SCALE, EXCEPTION_LEAK), "lost": COUNT},
        "xss": {"nb": notebook(release, XSS_COMMENT.format(payload=payload.replace("'", "\\'")),
                               XSS_OUTPUTS.format(payload=payload),
                               extra_md=f'<script>{payload}</script><img src=x onerror="{payload}"> '
                                        f'[click](javascript:{payload})'), "lost": SCALE},
        "terminal": {"nb": notebook(release, HONEST_SCALE, TERMINAL), "lost": COUNT},
        "forged-metadata": {"nb": forged(release), "lost": set(), "words": ["repaired"]},
    }
    for name, (code, _) in SANDBOX.items():
        # Reading the decoys does not stop the honest code after it: those keep their points, flagged.
        subs[f"sandbox-{name}"] = {"nb": notebook(release, code.format(token=token, port=port, cap=cap) + HONEST_SCALE),
                                   "lost": set() if name.startswith("read-") else SCALE}
    sub = course / "submitted"
    for student, spec in subs.items():
        d = sub / student / CH
        d.mkdir(parents=True)
        if spec["nb"] is not None:
            (d / f"{CH}.ipynb").write_text(json.dumps(spec["nb"]))
    s = sub / "link-hidden-tests" / CH
    os.symlink(course / "source" / CH / "judge.py", s / "judge.py")
    os.symlink("../../../source", s / "x")
    os.symlink(course / ".judge" / "secret", s / "secret")
    os.symlink("../../../.judge/secret", s / "seed")
    os.symlink(sub / "honest" / CH / f"{CH}.ipynb", sub / "link-classmate" / CH / f"{CH}.ipynb")
    s = sub / "special-files" / CH
    os.symlink("/dev/zero", s / "data.bin")
    (s / "sub").mkdir()
    os.mkfifo(s / "sub" / "pipe")
    so = socket.socket(socket.AF_UNIX)
    so.bind(str(s / "sub" / "sock"))
    so.close()
    s = sub / "over-the-caps" / CH
    for i in range(80):
        (s / f"f{i:03d}.txt").write_text("x")
    (s / "big.bin").write_bytes(b"\0" * (2 * 2 ** 20))
    evil = sub / "evil\x1b]0;pwned\x07\x1b[31m" / CH
    evil.mkdir(parents=True)
    (evil / f"{CH}.ipynb").write_text(json.dumps(notebook(release, HONEST_SCALE)))
    before = {str(p.relative_to(sub)): os.lstat(p).st_mtime_ns for p in sub.rglob("*")}
    env = nbgrader_io.env()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "course.grading", "grade-class", CH, "--seed", str(KEY), "--jobs",
                           "2", "--feedback", "--no-progress"], cwd=course, env=env, capture_output=True, text=True,
                          timeout=2400)
    seconds = time.perf_counter() - t0
    stop.set()
    srv.close()
    after = {str(p.relative_to(sub)): os.lstat(p).st_mtime_ns for p in sub.rglob("*")}
    reports = {p.stem: json.loads(p.read_text()) for p in (course / ".judge" / "reports" / CH).glob("*.json")}
    scores = trial.read_scores(db, CH, CH)
    print(proc.stdout[-8000:], proc.stderr[-3000:], f"\n[threats] graded {len(subs)} submissions in {seconds:.1f} s")
    for student, r in sorted(reports.items()):
        print(f"  {student:<26} {r['score']:g}/{r['max_score']:g}  judge peak {r.get('judge_peak_mib', 0):7.1f} MiB  "
              f"sandbox peak {r.get('peak_memory_gib', 0):.2f} GiB  {'; '.join(r['flags'])[:200]!r}")
    return {"course": course, "proc": proc, "subs": subs, "reports": reports, "scores": scores, "tag": tag,
            "token": token, "connections": connections, "work": work, "before": before, "after": after,
            "payload": payload, "release": release}


def test_the_class_run_goes_on_and_the_honest_student_keeps_full_marks(hostile_class):
    c = hostile_class
    out = c["proc"].stdout
    assert re.search(r"^student\s+00_toy\s+total\s+flags", out, re.M), out[-3000:]  # the table is printed
    assert set(c["reports"]) == set(c["subs"]), sorted(set(c["subs"]) ^ set(c["reports"]))
    honest = c["scores"]["honest"]
    assert all(s == m for s, m in honest.values()), honest
    assert c["reports"]["honest"]["flags"] == []
    # The one student not graded is the folder whose name is not a plain id: refused, and said.
    assert c["proc"].returncode == 1 and "the student id is not a plain name" in out
    assert c["before"] == c["after"], "the submitted files must never change"


@pytest.mark.parametrize("student", ["link-hidden-tests", "link-classmate", "special-files", "over-the-caps",
                                     "expanded-tensor", "result-too-large", "shared-references", "flood-line",
                                     "flood-message", "display-update", "exception-leak", "xss", "terminal",
                                     "forged-metadata", *[f"sandbox-{n}" for n in SANDBOX]])
def test_each_attack_costs_exactly_its_own_points_and_is_said(hostile_class, student):
    c = hostile_class
    spec, report = c["subs"][student], c["reports"][student]
    lost = {cell for cell, (s, m) in c["scores"][student].items() if s < m}
    assert lost == spec["lost"], f"{student} lost {sorted(lost)}, expected {sorted(spec['lost'])}: {report['flags']}"
    table = next(line for line in c["proc"].stdout.splitlines() if line.startswith(student + " "))
    for word in spec.get("words", []):
        assert word in table, f"{student}: the class table should say {word!r}: {table}"
    if "message" in spec:
        msgs = " ".join(cell["message"] for cell in report["cells"].values())
        assert spec["message"] in msgs, msgs[:600]
    if student.startswith("sandbox-"):
        phrase = SANDBOX[student.removeprefix("sandbox-")][1]
        assert phrase in json.dumps(report), f"{student}: {report['flags']} {report['events']}"
    feedback = (c["course"] / "feedback" / student / CH / "grader.md").read_text()
    for word in spec.get("words", []):
        if word in ("links dropped", "notebook refused", "special files dropped", "over the intake caps"):
            assert "Note on your submission" in feedback and "intake" in feedback


def test_no_secret_reaches_anything_the_student_or_the_instructor_reads(hostile_class):
    c = hostile_class
    judge = "\n".join(f.read_text() for f in judge_files(CH, c["course"]))
    secret = (c["course"] / ".judge" / "secret").read_bytes()
    places = [*c["course"].joinpath("autograded").rglob("*"), *c["course"].joinpath("feedback").rglob("*"),
              *c["course"].joinpath(".judge", "staged").rglob("*")]
    for p in places:
        assert not p.is_symlink(), f"{p} is a link"
        if p.is_file():
            data = p.read_bytes()
            assert secret not in data, f"the secret reached {p}"
            # lines of judge.py: its verdicts' hints, and its probes' inputs
            assert b"multiply every element by k" not in data and b"judge = Judge()" not in data, \
                f"the hidden tests reached {p}"
            if "exception-leak" not in p.parts:  # it sends a few hundred characters of its probe back: capped
                assert b"torch.randint(2, 9" not in data and b"(3, 10, 50)" not in data, f"a probe's source reached {p}"
    # the probe's source read from the caller's frame: never in the graded notebook (display updates and prints
    # during probes are dropped), and in a message only as a few hundred characters
    graded = (c["course"] / "autograded" / "display-update" / CH / f"{CH}.ipynb").read_text()
    # the visible test's own call (the student's code, not a probe) may update the display, but it finds no probe
    # frame there: only the probes' calls could steal a source, and their updates and prints are dropped
    assert "placeholder" in graded or "'LEAKED '" in graded
    leaked = re.findall(r"LEAKED[^\\\n\"]*", graded)
    assert set(leaked) <= {"LEAKED ", "LEAKED-PRINT", "LEAKED '", "LEAKED-PRINT []"}, f"a probe's source reached the graded notebook: {leaked[:3]}"
    leak = c["reports"]["exception-leak"]["cells"]["test_count_positive"]["message"]
    # the probe's stolen source comes back once, capped (the message also quotes the student's own raise line)
    assert len(leak) < 1600 and leak.count("LEAKED def") <= 1
    assert judge.count("\n") > 10


def test_results_and_floods_cost_the_grader_little_memory_and_disk(hostile_class):
    c = hostile_class
    for student in ("expanded-tensor", "result-too-large", "shared-references", "flood-line", "flood-message"):
        peak = c["reports"][student]["judge_peak_mib"]
        assert 0 < peak < 2048, f"{student}: the grading process peaked at {peak} MiB"
    for student in ("flood-line", "flood-message"):
        size = (c["course"] / "autograded" / student / CH / f"{CH}.ipynb").stat().st_size
        assert size < 20 * 2 ** 20, f"{student}: graded notebook of {size / 2**20:.0f} MiB"
    staged = sum(p.stat().st_size for p in (c["course"] / ".judge" / "staged").rglob("*") if p.is_file())
    assert staged < 100 * 2 ** 20, f"the staged copies take {staged / 2**20:.0f} MiB (/dev/zero followed?)"


def test_graded_notebooks_hold_no_active_content(hostile_class):
    c = hostile_class
    for student in ("xss", "display-update"):
        nb = json.loads((c["course"] / "autograded" / student / CH / f"{CH}.ipynb").read_text())
        assert "widgets" not in nb["metadata"]
        for cell in nb["cells"]:
            text = "".join(cell["source"]) if cell["cell_type"] != "code" else ""
            for o in cell.get("outputs", []):
                for key, value in o.get("data", {}).items():
                    assert key not in ("application/javascript", "image/svg+xml", "text/javascript")
                    text += "".join(value) if isinstance(value, (list, str)) else ""
            assert "<script" not in text and not re.search(r"<img[^>]*onerror", text), text[:300]


def test_the_terminal_gets_no_control_characters(hostile_class):
    c = hostile_class
    out = c["proc"].stdout + c["proc"].stderr
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\r" not in out
    report = json.dumps(c["reports"]["terminal"])
    # the exception's text is the student's, written while a hidden test ran: not shown at all (its type is)
    assert "RuntimeError" in report and "\\u001b" not in report and "\\u0007" not in report
    assert "evil]0;pwned[31m" in out or "evil" in out  # the refused folder is named, without its escapes


def test_the_sandbox_threats_left_no_trace_outside(hostile_class):
    c = hostile_class
    assert not c["connections"], "a submission reached a server on the grader's 127.0.0.1"
    escaped = list(Path(c["work"]).rglob(f"escape-{c['token']}.txt")) + list(Path("/tmp").glob(f"escape-{c['token']}.txt"))
    assert not escaped


def test_plain_nbgrader_refuses_a_hostile_folder_before_copying_it(hostile_class):
    c = hostile_class
    course = c["course"]
    proc = nbgrader_io.run(["autograde", CH, "--force", "--student", "link-hidden-tests",
                            f"--JudgeExecute.seed={KEY}"], course, nbgrader_io.sqlite(course / "plain.db"), check=False)
    text = proc.stdout + proc.stderr
    assert "refusing to grade" in text and "symbolic link" in text
    assert not (course / "autograded" / "link-hidden-tests" / CH / "judge.py").exists()


# --- what a human sees, in Chromium -----------------------------------------------------------------

def test_formgrader_and_the_feedback_run_no_student_script(hostile_class, tmp_path):
    from test_browser import ARGS, CHROMIUM, Server

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    c = hostile_class
    course = c["course"]
    db_url = nbgrader_io.sqlite(course / "gradebook.db")
    for student in ("xss", "exception-leak", "terminal"):
        nbgrader_io.run(["generate_feedback", CH, "--force", "--student", student], course, db_url)
    server = Server("instructor", course, "gradebook.db")
    pages = []
    try:
        from nbgrader.api import Gradebook
        with Gradebook(db_url) as gb:
            ids = {s: gb.find_submission_notebook(CH, CH, s).id for s in ("xss", "exception-leak", "terminal")}
        for student, sid in ids.items():
            pages.append((f"formgrader {student}", server.url(f"formgrader/submissions/{sid}/")))
            pages.append((f"feedback {student}", server.url(f"files/feedback/{student}/{CH}/{CH}.html")))
        pages.append(("formgrader manage students", server.url("formgrader/manage_students")))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            ctx = browser.new_context()
            dialogs = []
            for name, url in pages:
                page = ctx.new_page()
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(url, wait_until="load", timeout=120_000)
                page.wait_for_timeout(2500)
                title = page.title()
                shot = Path(__file__).parent / "screenshots"
                shot.mkdir(exist_ok=True)
                page.screenshot(path=str(shot / f"threat-{name.replace(' ', '-')}.png"), full_page=False)
                assert title != "pwned", f"{name}: a student's script ran (title {title!r})"
                if name.startswith("formgrader") and "manage" not in name:
                    body = page.content()
                    assert "None, None" not in body
                page.close()
            browser.close()
        assert not dialogs
        assert not list(course.rglob(f"pwned-{c['tag']}.txt")), "a student's script wrote a file through the Jupyter API"
        html = (course / "feedback" / "xss" / CH / f"{CH}.html").read_text()
        assert c["payload"] not in html.replace("&#x27;", "'").replace("&quot;", '"').split("<body")[0]
        assert not re.search(r"<img[^>]*onerror", html) and "<svg" not in html.split("<body", 1)[1].lower()
    finally:
        server.stop()


# --- the exchange -----------------------------------------------------------------------------------

def test_collect_follows_no_link_and_takes_no_one_elses_submission(tmp_path):
    import pwd

    course = toycourse.make(tmp_path / "course")
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o1777)
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    db_url = nbgrader_io.sqlite(course / "gradebook.db")
    rel = nbgrader_io.generate(course, CH, db_url)
    nbgrader_io.run(["release_assignment", CH], course, db_url)
    inbound = exchange / "pytorch-internals" / "inbound"
    me = pwd.getpwuid(os.geteuid()).pw_name

    def plant(student: str, stamp: str) -> Path:
        d = inbound / f"{student}+{CH}+2026-12-0{stamp} 10:00:00.000000 UTC"
        d.mkdir()
        shutil.copy2(rel / f"{CH}.ipynb", d / f"{CH}.ipynb")
        (d / "timestamp.txt").write_text(f"2026-12-0{stamp} 10:00:00.000000 UTC")
        return d
    honest = plant(me, "1")
    mal = plant("mallory", "1")
    os.symlink(course / "source" / CH / "judge.py", mal / "judge.py")
    os.symlink(course / "source", mal / "x")
    os.symlink("/dev/zero", mal / "data.bin")
    os.mkfifo(mal / "pipe")
    os.symlink(honest, inbound / f"copycat+{CH}+2026-12-02 10:00:00.000000 UTC")     # a whole linked submission
    if os.geteuid() == 0:
        nobody = plant("nobody", "1")                                                  # root plants it as nobody
        os.chown(nobody, pwd.getpwnam("nobody").pw_uid, -1)
        forged = plant(me, "3")                                                        # nobody submits as root: later stamp
        os.chown(forged, pwd.getpwnam("nobody").pw_uid, -1)
        (forged / f"{CH}.ipynb").write_text('{"forged": true}')
    for student in sorted({me, "mallory", "copycat", "nobody"}):  # the class list: collect takes no one else
        nbgrader_io.run(["db", "student", "add", student], course, db_url)
    proc = nbgrader_io.run(["collect", CH, "--update"], course, db_url, check=False)
    text = proc.stdout + proc.stderr
    sub = course / "submitted"
    for p in sub.rglob("*"):
        assert stat.S_ISREG(os.lstat(p).st_mode) or stat.S_ISDIR(os.lstat(p).st_mode), f"{p} is not a plain file"
    assert sorted(p.name for p in (sub / "mallory" / CH).iterdir()) == [f"{CH}.ipynb", "timestamp.txt"]
    log = json.loads((course / ".judge" / "intake" / CH / "mallory.json").read_text())
    assert len(log["dropped"]) == 4
    assert not (sub / "copycat" / CH).exists() and "symbolic link" in text
    mine = json.loads((sub / me / CH / f"{CH}.ipynb").read_text())
    assert "forged" not in mine, "another user's planted submission replaced the student's own"
    if os.geteuid() == 0:
        assert "belongs to nobody" in text  # the planted one is named in the log, and ignored
        assert (sub / "nobody" / CH / f"{CH}.ipynb").is_file()  # nobody's own submission is collected
