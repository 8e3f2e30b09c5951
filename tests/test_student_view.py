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
def course_copy(tmp_path, monkeypatch):
    root = tmp_path / "course"
    monkeypatch.setenv("COURSE_EXCHANGE", str(root / ".exchange"))  # this test's exchange, not the user's
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
    nbcfg = (cfg / "nbgrader_config.py").read_text()
    assert "pytorch-internals" in nbcfg and "path_includes_course = False" in nbcfg
    assert "course.submit.ExchangeSubmit" in nbcfg and repr(str(work)) in nbcfg, nbcfg
    ex = course_copy / ".exchange" / "pytorch-internals" / "outbound"
    assert sorted(p.name for p in ex.iterdir()) == lab.chapters(course_copy)
    index = nbformat.read(str(work / "index.ipynb"), as_version=4)
    text = index.cells[0].source
    for ch in lab.chapters(course_copy):
        assert f"({ch}/{ch}.ipynb)" in text
    assert "overview()" in index.cells[-1].source


def test_chapter_facts_reads_time_and_points():
    for nb in sorted((REPO / "release").glob("*/*.ipynb")):
        facts = lab.chapter_facts(nb)
        assert facts["points"] > 0 and facts["title"], nb.name
        assert facts["time"] != "?" and facts["time"].endswith(" min"), (nb.name, facts["time"])


@pytest.mark.parametrize("text, shown", [
    ("**Time:** about 75 minutes. **Points:** 23", "about 75 min"),
    ("**Estimated time:** 90 to 120 minutes. The notebook runs", "90–120 min"),
    ("**Estimated time:** 90–120 minutes.", "90–120 min"),
    ("**Estimated time:** 2.5 hours (the notebook itself runs in", "150 min"),
    ("**Time**: 45 min", "45 min"),
    ("**Points:** 12, and no estimate", "?"),
])
def test_time_estimate_accepts_both_title_forms(text, shown):
    assert lab.estimated_time(text) == shown


def test_landing_page_has_no_unknown_times(course_copy):
    lab.write_index(course_copy, course_copy / "index.ipynb")
    table = nbformat.read(str(course_copy / "index.ipynb"), as_version=4).cells[0].source
    rows = [r for r in table.splitlines() if r.startswith("| [")]
    assert len(rows) == len(lab.chapters(course_copy))
    assert "? min" not in table and all(" min |" in r for r in rows), table


