"""Misconception diagnosis (course.grading.judge.diagnosis): verdict codes, similarity, the nearest known mistake, and
the saved profiles of every chapter (fresh against the judge, the reference and the mutants, each with a note)."""
from __future__ import annotations

import json
import re

import pytest

from course.grading.judge import diagnosis
from course.grading.judge import answers
from course.grading.authoring import notebooks
from course.grading import paths
from course.grading.judge.diagnosis import Known, diagnose, similarity
from course.grading.judge.verdicts import decide, load
from course.grading.records import exercise_of

EXERCISE = {"t_a": "ex1", "t_b": "ex1", "t_c": "ex1", "t_z": "ex2"}


def k(name, note, *profiles, cell="ex1", blind=False):
    return Known(name, cell, note, blind, tuple(profiles))


def test_similarity_counts_same_check_one_other_check_half_one_sided_zero():
    tests = {"t_a", "t_b", "t_c"}
    assert similarity({"t_a": "check:_+3"}, {"t_a": "check:_+3"}, tests) == 1.0
    assert similarity({"t_a": "check:_+3"}, {"t_a": "check:_+5"}, tests) == 0.5
    assert similarity({"t_a": "check:_+3"}, {"t_a": "check:_+3", "t_b": "form"}, tests) == 0.5
    assert similarity({"t_a": "x", "t_z": "y"}, {"t_a": "x"}, tests) == 1.0  # another exercise's cell is not compared
    assert similarity({}, {}, tests) == 0.0


def test_the_nearest_known_mistake_is_named_only_above_the_threshold_and_when_its_note_is_unambiguous():
    adds = k("adds", "Adds instead of multiplying.", {"t_a": "check:_+3"})
    stub = k("stub", "Placeholder.", {"t_a": "probe:NotImplementedError", "t_b": "probe:NotImplementedError",
                                      "t_c": "probe:NotImplementedError"})
    found = diagnose({"t_a": "check:_+3"}, EXERCISE, [adds, stub])
    assert set(found) == {"ex1"} and found["ex1"].note == "Adds instead of multiplying." and found["ex1"].known == ("adds",)
    # another check of the same cell: 1/2, below the threshold: nothing is said
    assert diagnose({"t_a": "check:_+9"}, EXERCISE, [adds, stub]) == {}
    # two nearest mistakes with different notes: nothing is said
    twin = k("twin", "Another idea.", {"t_a": "check:_+3"})
    assert diagnose({"t_a": "check:_+3"}, EXERCISE, [adds, twin]) == {}
    # ... with the same note: named, with both behind it
    same = k("same", "Adds instead of multiplying.", {"t_a": "check:_+3"})
    assert diagnose({"t_a": "check:_+3"}, EXERCISE, [adds, same])["ex1"].known == ("adds", "same")
    # a known mistake of another exercise never speaks for this one; a mistake without a note never speaks
    other = k("other", "Elsewhere.", {"t_a": "check:_+3"}, cell="ex2")
    assert diagnose({"t_a": "check:_+3"}, EXERCISE, [other, k("mute", "", {"t_a": "check:_+3"})]) == {}
    # an exception alone says too little to name a mistake (many bugs raise RuntimeError); the stub's does
    raises = k("raises", "A specific idea.", {"t_a": "probe:RuntimeError"})
    assert diagnose({"t_a": "probe:RuntimeError"}, EXERCISE, [raises]) == {}
    assert "ex1" in diagnose({"t_a": "probe:NotImplementedError"}, EXERCISE,
                             [k("stub", "Placeholder.", {"t_a": "probe:NotImplementedError"})])
    # the best of a mistake's seeds counts
    seeds = k("seeds", "Depends on the input.", {"t_a": "check:_+3", "t_b": "form"}, {"t_a": "check:_+3"})
    assert diagnose({"t_a": "check:_+3"}, EXERCISE, [seeds])["ex1"].score == 1.0


def test_evaluate_counts_right_wrong_and_silent_and_tries_blind_answers_against_the_authored_only():
    cat = diagnosis.Catalogue("ch", known=[
        k("adds", "Adds.", {"t_a": "c1"}), k("blind_adds", "Adds.", {"t_a": "c1"}, blind=True),
        k("blind_new", "A new idea.", {"t_b": "c2"}, blind=True), k("twin", "Other.", {"t_c": "c3"}),
        k("twin2", "Other two.", {"t_c": "c3"})])
    fresh = {"adds": [{"t_a": "c1"}], "blind_adds": [{"t_a": "c1"}], "blind_new": [{"t_b": "c2"}],
             "twin": [{"t_c": "c3"}], "twin2": [{"t_c": "c3"}]}
    ev = diagnosis.evaluate(cat, fresh, EXERCISE)
    assert ev.held_in == {"adds": "right", "blind_adds": "right", "blind_new": "right", "twin": "silent",
                          "twin2": "silent"}
    assert ev.blind == {"blind_adds": "right", "blind_new": "silent"}
    assert ev.wrong == [] and "5 mutants" in ev.summary()
    cat.known.append(k("liar", "Wrong idea.", {"t_b": "c9"}))
    ev = diagnosis.evaluate(cat, {"liar": [{"t_a": "c1"}]}, EXERCISE)
    assert ev.held_in == {"liar": "wrong"} and ev.wrong == ["liar: diagnosed as adds, blind_adds"]


