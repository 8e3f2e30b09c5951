"""Unit tests of the harness itself (course.grading), without running nbgrader."""
import nbformat
import pytest

from course.grading.judge import answers
from course.grading.authoring import attacks, notebooks
from course.grading import records
from course.grading.authoring import trial
from tools.nbtool import md, setup, solution, write
from tools.nbtool import tests as graded_cell


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "source" / "00_toy").mkdir(parents=True)
    write(str(tmp_path / "source" / "00_toy" / "00_toy.ipynb"), [
        md("# toy"),
        setup("from course import checks as C"),
        solution("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "f"),
        graded_cell('"""f doubles."""\nC.check_true(f(2) == 4, "no")\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS',
              "test_f", 1),
        solution("def g(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION", "g"),
        graded_cell('"""g."""\nC.check_true(g(1) == 1, "no")\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS', "test_g", 2),
    ])
    for kind, name, cell, fails in [("mutants", "f1", "f", ["test_f"]), ("mutants", "f2", "f", ["test_f"]),
                                    ("mutants", "g1", "g", ["test_g"]), ("alternatives", "fa", "f", [])]:
        d = tmp_path / "source" / "00_toy" / "exercises" / cell / kind
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{name}.py").write_text(f'"""{name}."""\nCELL = "{cell}"\nFAILS = {fails!r}\n'
                                      f"SOURCE = '''\ndef {cell}(x):\n    return 0\n'''\n")
    return tmp_path


def test_strip_markers():
    assert answers.strip_markers("a\n    ### BEGIN SOLUTION\nb\n### END SOLUTION\nc") == "a\nb\nc"


def test_plan_groups_one_variant_per_exercise(toy):
    subs = {s.student: s for s in trial.plan("00_toy", toy)}
    assert list(subs) == ["solution", "empty", "mutants-1", "mutants-2", "alternatives-1", "tamper"]
    assert subs["mutants-1"].variants == ["f1", "g1"] and subs["mutants-1"].must_fail == {"test_f", "test_g"}
    assert subs["mutants-2"].variants == ["f2"] and subs["mutants-2"].must_fail == {"test_f"}
    assert subs["empty"].replacements is None and subs["empty"].must_fail == {"test_f", "test_g"}
    assert subs["tamper"].replacements["f"].startswith(attacks.TAMPER_PRELUDE)


def test_variant_validation(toy):
    bad = toy / "source" / "00_toy" / "exercises" / "f" / "mutants" / "bad.py"
    bad.write_text('"""x."""\nCELL = "f"\nFAILS = ["test_nope"]\nSOURCE = "x"\n')
    with pytest.raises(ValueError, match="unknown grade cells"):
        trial.plan("00_toy", toy)
    bad.write_text('"""x."""\nCELL = "f"\nSOURCE = "x"\n')
    with pytest.raises(ValueError, match="must list"):
        trial.plan("00_toy", toy)
    bad.write_text('"""x."""\nCELL = "g"\nFAILS = ["test_g"]\nSOURCE = "x"\n')
    with pytest.raises(ValueError, match="sits in the folder of 'f'"):  # an exercise's answers live in its folder
        trial.plan("00_toy", toy)
    bad.unlink()
    bad = toy / "source" / "00_toy" / "exercises" / "nope" / "mutants" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text('"""x."""\nCELL = "nope"\nFAILS = ["test_f"]\nSOURCE = "x"\n')
    with pytest.raises(ValueError, match="no solution cell"):
        trial.plan("00_toy", toy)


def test_a_mutant_may_be_written_as_the_lines_it_changes_in_the_reference(toy):
    """CHANGES: (old, new) pairs of whole lines of the reference (markers removed), each old text found once."""
    from course.grading.judge.answers import apply_changes, load_variants

    d = toy / "source" / "00_toy" / "exercises" / "f" / "mutants"
    (d / "f3.py").write_text('"""f3."""\nCELL = "f"\nFAILS = ["test_f"]\n'
                             "CHANGES = [('''\n    return 2 * x\n''', '''\n    return 3 * x\n''')]\n")
    got = {v.name: v for v in load_variants("00_toy", "mutant", toy)}
    assert got["f3"].source == "def f(x):\n    return 3 * x\n" and got["f3"].fails == ("test_f",)
    assert any("f3" in sub.variants for sub in trial.plan("00_toy", toy))  # graded like any mutant
    # Blind answers and alternatives stay whole, as written; a file says SOURCE or CHANGES, not both.
    for where, name, extra in [("mutants", "blind_f4", ""), ("alternatives", "f5", ""), ("mutants", "f6", "SOURCE = 'x'\n")]:
        bad = toy / "source" / "00_toy" / "exercises" / "f" / where / f"{name}.py"
        bad.write_text(f'"""x."""\nCELL = "f"\nFAILS = {["test_f"] if where == "mutants" else []!r}\n{extra}'
                       "CHANGES = [('    return 2 * x\\n', '')]\n")
        with pytest.raises(ValueError, match="CHANGES is for authored mutants only"):
            load_variants("00_toy", where[:-1], toy)
        bad.unlink()
    base = "def f(x):\n    y = x + 1\n    y = x + 1\n    return y\n"
    assert apply_changes(base, [("    return y\n", "    return -y\n")]) == base.replace("return y", "return -y")
    assert apply_changes(base, [("\n    return y\n", "")]) == "def f(x):\n    y = x + 1\n    y = x + 1\n"
    for changes, why in [([("    y = x + 1\n", "")], "more than once"), ([("nope\n", "")], "not in the reference"),
                         ([("return y\n", "")], "not whole lines"), ([("", "x")], "no old text"),
                         ([("    return y\n",)], "pair of strings")]:
        with pytest.raises(ValueError, match=why):
            apply_changes(base, changes)


def test_build_notebook_fills_solution_cells(toy):
    source = notebooks.read(notebooks.notebook_path("00_toy", toy))
    release = nbformat.from_dict(source)
    for c in release.cells:
        if records.grade_id(c) in ("f", "g"):
            c.source = "raise NotImplementedError"
    built = trial.build_notebook(release, source, {"g": "def g(x):\n    return 5\n"})
    text = {records.grade_id(c): c.source for c in built.cells if records.grade_id(c)}
    assert text["f"] == "def f(x):\n    return 2 * x" and text["g"].startswith("def g(x):\n    return 5")
    assert trial.build_notebook(release, source, None).cells[2].source == "raise NotImplementedError"


def test_problems_and_table():
    subs = [trial.Submission("solution", {}), trial.Submission("m", {"f": ""}, must_fail={"a"}, variants=["v"])]
    g = trial.Graded(course=None, seconds={}, submissions=subs,
                       scores={"solution": {"a": (1.0, 1.0), "b": (1.0, 2.0)}, "m": {"a": (1.0, 1.0), "b": (2.0, 2.0)}})
    out = trial.problems(g)
    assert any("solution" in p and "b got 1/2" in p for p in out)
    assert any("m (v): a kept" in p for p in out)
    assert "TOTAL" in trial.table(g) and "2/3" in trial.table(g)
    g.scores.pop("m")
    assert any("no grades recorded" in p for p in trial.problems(g))


def test_slowest_cells_reports_run_time_and_the_stall_before_a_cell():
    def cell(busy, reply):
        c = nbformat.v4.new_code_cell("pass")
        c.metadata["execution"] = {"iopub.status.busy": busy, "iopub.execute_input": busy, "shell.execute_reply": reply}
        return c

    nb = nbformat.v4.new_notebook()
    nb.cells = [cell("2026-12-04T01:00:00.000Z", "2026-12-04T01:00:02.000Z"), nbformat.v4.new_markdown_cell("x"),
                cell("2026-12-04T01:05:02.000Z", "2026-12-04T01:05:03.500Z"),
                cell("2026-12-04T01:05:03.600Z", "2026-12-04T01:05:03.700Z"), nbformat.v4.new_code_cell("unrun")]
    assert notebooks.cell_times(nb) == [(0, 2.0, 0.0), (2, 1.5, 300.0), (3, 0.1, 0.1)]
    assert notebooks.slowest_cells(nb, n=2) == "cell 2 1.5 s + 300.0 s before it, cell 0 2.0 s"


def test_a_probe_with_a_time_limit_of_its_own_outlives_the_default(tmp_path):
    """A probe that compiles (Chapter 3's AOTInductor package) gets its own limit (``judge.probe(..., seconds=)``);
    every other probe keeps the grader's ``probe_seconds``. Both probes below sleep 4 s; the default is 2 s."""
    from course.grading.config import Limits
    from course.grading.judge.verdicts import Judge
    from course.grading.run.worker import run_submission

    judge = Judge()

    @judge.probe("t_own", seconds=60)
    def probe_own(seed):
        import time as _time
        _time.sleep(4)
        return seed + 1

    @judge.probe("t_default")
    def probe_default(seed):
        import time as _time
        _time.sleep(4)
        return seed + 2

    codes = judge.codes()
    assert [c.seconds for c in codes] == [60, None]
    # The notebook imports what every probe imports: the 2 s below must time the probes' sleep, not a cold
    # `import torch` in the judge's sentinel probe (over 2 s on a busy machine: the sentinel then timed out).
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import torch, course.grading.run.wire")])
    result = run_submission(nb, "00_toy", "student", codes, seed=5, limits=Limits(probe_seconds=2), decoys=False)
    assert result.results["t_own"].get("ok") is True and result.results["t_own"]["value"] == 6, result.results["t_own"]
    assert result.results["t_default"].get("ok") is False
    assert "did not finish within 2 s" in result.results["t_default"]["error"], result.results["t_default"]
    # Where the time went (make bench sums these over a class): the phases cover the run's wall time, the probes'
    # two sleeps (4 s, and 2 s until the interrupt) count as probes, the notebook's one cell as "other cells".
    phases = result.phases
    assert {"sandbox set-up", "kernel start", "other cells", "sentinels", "probes", "kernel stop",
            "sandbox clean-up"} <= set(phases), phases
    assert "answer cells" not in phases and "visible test cells" not in phases, phases
    assert phases["probes"] >= 6.0, phases
    inside = sum(v for k, v in phases.items() if not k.startswith("sandbox "))
    # Only the event loop's own set-up and close count in no phase: milliseconds on a quiet machine, more when
    # the scheduler makes the process wait (CI's load average reached 78 during the hub test).
    assert abs(inside - result.seconds) < max(1.0, 0.1 * result.seconds), (inside, result.seconds, phases)


def test_the_judge_runs_inside_a_running_event_loop():
    """Formgrader runs nbgrader's autograde inside the Jupyter server's event loop, where asyncio.run refuses: the
    judge then runs on a loop of its own in a thread of its own (the hub test grades one submission this way)."""
    import asyncio

    from course.grading.config import Limits
    from course.grading.judge.verdicts import Judge
    from course.grading.run.worker import run_submission

    judge = Judge()

    @judge.probe("t_loop")
    def probe_loop(seed):
        return seed + 1

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])

    async def in_a_server():
        return run_submission(nb, "00_toy", "student", judge.codes(), seed=5, limits=Limits(), decoys=False)

    result = asyncio.run(in_a_server())
    assert result.results["t_loop"].get("ok") is True and result.results["t_loop"]["value"] == 6, result.results


def test_profiles_of_several_chapters_run_each_in_a_process_of_its_own(monkeypatch):
    """`make profiles` names every chapter: each chapter's probes run in a fresh process (one chapter's probes left
    state that changed the next one's verdicts); one chapter runs here, as before."""
    import subprocess

    from course.grading import cli
    from course.grading.authoring import sweep

    here, started = [], []
    monkeypatch.setattr(sweep, "profiles_main", lambda ch, seeds, root=None: here.append((ch, seeds, root)) or 0)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: started.append(cmd) or
                        subprocess.CompletedProcess(cmd, 1 if "02_b" in cmd else 0))
    assert cli.main(["profiles", "01_a", "--seeds", "3"]) == 0
    assert here == [("01_a", 3, None)] and started == []
    assert cli.main(["profiles", "01_a", "02_b", "--course", "/somewhere"]) == 1   # the worst exit code
    assert here == [("01_a", 3, None)], "several chapters: none runs in this process"
    assert [cmd[1:] for cmd in started] == [
        ["-m", "course.grading", "profiles", ch, "--seeds", "2", "--course", "/somewhere"] for ch in ("01_a", "02_b")]
