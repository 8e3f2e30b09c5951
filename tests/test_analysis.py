"""The class item analysis (course.grading.classroom.analysis) on reports made up here: rates, discrimination, escaping."""
from __future__ import annotations

import csv

import nbformat
import pytest

from course.grading.classroom import analysis
from course.grading.records import CellReport, Report
from tools.nbtool import md, solution, tests as graded_cell

DOC = '"""A test."""\npass'
SOL = "def f():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION"


def notebook():
    return nbformat.v4.new_notebook(cells=[
        md("x"), solution(SOL, "ex1"), graded_cell(DOC, "t_a", 2), graded_cell(DOC, "t_b", 1),
        solution(SOL, "ex2"), graded_cell(DOC, "t_c", 3)])


def report(student, a, b, c, diagnoses=None, flags=()):
    cells = {g: CellReport(points=p, max_points=m, judge="pass" if p == m else "fail", kernel="pass")
             for g, p, m in (("t_a", a, 2), ("t_b", b, 1), ("t_c", c, 3))}
    return Report("ch", student, cells=cells, score=a + b + c, max_score=6, diagnoses=diagnoses or {},
                  flags=list(flags))


def test_rates_means_and_discrimination_are_those_of_the_scores():
    reports = {"s1": report("s1", 2, 1, 3), "s2": report("s2", 2, 0, 3), "s3": report("s3", 0, 0, 0),
               "s4": report("s4", 0, 1, 0)}
    a = analysis.analyse("ch", notebook(), reports)
    items = {(it.level, it.name): it for it in a.items}
    assert [(it.level, it.name) for it in a.items] == [("exercise", "ex1"), ("check", "t_a"), ("check", "t_b"),
                                                        ("exercise", "ex2"), ("check", "t_c")]
    assert items[("check", "t_a")].pass_rate == 0.5 and items[("check", "t_a")].mean == 1.0
    assert items[("exercise", "ex1")].max_points == 3 and items[("exercise", "ex1")].pass_rate == 0.25
    # t_c's score (3, 3, 0, 0) against the rest (3, 2, 0, 1): r = 2/sqrt(5)
    assert items[("check", "t_c")].discrimination == pytest.approx(2 / 5 ** 0.5, abs=1e-9)
    # t_b (1, 0, 0, 1) against the rest (5, 5, 0, 0): uncorrelated
    assert items[("check", "t_b")].discrimination == pytest.approx(0.0, abs=1e-9)
    assert analysis.correlation([1, 1, 1], [0, 1, 2]) is None and analysis.correlation([1, 2], [1, 2]) is None


def test_the_page_escapes_what_students_control_and_the_csv_holds_no_student(tmp_path):
    evil = "<img src=x onerror=alert(1)>"
    reports = {evil: report(evil, 0, 0, 3, diagnoses={"ex1": {"note": "Adds.", "known": ["adds"], "score": 1.0}},
                            flags=["possible tampering <script>alert(2)</script>"]),
               "ok": report("ok", 2, 1, 3), "s3": report("s3", 2, 1, 0,
                                                          diagnoses={"ex2": {"note": "Nope.", "known": ["n"], "score": 1}})}
    a = analysis.analyse("ch", notebook(), reports)
    assert a.misconceptions == [("ex1", "Adds.", 1), ("ex2", "Nope.", 1)]
    page = analysis.write_html(a, tmp_path / "ch.html").read_text()
    assert "<img src=x" not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "Adds." in page
    assert "Content-Security-Policy" in page
    rows = list(csv.reader(open(analysis.write_csv(a, tmp_path / "ch.csv"))))
    assert rows[0][:3] == ["level", "item", "exercise"] and len(rows) == 1 + 5
    assert not any(evil in cell or "ok" == cell for row in rows for cell in row)