JUDGE = '''
from course import checks as C
from course.grading.judge.verdicts import Judge, visible

judge = Judge()


@judge.probe("test_pair")
def probe_pair(seed):
    return {"visible": pair(1), "cases": [pair(2), pair(3)]}


def _helper(g, r, what):
    C.check_equal(g, r, what)


@probe_pair.verdict
def _(got, ref):
    with visible():
        C.check_equal(got["visible"], ref["visible"], "pair(1)")
    for i, (g, r) in enumerate(zip(got["cases"], ref["cases"])):
        _helper(g, r, f"case {i}")
'''


def test_a_verdicts_code_names_the_failing_check_not_the_values(tmp_path):
    (tmp_path / "source" / "ch").mkdir(parents=True)
    (tmp_path / "source" / "ch" / "judge.py").write_text(JUDGE)
    probe = load("ch", tmp_path).probes["test_pair"]
    ref = {"ok": True, "value": {"visible": 2, "cases": [4, 6]}}
    code = lambda value: decide(probe, {"ok": True, "value": value}, ref).code  # noqa: E731
    assert decide(probe, {"ok": True, "value": ref["value"]}, ref).code == ""
    visible_fails = code({"visible": 3, "cases": [4, 6]})
    assert visible_fails == code({"visible": 99, "cases": [0, 0]}), "the same check, other values: the same code"
    case_fails = code({"visible": 2, "cases": [4, 7]})
    assert case_fails == code({"visible": 2, "cases": [5, 6]}) != visible_fails
    assert re.fullmatch(r"check:_\+\d+>_helper\+\d+@_equal\+\d+", case_fails), case_fails
    assert re.fullmatch(r"check:_\+\d+@_equal\+\d+", visible_fails), visible_fails
    assert code({"visible": 2.0, "cases": [4, 6]}) not in (visible_fails, case_fails), \
        "a value of the wrong type fails another line of the check than a wrong value"
    assert code({"visible": 2, "cases": [4]}) == "form"  # the reference's structure differs
    assert decide(probe, {"ok": False, "error": "NotImplementedError: write pair"}, ref).code == \
        "probe:NotImplementedError"
    assert decide(probe, {"ok": False, "error": "<script>"}, ref).code == "probe"  # only an identifier is kept
    assert decide(probe, None, ref).code == "missing"


CHAPTERS = notebooks.chapters()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_mutant_has_a_note_for_students_and_every_profile_is_saved(chapter):
    """Each mutant's NOTE names a misconception (no hidden test's name, no grade id, no code of the solution); the
    saved profiles are current (the variants test recomputes them at a fresh seed and diagnoses each mutant)."""
    from course.grading.judge.references import reference_notebook

    mutants = answers.load_variants(chapter, "mutant")
    nb = reference_notebook(chapter, paths.REPO)
    ids = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata
           and c.metadata["nbgrader"].get("grade_id")}
    solution_lines = {line.strip() for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                      for line in c.source.splitlines() if len(line.strip()) > 25}
    for m in mutants:
        assert m.note and len(m.note) <= 220 and m.note.isascii() and "\n" not in m.note, (m.name, m.note)
        assert not any(re.search(rf"\b{re.escape(i)}\b", m.note) for i in ids if i.startswith("test_")), \
            (m.name, m.note)
        assert "mutant" not in m.note.lower() and not any(line in m.note for line in solution_lines), m.name
    data = json.loads(diagnosis.path(chapter, paths.REPO).read_text())
    assert data["key"] == diagnosis.key(chapter, paths.REPO), f"{chapter}: profiles are stale: run `make profiles`"
    assert set(data["profiles"]) == {m.name for m in mutants}
    for m in mutants:
        for p in data["profiles"][m.name]:
            assert set(p) <= set(m.fails) | {t for t, c in exercise_of(nb).items() if c == m.cell}, m.name


def test_the_feedback_names_a_known_mistake_through_grading(tmp_path):
    """The message of the exercise's first failing cell gets the note; the report keeps the diagnosis."""
    from course.grading.judge.verdicts import Verdict
    from course.grading.judge.submission import diagnose as diagnose_submission
    from tools.nbtool import md, solution, tests as graded_cell

    import nbformat

    DOC = '"""A test."""\npass'
    nb = nbformat.v4.new_notebook(cells=[
        md("x"), solution("def f():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION", "ex1"), graded_cell(DOC, "t_a", 1), graded_cell(DOC, "t_b", 1),
        solution("def g():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION", "ex2"), graded_cell(DOC, "t_z", 1)])
    cat = diagnosis.Catalogue("ch", known=[k("adds", "Adds.", {"t_a": "check:_+1", "t_b": "check:_+1"})])
    diagnosis._CACHE[("ch", str(tmp_path.resolve()))] = cat
    try:
        verdicts = {"t_a": Verdict("t_a", False, "first", kind="check", code="check:_+1"),
                    "t_b": Verdict("t_b", False, "wrong", kind="check", code="check:_+1"),
                    "t_z": Verdict("t_z", False, "also wrong", kind="check", code="check:_+1")}
        found = diagnose_submission("ch", tmp_path, nb, verdicts)
    finally:
        diagnosis._CACHE.pop(("ch", str(tmp_path.resolve())))
    assert found == {"ex1": {"note": "Adds.", "known": ["adds"], "score": 1.0}}
    assert verdicts["t_a"].message == "first\n" + diagnosis.PREFIX + "Adds.", "the exercise's first failing cell"
    assert verdicts["t_b"].message == "wrong"
    assert verdicts["t_z"].message == "also wrong"
