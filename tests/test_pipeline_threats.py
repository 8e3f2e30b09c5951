"""The grading pipeline against what a student sends (issue 26, item 5): nothing forges a grade, leaks a hidden
test or stops the class.

``tests/test_threats.py`` grades one class of attacks on the sandbox, the files and the outputs. This file covers
the attacks that got through the code around them:

* **damaged notebooks** that made ``repair.stage`` raise, so that ``autograde`` and ``grade-class`` stopped
  before anyone was graded: a 200 KB deeply nested JSON notebook, a folder named like the notebook, and
  ``metadata.nbgrader`` of the wrong type;
* **forged results**: the student's kernel replaces ``course.grading.run.wire.probe_record`` and answers ``[]``, or
  the visible example right and every list of hidden cases empty. Verdicts that only loop (``zip(got, ref)``)
  passed on that; the judge now checks the whole answer's structure against the reference's first. Chapters 2
  and 4 are checked test by test, in one process, with forged records of four shapes;
* **exfiltration**: an exception whose message, args, note, ``__str__`` or ``__repr__`` walks the caller's frames
  (``sys._getframe``, ``inspect.stack``, ``traceback``) and carries the probe's source and locals out, and lines
  of the student's own frames rewritten in ``linecache``: no line of ``judge.py`` may reach the report, the graded
  notebook, ``grader.md`` or nbgrader's feedback page; per chapter (2 and 4), the probe's source forged into every
  exception record and every string of every answer;
* **intake caps**: 60,000 empty folders (236 MiB of directory blocks per copy) passed unflagged: folders and
  entries are counted as well as bytes;
* **the disk**: a submission that fills its working folder fills its own quota (a tmpfs of its own), and what it
  writes into the ipc folder is capped by the watchdog;
* **collect**: an exchange entry whose timestamp is no date, or whose id is no student, is skipped with a
  message, and the rest of the class is collected.

Each threat is graded in one run of the toy chapter (``tests/toycourse.py``) with an honest classmate, who keeps
full marks.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

import toycourse
from course.grading.authoring import trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.intake import repair
from course.grading.run.sandbox import detect
from course.grading.judge.verdicts import judge_files

REPO = Path(__file__).resolve().parents[1]
KEY = 20261204
BOTH = {"test_scale", "test_count_positive"}
SCALE = {"test_scale"}
COUNT = {"test_count_positive"}

CH = toycourse.CHAPTER
HONEST_SCALE = "def scale(x, k):\n    return x * k\n"
HONEST_COUNT = "def count_positive(t):\n    return int((t > 0).sum())\n"


def answered(release: dict, scale: str = HONEST_SCALE, count: str = HONEST_COUNT) -> dict:
    """The release with ``scale`` and ``count`` as the two answers (``tests/test_threats.py``'s helper)."""
    from test_threats import notebook

    return notebook(release, scale, count)


def deep_json(depth: int = 40_000) -> str:
    """A file that starts like a notebook and nests ``depth`` objects (200 KB at the default)."""
    return ('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": ' + '{"a": ' * depth + "1"
            + "}" * depth + "}")


def wrong_metadata(release: dict, value) -> dict:
    """Honest answers, with every cell's ``metadata.nbgrader`` replaced by ``value`` (another editor's damage)."""
    nb = answered(release)
    for c in nb["cells"]:
        if "nbgrader" in c.get("metadata", {}):
            c["metadata"]["nbgrader"] = value
    return nb


def odd_types(release: dict) -> dict:
    """Honest answers, with wrong types all over the metadata (and in a few cells' fields)."""
    nb = answered(release)
    nb["metadata"] = "not a dict"
    nb["nbformat_minor"] = []
    cells = nb["cells"]
    graded = [c for c in cells if "nbgrader" in c.get("metadata", {})]
    graded[0]["metadata"] = ["a", "list"]
    graded[1]["metadata"]["nbgrader"]["grade_id"] = ["not", "a", "string"]
    graded[2]["metadata"]["nbgrader"]["points"] = {"a": 1}
    graded[-1]["id"] = {"not": "a string"}
    cells.append({"cell_type": "code", "metadata": 7, "source": ["x = ", 1], "outputs": {}, "id": []})
    cells.append("not a cell")
    return nb


# --- damaged notebooks: each graded on its own, the class goes on ----------------------------------------------

@pytest.fixture(scope="module")
def toy_release(tmp_path_factory):
    course = toycourse.make(tmp_path_factory.mktemp("pipeline-release") / "course")
    rel = nbgrader_io.generate(course, CH, nbgrader_io.sqlite(course / "gradebook.db"))
    return rel / f"{CH}.ipynb"


DAMAGED = {
    # name: (how the submission is written, whether the answers survive)
    "deep-json": (lambda d, rel: (d / f"{CH}.ipynb").write_text(deep_json()), False),
    "folder-notebook": (lambda d, rel: ((d / f"{CH}.ipynb").mkdir(), (d / f"{CH}.ipynb" / "x.py").write_text("1")),
                        False),
    "nbgrader-list": (lambda d, rel: (d / f"{CH}.ipynb").write_text(json.dumps(wrong_metadata(rel, []))), True),
    "nbgrader-string": (lambda d, rel: (d / f"{CH}.ipynb").write_text(json.dumps(wrong_metadata(rel, "x"))), True),
    "odd-types": (lambda d, rel: (d / f"{CH}.ipynb").write_text(json.dumps(odd_types(rel))), True),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_notebook_is_staged_with_a_reason(tmp_path, toy_release, name):
    write, survives = DAMAGED[name]
    release = json.loads(toy_release.read_text())
    d = tmp_path / "submitted" / name / CH
    d.mkdir(parents=True)
    write(d, release)
    rep, taken = repair.stage(d, tmp_path / "staged" / name / CH, CH, toy_release, name)
    staged = tmp_path / "staged" / name / CH / f"{CH}.ipynb"
    nb = nbformat.read(str(staged), as_version=4)
    nbformat.validate(nb)
    answers = {c.metadata.nbgrader.grade_id: c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    if survives:
        assert answers == {"scale": HONEST_SCALE, "count_positive": HONEST_COUNT}, answers
        assert rep.repaired, "the repair must say what it put back"
    else:
        assert rep.damaged, "an unreadable notebook is graded as the release, and the report says why"
        assert all("NotImplementedError" in a or "raise" in a for a in answers.values()), answers
    assert not (staged.parent / f"{CH}.ipynb").is_dir()


# --- one class, graded with grade-class: every threat beside an honest classmate -------------------------------

STUB_SCALE = "def scale(x, k):\n    raise NotImplementedError()\n"
STUB_COUNT = "def count_positive(t):\n    raise NotImplementedError()\n"

# The kernel's recorder replaced: the judge's sentinels get faithful answers (nothing to flag), every hidden
# test an answer of the student's choosing, with the probe's own nonce.
FORGED = '''
import torch
import course.grading.run.wire as _wire
_real_record = _wire.probe_record

def _forged(source, name, seed, nonce=0, namespace=None):
    if name.startswith("judge_"):
        return _real_record(source, name, seed, nonce, namespace)
    return {{"ok": True, "value": {value}, "nonce": nonce}}

_wire.probe_record = _forged
'''
FORGED_EMPTY = FORGED.format(value="[]") + STUB_SCALE
# the visible example right, every list of hidden cases empty
FORGED_TRUNCATED = FORGED.format(value='{"visible": torch.tensor([3.0, 6.0]) if name == "probe_scale" else 2, '
                                       '"cases": []}') + STUB_SCALE


# Exfiltration: the answer's exception carries everything the caller's frames hold (the probe's source, its
# locals, the hidden inputs), through its message, its args, a note, __str__ and __repr__, and lines of the
# student's own frames rewritten in linecache to show the probe's source.
STEAL = '''
import inspect, linecache, sys, traceback

def _steal():
    parts = []
    f = sys._getframe(1)
    while f is not None:
        parts.append(repr(f.f_locals)[:3000])
        for v in f.f_locals.values():
            if isinstance(v, str):
                parts.append(v)
        f = f.f_back
    for info in inspect.stack():
        parts.extend(info.code_context or [])
    parts.extend(traceback.format_stack())
    return "\\n".join(parts)

def _poison_my_lines(text):
    me = sys._getframe(1).f_code.co_filename
    lines = [x + "\\n" for x in text.splitlines()] * 50
    linecache.cache[me] = (len(text), None, lines, me)
'''

EXFIL_STR = STEAL + '''
class HostileError(Exception):
    def __str__(self):
        return _steal()
    def __repr__(self):
        return _steal()

def scale(x, k):
    if x.tolist() == [1.0, 2.0]:
        return x * k
    text = _steal()
    _poison_my_lines(text)
    raise HostileError(text)
'''

EXFIL_ARGS = STEAL + '''
def _helper(t):
    text = _steal()
    err = ValueError(text, text[::-1])
    err.add_note(text)
    raise err

def count_positive(t):
    if t.tolist() == [-1.0, 2.0, 3.0]:
        return 2
    _helper(t)
'''

# A disk filler: writes three times its quota into its working folder, then answers honestly. Before the
# quota, it filled the grader's temporary disk and a classmate graded beside it lost their grade.
DISK_MIB = 64
DISK_FILLER = '''
import os
written = 0
try:
    with open("filler.bin", "wb") as fh:
        for _ in range(3 * {mib}):
            fh.write(b"\\xff" * 2 ** 20)
            fh.flush()
            written += 2 ** 20
except OSError as err:
    print(f"FILLER wrote {{written // 2 ** 20}} MiB, then errno {{err.errno}}")
else:
    print(f"FILLER wrote {{written // 2 ** 20}} MiB, no error")
'''.format(mib=DISK_MIB)


# What the student is shown instead: the exception's type and their own lines (none where the answer rewrote
# them in linecache: the judge shows a line only if the notebook holds it).
EXFIL_SEEN = {"exfil-str": ("HostileError", ""), "exfil-args": ("ValueError", "in _helper: raise err")}


#: The tests that share ``pipeline_class`` run on one xdist worker: a module fixture is built once per worker, and
#: this class's grading took 140 s on each of the three (the summed durations of a CI run).
PIPELINE = pytest.mark.xdist_group("pipeline")


@pytest.fixture(scope="module")
def pipeline_class(tmp_path_factory):
    if detect().degraded:
        pytest.skip("no sandbox here")
    work = tmp_path_factory.mktemp("pipeline")
    course = toycourse.make(work / "course")
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write("\nc.GradingLimits.cell_seconds = 45\nc.GradingLimits.probe_seconds = 30\n"
                 f"c.GradingLimits.wall_seconds = 300\nc.GradingLimits.disk_mib = {DISK_MIB}\n")
    db = course / "gradebook.db"
    rel = nbgrader_io.generate(course, CH, nbgrader_io.sqlite(db))
    release = json.loads((rel / f"{CH}.ipynb").read_text())
    toycourse.make_profiles(course)  # the chapter's known mistakes, and their profiles: the diagnosis
    subs: dict[str, dict] = {
        "honest": {"nb": answered(release), "lost": set()},
        "deep-json": {"text": deep_json(), "lost": BOTH, "words": ["damaged"]},
        "folder-notebook": {"folder": True, "lost": BOTH, "words": ["notebook refused"]},
        "nbgrader-list": {"nb": wrong_metadata(release, []), "lost": set(), "words": ["repaired"]},
        "odd-types": {"nb": odd_types(release), "lost": set(), "words": ["repaired"]},
        "forged-empty": {"nb": answered(release, FORGED_EMPTY, STUB_COUNT), "lost": BOTH},
        "forged-truncated": {"nb": answered(release, FORGED_TRUNCATED, STUB_COUNT), "lost": BOTH},
        "exfil-str": {"nb": answered(release, EXFIL_STR), "lost": SCALE},
        "exfil-args": {"nb": answered(release, HONEST_SCALE, EXFIL_ARGS), "lost": COUNT},
        "many-folders": {"nb": answered(release), "lost": set(), "folders": 300, "words": ["over the intake caps"]},
        "disk-filler": {"nb": answered(release, DISK_FILLER + HONEST_SCALE), "lost": set()},
        # known mistakes: one as written (it adds k), one in another form (a tensor for an int fails as a float does);
        # and an answer that fails another way (a list for a tensor), which hears nothing
        "adds-k": {"nb": answered(release, "def scale(x, k):\n    return x + k\n"), "lost": SCALE},
        "tensor-count": {"nb": answered(release, HONEST_SCALE, "def count_positive(t):\n    return (t > 0).sum()\n"),
                         "lost": COUNT},
        "scale-list": {"nb": answered(release, "def scale(x, k):\n    return (x * k).tolist()\n"), "lost": SCALE},
    }
    sub = course / "submitted"
    for student, spec in subs.items():
        d = sub / student / CH
        d.mkdir(parents=True)
        if "nb" in spec:
            (d / f"{CH}.ipynb").write_text(json.dumps(spec["nb"]))
        elif "text" in spec:
            (d / f"{CH}.ipynb").write_text(spec["text"])
        elif spec.get("folder"):
            (d / f"{CH}.ipynb").mkdir()
            (d / f"{CH}.ipynb" / "notes.txt").write_text("a folder, not a notebook")
        for i in range(spec.get("folders", 0)):
            (d / f"empty-{i:04d}").mkdir()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "course.grading", "grade-class", CH, "--seed", str(KEY), "--jobs", "2",
                           "--feedback", "--no-progress"], cwd=course, env=nbgrader_io.env(), capture_output=True,
                          text=True, timeout=1800)
    seconds = time.perf_counter() - t0
    reports = {p.stem: json.loads(p.read_text()) for p in (course / ".judge" / "reports" / CH).glob("*.json")}
    # nbgrader's own feedback pages, beside grade-class's grader.md (which --force would remove from feedback/)
    feedback = nbgrader_io.run(["generate_feedback", CH, "--force", "--CourseDirectory.feedback_directory=feedback_html"],
                               course, nbgrader_io.sqlite(db), check=False)
    print(proc.stdout[-6000:], proc.stderr[-3000:], f"\n[pipeline] graded {len(subs)} submissions in {seconds:.1f} s")
    return {"course": course, "proc": proc, "subs": subs, "reports": reports, "feedback": feedback,
            "scores": trial.read_scores(db, CH, CH), "seconds": seconds}



def lost(c: dict, student: str) -> set[str]:
    return {cell for cell, (s, m) in c["scores"][student].items() if s < m}


@PIPELINE
def test_the_class_is_graded_and_the_honest_student_keeps_full_marks(pipeline_class):
    c = pipeline_class
    assert c["proc"].returncode == 0, c["proc"].stdout[-3000:] + c["proc"].stderr[-3000:]
    assert set(c["reports"]) == set(c["subs"]), sorted(set(c["subs"]) ^ set(c["reports"]))
    honest = c["scores"]["honest"]
    assert honest and all(s == m for s, m in honest.values()), honest
    assert c["reports"]["honest"]["flags"] == []


@pytest.mark.parametrize("student", ["deep-json", "folder-notebook", "nbgrader-list", "odd-types", "forged-empty",
                                     "forged-truncated", "exfil-str", "exfil-args"])
@PIPELINE
def test_each_threat_costs_exactly_its_own_points_and_is_said(pipeline_class, student):
    c = pipeline_class
    spec, report = c["subs"][student], c["reports"][student]
    assert lost(c, student) == spec["lost"], f"{student}: {c['scores'][student]} {report['flags']} {report['cells']}"
    table = next(line for line in c["proc"].stdout.splitlines() if line.startswith(student + " "))
    for word in spec.get("words", []):
        assert word in table, f"{student}: the class table should say {word!r}: {table}"
    if spec["lost"] == BOTH and "nb" not in spec:  # graded as the release: the report and the feedback say why
        assert report["repair"]["damaged"], report["repair"]
        feedback = (c["course"] / "feedback" / student / CH / "grader.md").read_text()
        assert "Note on your submission" in feedback


@PIPELINE
def test_a_known_mistake_is_named_in_the_feedback_and_nothing_else_is(pipeline_class):
    """The diagnosis (course.grading.judge.diagnosis) through grade-class: a student whose answer behaves like a known
    mistake reads its note in the graded notebook, grader.md, nbgrader's feedback page and the gradebook comment (a
    damaged notebook graded as the release hears the stub's); one who fails another way (a list for a tensor), the
    honest one and every other attacker read no note."""
    c = pipeline_class
    m = toycourse.MUTANTS
    expected = {"adds-k": {"scale": ("scale_adds", m["scale_adds"][3])},
                "tensor-count": {"count_positive": ("count_float", m["count_float"][3])}}
    for student, spec in c["subs"].items():  # graded as the untouched release: its stub is the do-nothing mistake
        if spec["lost"] == BOTH and "nb" not in spec:
            expected[student] = {"scale": ("scale_stub", m["scale_stub"][3])}
    course, notes = c["course"], {v[3] for v in m.values()}
    from nbgrader.api import Gradebook
    with Gradebook(nbgrader_io.sqlite(course / "gradebook.db")) as gb:
        for student, report in c["reports"].items():
            want = expected.get(student, {})
            got = {cell: (d["known"][0], d["note"]) for cell, d in report.get("diagnoses", {}).items()}
            assert got == want, (student, report.get("diagnoses"))
            places = [p for p in [*(course / "autograded" / student).rglob("*.ipynb"),
                                  *(course / "feedback" / student).rglob("*"),
                                  *(course / "feedback_html" / student).rglob("*.html")] if p.is_file()]
            assert places, student
            for cell, (_, note) in want.items():
                for p in places:
                    assert "behaves like a known mistake" in p.read_text() and note.split(":")[0] in p.read_text(), p
                assert note in gb.find_comment(cell, CH, CH, student).auto_comment
            if not want:
                assert not any(n in p.read_text(errors="replace") for p in places for n in notes), student


@PIPELINE
def test_a_disk_filler_fills_only_its_own_quota(pipeline_class):
    c = pipeline_class
    nb = json.loads((c["course"] / "autograded" / "disk-filler" / CH / f"{CH}.ipynb").read_text())
    text = json.dumps(nb)
    m = re.search(r"FILLER wrote (\d+) MiB, then errno 28", text)
    assert m, "the filler must hit its quota (ENOSPC): " + text[:2000]
    assert int(m.group(1)) <= DISK_MIB
    assert c["scores"]["disk-filler"] and not lost(c, "disk-filler")


@PIPELINE
def test_a_forged_recorder_gains_nothing(pipeline_class):
    c = pipeline_class
    for student in ("forged-empty", "forged-truncated"):
        cells = c["reports"][student]["cells"]
        assert all(cell["judge"] == "fail" for cell in cells.values()), cells
        assert any("does not have the form" in cell["message"] for cell in cells.values()), cells


@PIPELINE
def test_no_line_of_the_hidden_tests_reaches_the_student(pipeline_class):
    c = pipeline_class
    course = c["course"]
    judge_lines = {x.strip() for x in "\n".join(f.read_text() for f in judge_files(CH, course)).splitlines()
                   if len(x.strip()) >= 16}
    assert len(judge_lines) > 10
    for student, (kind, line) in EXFIL_SEEN.items():
        mine = json.dumps(c["subs"][student]["nb"])
        places = [course / ".judge" / "reports" / CH / f"{student}.json",
                  *(course / "autograded" / student).rglob("*"), *(course / "feedback" / student).rglob("*"),
                  *(course / "feedback_html" / student).rglob("*")]
        read = 0
        for p in places:
            if p.is_file():
                text = p.read_text(errors="replace")
                read += 1
                found = [x for x in judge_lines if x in text and x not in mine]
                assert not found, f"{student}: lines of judge.py in {p}: {found[:3]}"
        assert read >= 3, places
        assert any(p.suffix == ".html" for p in places), "generate_feedback wrote no feedback page"
        message = " ".join(cell["message"] for cell in c["reports"][student]["cells"].values())
        # what the student does see: the exception's type, and the failing line of their own code
        assert kind in message and line in message, message
        assert "probe_" not in message and "seed" not in message, message


FORGE = '''
import json, sys
from pathlib import Path
from course.grading.authoring import sweep
from course.grading.run import wire
from course.grading.judge.verdicts import decide, structure_problem
from course.grading.judge.references import reference_cells, reference_notebook

chapter, root = sys.argv[1], Path(sys.argv[2]).resolve()
judge, shell = sweep._prepare(chapter, root, "forged")
for index, _, source in reference_cells(reference_notebook(chapter, root)):
    r = shell.run_cell(source, store_history=False, silent=True)
    if r.error_before_exec or r.error_in_exec:
        sys.exit(f"reference cell {index} failed")
ns = shell.user_ns
seed = sweep.sweep_seeds(1)[0]

def walk(v, f):
    t = type(v)
    if t in (list, tuple):
        return f(t(walk(x, f) for x in v))
    if t is dict:
        return {k: walk(x, f) for k, x in v.items()}
    return v

out = {"tests": 0, "before": {}, "after": {}, "skipped": [], "reference_loses": []}
for code in judge.codes():
    run = lambda: wire.loads(wire.dumps(wire.probe_record(code.source, code.name, seed, namespace=ns)))
    ref = run()
    if not ref.get("ok"):
        sys.exit(f"the reference fails {code.test}: {ref.get('error')}")
    out["tests"] += 1
    if not decide(judge.probes[code.test], run(), ref).passed:
        out["reference_loses"].append(code.test)
    forged = {"[]": [], "{}": {}, "lists emptied": walk(ref["value"], lambda s: type(s)()),
              "lists cut by one": walk(ref["value"], lambda s: s[:-1])}
    for kind, value in forged.items():
        if not structure_problem(value, ref["value"]):
            out["skipped"].append(f"{kind}: {code.test}")  # the reference itself has that form
            continue
        got = wire.loads(wire.dumps({"ok": True, "value": value, "nonce": 1}))
        try:
            judge.probes[code.test].check(got["value"], ref["value"])
            out["before"].setdefault(kind, []).append(code.test)  # the verdict alone would pass it
        except Exception:
            pass
        if decide(judge.probes[code.test], got, ref).passed:
            out["after"].setdefault(kind, []).append(code.test)
# Exfiltration: what a hostile answer could carry out of the probe that calls it (its source, which code in
# the student's process can read) must not come back in any message: as an exception's message, type and
# frames, or as the strings of an answer that a verdict quotes.
from course.grading.judge.verdicts import judge_files
judge_lines = {x.strip() for f in judge_files(chapter, root) for x in f.read_text().splitlines()
               if len(x.strip()) >= 20}
out["leaks"] = []

def swap(v, text):
    t = type(v)
    if t is str:
        return text()
    if t in (list, tuple):
        return t(swap(x, text) for x in v)
    if t is dict:
        return {k: swap(x, text) for k, x in v.items()}
    return v

for code in judge.codes():
    ref = wire.loads(wire.dumps(wire.probe_record(code.source, code.name, seed, namespace=ns)))
    stolen = code.source
    lines = [x for x in stolen.splitlines() if x.strip()] * 100
    frames = [[i + 1, "probe", line] for i, line in enumerate(lines[:8])]
    forged = {
        "raised": {"ok": False, "error": "ValueError: " + stolen, "where": stolen, "nonce": 1,
                   "exc": {"type": "ValueError", "message": stolen, "frames": frames}},
        "strings": {"ok": True, "value": swap(ref["value"], lambda: stolen), "nonce": 1},
        # each string one line of the probe, as a list of names would carry it
        "lines": {"ok": True, "value": swap(ref["value"], iter(lines).__next__), "nonce": 1},
    }
    for kind, rec in forged.items():
        v = decide(judge.probes[code.test], wire.loads(wire.dumps(rec)), ref)
        found = [x for x in judge_lines if x in v.message]
        if found:
            out["leaks"].append(f"{kind}: {code.test}: {found[:2]}")
print("RESULT " + json.dumps(out))
'''


@pytest.mark.parametrize("chapter", ["02_autograd", "04_ecosystem"])
def test_forged_records_fail_every_hidden_test_of_a_chapter(chapter, tmp_path):
    """The chapters whose verdicts loop: every hidden test, forged four ways, against its reference, in one
    process (the reference's cells run here once, as ``sweep`` runs them)."""
    proc = subprocess.run([sys.executable, "-c", FORGE, chapter, str(REPO)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900, env={**nbgrader_io.env(), "OMP_NUM_THREADS": "1"})
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = json.loads(line.removeprefix("RESULT "))
    print(chapter, json.dumps(out, indent=1))
    assert out["tests"] >= 10
    assert out["after"] == {}, f"forged records that still pass: {out['after']}"
    assert out["reference_loses"] == [], "the structure check must not cost the reference a mark"
    # the forgeries are real: on the verdicts alone, some of them passed
    assert sum(len(v) for v in out["before"].values()) > 0
    assert out["leaks"] == [], "lines of judge.py in a message"


# --- collect: one entry in the exchange never stops the class ----------------------------------------------------

def test_collect_skips_what_it_cannot_read_and_ids_that_are_no_student(tmp_path):
    import os
    import pwd
    import shutil

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
    honest_nb = json.dumps(answered(json.loads((rel / f"{CH}.ipynb").read_text())))

    def plant(name: str, stamp_file: str = "2026-12-01 10:00:00.000000 UTC") -> Path:
        d = inbound / name
        d.mkdir()
        (d / f"{CH}.ipynb").write_text(honest_nb)
        (d / "timestamp.txt").write_text(stamp_file)
        return d

    plant(f"{me}+{CH}+2026-12-01 10:00:00.000000 UTC")
    plant(f"{me}+{CH}+not a date at all")                                 # a timestamp that is no date
    plant(f"{me}+{CH}+2026-13-45 99:99:99.000000 UTC")                     # one that parses as nothing
    plant(f"ghost-{os.getpid()}+{CH}+2026-12-01 10:00:00.000000 UTC")      # an id that is no user here
    if os.geteuid() == 0:                                                   # nobody's own, with a timestamp.txt
        d = plant(f"nobody+{CH}+2026-12-01 11:00:00.000000 UTC", stamp_file="garbage, not a date")
        for p in (d, *d.iterdir()):
            os.chown(p, pwd.getpwnam("nobody").pw_uid, -1)
    proc = nbgrader_io.run(["collect", CH], course, db_url, check=False)
    text = proc.stdout + proc.stderr
    print(text[-4000:])
    assert proc.returncode == 0, text[-3000:]
    sub = course / "submitted"
    assert (sub / me / CH / f"{CH}.ipynb").is_file(), "the honest submission must be collected"
    assert text.count("its name is not <student>+<assignment>+<date>") == 2
    assert not (sub / f"ghost-{os.getpid()}").exists() and "not a user of this machine" in text
    if os.geteuid() == 0:
        # collected; its timestamp.txt is the exchange's date, so the next collect (and autograde) can read it
        assert (sub / "nobody" / CH / "timestamp.txt").read_text() == "2026-12-01 11:00:00.000000 UTC"
        (sub / "nobody" / CH / "timestamp.txt").write_text("garbage again")   # as an older collect left it
    plant(f"{me}+{CH}+2026-12-02 10:00:00.000000 UTC")
    proc = nbgrader_io.run(["collect", CH, "--update"], course, db_url, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert (sub / me / CH / "timestamp.txt").read_text() == "2026-12-01 10:00:00.000000 UTC" or \
        "Updating submission" in text
    # With a class list in the gradebook, the list decides: an id in it is collected, any other is not.
    for student in (me, f"ghost-{os.getpid()}"):
        nbgrader_io.run(["db", "student", "add", student], course, db_url)
    plant(f"listed-not+{CH}+2026-12-01 10:00:00.000000 UTC")
    shutil.rmtree(sub)
    proc = nbgrader_io.run(["collect", CH], course, db_url, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert (sub / f"ghost-{os.getpid()}" / CH).is_dir() and (sub / me / CH).is_dir()
    assert not (sub / "listed-not").exists() and not (sub / "nobody").exists()
    assert "not a student in the gradebook" in text


# --- intake: folders and entries count as well as bytes ----------------------------------------------------------

def test_the_intake_counts_folders_and_entries(tmp_path):
    """60,000 empty folders (236 MiB of directory blocks per copy) are not copied; the walk stops at the cap."""
    from course.grading.intake import files as intake
    from course.grading.config import Limits

    src = tmp_path / "sub"
    src.mkdir()
    (src / f"{CH}.ipynb").write_text("{}")
    for i in range(200):
        d = src / f"d{i:03d}"
        d.mkdir()
        for j in range(300):
            (d / f"e{j:03d}").mkdir()
    limits = Limits()
    t0 = time.perf_counter()
    report = intake.copy_submission(src, tmp_path / "dest", limits, notebook=f"{CH}.ipynb")
    seconds = time.perf_counter() - t0
    copied = sum(1 for p in (tmp_path / "dest").rglob("*") if p.is_dir())
    print(f"60,000 folders: {seconds:.2f} s, {copied} copied, {report.entries} entries looked at")
    assert copied <= limits.intake_folders and report.folders == copied
    assert report.entries <= limits.intake_entries
    assert (tmp_path / "dest" / f"{CH}.ipynb").is_file() and not report.refused
    assert "over the intake caps" in report.words() and any("folders" in d for d in report.dropped)
    assert seconds < 20
    scanned = intake.scan(src, limits, notebook=f"{CH}.ipynb")  # what a plain nbgrader autograde looks at first
    assert not scanned.clean and scanned.entries <= limits.intake_entries
    # one wide folder of hidden files (never copied): listed no further than the cap, and said
    wide = tmp_path / "wide"
    wide.mkdir()
    for i in range(5000):
        (wide / f".f{i:04d}").write_text("")
    report = intake.scan(wide, limits)
    assert report.entries == limits.intake_entries and any("entries" in d for d in report.dropped)


# --- the disk: a quota per sandbox -------------------------------------------------------------------------------

@pytest.mark.skipif(detect().degraded, reason="no sandbox here")
def test_the_working_folder_is_a_capped_tmpfs_with_the_submissions_files(tmp_path):
    from course.grading.config import Limits
    from test_sandbox import run_inside

    work = tmp_path / "box" / "work"
    work.mkdir(parents=True)
    (work / "data.txt").write_text("the submission's own file")
    proc = run_inside(tmp_path, """
        import os
        print("seen:", open("data.txt").read())
        open("data.txt", "a").write(" and more")
        written = 0
        try:
            with open("big.bin", "wb") as fh:
                while written < 200 * 2 ** 20:
                    fh.write(b"x" * 2 ** 20)
                    fh.flush()
                    written += 2 ** 20
        except OSError as err:
            print("stopped at", written // 2 ** 20, "MiB, errno", err.errno)
    """, limits=Limits(disk_bytes=32 * 2 ** 20))
    assert proc.returncode == 0, proc.stderr
    assert "seen: the submission's own file" in proc.stdout
    assert "errno 28" in proc.stdout and int(proc.stdout.split("stopped at ")[1].split()[0]) <= 32
    assert not (work / "big.bin").exists() and (work / "data.txt").read_text() == "the submission's own file"


@pytest.mark.skipif(detect().degraded, reason="no sandbox here")
def test_the_watchdog_caps_what_is_written_into_the_ipc_folder(tmp_path):
    import textwrap

    from course.grading.run import sandbox as sb
    from course.grading.config import Limits

    limits = Limits(probe_result_bytes=2 * 2 ** 20)  # the ipc folder's cap: two results and 16 MiB
    box = sb.Sandbox(workdir=tmp_path / "work", ipcdir=tmp_path / "ipc", limits=limits)
    box.prepare()
    box.enter_cgroup()
    code = f"""
        import time
        with open({str(tmp_path / 'ipc' / 'fill.bin')!r}, "wb") as fh:
            for _ in range(400):
                fh.write(b"y" * 2 ** 20)
                fh.flush()
                time.sleep(0.05)   # about 20 MiB/s: the cap is met within seconds, 100 MiB only after 5 s
        time.sleep(60)
    """
    proc = subprocess.Popen(box.wrap([sys.executable, "-c", textwrap.dedent(code)]), preexec_fn=box.preexec,
                            cwd=tmp_path / "work", env={"PATH": "/usr/bin:/bin"})
    dog = sb.Watchdog(proc.pid, limits, time.monotonic() + 120, dirs=box.watched_dirs())
    dog.start()
    try:
        proc.wait(timeout=90)
    finally:
        dog.stop()
        box.cleanup()
    assert "disk cap exceeded" in dog.reason, dog.reason
    assert (tmp_path / "ipc" / "fill.bin").stat().st_size < 100 * 2 ** 20
    box.clear_ipc()
    assert sorted(p.name for p in (tmp_path / "ipc").iterdir()) == ["group", "passwd"]


@PIPELINE
def test_plain_nbgrader_autograde_leaks_no_line_either(pipeline_class):
    """Formgrader's button (a plain ``nbgrader autograde``, where the judge runs the submission itself)."""
    c = pipeline_class
    course = c["course"]
    db_url = nbgrader_io.sqlite(course / "plain.db")
    nbgrader_io.generate(course, CH, db_url)
    others = ",".join(sorted(set(c["subs"]) - {"exfil-str", "honest"}))
    proc = nbgrader_io.run(["autograde", CH, "--force", f"--CourseDirectory.student_id_exclude={others}",
                            f"--JudgeExecute.seed={KEY}"], course, db_url, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    scores = trial.read_scores(course / "plain.db", CH, CH)
    assert all(s == m for s, m in scores["honest"].values()), scores
    assert {cell for cell, (s, m) in scores["exfil-str"].items() if s < m} == SCALE
    judge_lines = {x.strip() for x in "\n".join(f.read_text() for f in judge_files(CH, course)).splitlines()
                   if len(x.strip()) >= 16}
    mine = json.dumps(c["subs"]["exfil-str"]["nb"])  # the release's own lines (its setup cell) are no leak
    for p in [course / ".judge" / "reports" / CH / "exfil-str.json", *(course / "autograded" / "exfil-str").rglob("*")]:
        if p.is_file():
            text = p.read_text(errors="replace")
            found = [x for x in judge_lines if x in text and x not in mine]
            assert not found, f"lines of judge.py in {p}: {found[:3]}"