def test_lab_command_line(course_copy):
    out = subprocess.run([sys.executable, "-m", "course.lab", "exchange", str(course_copy)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == str(course_copy / ".exchange")  # COURSE_EXCHANGE (course_copy sets it)
    assert subprocess.run([sys.executable, "-m", "course.lab", "nope"], capture_output=True).returncode == 2


def test_one_exchange_for_both_repositories_by_default(course_copy, tmp_path, monkeypatch):
    """Without COURSE_EXCHANGE, the instructor's nbgrader_config.py and a student lab (the instructor's repository
    or the student repository) agree on one folder outside both: $XDG_DATA_HOME/pytorch-internals/exchange."""
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.delenv("COURSE_EXCHANGE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = tmp_path / "data" / "pytorch-internals" / "exchange"
    assert lab.default_exchange() == expected
    monkeypatch.delenv("XDG_DATA_HOME")
    assert lab.default_exchange() == Path.home() / ".local" / "share" / "pytorch-internals" / "exchange"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert cfg.Exchange.root == str(expected), "the instructor's config"
    work = lab.student(course_copy)
    nbcfg = (course_copy / ".student" / "jupyter" / "nbgrader_config.py").read_text()
    assert f"c.Exchange.root = {str(expected)!r}" in nbcfg, "the student's config"
    assert sorted(p.name for p in (expected / "pytorch-internals" / "outbound").iterdir()) == lab.chapters(course_copy)
    assert work.is_dir()
    monkeypatch.setenv("COURSE_EXCHANGE", str(tmp_path / "shared"))
    assert lab.default_exchange() == tmp_path / "shared"
    shared = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config().Exchange.root
    assert shared == str(tmp_path / "shared")


# --- One working copy per chapter, and a Submit that says when nothing was answered -------------------------

@pytest.fixture(scope="module")
def student_course(tmp_path_factory, monkeypatch_module):
    """A course copy after ``make lab``'s setup, with the student's Jupyter configuration in force."""
    root = tmp_path_factory.mktemp("submit") / "course"
    shutil.copytree(REPO / "release", root / "release")
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "source").mkdir()
    monkeypatch_module.setenv("COURSE_EXCHANGE", str(root / ".exchange"))
    work = lab.student(root)
    monkeypatch_module.setenv("JUPYTER_CONFIG_DIR", str(root / ".student" / "jupyter"))
    monkeypatch_module.setenv("JUPYTER_DATA_DIR", str(root / ".student-data"))
    # what `make lab` gives the server (and so the tab's Submit): where the kernels record their runs
    monkeypatch_module.setenv(lab.RUN_LOG_ENV, str(root / ".student" / "runs"))
    return root, work


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _manager(work: Path):
    from nbgrader.server_extensions.assignment_list.handlers import AssignmentList
    manager = AssignmentList()
    manager.root_dir = str(work)
    return manager


def _inbound(root: Path, chapter: str) -> list[Path]:
    return sorted((root / ".exchange" / "pytorch-internals" / "inbound").glob(f"*+{chapter}+*"))  # COURSE_EXCHANGE


def _set_solution(path: Path, grade_id: str, source: str) -> None:
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
    cell["source"] = source
    path.write_text(json.dumps(nb))


def test_assignment_list_shows_the_landing_pages_copy_as_fetched(student_course):
    root, work = student_course
    listed = _manager(work).list_assignments(course_id="pytorch-internals")
    assert listed["success"], listed
    released = {a["assignment_id"]: a for a in listed["value"] if a.get("status") in ("released", "fetched")}
    assert set(released) == set(lab.chapters(root))
    for ch, a in released.items():
        assert a["status"] == "fetched", f"{ch}: the tab would offer a second copy"
        assert a["path"] == ch, a["path"]  # my_work/<chapter>, relative to the server's root
    assert not (work / "pytorch-internals").exists()


def test_submit_hands_in_the_edited_working_copy(student_course):
    root, work = student_course
    nb = work / "01_dynamic_graphs" / "01_dynamic_graphs.ipynb"
    _set_solution(nb, "sgd_step", "def sgd_step(params, loss_fn, lr, weight_decay=0.0):\n    return 42.0  # edited\n")
    out = _manager(work).submit_assignment("pytorch-internals", "01_dynamic_graphs")
    assert out["success"], out
    (sub,) = _inbound(root, "01_dynamic_graphs")
    handed_in = json.loads((sub / "01_dynamic_graphs.ipynb").read_text())
    assert "return 42.0  # edited" in json.dumps(handed_in), "the exchange did not receive the edited notebook"


def test_submit_of_an_unanswered_notebook_says_so_once(student_course):
    root, work = student_course
    from course import submit
    manager = _manager(work)
    manager.list_assignments(course_id="pytorch-internals")  # what the tab does first: loads the student's config
    out = manager.submit_assignment("pytorch-internals", "02_autograd")
    assert out["success"] is False
    assert "none of your answers" in out["value"] and "02_autograd/02_autograd.ipynb" in out["value"], out["value"]
    assert "Traceback" not in out["value"] and "press Submit once more" in out["value"]
    assert not _inbound(root, "02_autograd"), "an unanswered notebook was handed in without a second Submit"
    again = manager.submit_assignment("pytorch-internals", "02_autograd")
    assert again["success"], again
    assert len(_inbound(root, "02_autograd")) == 1
    # Other failures keep nbgrader's own report.
    shutil.rmtree(work / "03_torchscript")
    other = manager.submit_assignment("pytorch-internals", "03_torchscript")
    assert other["success"] is False and "Traceback" in other["value"] and "none of your answers" not in other["value"]
    assert submit.install() is False, "installed twice"


def test_submit_refuses_a_notebook_run_after_its_last_save(student_course):
    """A cell ran after the file was last written (the open document holds changes): Submit says save first and
    hands in nothing, every time; once saved, it hands the notebook in."""
    import os
    import time

    root, work = student_course
    chapter = "04_ecosystem"
    nb = work / chapter / f"{chapter}.ipynb"
    _set_solution(nb, next(iter(_solution_ids(nb))), "answer = 1  # typed and saved\n")
    saved = time.time() - 60
    os.utime(nb, (saved, saved))
    lab.record_run(root / ".student" / "runs", nb, when=saved + 30)  # what the kernel's hook writes
    manager = _manager(work)
    manager.list_assignments(course_id="pytorch-internals")  # what the tab does first: loads the student's config
    for _ in range(2):
        out = manager.submit_assignment("pytorch-internals", chapter)
        assert out["success"] is False, out
        assert "not saved" in out["value"] and f"{chapter}/{chapter}.ipynb" in out["value"], out["value"]
        assert "Traceback" not in out["value"] and "Ctrl+S" in out["value"]
        assert not _inbound(root, chapter), "a notebook with unsaved changes was handed in"
    os.utime(nb)  # the student saves
    out = manager.submit_assignment("pytorch-internals", chapter)
    assert out["success"], out
    assert len(_inbound(root, chapter)) == 1


def test_the_kernel_records_its_runs(tmp_path):
    """The IPython startup file of the student's lab records each run of a cell for the kernel's notebook."""
    import os
    import time

    ipython = lab.write_run_recorder(tmp_path / "ipython")
    runs, notebook = tmp_path / "runs", tmp_path / "work" / "nb.ipynb"
    env = dict(os.environ, IPYTHONDIR=str(ipython), JPY_SESSION_NAME=str(notebook), **{lab.RUN_LOG_ENV: str(runs)})
    before = time.time()
    out = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--HistoryManager.enabled=False", "-c",
                          "print('ran')"], env=env, capture_output=True, text=True, timeout=120)
    assert "ran" in out.stdout, out.stderr[-2000:]
    ran = lab.last_run(runs, notebook)
    assert ran is not None and ran >= before - 1, (ran, before, out.stdout[-1000:], out.stderr[-2000:])
    assert lab.last_run(runs, tmp_path / "other.ipynb") is None


