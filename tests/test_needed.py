"""Which cells the grader runs (course/grading/run/needed.py): demonstrations nothing graded reads are skipped;
everything an answer, a test cell or a probe may read or see changed is run."""
from __future__ import annotations

import nbformat
import pytest

from course.grading.run.needed import analyse, skippable


def _nb(*cells):
    """A notebook from ("kind", source) pairs: "setup", "demo", "answer" (a solution cell), "test" (a grade cell)."""
    out = []
    for n, (kind, source) in enumerate(cells):
        c = nbformat.v4.new_code_cell(source)
        if kind == "answer":
            c.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "grade_id": f"a{n}",
                                      "schema_version": 3}
        elif kind == "test":
            c.metadata["nbgrader"] = {"solution": False, "grade": True, "locked": True, "grade_id": f"t{n}",
                                      "points": 1, "schema_version": 3}
        elif kind == "locked":
            c.metadata["nbgrader"] = {"solution": False, "grade": False, "locked": True, "grade_id": f"l{n}",
                                      "schema_version": 3}
        out.append(c)
    return nbformat.v4.new_notebook(cells=out)


def skip(nb, probes=()):
    """What the grader skips of ``nb`` when ``nb`` is also the instructor's notebook (every cell unchanged)."""
    return skippable(nb, probes, instructor=nb)


SETUP = "import torch\nimport matplotlib.pyplot as plt\nCFG = {'n': 4}\nDEVICE = torch.device('cpu')"


def test_a_demonstration_nothing_reads_is_skipped_and_one_an_answer_reads_runs():
    nb = _nb(("setup", SETUP),
             ("demo", "x = torch.randn(CFG['n'])\nplt.plot(x)\nprint(x.mean())"),       # 1: read by nobody
             ("demo", "SCALE = 3"),                                                         # 2: the answer reads it
             ("answer", "def f(t):\n    return t * SCALE"),
             ("test", "assert f(torch.ones(1)).item() == 3"))
    assert skip(nb) == {1}


def test_a_demonstration_runs_when_it_may_change_an_object_a_graded_cell_reads():
    setup = SETUP + "\nmodel = torch.nn.Linear(2, 2)\nhistory = []"
    for demo in ("model.eval()",                      # a method of it
                 "model.weight.data.zero_()",         # a method of a part of it
                 "model.bias = None",                 # a store into it
                 "history += [1]",                    # an augmented assignment
                 "torch.nn.init.zeros_(model.weight)",  # handed to a function
                 "train = lambda m: m\ntrain(model)"):
        nb = _nb(("setup", setup), ("demo", demo), ("test", "assert model.training and history == []"))
        assert skip(nb) == set(), demo
    # ... not when the object is the demonstration's own, or when it only reads it
    for demo in ("m = torch.nn.Linear(3, 3)\nm.eval()", "print(model.weight.shape, len(history))"):
        nb = _nb(("setup", setup), ("demo", demo), ("test", "assert model.training and history == []"))
        assert skip(nb) == {1}, demo


def test_the_settings_can_be_handed_to_functions_but_not_changed():
    """CFG and DEVICE, bound by the set-up cell only: a demonstration that hands them to a call is still skipped;
    one that stores into them runs, and then no cell treats them as settings."""
    test = ("test", "assert torch.zeros(CFG['n'], device=DEVICE).shape == (4,)")
    assert skip(_nb(("setup", SETUP), ("demo", "y = torch.ones(3).to(DEVICE)\nprint(len(CFG))"), test)) == {1}
    assert skip(_nb(("setup", SETUP), ("demo", "CFG['n'] = 5"), test)) == set()
    assert skip(_nb(("setup", SETUP), ("demo", "CFG.update(n=5)"), test)) == set()


def test_reads_count_in_order_and_functions_read_later():
    """A name a cell binds before it reads it is the cell's own; a function's global is read when it is called,
    maybe after a demonstration rebound it."""
    n = analyse("g = torch.Generator()\nx = torch.randn(3, generator=g)\nfor i in range(3):\n    print(i)\n"
                "def f():\n    return N\nwith open('a') as fh:\n    data = fh.read()\nprint(data)")
    assert "g" not in n.reads and "i" not in n.reads and "fh" not in n.reads and "data" not in n.reads
    assert {"torch", "N", "open", "range", "print"} <= n.reads
    assert analyse("x = x + 1").reads == {"x"}
    assert "x" in analyse("if cond:\n    x = 1\nprint(x)").reads  # maybe not bound by the if
    assert "y" not in analyse("[y for y in range(3)]").reads
    assert "N" in analyse("[N * y for y in range(3)]").reads
    nb = _nb(("setup", SETUP), ("demo", "N = 7"), ("answer", "def f():\n    return N"), ("demo", "N = 8"))
    assert skip(nb) == set()


