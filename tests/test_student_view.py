"""The student's side: short failures, the progress summary, the short Validate, the lab setup and landing page."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from course import lab, progress, validate
from course.checks import CheckFailed


def _tb_from_cell(code: str):
    import linecache
    filename = "/tmp/ipykernel_1/123.py"  # how ipykernel names cells (and registers their source in linecache)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        exec(compile(code, filename, "exec"), {"CheckFailed": CheckFailed})
    except BaseException as err:  # noqa: BLE001
        return type(err), err, err.__traceback__
    raise AssertionError("the cell did not raise")


def test_tutor_traceback_shows_the_failing_line_and_the_message_only():
    etype, value, tb = _tb_from_cell('"""t."""\nx = 1\nraise CheckFailed("steps: expected 7, got tensor(7)\\n  Hint: use int")\n')
    stb = progress.tutor_traceback(etype, value, tb)
    text = "\n".join(stb)
    assert "Check failed" in stb[0] and "line 3 of this cell" in stb[0] and "raise CheckFailed" in stb[0]
    assert "expected 7" in text and "Hint: use int" in text
    assert "checks.py" not in text and len(stb) == 3


def test_not_implemented_reads_as_not_done_yet():
    etype, value, tb = _tb_from_cell('def f():\n    raise NotImplementedError()\nf()\n')
    stb = progress.tutor_traceback(etype, value, tb)
    assert "Not done yet" in stb[0] and "line 3" in stb[0] and "replace that line" in stb[1]


def _chapter_nb(tmp_path) -> Path:
    from tools.nbtool import md, solution, write
    from tools.nbtool import tests as graded_cell
    path = tmp_path / "00_toy.ipynb"
    write(str(path), [
        md("### Exercise 0.1 · `f` (3 points)"),
        solution("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", "f"),
        graded_cell('"""f returns 1."""\nC.check_true(f() == 1, "no")\n### BEGIN HIDDEN TESTS\nx\n### END HIDDEN TESTS',
                    "test_f", 2),
        graded_cell('"""f is callable."""\nC.check_true(callable(f), "no")', "test_f_callable", 1),
    ])
    return path


def test_progress_summary_counts_visible_tests_and_saves(tmp_path, capsys):
    path = _chapter_nb(tmp_path)
    nb = json.loads(path.read_text())
    exercises = progress.exercises(nb)
    assert exercises[0]["title"].startswith("Exercise 0.1") and len(exercises[0]["tests"]) == 2
    progress._RESULTS.clear()
    rows = progress.status(nb)
    assert rows[0]["not_run"] == 2 and rows[0]["points"] == 3
    progress.record(exercises[0]["tests"][0]["source"], True)
    progress.record(exercises[0]["tests"][1]["source"], False, "no")
    progress.summary("00_toy", tmp_path)
    out = capsys.readouterr().out
    assert "1/2 passing" in out and "first failure: test_f_callable: no" in out
    saved = json.loads((tmp_path / ".progress" / "00_toy.json").read_text())
    assert saved["exercises"][0]["passed"] == 1
    (tmp_path / "ch").mkdir()
    shutil.move(str(tmp_path / ".progress"), str(tmp_path / "ch" / ".progress"))
    progress.overview(tmp_path)
    assert "1/2" in capsys.readouterr().out


def test_progress_install_is_harmless_outside_ipython():
    assert progress.install() is False


def test_short_validate_summarises():
    failed = [{"source": f'"""test {i}."""\nC.check_true(False)', "error": "\x1b[31mCheck failed\x1b[0m\n" + "x\n" * 40}
              for i in range(14)]
    out = validate.summarise({"failed": failed, "passed": []})
    assert len(out["failed"]) == 1 + validate.SHOWN
    assert out["failed"][0]["source"].startswith("14 test cell(s) fail")
    assert "test 0." in out["failed"][0]["error"] and "\x1b" not in out["failed"][1]["error"]
    assert len(json.dumps(out)) < 2500
    assert validate.summarise({"passed": [1]}) == {"passed": [1]}


def test_short_validate_wraps_nbgrader_once():
    from nbgrader.validator import Validator
    validate.install()
    assert getattr(Validator.validate, "_course_short", False)
    assert validate.install() is False


@pytest.fixture
def course_copy(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(REPO / "release", root / "release")
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "source").mkdir()
    return root


def test_student_setup_copies_without_overwriting_and_configures_jupyter(course_copy):
    work = lab.student(course_copy)
    assert work == course_copy / "my_work"
    for ch in lab.chapters(course_copy):
        assert (work / ch / f"{ch}.ipynb").is_file()
    mine = work / "01_dynamic_graphs" / "01_dynamic_graphs.ipynb"
    mine.write_text("my own work")
    lab.student(course_copy)
    assert mine.read_text() == "my own work", "make lab must never overwrite a student's work"
    cfg = course_copy / ".student" / "jupyter"
    page = json.loads((cfg / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"]["@jupyter/nbgrader:formgrader"] is True
    assert "pytorch-internals" in (cfg / "nbgrader_config.py").read_text()
    ex = course_copy / ".exchange" / "pytorch-internals" / "outbound"
    assert sorted(p.name for p in ex.iterdir()) == lab.chapters(course_copy)
    index = nbformat.read(str(work / "index.ipynb"), as_version=4)
    text = index.cells[0].source
    for ch in lab.chapters(course_copy):
        assert f"({ch}/{ch}.ipynb)" in text
    assert "overview()" in index.cells[-1].source


def test_chapter_facts_reads_time_and_points():
    facts = lab.chapter_facts(REPO / "release" / "01_dynamic_graphs" / "01_dynamic_graphs.ipynb")
    assert facts["points"] > 0 and facts["minutes"] != "?" and facts["title"]


def test_lab_command_line(course_copy):
    out = subprocess.run([sys.executable, "-m", "course.lab", "exchange", str(course_copy)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().endswith(".exchange")
    assert subprocess.run([sys.executable, "-m", "course.lab", "nope"], capture_output=True).returncode == 2
