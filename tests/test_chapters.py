"""Each chapter end to end, through real nbgrader, in a scratch copy of the course.

Per chapter: the release in git equals a fresh `nbgrader generate_assignment`;
the reference solutions score full marks within the grading-time budget; the
untouched release scores 0 without crashing the grader; every mutant loses
exactly the points it should; every alternative scores full marks; tampering
does not help; and the source runs top to bottom in student mode within
its budget. Chapters are graded in parallel (pytest-xdist, one group each).
"""
from __future__ import annotations

import json
import os
import time

import pytest

from conftest import CHAPTERS, REPO
from course import grading

# Wall-time budgets in seconds on a 2-core CPU. A per-chapter override needs a
# comment that says why.
GRADING_BUDGET = {ch: 60 for ch in CHAPTERS}
STUDENT_BUDGET = {ch: 120 for ch in CHAPTERS}

_RESULTS: dict[str, grading.Graded] = {}


def graded(chapter: str, tmp_path_factory) -> grading.Graded:
    if chapter not in _RESULTS:
        subs = grading.plan(chapter)
        t0 = time.perf_counter()
        _RESULTS[chapter] = grading.grade(chapter, subs, workdir=tmp_path_factory.mktemp(f"grade-{chapter}"))
        print(f"\n[{chapter}] on worker {os.environ.get('PYTEST_XDIST_WORKER', 'main')}: autograded {len(subs)} submissions in {time.perf_counter() - t0:.1f} s; "
              f"solution alone {_RESULTS[chapter].seconds['solution']:.1f} s")
        print(grading.table(_RESULTS[chapter]))
    return _RESULTS[chapter]


def grade_params():
    return [pytest.param(ch, marks=pytest.mark.xdist_group(f"grade-{ch}")) for ch in CHAPTERS]


def normalise(nb_text: str) -> dict:
    nb = json.loads(nb_text)
    nb.get("metadata", {}).pop("widgets", None)
    return nb


@pytest.mark.parametrize("chapter", grade_params())
def test_release_matches_generate_assignment(chapter, tmp_path_factory):
    g = graded(chapter, tmp_path_factory)
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


@pytest.mark.parametrize("chapter", grade_params())
def test_solution_scores_full_marks_within_budget(chapter, tmp_path_factory):
    g = graded(chapter, tmp_path_factory)
    bad = [p for p in grading.problems(g) if p.startswith("solution")]
    assert not bad, "\n".join(bad)
    total = sum(v[1] for v in g.scores["solution"].values())
    assert total > 0
    seconds = g.seconds["solution"]
    print(f"[{chapter}] grading mode (autograde of the solution): {seconds:.1f} s, {total:g} points")
    assert seconds <= GRADING_BUDGET[chapter], f"{chapter} took {seconds:.1f} s to autograde (budget {GRADING_BUDGET[chapter]} s)"
    nb = grading.read(next((g.course / "autograded" / "solution" / chapter).glob("*.ipynb")))
    unexecuted = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()
                  and c.get("execution_count") is None]
    assert not unexecuted, f"cells {unexecuted} were not executed by autograde"


@pytest.mark.parametrize("chapter", grade_params())
def test_untouched_release_scores_zero(chapter, tmp_path_factory):
    g = graded(chapter, tmp_path_factory)
    assert "empty" in g.scores, "autograde did not grade the untouched release"
    assert sum(v[0] for v in g.scores["empty"].values()) == 0, g.scores["empty"]


@pytest.mark.parametrize("chapter", grade_params())
def test_mutants_lose_exactly_their_points(chapter, tmp_path_factory):
    g = graded(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student.startswith("mutants")]
    assert subs, f"{chapter} has no mutants"
    bad = grading.problems(g, subs)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("chapter", grade_params())
def test_alternatives_score_full_marks(chapter, tmp_path_factory):
    g = graded(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student.startswith("alternatives")]
    assert subs, f"{chapter} has no alternatives"
    bad = grading.problems(g, subs)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("chapter", grade_params())
def test_tampering_does_not_help(chapter, tmp_path_factory):
    g = graded(chapter, tmp_path_factory)
    subs = [s for s in g.submissions if s.student == "tamper"]
    assert subs
    bad = grading.problems(g, subs)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("chapter", [pytest.param(ch, marks=pytest.mark.xdist_group(f"run-{ch}")) for ch in CHAPTERS])
def test_student_mode_runs_within_budget(chapter):
    seconds, nb = grading.execute(grading.notebook_path(chapter), grading=False, timeout=STUDENT_BUDGET[chapter])
    print(f"[{chapter}] student mode: {seconds:.1f} s")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert seconds <= STUDENT_BUDGET[chapter], f"{chapter} took {seconds:.1f} s in student mode"
    assert seconds > 0.5, "a chapter that 'ran' in under half a second did not really execute"


@pytest.mark.xdist_group("grouping-check")
def test_xdist_groups_are_honoured(request):
    """Under `--dist loadgroup` each chapter's tests must share one worker (and one grading run)."""
    if os.environ.get("PYTEST_XDIST_WORKER") and request.config.getoption("dist", "no") == "no" \
            and getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@grouping-check"), (
            "pytest-xdist did not tag this test with its group: every worker would regrade every chapter")