def test_code_that_reaches_names_by_string_stops_all_skipping():
    """Such a cell may bind or read any name: every cell runs, as in stock nbgrader."""
    for demo in ("globals()['SCALE'] = 2", "exec('SCALE = 2')", "import __main__\n__main__.SCALE = 2",
                 "import sys\nsys.modules['__main__'].SCALE = 2", "get_ipython().run_cell('SCALE = 2')",
                 "%run other.py", "vars()['SCALE'] = 2", "from helpers import *"):
        nb = _nb(("setup", SETUP), ("demo", "print(1)"), ("demo", demo), ("test", "assert SCALE == 2"))
        assert skip(nb) == set(), demo
    # a cell that cannot be read runs (and fails, as it would in stock nbgrader); the rest is read as usual
    nb = _nb(("setup", SETUP), ("demo", "print(1)"), ("demo", "def broken(:\n    pass"), ("test", "assert 1"))
    assert skip(nb) == {1}
    # an answer that reaches names by string: nothing is skipped
    nb = _nb(("setup", SETUP), ("demo", "print(1)"), ("answer", "def f():\n    return globals()['CFG']"))
    assert skip(nb) == set()
    # two read-only lookups read what they name, and %matplotlib changes nothing graded
    n = analyse("%matplotlib inline\nprint(globals().get('PACKAGE_SECONDS'), 'timm.optim' in sys.modules)")
    assert not n.dynamic and "PACKAGE_SECONDS" in n.reads
    assert analyse("%time x = 1").dynamic


def test_locked_cells_past_the_setup_are_skipped_unless_read():
    nb = _nb(("setup", SETUP), ("locked", "def helper():\n    return 1"), ("locked", "from course.progress import summary"
                                                                           "\nsummary('x')"),
             ("test", "assert helper() == 1"))
    assert skip(nb) == {2}


def test_the_probes_reads_count():
    nb = _nb(("setup", SETUP), ("demo", "TABLE = [1, 2]"), ("demo", "OTHER = 1"))
    assert skip(nb, ["def probe_x(seed):\n    return TABLE[seed % 2]"]) == {2}


def test_only_the_instructors_unchanged_demonstrations_are_skipped():
    """A cell the student added or edited runs; so does a demonstration that calls the student's code; without
    the instructor's notebook nothing is skipped."""
    instructor = _nb(("setup", SETUP), ("demo", "print(torch.ones(2))"), ("answer", "def f(x):\n    return x"),
                     ("demo", "print(f(torch.ones(2)))"), ("test", "assert f(1) == 1"))
    assert skippable(instructor, (), instructor) == {1}
    assert skippable(instructor, (), None) == set()
    student = nbformat.from_dict(instructor)
    student.cells[1].source = "print(torch.ones(3))"                  # edited
    student.cells.insert(2, nbformat.v4.new_code_cell("print('mine')"))  # added
    assert skippable(student, (), instructor) == set()
    # the student's helper, in a cell of their own, is their code too: a demonstration that calls it runs
    instructor = _nb(("setup", SETUP), ("answer", "def f(x):\n    return x"), ("demo", "print(helper(2))"))
    student = nbformat.from_dict(instructor)
    student.cells.insert(2, nbformat.v4.new_code_cell("def helper(x):\n    HISTORY.append(x)\n    return x"))
    assert skippable(student, (), instructor) == set()


def test_changes_through_an_alias_count_against_what_it_came_from():
    setup = SETUP + "\nmodel = torch.nn.Linear(2, 2)\nhistory = []\nlayers = [model]"
    for demo in ("w = model.weight\nwith torch.no_grad():\n    w.zero_()", "h = history\nh.append(1)",
                 "for layer in layers:\n    layer.eval()", "p, = [model.bias]\np.data.mul_(0)",
                 "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nopt.step()"):
        nb = _nb(("setup", setup), ("demo", demo), ("test", "assert model.training and history == [] and layers"))
        assert skip(nb) == set(), demo


def test_a_demonstration_that_changes_the_process_state_runs():
    for demo in ("torch.set_default_dtype(torch.float64)", "torch.set_grad_enabled(False)",
                 "warnings.simplefilter('error')", "os.environ['X'] = '1'", "os.chdir('/tmp')",
                 "torch.save({}, 'a.pt')", "open('a.txt', 'w').write('x')", "Path('a').write_text('x')",
                 "torch._dynamo.config.cache_size_limit = 1", "torch.library.define('m::f', '(Tensor x) -> Tensor')"):
        nb = _nb(("setup", SETUP + "\nimport os, warnings\nfrom pathlib import Path"), ("demo", demo),
                 ("test", "assert torch.ones(1).dtype == torch.float32"))
        assert skip(nb) == set(), demo


