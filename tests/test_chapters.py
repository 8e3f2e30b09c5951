"""Each chapter end to end, through real nbgrader and the judge, in a scratch copy of the course.

Per chapter, one ``nbgrader autograde`` call through the judge (the course's
default) grades: the reference solutions (full marks), the untouched release
(zero, without crashing the grader), every mutant (loses exactly the grade
cells its FAILS names), every alternative (full marks), the tamper
submission (its mutants' cells still fail), and the four generic attacks that
scored full marks under stock nbgrader (blanked later cells, swallowed
exceptions, patched ``course.checks``, reading the answers): zero, and
flagged. (The comparison with stock in-kernel nbgrader on honest work runs in ``make
bench``, not here.) The chapter also runs as a student runs it (the release with correct
answers) and with Run All on the untouched release (every non-test cell runs).

Timing is measured and printed, never asserted, so a busy machine cannot fail a
correct build; a cell that runs past CELL_HANG_GUARD counts as hung. ``make
bench`` times the chapters properly.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from conftest import CHAPTERS, REPO
from course.grading.judge import answers
from course.grading.authoring import attacks, notebooks, trial
from course.grading.nbgrader import wrapper as nbgrader_io
from course.grading.judge.verdicts import load
from course.grading.run.worker import SEEDED_TEXT, SKIPPED_TEXT, strip_hidden_tests
from nbgrader.utils import is_grade, is_solution

SEED = 20261202
# Times are printed here and measured by `make bench`, never asserted: a busy machine must not fail a correct build
# (CI once ran Chapter 4's student mode in 1235 s, 45 times its quiet 26 s). What is asserted is that nothing hangs:
# no cell of any chapter takes a minute on a quiet 2-core machine, so one that runs past CELL_HANG_GUARD has hung.
CELL_HANG_GUARD = 480
# Groups of mutants and of alternatives graded end to end (a sandboxed notebook each, through nbgrader); every
# variant is also checked in one process through the same probes and verdicts (test_every_variant_...). The
# whole end-to-end check of every group is `python -m course.grading check CHAPTER --attacks`.
END_TO_END_DEPTH = 1
VARIANT_SEEDS = 1

_JUDGE: dict[str, trial.Graded] = {}


def judged(chapter: str, tmp_path_factory) -> trial.Graded:
    if chapter not in _JUDGE:
        subs = trial.plan(chapter, attacks=True, depth=END_TO_END_DEPTH)
        g = trial.grade(chapter, subs, workdir=tmp_path_factory.mktemp(f"judge-{chapter}"), seed=SEED)
        _JUDGE[chapter] = g
        print(f"\n[{chapter}] judge on worker {os.environ.get('PYTEST_XDIST_WORKER', 'main')}: "
              f"{len(subs)} submissions in {g.wall_seconds:.1f} s")
        print(trial.table(g))
        for student, r in sorted(g.reports.items()):
            print(f"  {student:<28} worker {r['seconds']:6.1f} s  references {r.get('reference_seconds', 0):5.1f} s"
                  f"  {'; '.join(r['flags'])[:160]}")
    return _JUDGE[chapter]


def group(prefix):
    return [pytest.param(ch, marks=pytest.mark.xdist_group(f"{prefix}-{ch}")) for ch in CHAPTERS]


def normalise(nb_text: str) -> dict:
    nb = json.loads(nb_text)
    nb.get("metadata", {}).pop("widgets", None)
    return nb


@pytest.mark.parametrize("chapter", group("grade"))
def test_release_matches_generate_assignment(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    fresh_dir, committed_dir = g.course / "release" / chapter, REPO / "release" / chapter
    fresh = sorted(p.relative_to(fresh_dir) for p in fresh_dir.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(committed_dir) for p in committed_dir.rglob("*") if p.is_file())
    assert fresh == committed, "release/ files differ from what generate_assignment writes: run `make release`"
    for rel in fresh:
        a, b = (fresh_dir / rel).read_text(), (committed_dir / rel).read_text()
        if rel.suffix == ".ipynb":
            assert normalise(a) == normalise(b), f"release/{chapter}/{rel} is stale: run `make release`"
        else:
            assert a == b


@pytest.mark.parametrize("chapter", group("grade"))
def test_solution_scores_full_marks(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    bad = [p for p in trial.problems(g) if p.startswith("solution")]
    assert not bad, "\n".join(bad)
    total = sum(v[1] for v in g.scores["solution"].values())
    assert total > 0
    r = g.reports["solution"]
    assert r["flags"] == [], r["flags"]
    seconds = r["seconds"] + g.timing.get("references", 0)  # the submission + the (class-wide) reference run
    print(f"[{chapter}] grading mode: {r['seconds']:.1f} s for the submission + the reference run; "
          f"{seconds:.1f} s in all, {total:g} points")
    nb = notebooks.read(next((g.course / "autograded" / "solution" / chapter).glob("*.ipynb")))
    unexecuted = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()
                  and c.get("execution_count") is None]
    # Every cell ran but the demonstrations nothing graded reads (course/grading/run/needed.py), and each of those
    # says so where its outputs would be.
    assert unexecuted == r["skipped"], f"cells {sorted(set(unexecuted) - set(r['skipped']))} were not executed"
    assert r["skipped"], "the grader skipped no demonstration (course/grading/run/needed.py)"
    assert all(nb.cells[i].outputs[0]["text"] == SKIPPED_TEXT for i in r["skipped"])
    assert not [i for i in r["skipped"] if is_solution(nb.cells[i]) or is_grade(nb.cells[i])]
    # ... and with those skipped, every visible test of the reference still passes in its own kernel
    failing = {gid: c["kernel"] for gid, c in r["cells"].items() if c["kernel"] != "pass"}
    assert not failing, f"visible tests of the reference that did not pass in its kernel: {failing}"
    code = sum(1 for c in nb.cells if c.cell_type == "code" and c.source.strip())
    print(f"[{chapter}] {len(r['skipped'])} of {code} code cells not run by the grader; phases: {r['phases']}")
    # A chapter whose probe compiles C++ (a probe with a time limit of its own): the submission's compile cache
    # held the machine's vector-ISA checks, made once by the grader (course.grading.run.scratch.vec_isa_checks)
    compiles = any(c.seconds for c in load(chapter, REPO).codes())
    assert (SEEDED_TEXT in r["sandbox"]) == compiles, r["sandbox"]
    assert "hidden_test(" not in "\n".join(c.source for c in nb.cells), "hidden regions must not run in the worker"


@pytest.mark.parametrize("chapter", group("grade"))
def test_untouched_release_scores_zero(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    assert "empty" in g.scores, "autograde did not grade the untouched release"
    assert sum(v[0] for v in g.scores["empty"].values()) == 0, g.scores["empty"]
    # What a new student gets from Run All on the untouched release: every code cell runs, and only the cells
    # tagged raises-exception (the tests of unsolved exercises) fail.
    nb = notebooks.read(next((g.course / "autograded" / "empty" / chapter).glob("*.ipynb")))
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    skipped = g.reports["empty"]["skipped"]
    ran = [c for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip() and i not in skipped]
    assert not [c for c in ran if c.get("execution_count") is None], "cells never ran"
    unexpected = [f"{o.get('ename')}: {o.get('evalue', '')[:120]}" for c in code
                  for o in c.get("outputs", []) if o.get("output_type") == "error"
                  and "raises-exception" not in c.metadata.get("tags", [])]
    assert not unexpected, f"errors outside the test cells of the untouched release: {unexpected}"


@pytest.mark.parametrize("chapter", group("grade"))
def test_mutants_lose_exactly_their_points(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student.startswith("mutants")]
    assert subs, f"{chapter} has no mutants"
    bad = trial.problems(g, subs)
    assert not bad, "\n".join(bad)


#: Chapters whose variants are split over several test processes (each part in a group of its own, so the
#: xdist workers share them). None now: Chapter 5b's were in two parts when one process for all of them was the
#: longest test of a three-worker run; with two workers its single process (83 s of wall, 37 s of CPU, quiet) is
#: far from the longest, and a second part paid a second start, imports and reference run. Every variant is
#: still checked, once.
VARIANT_PARTS: dict[str, int] = {}


def variant_parts():
    return [pytest.param(ch, part, marks=pytest.mark.xdist_group(f"variants-{ch}-{part}"), id=f"{ch}-part{part}")
            for ch in CHAPTERS for part in range(VARIANT_PARTS.get(ch, 1))]


@pytest.mark.parametrize("chapter,part", variant_parts())
def test_every_variant_loses_exactly_its_cells_through_the_judges_verdicts(chapter, part):
    """Every mutant (and alternative) in place of the reference, in one process, each probe and verdict of the
    chapter: a mutant loses exactly the cells of its FAILS, an alternative none (this part's share of them)."""
    import subprocess
    import sys

    names = sorted(v.name for v in answers.load_variants(chapter, "mutant") + answers.load_variants(chapter, "alternative"))
    parts = VARIANT_PARTS.get(chapter, 1)
    mine = names[part::parts]
    only = [arg for name in mine for arg in ("--only", name)] if parts > 1 else []
    proc = subprocess.run([sys.executable, "-m", "course.grading", "variants", chapter, "--seeds", str(VARIANT_SEEDS),
                           *only], cwd=REPO, env=nbgrader_io.env(), capture_output=True, text=True, timeout=3600)
    print(proc.stdout[-3000:])
    assert proc.returncode == 0, "\n".join(line for line in proc.stdout.splitlines() if "PROBLEM" in line)[-6000:] \
        + proc.stderr[-2000:]
    assert answers.load_variants(chapter, "mutant") and f"{chapter}: {len(mine)} variants" in proc.stdout, \
        proc.stdout[-1500:]


@pytest.mark.parametrize("chapter", group("grade"))
def test_alternatives_score_full_marks(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student.startswith("alternatives")]
    assert subs, f"{chapter} has no alternatives"
    bad = trial.problems(g, subs)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("chapter", group("grade"))
def test_tampering_does_not_help(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student == "tamper"]
    assert subs
    bad = trial.problems(g, subs)
    assert not bad, "\n".join(bad)
    assert any("possible tampering" in f for f in g.reports["tamper"]["flags"]), g.reports["tamper"]["flags"]


@pytest.mark.parametrize("chapter", group("grade"))
def test_attacks_score_zero_and_are_flagged(chapter, tmp_path_factory):
    g = judged(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student.startswith("attack-")]
    assert len(subs) == len(attacks.ATTACKS)
    bad = trial.problems(g, subs)
    assert not bad, "\n".join(bad)
    for s in subs:
        assert sum(v[0] for v in g.scores[s.student].values()) == 0


@pytest.mark.parametrize("chapter", group("grade"))
def test_feedback_holds_no_hidden_test(chapter, tmp_path_factory):
    """nbgrader's feedback shows the judge's messages, never judge.py's code or the reference solution."""
    g = judged(chapter, tmp_path_factory)
    nbgrader_io.run(["generate_feedback", chapter, "--student=mutants-1", "--force"], g.course,
                    nbgrader_io.sqlite(g.course.parent / "gradebook.db"))
    html = next((g.course / "feedback" / "mutants-1" / chapter).glob("*.html")).read_text()
    judge_lines = {line.strip() for line in (REPO / "source" / chapter / "judge.py").read_text().splitlines()
                   if len(line.strip()) > 25 and not line.strip().startswith(("#", '"""', "from ", "import "))}
    source = notebooks.read(notebooks.notebook_path(chapter))
    secret = set()
    for cell in source.cells:
        inside = False
        for line in cell.source.splitlines():
            if "### BEGIN SOLUTION" in line:
                inside = True
            elif "### END SOLUTION" in line:
                inside = False
            elif inside and len(line.strip()) > 25:
                secret.add(line.strip())
    import html as _html
    text = _html.unescape(re.sub(r"<[^>]+>", "", html))
    # The student's own code is in their feedback by design: a line that is also in mutants-1's submission
    # (a mutant repeats most of the reference solution) or in the release is not a leak.
    # Anything the student can already read (the release, markdown included) is not a leak either.
    own = "\n".join(cell.source for nb_path in [*(g.course / "submitted" / "mutants-1" / chapter).glob("*.ipynb"),
                                                 *(g.course / "release" / chapter).glob("*.ipynb")]
                     for cell in notebooks.read(nb_path).cells)
    own = _html.unescape(own)
    leaked = sorted(line for line in judge_lines | secret if line in text and line not in own)
    assert not leaked, f"feedback shows hidden-test or solution lines: {leaked[:3]}"
    assert "Grader:" in text, "the feedback should carry the judge's verdicts"


def solution_notebook(chapter: str) -> nbformat.NotebookNode:
    """The student's notebook with correct answers: the source with hidden regions removed."""
    nb = notebooks.read(notebooks.notebook_path(chapter))
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            cell.source = strip_hidden_tests(cell.source)
    return nb


@pytest.mark.parametrize("chapter", group("run"))
def test_student_mode_runs(chapter):
    seconds, nb = notebooks.execute(notebooks.notebook_path(chapter), grading=False, timeout=CELL_HANG_GUARD)
    print(f"[{chapter}] student mode: {seconds:.1f} s; slowest cells: {notebooks.slowest_cells(nb)}")
    errors = [(i, o.get("ename"), o.get("evalue", "")[:200]) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert seconds > 0.5, "a chapter that 'ran' in under half a second did not really execute"
    # Headless fallback: without a frontend, every widget cell still shows one static result.
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and re.search(r"\binteract(ive)?\(|widgets\.", c.source):
            static = [o for o in c.get("outputs", []) if o.get("output_type") == "stream"
                      or "image/png" in o.get("data", {})
                      or (o.get("data", {}).get("text/plain") and "application/vnd.jupyter.widget-view+json"
                          not in o.get("data", {}))]
            assert static, f"widget cell {i} renders nothing without a frontend (call .update() or show a figure)"


# Windows has no fork: at kernel start, before the notebook imports anything, the fork start method is removed
# (get_context("fork") raises, get_all_start_methods() omits it). The default becomes forkserver (Python 3.14's on
# Linux), which pickles what it sends exactly as spawn does: Chapter 5 under spawn took 412 s here, most of it in
# DataLoader workers each importing torch; the launcher exercises run under spawn in tests/test_ddp_kernel.py.
NO_FORK_STARTUP = """
def _course_remove_fork():
    import multiprocessing
    import multiprocessing.context as context

    context._concrete_contexts.pop("fork", None)
    every = context.DefaultContext.get_all_start_methods
    context.DefaultContext.get_all_start_methods = lambda self: [m for m in every(self) if m != "fork"]
    multiprocessing.get_all_start_methods = context._default_context.get_all_start_methods
    multiprocessing.set_start_method("forkserver", force=True)
    # The server imports torch, torchvision and PIL once, before it starts anything: each DataLoader worker it
    # starts then skips the imports a spawned one pays (torch 1.7 s; torchvision and PIL 1.5 s more, which Chapter
    # 5's decoders import in the worker). Chapter 5 starts about twenty workers: its grading run without fork took
    # 35 s here with torch alone preloaded. What a worker is sent is pickled either way.
    multiprocessing.set_forkserver_preload(["torch", "torchvision", "PIL.Image"])
    assert "fork" not in multiprocessing.get_all_start_methods() and multiprocessing.get_start_method() == "forkserver"
    with open(MARKER, "w") as f:  # the test checks that this ran
        f.write("no fork")


_course_remove_fork()
del _course_remove_fork
"""
# The chapters whose cells start processes (DataLoader workers, DDP ranks, Lightning's DDP).
NO_FORK_CHAPTERS = [ch for ch in CHAPTERS if ch in ("04_ecosystem", "05_engineering_traps", "05b_distributed")]


@pytest.mark.parametrize("chapter", [pytest.param(ch, marks=pytest.mark.xdist_group(f"nofork-{ch}"))
                                     for ch in NO_FORK_CHAPTERS])
def test_student_mode_runs_where_fork_does_not_exist(chapter, tmp_path, monkeypatch):
    """The chapter, with correct answers, top to bottom in a kernel without the fork start method: no failing cell."""
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    marker = tmp_path / "no-fork-applied"
    (startup / "00-no-fork.py").write_text(NO_FORK_STARTUP.replace("MARKER", repr(str(marker))))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    # Chapters 5 and 5b in grading mode (smaller sizes; Chapter 5's student mode is mostly DataLoader benchmarks whose
    # workers start the same way either way): their fork-only cells, DataLoader lessons and launches all still run.
    # Chapter 4 in student mode: its Lightning DDP cell (a script that spawns two ranks) is skipped while grading.
    grading_mode = chapter in ("05_engineering_traps", "05b_distributed")
    seconds, nb = notebooks.execute(notebooks.notebook_path(chapter), grading=grading_mode, timeout=CELL_HANG_GUARD)
    print(f"[{chapter}] {'grading' if grading_mode else 'student'} mode without fork: {seconds:.1f} s; "
          f"slowest cells: {notebooks.slowest_cells(nb)}")
    outputs = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert marker.exists(), "the kernel's start-up file did not remove fork"
    if chapter == "05_engineering_traps":
        assert "this platform has no fork start method" in outputs, "the kernel still had fork"
    if chapter == "05b_distributed":
        assert "DDP ranks start with: forkserver" in outputs, "the ranks did not start through the forkserver"


@pytest.mark.skipif(shutil.which("chromium") is not None or Path("/usr/bin/chromium").exists(),
                    reason="proven in a real browser: tests/test_browser.py runs Run All on every chapter")
@pytest.mark.parametrize("chapter", group("run"))
def test_run_all_on_the_untouched_release_runs_every_cell(chapter, tmp_path):
    """What a new student sees with Run All: every code cell runs; only test cells (tagged) may fail.
    (The fallback for machines without chromium; with it, test_browser.py checks the same in JupyterLab.)"""
    from course.grading.run.worker import Client as NotebookClient

    import shutil

    shutil.copytree(REPO / "release" / chapter, tmp_path / chapter)
    nb = notebooks.read(notebooks.notebook_path(chapter, tmp_path, "."))
    env_backup = dict(os.environ)
    env = nbgrader_io.env()
    os.environ.clear()
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=CELL_HANG_GUARD, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path / chapter)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(env_backup)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    unrun = [i for i, c in enumerate(nb.cells) if c in code and c.get("execution_count") is None]
    assert not unrun, f"cells {unrun} never ran"
    for c in code:
        errs = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
        if errs:
            assert "raises-exception" in c.metadata.get("tags", []), f"an untagged cell failed: {errs[0].get('ename')}"
            tb = "\n".join(errs[0].get("traceback", []))
            assert "course/checks.py" not in tb and len(tb) < 2000, f"a failure shows helper frames:\n{tb[:500]}"
    print(f"[{chapter}] Run All on the release: {len(code)} code cells, all executed")
