"""course.grading.authoring.estimates: a chapter's time is counted from its release notebook and a measured run."""
from __future__ import annotations

import json

import nbformat
import pytest

from course import lab
from course.grading.authoring import estimates


def _nb(markdown: list[str], code: list[str], points: list[float]):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(m) for m in markdown] + [nbformat.v4.new_code_cell(c) for c in code]
    for i, p in enumerate(points):
        cell = nbformat.v4.new_code_cell("assert True")
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": p,
                                     "grade_id": f"test_{i}", "schema_version": 3}
        nb.cells.append(cell)
    return nb


def test_count_reads_words_code_lines_and_points():
    nb = _nb(["# Title\n\nOne two three four. <!-- not counted at all -->", "| a | b |\n|---|---|\n| five | six |"],
             ["x = 1\n\n# a comment\ny = 2"], [2, 1.5])
    words, code, points = estimates.count(nb)
    assert words == 9            # Title One two three four. a b five six, minus the heading mark and table bars
    assert code == 2 + 2         # two code lines, and the two grade cells' one line each
    assert points == 3.5


def test_total_is_reading_plus_running_plus_exercises_rounded():
    e = estimates.Estimate("ch", words=2000, code_lines=250, points=10, run_seconds=90)
    assert e.reading == pytest.approx(2000 / estimates.PROSE_WORDS_PER_MINUTE + 250 / estimates.CODE_LINES_PER_MINUTE)
    assert e.total % estimates.ROUND_TO == 0
    assert abs(e.total - (e.reading + 1.5 + 10 * estimates.MINUTES_PER_POINT)) <= estimates.ROUND_TO / 2


def test_title_line_round_trips_and_the_landing_page_reads_it():
    e = estimates.Estimate("ch", words=9000, code_lines=900, points=29, run_seconds=75)
    line = e.title_line()
    assert estimates.TITLE.fullmatch(line) and int(estimates.TITLE.fullmatch(line).group(1)) == e.total
    assert lab.estimated_time(line + " · **Points:** 29") == f"about {e.total} min"
    # a stale counted line and an old typed one are both replaced whole
    assert estimates.TITLE.sub("X", "**Time:** about 125 minutes <!-- not measured: an estimate --> · rest") == "X · rest"
    assert estimates.TITLE.sub("X", line.replace(str(e.total), "5", 1) + ". More") == "X. More"


def test_write_title_and_record_run(tmp_path, monkeypatch):
    ch = "09_demo"
    for folder in ("source", "release"):
        nb = _nb(["# Demo\n\n**Time:** about 10 minutes <!-- not measured: a guess -->\n\nSome words here."],
                 ["print(1)"], [4])
        (tmp_path / folder / ch).mkdir(parents=True)
        nbformat.write(nb, str(tmp_path / folder / ch / f"{ch}.ipynb"))
    monkeypatch.setattr(estimates, "RUNS", tmp_path / "runs.json")
    estimates.record_run(ch, 125.04)
    assert json.loads((tmp_path / "runs.json").read_text())[ch]["seconds"] == 125.0
    assert estimates.title_estimate(ch, tmp_path) == 10
    assert estimates.write_title(ch, tmp_path) is True
    want = estimates.estimate(ch, tmp_path)
    assert estimates.title_estimate(ch, tmp_path) == want.total == 15   # 2 min run + 12 for 4 points + a little reading
    assert estimates.write_title(ch, tmp_path) is False                # idempotent
    text = nbformat.read(str(tmp_path / "source" / ch / f"{ch}.ipynb"), 4).cells[0].source
    assert "not measured" not in text and "Some words here." in text