def test_the_second_attacks_holes_are_closed():
    """What an independent attack found after the first fix: each demonstration below runs."""
    setup = (SETUP + "\nimport os, warnings, subprocess\nimport matplotlib.pyplot as plt\nfrom course import deploy"
             "\nmodel = torch.nn.Sequential(torch.nn.BatchNorm1d(2))\nhistory = []")
    test = ("test", "assert model.training and history == [] and torch.ones(1).dtype == torch.float32")
    for demo in ("cfg = torch._dynamo.config\ncfg.cache_size_limit = 1",
                 "import torch._dynamo.config as dcfg\ndcfg.cache_size_limit = 1",
                 "env = os.environ\nenv['X'] = '1'",
                 "with open('a.txt', 'w') as f:\n    f.write('x')",
                 "torch.jit.save(torch.jit.script(torch.nn.Linear(1, 1)), 'm.pt')",
                 "plt.savefig('a.png')", "subprocess.run(['true'])", "deploy.filter_jit_deprecation()",
                 "with warnings.catch_warnings():\n    pass\nwarnings.filterwarnings('error')",
                 "from torch.library import custom_op\n@custom_op('demo::f', mutates_args=())\n"
                 "def f(x: torch.Tensor) -> torch.Tensor:\n    return x.clone()",
                 "model(torch.randn(4, 2))", "freeze = lambda ms: None\nfreeze([model])",
                 "h = history or []\nh.append(1)", "torch._C._jit_set_profiling_executor(False)"):
        nb = _nb(("setup", setup), ("demo", demo), test)
        assert skip(nb) == set(), demo
    # scoped changes are put back: these are skipped
    for demo in ("with torch._dynamo.config.patch(cache_size_limit=1):\n    print(1)",
                 "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n    print(1)",
                 "torch.manual_seed(0)\nprint(torch.randn(2))", "with torch.no_grad():\n    print(model[0].weight)"):
        nb = _nb(("setup", setup), ("demo", demo), test)
        assert skip(nb) == {1}, demo


def test_a_notebook_the_student_added_to_or_reordered_runs_whole():
    instructor = _nb(("setup", SETUP), ("demo", "print(1)"), ("demo", "print(2)"), ("answer", "def f(x):\n    return x"))
    assert skippable(instructor, (), instructor) == {1, 2}
    moved = nbformat.from_dict(instructor)
    moved.cells[1], moved.cells[2] = moved.cells[2], moved.cells[1]
    assert skippable(moved, (), instructor) == set()
    above = nbformat.from_dict(instructor)  # a cell of the student's above the set-up cell
    above.cells.insert(0, nbformat.v4.new_code_cell("import torch"))
    assert skippable(above, (), instructor) == set()
    deleted = nbformat.from_dict(instructor)  # a demonstration deleted: the rest is still the instructor's
    del deleted.cells[1]
    assert skippable(deleted, (), instructor) == {1}


def test_del_reads_the_name():
    nb = _nb(("setup", SETUP), ("demo", "big = torch.zeros(10)"), ("answer", "del big\ndef f(x):\n    return x"))
    assert skip(nb) == set()


@pytest.mark.parametrize("run_every_cell", [False, True])
def test_the_worker_skips_what_is_skippable_and_an_instructor_can_run_every_cell(run_every_cell, tmp_path):
    """Through the sandboxed worker: the skipped cell is not executed and is listed; the answer that reads a
    demonstration's name gets it; ``GradingLimits.run_every_cell`` runs them all."""
    from course.grading.config import Limits
    from course.grading.judge.verdicts import Judge
    from course.grading.run.worker import run_submission

    judge = Judge()

    @judge.probe("t_scale")
    def probe_scale(seed):
        return f(seed)  # noqa: F821 - the notebook's answer

    nb = _nb(("setup", "import torch, course.grading.run.wire"), ("demo", "print('a slow demonstration')"),
             ("demo", "SCALE = 3"), ("answer", "def f(x):\n    return x * SCALE"))
    course = tmp_path / "course"
    (course / "source" / "00_toy").mkdir(parents=True)
    nbformat.write(nb, course / "source" / "00_toy" / "00_toy.ipynb")  # the instructor's notebook
    result = run_submission(nb, "00_toy", "student", judge.codes(), seed=5, course_root=course,
                            limits=Limits(run_every_cell=run_every_cell), decoys=False)
    assert result.results["t_scale"].get("ok") is True and result.results["t_scale"]["value"] == 15, result.results
    assert result.skipped == ([] if run_every_cell else [1])
    assert (result.notebook.cells[1].execution_count is None) is not run_every_cell
    assert all(c.execution_count is not None for i, c in enumerate(result.notebook.cells) if i != 1)