def _solution_ids(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    return [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")]


def test_answered_compares_solution_cells_only():
    from course import submit
    release = json.loads((REPO / "release" / "01_dynamic_graphs" / "01_dynamic_graphs.ipynb").read_text())
    same = json.loads(json.dumps(release))
    same["metadata"]["language_info"] = {"name": "python", "version": "3.11"}
    for c in same["cells"]:
        if c["cell_type"] == "code" and not c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            c["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran"}]
    assert not submit.answered(same, release), "outputs and metadata are not answers"
    edited = json.loads(json.dumps(release))
    cell = next(c for c in edited["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    cell["source"] = "".join(cell["source"]) + "\nx = 1"
    assert submit.answered(edited, release)
    stripped = json.loads(json.dumps(release))
    for c in stripped["cells"]:
        c.get("metadata", {}).pop("nbgrader", None)
    assert submit.answered(stripped, release), "a notebook whose metadata was stripped is the grader's to repair"


def test_no_browser_prints_the_landing_page_url(student_course):
    """`make lab LAB_ARGS=--no-browser`: the URL it prints opens index.ipynb, not the Launcher."""
    import re
    import signal
    import socket
    import time
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    course_copy = student_course[0]
    log = course_copy / "lab.log"
    env = dict(__import__("os").environ)
    env.pop("JUPYTER_CONFIG_DIR", None)
    proc = subprocess.Popen([sys.executable, "-m", "course.lab", "serve", "student", str(course_copy), "--no-browser",
                             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}"],
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        url = None
        for _ in range(240):
            m = re.search(rf"http://127\.0\.0\.1:{port}/\S*\?token=\w+", log.read_text())
            if m:
                url = m.group(0)
                break
            assert proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.5)
        assert url, log.read_text()[-2000:]
        assert f"127.0.0.1:{port}{lab.LANDING_URL}?token=" in url, url
        import urllib.request
        with urllib.request.urlopen(url.replace(lab.LANDING_URL, "/api/contents/index.ipynb"), timeout=30) as r:
            assert json.loads(r.read())["type"] == "notebook"
    finally:
        __import__("os").killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            __import__("os").killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


# --- The instructor's collect from the local exchange (issue 27) -------------------------------------------------

def test_collect_makes_a_missing_exchange_and_takes_resubmissions(tmp_path):
    """`nbgrader collect` (the course's SafeCollect): an exchange that does not exist is made and the message says
    to release first (nbgrader said "Unwritable directory, please contact your instructor"); a resubmission
    replaces the collected one without --update."""
    import os
    import pwd

    import toycourse
    from course.grading.nbgrader import wrapper as nbgrader_io

    ch = toycourse.CHAPTER
    course = toycourse.make(tmp_path / "course")
    exchange = tmp_path / "not yet" / "exchange"
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    db_url = nbgrader_io.sqlite(course / "gradebook.db")
    rel = nbgrader_io.generate(course, ch, db_url)
    proc = nbgrader_io.run(["collect", ch], course, db_url, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and exchange.is_dir(), text[-2000:]
    assert "Unwritable directory" not in text and "Nothing to collect" in text, text[-2000:]
    assert f"nbgrader release_assignment {ch}" in text, text[-2000:]
    nbgrader_io.run(["release_assignment", ch], course, db_url)
    me = pwd.getpwuid(os.geteuid()).pw_name
    inbound = exchange / "pytorch-internals" / "inbound"
    for stamp in ("2026-12-01 10:00:00.000000 UTC", "2026-12-01 11:00:00.000000 UTC"):
        d = inbound / f"{me}+{ch}+{stamp}"
        d.mkdir()
        shutil.copy(rel / f"{ch}.ipynb", d / f"{ch}.ipynb")
        (d / "timestamp.txt").write_text(stamp)
        proc = nbgrader_io.run(["collect", ch], course, db_url, check=False)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
        assert (course / "submitted" / me / ch / "timestamp.txt").read_text() == stamp, "the latest submission"


def test_fetched_notebooks_and_the_landing_page_carry_language_info(student_course):
    """Fetch (course.submit.ExchangeFetchAssignment) and the landing page give notebooks this kernel's language_info,
    so JupyterLab does not mark them unsaved on open; a file already in the working copy is left alone."""
    root, work = student_course
    info = lab.kernel_language_info()
    assert json.loads((work / "index.ipynb").read_text())["metadata"]["language_info"] == info
    chapter = "06_torch_compile"
    folder = work / chapter
    mine = folder / "notes.ipynb"
    mine.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (folder / f"{chapter}.ipynb").unlink()
    out = _manager(work).fetch_assignment("pytorch-internals", chapter)
    assert out["success"], out
    fetched = json.loads((folder / f"{chapter}.ipynb").read_text())
    assert fetched["metadata"]["language_info"] == info
    released = json.loads((root / "release" / chapter / f"{chapter}.ipynb").read_text())
    assert fetched["cells"] == released["cells"], "only the metadata changes"
    assert json.loads(mine.read_text())["metadata"] == {}, "a file that was there before the fetch is untouched"
